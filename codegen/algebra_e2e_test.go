package codegen

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/vigen-go/vigen/golden"
)

// Vector and matrix algebra end to end: linear predictors written as in
// Stan (X * beta, x[n]' * beta, softmax(append(w * x[n], 0)), [a, b, 0])
// must give the exact Gaussian posterior where there is one, and the exact
// Laplace approximation (the mode and −H⁻¹ of a hand-written Newton)
// otherwise.

// The linear regression of TestEndToEndLinearRegressionIsExact, vectorized.
const linregMatVI = `model linregmat
size N, P
data x : real[N, P]
data y : real[N]
latent beta : real[P] nonconjugate laplace
beta ~ Normal(0.25, sqrt(2))
y ~ Normal(x * beta, 0.5)
`

// The same, one row at a time with a transpose.
const linregTVI = `model linregt
size N, P
data x : real[N, P]
data y : real[N]
latent beta : real[P] nonconjugate laplace
beta ~ Normal(0.25, sqrt(2))
for n in 1:N {
  y[n] ~ Normal(x[n]' * beta, 0.5)
}
`

var (
	matrixVectorLinreg = slowTest("TestEndToEndMatrixVectorLinearRegression")
	matrixVectorCases  = []struct {
		name string
		c    *e2eCase
	}{{"linregmat", matrixVectorLinreg.fits("linregmat", linregMatVI, "")}, {"linregt", matrixVectorLinreg.fits("linregt", linregTVI, "")}}
)

func TestEndToEndMatrixVectorLinearRegression(t *testing.T) {
	golden.SlowTier(t)
	rng := rand.New(rand.NewPCG(21, 22))
	x, y, data := linregData(rng, 60, 3)
	mean, cov := exactPosterior(x, y, 0.5, 0.25, 2)
	for _, c := range matrixVectorCases {
		t.Run(c.name, func(t *testing.T) {
			for _, r := range c.c.results(t, data) {
				if !r.Converged {
					t.Errorf("%s: not converged: %s", r.Method, r.Status)
				}
				checkGaussian(t, r.Method, r.Latent["beta"], mean, cov, 1e-9)
			}
		})
	}
}

// checkGaussian compares a fitted Gaussian with mean and cov.
func checkGaussian(t *testing.T, what string, g gaussianJSON, mean *mat.VecDense, cov mat.Symmetric, tol float64) {
	t.Helper()
	if len(g.Mean) != mean.Len() {
		t.Fatalf("%s: %d means, want %d", what, len(g.Mean), mean.Len())
	}
	for i := range g.Mean {
		if d := math.Abs(g.Mean[i] - mean.AtVec(i)); d > tol {
			t.Errorf("%s: mean[%d] = %.12g, want %.12g", what, i, g.Mean[i], mean.AtVec(i))
		}
		for j := range g.Mean {
			if d := math.Abs(g.Cov[i][j] - cov.At(i, j)); d > tol {
				t.Errorf("%s: cov[%d][%d] = %.12g, want %.12g", what, i, j, g.Cov[i][j], cov.At(i, j))
			}
		}
	}
}

// newtonMode maximizes a concave log density from 0 by Newton's method,
// given its gradient and Hessian, and returns the mode and −H⁻¹ there.
func newtonMode(t *testing.T, p int, gradHess func(b []float64) ([]float64, *mat.SymDense)) (*mat.VecDense, *mat.SymDense) {
	t.Helper()
	b := make([]float64, p)
	for it := 0; it < 200; it++ {
		g, h := gradHess(b)
		neg := mat.NewSymDense(p, nil)
		neg.ScaleSym(-1, h)
		var ch mat.Cholesky
		if !ch.Factorize(neg) {
			t.Fatal("Newton: the Hessian is not negative definite")
		}
		step := mat.NewVecDense(p, nil)
		if err := ch.SolveVecTo(step, mat.NewVecDense(p, g)); err != nil {
			t.Fatal(err)
		}
		size := 0.0
		for i := range b {
			b[i] += step.AtVec(i)
			size = math.Max(size, math.Abs(step.AtVec(i)))
		}
		if size < 1e-14 {
			break
		}
	}
	_, h := gradHess(b)
	neg := mat.NewSymDense(p, nil)
	neg.ScaleSym(-1, h)
	var ch mat.Cholesky
	ch.Factorize(neg)
	cov := mat.NewSymDense(p, nil)
	ch.InverseTo(cov)
	return mat.NewVecDense(p, b), cov
}

// addSoftmax adds to g and h the gradient and Hessian of log p_z with
// p = softmax(U b) (U: one row per class), at b.
func addSoftmax(g []float64, h *mat.SymDense, u [][]float64, z int, b []float64) {
	k := len(u)
	eta := make([]float64, k)
	m := math.Inf(-1)
	for c, row := range u {
		for i, v := range row {
			eta[c] += v * b[i]
		}
		m = math.Max(m, eta[c])
	}
	p := make([]float64, k)
	sum := 0.0
	for c := range eta {
		p[c] = math.Exp(eta[c] - m)
		sum += p[c]
	}
	ubar := make([]float64, len(b)) // Σ_c p_c u_c
	for c := range p {
		p[c] /= sum
		for i := range b {
			ubar[i] += p[c] * u[c][i]
		}
	}
	for i := range b {
		g[i] += u[z][i] - ubar[i]
		for j := i; j < len(b); j++ {
			cv := 0.0 // Cov_p(u_i, u_j)
			for c := range p {
				cv += p[c] * u[c][i] * u[c][j]
			}
			h.SetSym(i, j, h.At(i, j)-(cv-ubar[i]*ubar[j]))
		}
	}
}

