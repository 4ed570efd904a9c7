package codegen

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// End-to-end tests of scalar latents and params, literal indices, loops
// over part of a size and offset reads, each against an independent
// computation written here.

// scalarResult is a run's result with its latents left raw: a scalar
// latent is {"family": "Normal", "mean": m, "sd": s}.
type scalarResult struct {
	Method    string                     `json:"method"`
	Converged bool                       `json:"converged"`
	Status    string                     `json:"status"`
	ELBO      []float64                  `json:"elbo"`
	Latent    map[string]json.RawMessage `json:"latent"`
	Params    map[string]json.RawMessage `json:"params"`
}

// scalarOf decodes the scalar latent name of r, failing if it is not
// reported as a Normal with a scalar mean and sd.
func scalarOf(t *testing.T, r scalarResult, name string) (mean, sd float64) {
	t.Helper()
	var g struct {
		Family string   `json:"family"`
		Mean   *float64 `json:"mean"`
		SD     *float64 `json:"sd"`
	}
	if err := json.Unmarshal(r.Latent[name], &g); err != nil || g.Mean == nil || g.SD == nil || g.Family != "Normal" {
		t.Fatalf("%s: latent %s is %s, want a Normal with a scalar mean and sd (%v)", r.Method, name, r.Latent[name], err)
	}
	return *g.Mean, *g.SD
}

// runScalar runs c, whose driver fits by Laplace and by delta
// (e2eTest.fits), and checks that both converged.
func runScalar(t *testing.T, c *e2eCase, data []byte) []scalarResult {
	t.Helper()
	out := c.run(t, data)
	var res []scalarResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("driver output: %v\n%s", err, out)
	}
	if len(res) != 2 {
		t.Fatalf("driver returned %d results, want 2", len(res))
	}
	for _, r := range res {
		if !r.Converged {
			t.Errorf("%s: not converged: %s", r.Method, r.Status)
		}
	}
	return res
}

const normMeanScalarVI = `model normmean
size N
data y : real[N]
latent mu : real nonconjugate laplace
mu ~ Normal(1, 10)
for n in 1:N {
  y[n] ~ Normal(mu, 2)
}
`

var normMeanScalarCase = fastTest("TestEndToEndScalarLatentIsExact").fits("normmean", normMeanScalarVI, "")

// A Normal mean with a Normal prior: the posterior is Gaussian, so Laplace
// and delta must both return it exactly, and the ELBO is the log evidence.
func TestEndToEndScalarLatentIsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	y := make([]float64, 25)
	for i := range y {
		y[i] = 3 + 2*rng.NormFloat64()
	}
	data, _ := json.Marshal(map[string]any{"y": y})
	prec, lin := 1/100.0, 1/100.0
	for _, v := range y {
		prec += 1 / 4.0
		lin += v / 4
	}
	wantMean, wantSD := lin/prec, math.Sqrt(1/prec)
	// log N(y; 1·1, 4I + 100·11ᵀ)
	n := len(y)
	C := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			v := 100.0
			if i == j {
				v += 4
			}
			C.SetSym(i, j, v)
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(C) {
		t.Fatal("not SPD")
	}
	r := mat.NewVecDense(n, nil)
	for i := range n {
		r.SetVec(i, y[i]-1)
	}
	var s mat.VecDense
	if err := ch.SolveVecTo(&s, r); err != nil {
		t.Fatal(err)
	}
	logEv := -0.5*mat.Dot(r, &s) - 0.5*ch.LogDet() - 0.5*float64(n)*math.Log(2*math.Pi)
	for _, r := range runScalar(t, normMeanScalarCase, data) {
		m, sd := scalarOf(t, r, "mu")
		if math.Abs(m-wantMean) > 1e-10 || math.Abs(sd-wantSD) > 1e-10 {
			t.Errorf("%s: mu = %.12g ± %.12g, exact %.12g ± %.12g", r.Method, m, sd, wantMean, wantSD)
		}
		if got := r.ELBO[len(r.ELBO)-1]; math.Abs(got-logEv) > 1e-9*math.Abs(logEv) {
			t.Errorf("%s: ELBO %.12g, exact log evidence %.12g", r.Method, got, logEv)
		}
	}
}

const ar2ScalarVI = `model ar2
size T
data y : real[T]
const sigma : real = 0.7
latent a : real nonconjugate laplace
latent b1 : real nonconjugate laplace
latent b2 : real nonconjugate laplace
a ~ Normal(0, 10)
b1 ~ Normal(0, 10)
b2 ~ Normal(0, 10)
for t in 3:T {
  y[t] ~ Normal(a + b1 * y[t-1] + b2 * y[t-2], sigma)
}
`

