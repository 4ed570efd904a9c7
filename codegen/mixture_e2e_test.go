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

// Mixtures with the assignment summed out, `y[n] ~ Mixture(w, Normal(...),
// Normal(...))`. With one latent block, Laplace's q is exactly N(mode,
// −H⁻¹) of the log density, so each test writes that log density out by
// hand (log Σ_k w_k N(y; m_k, s_k) through its components' log densities
// a_k, with ∇ and ∇² of logsumexp), runs Newton from the same start, and
// compares the mode and covariance with the generated fit.

// mixtureCase registers the case of test that fits src by Laplace from a
// start given with the data, for runMixture.
func mixtureCase(test e2eTest, name, src string) *e2eCase {
	return test.driver(name, src, "fit_laplace_from_start.go")
}

// runMixture runs c (mixtureCase): it fits data from start, and returns
// the result and the error of bad data (if any).
func runMixture(t *testing.T, c *e2eCase, data, start, bad any) (scalarResult, string) {
	t.Helper()
	in := map[string]any{"Data": data, "Start": start}
	if bad != nil {
		in["Bad"] = bad
	}
	b, _ := json.Marshal(in)
	out := c.run(t, b)
	var res struct {
		Results []scalarResult
		BadErr  string
	}
	if err := json.Unmarshal(out, &res); err != nil || len(res.Results) != 1 {
		t.Fatalf("driver output: %v\n%s", err, out)
	}
	if r := res.Results[0]; !r.Converged {
		t.Fatalf("not converged: %s", r.Status)
	}
	return res.Results[0], res.BadErr
}

// mixComps gives, for observation n, the components' log densities a_k
// (log weight included) and their gradients and Hessians in θ.
type mixComps func(n int, theta []float64) (a []float64, da, d2a [][]float64)

// mixLogLik is Σ_n log Σ_k exp(a_k) with its gradient and Hessian:
// ∇L = Σ r_k ∇a_k, ∇²L = Σ r_k (∇²a_k + ∇a_k ∇a_kᵀ) − (Σ r_k ∇a_k)(Σ r_k ∇a_k)ᵀ,
// r = softmax(a), the components' posterior weights.
func mixLogLik(nObs int, comps mixComps, theta []float64) (f float64, g []float64, h [][]float64) {
	p := len(theta)
	g = make([]float64, p)
	h = make([][]float64, p)
	for i := range h {
		h[i] = make([]float64, p)
	}
	for n := range nObs {
		a, da, d2a := comps(n, theta)
		m := math.Inf(-1)
		for _, x := range a {
			m = math.Max(m, x)
		}
		s := 0.0
		for _, x := range a {
			s += math.Exp(x - m)
		}
		f += m + math.Log(s)
		gn := make([]float64, p)
		for k := range a {
			r := math.Exp(a[k]-m) / s
			for i := range p {
				gn[i] += r * da[k][i]
				for j := range p {
					h[i][j] += r * (d2a[k][i*p+j] + da[k][i]*da[k][j])
				}
			}
		}
		for i := range p {
			g[i] += gn[i]
			for j := range p {
				h[i][j] -= gn[i] * gn[j]
			}
		}
	}
	return f, g, h
}

// mixtureNewton maximizes f from theta by Newton (the objective is concave
// near the start the tests give) and returns the mode and −H⁻¹ there.
func mixtureNewton(t *testing.T, theta []float64, f func([]float64) ([]float64, [][]float64)) ([]float64, *mat.Dense) {
	t.Helper()
	p := len(theta)
	x := append([]float64(nil), theta...)
	var cov mat.Dense
	for it := 0; ; it++ {
		g, h := f(x)
		H := mat.NewDense(p, p, nil)
		for i := range p {
			for j := range p {
				H.Set(i, j, -h[i][j])
			}
		}
		if err := cov.Inverse(H); err != nil {
			t.Fatalf("hand-written Newton: %v", err)
		}
		var step mat.VecDense
		step.MulVec(&cov, mat.NewVecDense(p, g))
		size := 0.0
		for i := range p {
			x[i] += step.AtVec(i)
			size = math.Max(size, math.Abs(step.AtVec(i)))
		}
		if size < 1e-13 {
			_, h = f(x)
			for i := range p {
				for j := range p {
					H.Set(i, j, -h[i][j])
				}
			}
			if err := cov.Inverse(H); err != nil {
				t.Fatal(err)
			}
			return x, &cov
		}
		if it > 200 {
			t.Fatalf("hand-written Newton did not converge from %v", theta)
		}
	}
}

