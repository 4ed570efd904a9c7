package codegen

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/mathext"

	"github.com/vigen-go/vigen/golden"
)

// Mean-field models whose updates read several factors at once: the
// expectation of (μ − θ_j)² under q(μ)q(θ) must carry Var_q(μ) as well as
// Σ^θ. The generated fits are compared with coordinate ascent written out
// by hand from the mean-field equations (Bishop §10.1), run to its fixed
// point. Both models are Gaussian in θ given the others, so Laplace and
// the delta method are exact there and must agree with it too.

// Eight schools with a conjugate mean and precision.
const schoolsVI = `model schools
size J
data y : real[J]
data sigma : real[J]
const m0 : real = 0
const s0 : real = 5
const a0 : real = 1
const b0 : real = 1
latent mu : real conjugate
latent prec : real conjugate
latent theta : real[J] nonconjugate laplace
mu ~ Normal(m0, s0)
prec ~ Gamma(a0, b0)
theta ~ Normal(mu, 1 / sqrt(prec))
y ~ Normal(theta, sigma)
`

var schoolsCase = fastTest("TestEndToEndEightSchoolsMeanField").fits("schools", schoolsVI, ", Tol: 1e-15, MeanTol: 1e-13, MaxIter: 100000")

func TestEndToEndEightSchoolsMeanField(t *testing.T) {
	y := []float64{28, 8, -3, 7, -1, 1, 18, 12}
	sg := []float64{15, 10, 16, 11, 9, 11, 10, 18}
	const m0, s0, a0, b0 = 0.0, 5.0, 1.0, 1.0
	J := len(y)
	// CAVI by hand: q(μ) = N(m, v), q(τ) = Gamma(a, b), q(θ_j) = N(t_j, w_j).
	m, v, a, b := 0.0, 1.0, a0+float64(J)/2, 1.0
	th, w := make([]float64, J), make([]float64, J)
	for range 100000 {
		et := a / b
		for j := range J {
			p := et + 1/(sg[j]*sg[j])
			th[j], w[j] = (et*m+y[j]/(sg[j]*sg[j]))/p, 1/p
		}
		pm := 1/(s0*s0) + float64(J)*et
		sum := 0.0
		for j := range J {
			sum += th[j]
		}
		m, v = (m0/(s0*s0)+et*sum)/pm, 1/pm
		ss := 0.0
		for j := range J {
			ss += (th[j]-m)*(th[j]-m) + w[j] + v
		}
		b = b0 + ss/2
	}
	// The ELBO at that fixed point, term by term: E_q[log p] + H[q].
	et, elog := a/b, mathext.Digamma(a)-math.Log(b)
	elbo := -0.5*math.Log(2*math.Pi*s0*s0) - ((m-m0)*(m-m0)+v)/(2*s0*s0) +
		a0*math.Log(b0) - lgamma(a0) + (a0-1)*elog - b0*et +
		0.5*math.Log(2*math.Pi*math.E*v) + a - math.Log(b) + lgamma(a) + (1-a)*mathext.Digamma(a)
	for j := range J {
		elbo += -0.5*math.Log(2*math.Pi) + 0.5*elog - 0.5*et*((th[j]-m)*(th[j]-m)+w[j]+v)
		elbo += -0.5*math.Log(2*math.Pi*sg[j]*sg[j]) - ((y[j]-th[j])*(y[j]-th[j])+w[j])/(2*sg[j]*sg[j])
		elbo += 0.5 * math.Log(2*math.Pi*math.E*w[j])
	}
	data, _ := json.Marshal(map[string]any{"y": y, "sigma": sg})
	res := schoolsCase.results(t, data)
	for _, r := range res {
		if !r.Converged {
			t.Errorf("%s: not converged: %s", r.Method, r.Status)
		}
		check := againstCAVI(t, r.Method)
		check("ELBO", r.ELBO[len(r.ELBO)-1], elbo)
		q := r.Latent["prec"].Params
		check("prec shape", q["shape"][0], a)
		check("prec rate", q["rate"][0], b)
		q = r.Latent["mu"].Params
		check("mu mean", q["mean"][0], m)
		check("mu sd", q["sd"][0], math.Sqrt(v))
		g := r.Latent["theta"]
		for j := range J {
			check("theta mean", g.Mean[j], th[j])
			check("theta var", g.Cov[j][j], w[j])
		}
	}
}