var ar2ScalarCase = fastTest("TestEndToEndAR2ScalarLatents").fits("ar2", ar2ScalarVI, ", Tol: 1e-15, MeanTol: 1e-13, MaxIter: 100000")

// AR(2) with scalar latents a, b1, b2 and known sigma is a Bayesian
// linear regression of y[t] on (1, y[t-1], y[t-2]) for t = 3..T: its
// posterior is Gaussian with precision Λ = I/100 + XᵀX/σ² and mean
// Λ⁻¹Xᵀy/σ². Three scalar factors (mean field, one per latent as Wang &
// Blei have one per latent) reach the exact means at their fixed point,
// with variances 1/Λ_ii.
func TestEndToEndAR2ScalarLatents(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	y := []float64{0.3, -0.2}
	for len(y) < 80 {
		k := len(y)
		y = append(y, 0.5+0.6*y[k-1]-0.3*y[k-2]+0.7*rng.NormFloat64())
	}
	// A first value far off: if the loop ran from t = 1 or 2 (or read
	// the wrong lags), the fit would move by far more than the tolerance.
	y[0] = 40
	data, _ := json.Marshal(map[string]any{"y": y})
	const s2 = 0.7 * 0.7
	L := mat.NewSymDense(3, nil)
	b := mat.NewVecDense(3, nil)
	for i := range 3 {
		L.SetSym(i, i, 1/100.0)
	}
	for k := 2; k < len(y); k++ {
		x := []float64{1, y[k-1], y[k-2]}
		for i := range 3 {
			b.SetVec(i, b.AtVec(i)+x[i]*y[k]/s2)
			for j := i; j < 3; j++ {
				L.SetSym(i, j, L.At(i, j)+x[i]*x[j]/s2)
			}
		}
	}
	var mean mat.VecDense
	if err := mean.SolveVec(L, b); err != nil {
		t.Fatal(err)
	}
	for _, r := range runScalar(t, ar2ScalarCase, data) {
		for i, name := range []string{"a", "b1", "b2"} {
			m, sd := scalarOf(t, r, name)
			if math.Abs(m-mean.AtVec(i)) > 1e-8 {
				t.Errorf("%s: %s mean %.12g, exact posterior mean %.12g", r.Method, name, m, mean.AtVec(i))
			}
			if want := math.Sqrt(1 / L.At(i, i)); math.Abs(sd-want) > 1e-10 {
				t.Errorf("%s: %s sd %.12g, mean-field 1/sqrt(Λ_ii) = %.12g", r.Method, name, sd, want)
			}
		}
	}
}

const scalarVectorVI = `model mixed
size N, P
data x : real[N, P]
data y : real[N]
latent beta : real[P] nonconjugate laplace
latent mu : real nonconjugate laplace
beta ~ Normal(0, 2)
mu ~ Normal(0, 5)
for n in 1:N {
  y[n] ~ Normal(mu + dot(x[n], beta) + 0.5 * x[n, 1], 0.5)
}
`

var scalarVectorCase = fastTest("TestEndToEndScalarAndVectorLatents").fits("mixed", scalarVectorVI, ", Tol: 1e-15, MeanTol: 1e-13, MaxIter: 100000")