const halfLog2Pi = 0.91893853320467274178

// twoNormalsData draws n points from 0.35·N(−2, 0.7²) + 0.65·N(3, 1.2²).
func twoNormalsData(n int, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 2))
	y := make([]float64, n)
	for i := range y {
		if rng.Float64() < 0.35 {
			y[i] = -2 + 0.7*rng.NormFloat64()
		} else {
			y[i] = 3 + 1.2*rng.NormFloat64()
		}
	}
	return y
}

// startJSON is a Result of model to start a fit from.
func startJSON(model string, latents map[string]any) map[string]any {
	return map[string]any{"model": model, "method": "laplace", "latent": latents}
}

const mixMeansVI = `model mixmu
size N, K
data y : real[N]
data pi : simplex[K]
data s : real[K]
latent mu : real[K] nonconjugate laplace
mu ~ Normal(0, 10)
for n in 1:N {
  y[n] ~ Mixture(pi, Normal(mu[1], s[1]), Normal(mu[2], s[2]), Normal(mu[3], s[3]))
}
`

var mixMeansCase = mixtureCase(slowTest("TestEndToEndSummedMixtureMeans"), "mixmu", mixMeansVI)

// The means of three normal components with known scales and a simplex of
// weights given as data; a K other than 3 is refused.
func TestEndToEndSummedMixtureMeans(t *testing.T) {
	golden.SlowTier(t)
	y := twoNormalsData(80, 7)
	pi, s := []float64{0.3, 0.5, 0.2}, []float64{0.7, 1.2, 2}
	start := []float64{-1.5, 2.5, 0.5}
	comps := func(n int, mu []float64) ([]float64, [][]float64, [][]float64) {
		a := make([]float64, 3)
		da, d2a := make([][]float64, 3), make([][]float64, 3)
		for k := range 3 {
			z := (y[n] - mu[k]) / s[k]
			a[k] = math.Log(pi[k]) - math.Log(s[k]) - halfLog2Pi - z*z/2
			da[k], d2a[k] = make([]float64, 3), make([]float64, 9)
			da[k][k] = z / s[k]
			d2a[k][k*3+k] = -1 / (s[k] * s[k])
		}
		return a, da, d2a
	}
	mode, cov := mixtureNewton(t, start, func(mu []float64) ([]float64, [][]float64) {
		_, g, h := mixLogLik(len(y), comps, mu)
		for k := range 3 {
			g[k] -= mu[k] / 100
			h[k][k] -= 1.0 / 100
		}
		return g, h
	})
	data := map[string]any{"y": y, "pi": pi, "s": s}
	bad := map[string]any{"y": y, "pi": []float64{0.3, 0.4, 0.2, 0.1}, "s": []float64{0.7, 1.2, 2, 1}}
	r, badErr := runMixture(t, mixMeansCase, data,
		startJSON("mixmu", map[string]any{"mu": map[string]any{"family": "MvNormal", "mean": start, "cov": [][]float64{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}}}), bad)
	var mu gaussianJSON
	if err := json.Unmarshal(r.Latent["mu"], &mu); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		scalarClose(t, r.Method, "mean of mu", mu.Mean[i], mode[i], 1e-8)
		for j := range 3 {
			scalarClose(t, r.Method, "cov of mu", mu.Cov[i][j], cov.At(i, j), 1e-8)
		}
	}
	t.Logf("mu: mode %.6f, sd %.6f %.6f %.6f", mode, math.Sqrt(cov.At(0, 0)), math.Sqrt(cov.At(1, 1)), math.Sqrt(cov.At(2, 2)))
	if !strings.Contains(badErr, `size "K" = 4`) || !strings.Contains(badErr, "must be 3") {
		t.Errorf("K = 4 with three components: error %q, want one saying K must be 3", badErr)
	}
}