// Linear regression with a conjugate intercept and noise precision.
const meanFieldRegVI = `model mfreg
size N, P
data x : real[N, P]
data y : real[N]
latent a : real conjugate
latent tau : real conjugate
latent beta : real[P] nonconjugate laplace
a ~ Normal(0, 10)
tau ~ Gamma(1, 1)
beta ~ Normal(0, 1)
for n in 1:N {
  y[n] ~ Normal(a + dot(x[n], beta), 1 / sqrt(tau))
}
`

var meanFieldRegCase = slowTest("TestEndToEndRegressionInterceptPrecisionMeanField").fits("mfreg", meanFieldRegVI, ", Tol: 1e-15, MeanTol: 1e-13, MaxIter: 100000")

func TestEndToEndRegressionInterceptPrecisionMeanField(t *testing.T) {
	golden.SlowTier(t)
	rng := rand.New(rand.NewPCG(31, 32))
	x, y, _ := linregData(rng, 50, 3)
	for n := range y {
		y[n] += 2 // an intercept to find
	}
	N, P := len(x), len(x[0])
	X := mat.NewDense(N, P, nil)
	for n := range N {
		X.SetRow(n, x[n])
	}
	var xtx mat.SymDense
	xtx.SymOuterK(1, X.T())
	// CAVI by hand: q(a) = N(ma, va), q(τ) = Gamma(sh, rt), q(β) = N(mb, S).
	ma, va, sh, rt := 0.0, 1.0, 1+float64(N)/2, 1.0
	mb := mat.NewVecDense(P, nil)
	S := mat.NewSymDense(P, nil)
	for range 20000 {
		et := sh / rt
		prec := mat.NewSymDense(P, nil)
		for i := range P {
			for j := i; j < P; j++ {
				d := et * xtx.At(i, j)
				if i == j {
					d++
				}
				prec.SetSym(i, j, d)
			}
		}
		var ch mat.Cholesky
		if !ch.Factorize(prec) {
			t.Fatal("not positive definite")
		}
		ch.InverseTo(S)
		rhs := mat.NewVecDense(P, nil)
		for n := range N {
			for i := range P {
				rhs.SetVec(i, rhs.AtVec(i)+et*x[n][i]*(y[n]-ma))
			}
		}
		mb.MulVec(S, rhs)
		pa := 1/100.0 + float64(N)*et
		r := 0.0
		for n := range N {
			r += y[n] - mat.Dot(mat.NewVecDense(P, x[n]), mb)
		}
		ma, va = et*r/pa, 1/pa
		ss := 0.0
		for n := range N {
			xn := mat.NewVecDense(P, x[n])
			e := y[n] - ma - mat.Dot(xn, mb)
			ss += e*e + va + mat.Inner(xn, S, xn)
		}
		rt = 1 + ss/2
	}
	data, _ := json.Marshal(map[string]any{"x": x, "y": y})
	res := meanFieldRegCase.results(t, data)
	for _, r := range res {
		if !r.Converged {
			t.Errorf("%s: not converged: %s", r.Method, r.Status)
		}
		check := againstCAVI(t, r.Method)
		q := r.Latent["tau"].Params
		check("tau shape", q["shape"][0], sh)
		check("tau rate", q["rate"][0], rt)
		q = r.Latent["a"].Params
		check("a mean", q["mean"][0], ma)
		check("a sd", q["sd"][0], math.Sqrt(va))
		g := r.Latent["beta"]
		for i := range P {
			check("beta mean", g.Mean[i], mb.AtVec(i))
			for j := range P {
				check("beta cov", g.Cov[i][j], S.At(i, j))
			}
		}
	}
}

func lgamma(x float64) float64 {
	v, _ := math.Lgamma(x)
	return v
}

// againstCAVI checks a fitted value against the hand-written CAVI's, to
// 1e-10 relative.
func againstCAVI(t *testing.T, method string) func(what string, got, want float64) {
	return func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-10*math.Max(1, math.Abs(want)) {
			t.Errorf("%s: %s = %.14g, hand-written CAVI %.14g", method, what, got, want)
		}
	}
}
