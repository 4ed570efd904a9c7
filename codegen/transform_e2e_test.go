package codegen

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
)

// A positive vector latent s : real<lower=0>[P] with a LogNormal prior and
// Poisson children is fitted on u = log s. Coordinates are independent, so
// the Laplace fit is, per coordinate, the Newton maximum of
//
//	f(u) = Y u − N e^u + log LogNormal(e^u; m, t) + u
//	     = Y u − N e^u − ½((u − m)/t)² + const
//
// (Y = Σ_n y_n; the last u is the log-Jacobian of s = e^u), with variance
// −1/f”(û); the delta method's fixed point solves
// f'(μ) + ½ f”'(μ) σ² = 0 with σ² = −1/f”(μ). The reported constrained
// summaries must be the log-normal moments of e^u and exp of the
// Gaussian's quantiles.
const positiveVI = `model positive
size N, P
data y : int[N, P]
const m : real = 0.3
const t : real = 1.2
latent s : real<lower=0>[P] nonconjugate laplace
s ~ LogNormal(m, t)
for n in 1:N {
  y[n] ~ Poisson(s)
}
`

var positiveCase = fastTest("TestEndToEndLowerBoundLatent").fits("positive", positiveVI, ", Tol: 1e-14")

func TestEndToEndLowerBoundLatent(t *testing.T) {
	const N, P, m, tau = 4, 3, 0.3, 1.2
	rates := []float64{0.2, 1.5, 6}
	rng := rand.New(rand.NewPCG(5, 6))
	y := make([][]int, N)
	Y := make([]float64, P)
	for n := range y {
		y[n] = make([]int, P)
		for i := range y[n] {
			// a Poisson draw by inversion
			k, p, u := 0, math.Exp(-rates[i]), rng.Float64()
			for c := p; u > c; c += p {
				k++
				p *= rates[i] / float64(k)
			}
			y[n][i] = k
			Y[i] += float64(k)
		}
	}
	grad := func(u, Y float64) float64 { return Y - N*math.Exp(u) - (u-m)/(tau*tau) }
	hess := func(u float64) float64 { return -N*math.Exp(u) - 1/(tau*tau) }
	// one-dimensional root of g by Newton from 0, with the derivative dg
	solve := func(g, dg func(float64) float64) float64 {
		u := 0.0
		for it := 0; it < 200; it++ {
			step := g(u) / dg(u)
			u -= step
			if math.Abs(step) < 1e-15 {
				break
			}
		}
		return u
	}
	data, _ := json.Marshal(map[string]any{"N": N, "P": P, "y": y})
	res := positiveCase.results(t, data)
	z95 := 1.6448536269514722
	for _, r := range res {
		if !r.Converged {
			t.Errorf("%s: not converged: %s", r.Method, r.Status)
		}
		check := againstCAVI(t, r.Method)
		if r.Method == "delta" {
			// the delta objective is maximized by the generated code's
			// gradient method, to its own tolerance
			check = func(what string, got, want float64) {
				t.Helper()
				if math.Abs(got-want) > 1e-8*math.Max(1, math.Abs(want)) {
					t.Errorf("delta: %s = %.14g, by hand %.14g", what, got, want)
				}
			}
		}
		q := r.Latent["s"]
		c := q.Constrained
		if c == nil {
			t.Fatalf("%s: no constrained summary in the result", r.Method)
		}
		for i := 0; i < P; i++ {
			var mu float64
			if r.Method == "laplace" {
				mu = solve(func(u float64) float64 { return grad(u, Y[i]) }, hess)
			} else {
				// g(μ) = f'(μ) + ½ f'''(μ)·(−1/f''(μ)), f''' = −N e^μ
				g := func(u float64) float64 { return grad(u, Y[i]) + 0.5*N*math.Exp(u)/hess(u) }
				dg := func(u float64) float64 {
					h := 1e-6
					return (g(u+h) - g(u-h)) / (2 * h)
				}
				mu = solve(g, dg)
			}
			v := -1 / hess(mu)
			check("mean of u", q.Mean[i], mu)
			check("var of u", q.Cov[i][i], v)
			sd := math.Sqrt(v)
			e := math.Exp(mu + v/2)
			check("constrained mean", c.Mean[i], e)
			check("constrained sd", c.SD[i], math.Sqrt(math.Expm1(v))*e)
			check("constrained q05", c.Q05[i], math.Exp(mu-z95*sd))
			check("constrained q50", c.Q50[i], math.Exp(mu))
			check("constrained q95", c.Q95[i], math.Exp(mu+z95*sd))
		}
		if c.Method == "" {
			t.Errorf("%s: the constrained summary names no method", r.Method)
		}
	}
}

