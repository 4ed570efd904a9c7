package codegen

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/vigen-go/vigen/golden"
)

const facWholeVI = `model facwhole
size N, P
data x : real[N, P]
data y : real[N]
const s : real = 0.5
latent beta : real[P] nonconjugate laplace
factor -0.5 * sum((beta - 0.25)^2) / 2
for n in 1:N {
  y[n] ~ Normal(dot(x[n], beta), s)
}
`

const facLoopVI = `model facloop
size N, P
data x : real[N, P]
data y : real[N]
const s : real = 0.5
latent beta : real[P] nonconjugate delta
for p in 1:P {
  factor -0.5 * (beta[p] - 0.25)^2 / 2
}
for n in 1:N {
  y[n] ~ Normal(dot(x[n], beta), s)
}
`

var (
	factorPrior      = slowTest("TestEndToEndFactorReplacesPrior")
	factorPriorCases = []struct {
		name string
		c    *e2eCase
	}{{"facwhole", factorPrior.fits("facwhole", facWholeVI, "")}, {"facloop", factorPrior.fits("facloop", facLoopVI, "")}}
)

// A `factor` statement is a term of the log density (Stan's `target +=`):
// written for the Gaussian prior N(0.25, 2) of linear regression, whole or
// one element at a time inside a loop, it must give the exact posterior of
// the `~` model, and an ELBO that differs from the exact log evidence by
// the prior's normalizing constant, which the factor leaves out.
func TestEndToEndFactorReplacesPrior(t *testing.T) {
	golden.SlowTier(t)
	rng := rand.New(rand.NewPCG(21, 22))
	const p = 3
	x, y, data := linregData(rng, 60, p)
	mean, cov := exactPosterior(x, y, 0.5, 0.25, 2)
	evidence := logEvidence(x, y, 0.5, 0.25, 2) + p*0.5*math.Log(2*math.Pi*2)
	for _, c := range factorPriorCases {
		t.Run(c.name, func(t *testing.T) {
			for _, r := range c.c.results(t, data) {
				if !r.Converged {
					t.Errorf("%s: not converged: %s", r.Method, r.Status)
				}
				g := r.Latent["beta"]
				for i := range p {
					if d := math.Abs(g.Mean[i] - mean.AtVec(i)); d > 1e-9 {
						t.Errorf("%s: mean[%d] = %.12g, exact %.12g", r.Method, i, g.Mean[i], mean.AtVec(i))
					}
					for j := range p {
						if d := math.Abs(g.Cov[i][j] - cov.At(i, j)); d > 1e-9 {
							t.Errorf("%s: cov[%d][%d] = %.12g, exact %.12g", r.Method, i, j, g.Cov[i][j], cov.At(i, j))
						}
					}
				}
				if got := r.ELBO[len(r.ELBO)-1]; math.Abs(got-evidence) > 1e-8*math.Abs(evidence) {
					t.Errorf("%s: ELBO %.10g, want the log evidence without the prior's constant %.10g", r.Method, got, evidence)
				}
			}
		})
	}
}

const dlangVI = `model dlang
size N, P, J
data x : real[N, P]
data t : real[N]
data y : real[N]
data group : int[N] in 1..J
const xbar : real[P] = 0
const s : real = 0.5
latent beta : real[P] nonconjugate laplace
latent u : real[J] nonconjugate laplace
factor -0.5 * sum((beta - 0.25)^2) / 2
for j in 1:J {
  factor -0.5 * u[j]^2
}
for n in 1:N {
  let eta[n] = dot(x[n] - xbar, beta) + log(t[n])
}
for n in 1:N {
  let mu = eta[n] + u[group[n]]
  y[n] ~ Normal(mu, s)
}
`

var dlangCase = fastTest("TestEndToEndLetDataExpressionsAndRangeSize").fits("dlang", dlangVI, ", Tol: 1e-15, MeanTol: 1e-13, MaxIter: 5000")

// Lets (an array defined in one loop and read in another, a per-iteration
// one), expressions of data in the arguments (centring by a const vector,
// a log offset), factor priors, a size given by nothing but the range of
// an index (J = max(group)) and a data key the model does not declare
// (ignored) together: the model is linear-Gaussian in (beta, u), so the
// means of mean-field q are those of the exact posterior, computed here by
// the normal equations.
func TestEndToEndLetDataExpressionsAndRangeSize(t *testing.T) {
	const n, p, j = 70, 2, 4
	rng := rand.New(rand.NewPCG(31, 32))
	x := make([][]float64, n)
	tt, y, xbar := make([]float64, n), make([]float64, n), []float64{0.3, -0.2}
	group := make([]int, n)
	uTrue := []float64{0.5, -0.4, 0.1, 0.9}
	for i := range n {
		x[i] = []float64{rng.NormFloat64() + 0.3, rng.NormFloat64() - 0.2}
		tt[i] = 0.5 + rng.Float64()
		group[i] = 1 + i%j
		y[i] = 0.7*(x[i][0]-xbar[0]) - 0.3*(x[i][1]-xbar[1]) + math.Log(tt[i]) + uTrue[group[i]-1] + 0.5*rng.NormFloat64()
	}
	data, _ := json.Marshal(map[string]any{"x": x, "t": tt, "y": y, "group": group, "xbar": xbar, "comment": "not a variable"})

	// Exact posterior mean of θ = (beta, u): (Λ0 + ZᵀZ/s²) m = Λ0 m0 + Zᵀ(y − log t)/s².
	k := p + j
	prec := mat.NewSymDense(k, nil)
	rhs := mat.NewVecDense(k, nil)
	for a := range p {
		prec.SetSym(a, a, 0.5)
		rhs.SetVec(a, 0.25*0.5)
	}
	for a := p; a < k; a++ {
		prec.SetSym(a, a, 1)
	}
	for i := range n {
		z := make([]float64, k)
		z[0], z[1] = x[i][0]-xbar[0], x[i][1]-xbar[1]
		z[p+group[i]-1] = 1
		r := y[i] - math.Log(tt[i])
		for a := range k {
			rhs.SetVec(a, rhs.AtVec(a)+z[a]*r/0.25)
			for b := a; b < k; b++ {
				prec.SetSym(a, b, prec.At(a, b)+z[a]*z[b]/0.25)
			}
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(prec) {
		t.Fatal("posterior precision not positive definite")
	}
	want := mat.NewVecDense(k, nil)
	if err := ch.SolveVecTo(want, rhs); err != nil {
		t.Fatal(err)
	}
	for _, r := range dlangCase.results(t, data) {
		b, u := r.Latent["beta"].Mean, r.Latent["u"].Mean
		if len(b) != p || len(u) != j {
			t.Fatalf("%s: beta has %d entries, u %d; want %d and %d (J = max(group))", r.Method, len(b), len(u), p, j)
		}
		got := append(append([]float64(nil), b...), u...)
		for a := range k {
			if d := math.Abs(got[a] - want.AtVec(a)); d > 1e-7 {
				t.Errorf("%s: mean[%d] = %.10g, exact %.10g", r.Method, a, got[a], want.AtVec(a))
			}
		}
	}
}
