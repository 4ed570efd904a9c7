package codegen

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Regressions a statistician writes as in Stan, each with one coefficient
// vector beta ~ Normal(0, s0) fitted by Laplace: the result must be the
// mode of the log posterior and the inverse of its negative Hessian there,
// found here by Newton's method with the derivatives written out by hand
// for each likelihood h(η_n) of the linear predictor η_n = x_n·beta.
type glmLik func(n int, eta float64) (d1, d2 float64)

func glmNewton(t *testing.T, x [][]float64, s0 float64, h glmLik) (*mat.VecDense, *mat.SymDense) {
	t.Helper()
	p := len(x[0])
	beta := mat.NewVecDense(p, nil)
	hess := mat.NewSymDense(p, nil)
	for range 100 {
		grad := mat.NewVecDense(p, nil)
		hess = mat.NewSymDense(p, nil)
		for i := range p {
			grad.SetVec(i, -beta.AtVec(i)/(s0*s0))
			hess.SetSym(i, i, 1/(s0*s0))
		}
		for n := range x {
			eta := mat.Dot(mat.NewVecDense(p, x[n]), beta)
			d1, d2 := h(n, eta)
			for i := range p {
				grad.SetVec(i, grad.AtVec(i)+d1*x[n][i])
				for j := i; j < p; j++ {
					hess.SetSym(i, j, hess.At(i, j)-d2*x[n][i]*x[n][j])
				}
			}
		}
		var ch mat.Cholesky
		if !ch.Factorize(hess) {
			t.Fatal("hand-written Newton: Hessian not negative definite")
		}
		var step mat.VecDense
		if err := ch.SolveVecTo(&step, grad); err != nil {
			t.Fatal(err)
		}
		beta.AddVec(beta, &step)
		if mat.Norm(&step, 2) < 1e-14 {
			break
		}
	}
	var ch mat.Cholesky
	ch.Factorize(hess)
	var cov mat.SymDense
	ch.InverseTo(&cov)
	return beta, &cov
}

// glmCase registers the case of test that checkGLM runs.
func glmCase(test, name, src string) *e2eCase {
	return fastTest(test).fitsLaplace(name, src, ", Tol: 1e-15, MeanTol: 1e-13")
}

func checkGLM(t *testing.T, c *e2eCase, data map[string]any, beta *mat.VecDense, cov *mat.SymDense) {
	t.Helper()
	b, _ := json.Marshal(data)
	for _, r := range runScalarLaplace(t, c, b) {
		var g gaussianJSON
		if err := json.Unmarshal(r.Latent["beta"], &g); err != nil {
			t.Fatal(err)
		}
		for i := range g.Mean {
			scalarClose(t, r.Method, "beta mean", g.Mean[i], beta.AtVec(i), 1e-8)
			for j := range g.Mean {
				scalarClose(t, r.Method, "beta cov", g.Cov[i][j], cov.At(i, j), 1e-8)
			}
		}
	}
}

func glmDesign(seed uint64, n, p int) [][]float64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	x := make([][]float64, n)
	for i := range x {
		x[i] = make([]float64, p)
		x[i][0] = 1
		for j := 1; j < p; j++ {
			x[i][j] = rng.NormFloat64()
		}
	}
	return x
}

const probitVI = `model probit
size N, P
data x : real[N, P]
data y : int[N] in 0..1
latent beta : real[P] nonconjugate laplace
beta ~ Normal(0, 2.5)
for n in 1:N {
  y[n] ~ Bernoulli(Phi(dot(x[n], beta)))
}
`

var probitCase = glmCase("TestEndToEndProbitRegression", "probit", probitVI)

func TestEndToEndProbitRegression(t *testing.T) {
	x := glmDesign(3, 120, 3)
	truth := []float64{-0.3, 1.2, -0.8}
	rng := rand.New(rand.NewPCG(4, 4))
	y := make([]int, len(x))
	for n := range x {
		eta := 0.0
		for j := range truth {
			eta += x[n][j] * truth[j]
		}
		if rng.Float64() < distuv.UnitNormal.CDF(eta) {
			y[n] = 1
		}
	}
	// h(η) = y log Φ(η) + (1 − y) log Φ(−η); λ(η) = φ(η)/Φ(η)
	lam := func(e float64) float64 { return distuv.UnitNormal.Prob(e) / distuv.UnitNormal.CDF(e) }
	beta, cov := glmNewton(t, x, 2.5, func(n int, e float64) (float64, float64) {
		if y[n] == 1 {
			l := lam(e)
			return l, -l * (e + l)
		}
		l := lam(-e)
		return -l, -l * (l - e)
	})
	checkGLM(t, probitCase, map[string]any{"x": x, "y": y}, beta, cov)
}

const poissonOffsetVI = `model poisoff
size N, P
data x : real[N, P]
data expo : real<lower=0>[N]
data y : int[N]
latent beta : real[P] nonconjugate laplace
beta ~ Normal(0, 2.5)
for n in 1:N {
  y[n] ~ PoissonLog(dot(x[n], beta) + log(expo[n]))
}
`

var poissonOffsetCase = glmCase("TestEndToEndPoissonRegressionWithExposure", "poisoff", poissonOffsetVI)

func TestEndToEndPoissonRegressionWithExposure(t *testing.T) {
	x := glmDesign(5, 100, 3)
	truth := []float64{-1, 0.5, 0.25}
	rng := rand.New(rand.NewPCG(6, 6))
	expo := make([]float64, len(x))
	y := make([]int, len(x))
	for n := range x {
		expo[n] = 1 + 9*rng.Float64()
		eta := math.Log(expo[n])
		for j := range truth {
			eta += x[n][j] * truth[j]
		}
		y[n] = int(distuv.Poisson{Lambda: math.Exp(eta), Src: rng}.Rand())
	}
	beta, cov := glmNewton(t, x, 2.5, func(n int, e float64) (float64, float64) {
		mu := expo[n] * math.Exp(e)
		return float64(y[n]) - mu, -mu
	})
	checkGLM(t, poissonOffsetCase, map[string]any{"x": x, "y": y, "expo": expo}, beta, cov)
}