const mixScalesVI = `model mixsig
size N, K
data y : real[N]
data m : real[K]
const w : real = 0.35
latent sigma : real<lower=0>[K] nonconjugate laplace
sigma ~ HalfNormal(5)
for n in 1:N {
  y[n] ~ Mixture(w, Normal(m[1], sigma[1]), Normal(m[2], sigma[2]))
}
`

var mixScalesCase = mixtureCase(slowTest("TestEndToEndSummedMixtureScales"), "mixsig", mixScalesVI)

// The two scales of a two-component mixture with known means and weight,
// sigma : real<lower=0>[K] with a HalfNormal prior, fitted as u = log sigma.
func TestEndToEndSummedMixtureScales(t *testing.T) {
	golden.SlowTier(t)
	y := twoNormalsData(80, 9)
	m, w := []float64{-2, 3}, []float64{0.35, 0.65}
	start := []float64{0, 0}
	comps := func(n int, u []float64) ([]float64, [][]float64, [][]float64) {
		a := make([]float64, 2)
		da, d2a := make([][]float64, 2), make([][]float64, 2)
		for k := range 2 {
			z := (y[n] - m[k]) * math.Exp(-u[k])
			a[k] = math.Log(w[k]) - u[k] - halfLog2Pi - z*z/2
			da[k], d2a[k] = make([]float64, 2), make([]float64, 4)
			da[k][k] = z*z - 1
			d2a[k][k*2+k] = -2 * z * z
		}
		return a, da, d2a
	}
	mode, cov := mixtureNewton(t, start, func(u []float64) ([]float64, [][]float64) {
		_, g, h := mixLogLik(len(y), comps, u)
		for k := range 2 {
			// log HalfNormal(e^u; 5) + u (the Jacobian)
			e := math.Exp(2 * u[k])
			g[k] += 1 - e/25
			h[k][k] -= 2 * e / 25
		}
		return g, h
	})
	data := map[string]any{"y": y, "m": m}
	r, _ := runMixture(t, mixScalesCase, data,
		startJSON("mixsig", map[string]any{"sigma": map[string]any{"family": "MvNormal", "mean": start, "cov": [][]float64{{1, 0}, {0, 1}}}}), nil)
	var sig gaussianJSON
	if err := json.Unmarshal(r.Latent["sigma"], &sig); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		scalarClose(t, r.Method, "mean of log sigma", sig.Mean[i], mode[i], 1e-8)
		for j := range 2 {
			scalarClose(t, r.Method, "cov of log sigma", sig.Cov[i][j], cov.At(i, j), 1e-8)
		}
	}
	t.Logf("log sigma: mode %.6f, sd %.6f %.6f (sigma ≈ %.4f %.4f)", mode, math.Sqrt(cov.At(0, 0)), math.Sqrt(cov.At(1, 1)), math.Exp(mode[0]), math.Exp(mode[1]))
}

const mixWeightVI = `model mixw
size N
data y : real[N]
latent w : real<lower=0, upper=1> nonconjugate laplace
w ~ Beta(2, 2)
for n in 1:N {
  y[n] ~ Mixture(w, Normal(-2, 0.7), Normal(3, 1.2))
}
`

var mixWeightCase = mixtureCase(fastTest("TestEndToEndSummedMixtureWeight"), "mixw", mixWeightVI)