// A <lower=lo, upper=lo + 4> vector latent (bounds read a const): the
// reported constrained mean and sd match Monte Carlo draws of
// lo + 4·logistic(u) from the reported q(u), and the quantiles are the
// Gaussian's mapped through the transform.
const boundedVI = `model bounded
size N, P
data y : real[N, P]
const lo : real = -1
latent x : real<lower=lo, upper=lo + 4>[P] nonconjugate laplace
x ~ Normal(0.5, 2)
for n in 1:N {
  y[n] ~ Normal(x, 1)
}
`

var boundedCase = fastTest("TestEndToEndLowerUpperLatent").fits("bounded", boundedVI, ", Tol: 1e-14")

func TestEndToEndLowerUpperLatent(t *testing.T) {
	y := [][]float64{{-0.8, 1.0, 2.9}, {-0.95, 0.7, 3.5}, {-0.5, 1.4, 2.2}}
	const lo = -0.5
	data, _ := json.Marshal(map[string]any{"N": 3, "P": 3, "y": y, "lo": lo})
	res := boundedCase.results(t, data)
	rng := rand.New(rand.NewPCG(7, 8))
	x := func(u float64) float64 { return lo + 4/(1+math.Exp(-u)) }
	for _, r := range res {
		q := r.Latent["x"]
		c := q.Constrained
		if c == nil {
			t.Fatalf("%s: no constrained summary in the result", r.Method)
		}
		for i := range q.Mean {
			mu, sd := q.Mean[i], math.Sqrt(q.Cov[i][i])
			const n = 400000
			var s1, s2 float64
			for k := 0; k < n; k++ {
				v := x(mu + sd*rng.NormFloat64())
				s1 += v
				s2 += v * v
			}
			mean := s1 / n
			vr := s2/n - mean*mean
			if se := math.Sqrt(vr / n); math.Abs(c.Mean[i]-mean) > 5*se {
				t.Errorf("%s [%d]: constrained mean %g, Monte Carlo %g ± %g", r.Method, i, c.Mean[i], mean, se)
			}
			if math.Abs(c.SD[i]-math.Sqrt(vr)) > 0.01*math.Sqrt(vr) {
				t.Errorf("%s [%d]: constrained sd %g, Monte Carlo %g", r.Method, i, c.SD[i], math.Sqrt(vr))
			}
			if got, want := c.Q95[i], x(mu+1.6448536269514722*sd); math.Abs(got-want) > 1e-12 {
				t.Errorf("%s [%d]: q95 %g, want %g", r.Method, i, got, want)
			}
			if c.Q05[i] <= lo || c.Q95[i] >= lo+4 {
				t.Errorf("%s [%d]: quantiles %g..%g outside the bounds", r.Method, i, c.Q05[i], c.Q95[i])
			}
		}
	}
}

const dataBoundsVI = `model databounds
size N
data y : real<lower=0>[N]
data w : real<lower=-1, upper=1>[N]
latent mu : real<lower=0>[N] nonconjugate laplace
mu ~ LogNormal(0, 1)
for n in 1:N {
  y[n] ~ Normal(mu[n] * w[n], 1)
}
`

var dataBoundsCase = fastTest("TestEndToEndDataBounds").driver("databounds", dataBoundsVI, "print_data_bound_errors.go")

// Data outside its declared bounds is a data error naming the variable
// and the index, as Stan checks data at load.
func TestEndToEndDataBounds(t *testing.T) {
	out := string(dataBoundsCase.run(t, nil))
	want := "<nil>\n" +
		`data "y"[3] = -0.5: it is declared real<lower=0>[N] at databounds.vi:3:6, which must be ≥ 0` + "\n" +
		`data "w"[2] = 1.5: it is declared real<lower=-1, upper=1>[N] at databounds.vi:4:6, which must be in [-1, 1]` + "\n"
	if out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}