// A vector latent and a scalar one (an intercept) in the same statement,
// both Laplace: the mean-field fixed point has the exact joint posterior
// means, q(beta)'s covariance (Λ_ββ)⁻¹ and q(mu)'s variance 1/Λ_μμ. The
// intercept is also read through a literal index of data (x[n, 1] is the
// first covariate).
func TestEndToEndScalarAndVectorLatents(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	const n, p = 60, 3
	x := make([][]float64, n)
	y := make([]float64, n)
	for i := range x {
		x[i] = make([]float64, p)
		for j := range x[i] {
			x[i][j] = rng.NormFloat64()
		}
		y[i] = 1.5 + x[i][0] - 0.5*x[i][2] + 0.5*rng.NormFloat64()
	}
	data, _ := json.Marshal(map[string]any{"x": x, "y": y})
	// joint over (beta, mu): design rows (x[n], 1), response y − 0.5 x[n,1]
	const s2 = 0.25
	L := mat.NewSymDense(p+1, nil)
	b := mat.NewVecDense(p+1, nil)
	for i := range p {
		L.SetSym(i, i, 1/4.0)
	}
	L.SetSym(p, p, 1/25.0)
	for k := range n {
		row := append(append([]float64(nil), x[k]...), 1)
		r := y[k] - 0.5*x[k][0]
		for i := range p + 1 {
			b.SetVec(i, b.AtVec(i)+row[i]*r/s2)
			for j := i; j < p+1; j++ {
				L.SetSym(i, j, L.At(i, j)+row[i]*row[j]/s2)
			}
		}
	}
	var mean mat.VecDense
	if err := mean.SolveVec(L, b); err != nil {
		t.Fatal(err)
	}
	Lbb := mat.NewSymDense(p, nil)
	for i := range p {
		for j := i; j < p; j++ {
			Lbb.SetSym(i, j, L.At(i, j))
		}
	}
	var covB mat.Dense
	if err := covB.Inverse(Lbb); err != nil {
		t.Fatal(err)
	}
	for _, r := range runScalar(t, scalarVectorCase, data) {
		var g gaussianJSON
		if err := json.Unmarshal(r.Latent["beta"], &g); err != nil {
			t.Fatal(err)
		}
		for i := range p {
			if math.Abs(g.Mean[i]-mean.AtVec(i)) > 1e-8 {
				t.Errorf("%s: beta[%d] = %.12g, exact %.12g", r.Method, i+1, g.Mean[i], mean.AtVec(i))
			}
			for j := range p {
				if math.Abs(g.Cov[i][j]-covB.At(i, j)) > 1e-10 {
					t.Errorf("%s: cov(beta)[%d][%d] = %.12g, mean field %.12g", r.Method, i+1, j+1, g.Cov[i][j], covB.At(i, j))
				}
			}
		}
		m, sd := scalarOf(t, r, "mu")
		if math.Abs(m-mean.AtVec(p)) > 1e-8 || math.Abs(sd-math.Sqrt(1/L.At(p, p))) > 1e-10 {
			t.Errorf("%s: mu = %.12g ± %.12g, want %.12g ± %.12g", r.Method, m, sd, mean.AtVec(p), math.Sqrt(1/L.At(p, p)))
		}
	}
}

const poisRateVI = `model poisrate
size N
data y : int[N]
param tau : real
tau ~ Normal(0, 1)
for n in 1:N {
  y[n] ~ Poisson(exp(tau))
}
`

var poisRateCase = fastTest("TestEndToEndScalarParamMStep").fits("poisrate", poisRateVI, ", Tol: 1e-15, MaxIter: 1000")

// A scalar param with a prior, estimated by Newton's method (its numeric
// M-step): the MAP of Σ y log λ − Nλ − τ²/2 with λ = exp(τ), found here by
// a scalar Newton iteration.
func TestEndToEndScalarParamMStep(t *testing.T) {
	y := []int{1, 2, 0, 3, 5, 4, 2}
	data, _ := json.Marshal(map[string]any{"y": y})
	sum := 0.0
	for _, v := range y {
		sum += float64(v)
	}
	tau := 0.0
	for range 100 {
		g := sum - float64(len(y))*math.Exp(tau) - tau
		h := -float64(len(y))*math.Exp(tau) - 1
		tau -= g / h
	}
	for _, r := range runScalar(t, poisRateCase, data) {
		var got float64
		if err := json.Unmarshal(r.Params["tau"], &got); err != nil {
			t.Fatalf("%s: params %s: %v", r.Method, r.Params["tau"], err)
		}
		if math.Abs(got-tau) > 1e-10 {
			t.Errorf("%s: tau = %.12g, MAP %.12g", r.Method, got, tau)
		}
	}
}

const partialLoopVI = `model partial
size N
data y : real[N]
latent mu : real conjugate
mu ~ Normal(0, 10)
for n in 2:N-1 {
  y[n] ~ Normal(mu, 1)
}
`

var partialLoopCase = fastTest("TestEndToEndPartialLoopSkipsEnds").fits("partial", partialLoopVI, "")

// A conjugate Normal mean whose likelihood loop runs over 2:N-1 only: the
// first and last points (set far off) must not enter the exact posterior.
func TestEndToEndPartialLoopSkipsEnds(t *testing.T) {
	y := []float64{100, 1, 2.5, 3, 0.5, -50}
	data, _ := json.Marshal(map[string]any{"y": y})
	prec, lin := 1/100.0, 0.0
	for _, v := range y[1 : len(y)-1] {
		prec++
		lin += v
	}
	out := partialLoopCase.run(t, data)
	var res []struct {
		Latent map[string]struct {
			Params map[string][]float64 `json:"params"`
		} `json:"latent"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, r := range res {
		p := r.Latent["mu"].Params
		if len(p["mean"]) != 1 || math.Abs(p["mean"][0]-lin/prec) > 1e-12 || math.Abs(p["sd"][0]-math.Sqrt(1/prec)) > 1e-12 {
			t.Errorf("q(mu) = %v, exact mean %.12g sd %.12g", p, lin/prec, math.Sqrt(1/prec))
		}
	}
}