// The mixing weight w : real<lower=0, upper=1> with a Beta(2, 2) prior,
// fitted as v = logit w, with known components.
func TestEndToEndSummedMixtureWeight(t *testing.T) {
	y := twoNormalsData(80, 11)
	comps := func(n int, v []float64) ([]float64, [][]float64, [][]float64) {
		p := 1 / (1 + math.Exp(-v[0]))
		l1 := -math.Log(0.7) - halfLog2Pi - math.Pow((y[n]+2)/0.7, 2)/2
		l2 := -math.Log(1.2) - halfLog2Pi - math.Pow((y[n]-3)/1.2, 2)/2
		a := []float64{math.Log(p) + l1, math.Log(1-p) + l2}
		return a, [][]float64{{1 - p}, {-p}}, [][]float64{{-p * (1 - p)}, {-p * (1 - p)}}
	}
	mode, cov := mixtureNewton(t, []float64{0}, func(v []float64) ([]float64, [][]float64) {
		_, g, h := mixLogLik(len(y), comps, v)
		// log Beta(σ(v); 2, 2) + log σ(v)(1 − σ(v)) = log 6 + 2 log σ + 2 log(1 − σ)
		p := 1 / (1 + math.Exp(-v[0]))
		g[0] += 2 - 4*p
		h[0][0] -= 4 * p * (1 - p)
		return g, h
	})
	r, _ := runMixture(t, mixWeightCase, map[string]any{"y": y},
		startJSON("mixw", map[string]any{"w": map[string]any{"family": "Normal", "mean": 0, "sd": 1}}), nil)
	gm, gs := scalarOf(t, r, "w")
	scalarClose(t, r.Method, "mean of logit w", gm, mode[0], 1e-8)
	scalarClose(t, r.Method, "sd of logit w", gs, math.Sqrt(cov.At(0, 0)), 1e-8)
	t.Logf("logit w: mode %.6f sd %.6f (w ≈ %.4f)", mode[0], math.Sqrt(cov.At(0, 0)), 1/(1+math.Exp(-mode[0])))
}

const mixFullVI = `model mix2
size N
data y : real[N]
latent mu1 : real nonconjugate laplace
latent mu2 : real nonconjugate laplace
latent sigma1 : real<lower=0> nonconjugate laplace
latent sigma2 : real<lower=0> nonconjugate laplace
latent w : real<lower=0, upper=1> nonconjugate laplace
mu1 ~ Normal(0, 10)
mu2 ~ Normal(0, 10)
sigma1 ~ HalfNormal(5)
sigma2 ~ HalfNormal(5)
w ~ Beta(2, 2)
for n in 1:N {
  y[n] ~ Mixture(w, Normal(mu1, sigma1), Normal(mu2, sigma2))
}
`

var mixFullCase = mixtureCase(slowTest("TestEndToEndSummedMixtureFull"), "mix2", mixFullVI)

// The two-component normal mixture with unknown means, scales and weight,
// as a statistician writes it, in three mean-field blocks (their
// expectations in each other Taylor-expanded, Eq. 19). No closed form to
// compare with: the blocks' exact Laplace fits are tested above; here the
// whole model must generate, build and converge from a start that breaks
// the label symmetry, and recover the simulated parameters.
func TestEndToEndSummedMixtureFull(t *testing.T) {
	golden.SlowTier(t)
	y := twoNormalsData(400, 13)
	normal := func(m float64) map[string]any { return map[string]any{"family": "Normal", "mean": m, "sd": 1} }
	r, _ := runMixture(t, mixFullCase, map[string]any{"y": y}, startJSON("mix2", map[string]any{
		"mu1": normal(-1), "mu2": normal(1), "sigma1": normal(0), "sigma2": normal(0), "w": normal(0)}), nil)
	for _, c := range []struct {
		name  string
		truth float64 // the simulated value, on the fitted (unconstrained) scale
	}{
		{"mu1", -2}, {"mu2", 3}, {"sigma1", math.Log(0.7)}, {"sigma2", math.Log(1.2)}, {"w", math.Log(0.35 / 0.65)},
	} {
		m, sd := scalarOf(t, r, c.name)
		t.Logf("%s: q mean %.4f sd %.4f (simulated %.4f)", c.name, m, sd, c.truth)
		if math.Abs(m-c.truth) > 4*sd || sd <= 0 || sd > 0.5 {
			t.Errorf("%s: q mean %.4f sd %.4f, simulated %.4f", c.name, m, sd, c.truth)
		}
	}
}