// Softmax regression with a reference class: K classes, a coefficient for
// K−1 of them (K1 = K − 1, checked when the data is loaded).
const softmaxRefVI = `model smref
size N, K, K1
data x : real[N]
data y : int[N] in 1..K
latent w : real[K1] nonconjugate laplace
w ~ Normal(0, 2)
for n in 1:N {
  y[n] ~ Categorical(softmax(append(w * x[n], 0)))
}
`

var (
	softmaxRef = slowTest("TestEndToEndSoftmaxReferenceClass")
	smrefCase  = softmaxRef.fits("smref", softmaxRefVI, "")
	// smrefLoadCase prints the error of LoadData.
	smrefLoadCase = softmaxRef.driver("smref", softmaxRefVI, "print_load_error_line.go")
)

func TestEndToEndSoftmaxReferenceClass(t *testing.T) {
	golden.SlowTier(t)
	rng := rand.New(rand.NewPCG(31, 32))
	const n, k = 120, 4
	truth := []float64{1.2, -0.7, 0.4}
	x := make([]float64, n)
	y := make([]int, n)
	for i := range x {
		x[i] = rng.NormFloat64()
		eta := append(make([]float64, 0, k), 0)
		eta = eta[:0]
		for _, w := range truth {
			eta = append(eta, w*x[i])
		}
		eta = append(eta, 0)
		// draw from softmax(eta)
		sum := 0.0
		for _, e := range eta {
			sum += math.Exp(e)
		}
		u, c := rng.Float64()*sum, 0
		for ; c < k-1 && u > math.Exp(eta[c]); c++ {
			u -= math.Exp(eta[c])
		}
		y[i] = c + 1
	}
	mean, cov := newtonMode(t, k-1, func(b []float64) ([]float64, *mat.SymDense) {
		g := make([]float64, k-1)
		h := mat.NewSymDense(k-1, nil)
		for i := range b {
			g[i] -= b[i] / 4
			h.SetSym(i, i, -0.25)
		}
		for i := range x {
			u := make([][]float64, k) // row c: ∂η_c/∂w
			for c := range u {
				u[c] = make([]float64, k-1)
				if c < k-1 {
					u[c][c] = x[i]
				}
			}
			addSoftmax(g, h, u, y[i]-1, b)
		}
		return g, h
	})
	data, _ := json.Marshal(map[string]any{"x": x, "y": y, "K": k, "K1": k - 1})
	res := smrefCase.results(t, data)
	for _, r := range res {
		if !r.Converged {
			t.Errorf("%s: not converged: %s", r.Method, r.Status)
		}
		if r.Method == "laplace" {
			checkGaussian(t, "laplace", r.Latent["w"], mean, cov, 1e-8)
		}
	}
	// K = 4 needs K1 = 3: any other K1 is refused when the data is loaded.
	bad, _ := json.Marshal(map[string]any{"x": x, "y": y, "K": k, "K1": k - 2})
	out := string(smrefLoadCase.run(t, bad))
	if want := `size "K" = 4: it is the length of the vector append(w * x[n], 0) (smref.vi:8:30), which has K1 + 1 = 3 elements`; !strings.Contains(out, want) {
		t.Errorf("loading K1 = 2 with K = 4: got %q, want %q", out, want)
	}
}

// Both: a linear regression written with a matrix product, and a
// conditional logit over three alternatives (the last the reference) with
// a vector literal, sharing the coefficients.
const algebraMixedVI = `model algmixed
size N, P, K
data x : real[N, P]
data y : real[N]
data u1 : real[N, P]
data u2 : real[N, P]
data z : int[N] in 1..K
latent beta : real[P] nonconjugate laplace
beta ~ Normal(0, 1)
y ~ Normal(x * beta, 0.5)
for n in 1:N {
  z[n] ~ Categorical(softmax([u1[n]' * beta, dot(u2[n], beta), 0]))
}
`

var algebraMixedCase = slowTest("TestEndToEndAlgebraMixed").fits("algmixed", algebraMixedVI, "")

func TestEndToEndAlgebraMixed(t *testing.T) {
	golden.SlowTier(t)
	rng := rand.New(rand.NewPCG(41, 42))
	const n, p = 50, 3
	x, y, _ := linregData(rng, n, p)
	u1, u2 := make([][]float64, n), make([][]float64, n)
	z := make([]int, n)
	for i := range u1 {
		u1[i], u2[i] = make([]float64, p), make([]float64, p)
		for j := range p {
			u1[i][j], u2[i][j] = rng.NormFloat64(), rng.NormFloat64()
		}
		z[i] = 1 + rng.IntN(3)
	}
	mean, cov := newtonMode(t, p, func(b []float64) ([]float64, *mat.SymDense) {
		g := make([]float64, p)
		h := mat.NewSymDense(p, nil)
		for i := range b {
			g[i] -= b[i]
			h.SetSym(i, i, -1)
		}
		for i, row := range x {
			r := y[i]
			for j := range b {
				r -= row[j] * b[j]
			}
			for j := range b {
				g[j] += row[j] * r / 0.25
				for l := j; l < p; l++ {
					h.SetSym(j, l, h.At(j, l)-row[j]*row[l]/0.25)
				}
			}
			addSoftmax(g, h, [][]float64{u1[i], u2[i], make([]float64, p)}, z[i]-1, b)
		}
		return g, h
	})
	data, _ := json.Marshal(map[string]any{"x": x, "y": y, "u1": u1, "u2": u2, "z": z, "K": 3})
	for _, r := range algebraMixedCase.results(t, data) {
		if !r.Converged {
			t.Errorf("%s: not converged: %s", r.Method, r.Status)
		}
		if r.Method == "laplace" {
			checkGaussian(t, "laplace", r.Latent["beta"], mean, cov, 1e-8)
		}
	}
}
