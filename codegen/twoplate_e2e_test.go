package codegen

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// End-to-end tests of two-plate models: a latent local to the units of one
// loop read by the statements of another's (probabilistic PCA's scores
// z[n] and loadings W[d]), each against an independent computation.

const ppcaVI = `model ppca
size N, D, K
data x : real[N, D]
const s : real = 0.7
latent z : real[N, K] nonconjugate laplace
latent W : real[D, K] nonconjugate laplace
for n in 1:N { z[n] ~ Normal(0, 1) }
for d in 1:D { W[d] ~ Normal(0, 1) }
for n in 1:N { for d in 1:D { x[n, d] ~ Normal(dot(W[d], z[n]), s) } }
`

// The same model with the loops of the likelihood the other way round.
const ppcaSwappedVI = `model ppcas
size N, D, K
data x : real[N, D]
const s : real = 0.7
latent z : real[N, K] nonconjugate laplace
latent W : real[D, K] nonconjugate laplace
for n in 1:N { z[n] ~ Normal(0, 1) }
for d in 1:D { W[d] ~ Normal(0, 1) }
for d in 1:D { for n in 1:N { x[n, d] ~ Normal(dot(W[d], z[n]), s) } }
`

func ppcaData(rng *rand.Rand, n, d, k int, s float64) ([][]float64, []byte) {
	w := make([][]float64, d)
	for j := range w {
		w[j] = make([]float64, k)
		for a := range w[j] {
			w[j][a] = rng.NormFloat64()
		}
	}
	x := make([][]float64, n)
	for i := range x {
		z := make([]float64, k)
		for a := range z {
			z[a] = rng.NormFloat64()
		}
		x[i] = make([]float64, d)
		for j := range x[i] {
			u := 0.0
			for a := range z {
				u += w[j][a] * z[a]
			}
			x[i][j] = u + s*rng.NormFloat64()
		}
	}
	b, _ := json.Marshal(map[string]any{"x": x, "K": k})
	return x, b
}

// cavi is the mean-field CAVI update of one row r of a PPCA factor
// given the other factor's rows: with Σ_j E[o_j o_jᵀ] = Σ_j (m_j m_jᵀ + S_j),
//
//	q(r) = N(C Σ_j m_j y_j / s², C),  C = (I + Σ_j E[o_j o_jᵀ]/s²)⁻¹,
//
// y_j the observations linking r to row j of the other factor.
func cavi(other []gaussianJSON, y []float64, s float64) (*mat.VecDense, *mat.SymDense) {
	k := len(other[0].Mean)
	prec := mat.NewSymDense(k, nil)
	rhs := mat.NewVecDense(k, nil)
	for j, o := range other {
		for a := 0; a < k; a++ {
			rhs.SetVec(a, rhs.AtVec(a)+o.Mean[a]*y[j]/(s*s))
			for b := a; b < k; b++ {
				prec.SetSym(a, b, prec.At(a, b)+(o.Mean[a]*o.Mean[b]+o.Cov[a][b])/(s*s))
			}
		}
	}
	for a := 0; a < k; a++ {
		prec.SetSym(a, a, prec.At(a, a)+1)
	}
	var ch mat.Cholesky
	if !ch.Factorize(prec) {
		panic("cavi: precision not positive definite")
	}
	cov := mat.NewSymDense(k, nil)
	if err := ch.InverseTo(cov); err != nil {
		panic(err)
	}
	mean := mat.NewVecDense(k, nil)
	mean.MulVec(cov, rhs)
	return mean, cov
}

// checkCAVIFixedPoint fails unless every row of got is the CAVI update of
// that row given other (to tol).
func checkCAVIFixedPoint(t *testing.T, what string, got, other []gaussianJSON, y func(row, j int) float64, s, tol float64) {
	t.Helper()
	worst := 0.0
	for r, g := range got {
		ys := make([]float64, len(other))
		for j := range ys {
			ys[j] = y(r, j)
		}
		mean, cov := cavi(other, ys, s)
		for a := range g.Mean {
			worst = math.Max(worst, math.Abs(g.Mean[a]-mean.AtVec(a)))
			for b := range g.Mean {
				worst = math.Max(worst, math.Abs(g.Cov[a][b]-cov.At(a, b)))
			}
		}
	}
	if worst > tol {
		t.Errorf("%s: largest distance from the CAVI update %.3g, want ≤ %g", what, worst, tol)
	}
	t.Logf("%s: largest distance from the CAVI update %.3g", what, worst)
}

// Probabilistic PCA with known noise: each row's log joint given the other
// factor's rows is quadratic, so the Laplace update of z[n] (and of W[d])
// is the exact CAVI update, and vigen's fit must be a fixed point of the
// hand-written mean-field updates, whatever the start and with the
// likelihood's loops in either order.
func TestEndToEndPPCAIsCAVIFixedPoint(t *testing.T) {
	const n, d, k, s = 40, 6, 2, 0.7
	x, data := ppcaData(rand.New(rand.NewPCG(7, 18)), n, d, k, s)
	for _, src := range []struct{ name, vi string }{{"ppca", ppcaVI}, {"ppcas", ppcaSwappedVI}} {
		res := buildAndRunWith(t, src.name, src.vi, data, ", MaxIter: 20000, Tol: 1e-15, MeanTol: 1e-12")
		for _, r := range res {
			if !r.Converged {
				t.Errorf("%s %s: not converged: %s", src.name, r.Method, r.Status)
			}
			z, w := r.Latent["z"].Units, r.Latent["W"].Units
			if len(z) != n || len(w) != d {
				t.Fatalf("%s %s: %d units of z and %d of W, want %d and %d", src.name, r.Method, len(z), len(w), n, d)
			}
			checkCAVIFixedPoint(t, src.name+" "+r.Method+" z", z, w, func(i, j int) float64 { return x[i][j] }, s, 1e-7)
			checkCAVIFixedPoint(t, src.name+" "+r.Method+" W", w, z, func(j, i int) float64 { return x[i][j] }, s, 1e-7)
			// not the saddle at zero means, a fixed point too
			if mz, mw := maxAbsMean(z), maxAbsMean(w); mz < 0.1 || mw < 0.1 {
				t.Errorf("%s %s: largest |E[z]| %.3g, |E[W]| %.3g: the fit stayed at the saddle point of zero means", src.name, r.Method, mz, mw)
			}
			// the ELBO never decreases under exact coordinate updates
			for it := 1; it < len(r.ELBO); it++ {
				if r.ELBO[it] < r.ELBO[it-1]-1e-9*math.Abs(r.ELBO[it-1]) {
					t.Errorf("%s %s: ELBO decreased at iteration %d: %v → %v", src.name, r.Method, it+1, r.ELBO[it-1], r.ELBO[it])
					break
				}
			}
		}
	}
}

func maxAbsMean(gs []gaussianJSON) float64 {
	m := 0.0
	for _, g := range gs {
		for _, v := range g.Mean {
			m = math.Max(m, math.Abs(v))
		}
	}
	return m
}
