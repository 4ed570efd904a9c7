package codegen

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/mathext"

	"github.com/vigen-go/vigen/golden"
)

// Regressions as a statistician writes them in Stan, with every scale
// under its own prior: a Student-t regression with unknown scale and
// degrees of freedom, and a negative-binomial regression with unknown
// dispersion. vigen fits each latent with a Gaussian factor on its
// unconstrained scale (u = log sigma, u = log(nu − 1), u = log phi), mean
// field between latents, and takes the expectation of a term nonlinear in
// the other latents by the second-order Taylor expansion of Wang & Blei's
// Eq. 19, E_q[g(θ)] ≈ g(m) + ½ Σ_k tr(∇²_k g(m) Σ_k) (no cross terms: the
// factors are independent). The tests write each latent's objective
//
//	f_j(θ_j) = Σ_n [ℓ_n(θ_j, m_−j) + ½ Σ_{k≠j} tr(∇²_k ℓ_n(θ_j, m_−j) Σ_k)] + log p(θ_j) (+ Jacobian)
//
// by hand (log densities with math.Lgamma, their second derivatives in the
// other latents analytic, with gonum's digamma and trigamma) and check that
// vigen's fit is a fixed point of coordinate ascent on them: for Laplace,
// ∇f_j(m_j) = 0 and Σ_j = −∇²f_j(m_j)⁻¹; for the delta method (Eq. 17),
// ∇[f_j(μ) + ½ tr(∇²f_j(μ) Σ_j)] = 0 at μ = m_j and Σ_j = −∇²f_j(m_j)⁻¹;
// and that it is where the same coordinate ascent, run by hand from other
// starting values, ends. Derivatives of f_j in its own variable are
// central finite differences with Richardson extrapolation (errors O(h⁴),
// below 1e-8 relative here). The tests also log the exact posterior of the
// scales given beta (a grid) for comparison: mean field cannot see the
// correlation of sigma and nu, and its sds are the smaller.

// fdRich returns the derivative of order k (1, 2 or 3) of f at x by central
// differences with step h and h/2, Richardson-extrapolated.
func fdRich(f func(float64) float64, x, h float64, k int) float64 {
	d := func(h float64) float64 {
		switch k {
		case 1:
			return (f(x+h) - f(x-h)) / (2 * h)
		case 2:
			return (f(x+h) - 2*f(x) + f(x-h)) / (h * h)
		default:
			return (f(x+2*h) - 2*f(x+h) + 2*f(x-h) - f(x-2*h)) / (2 * h * h * h)
		}
	}
	return (4*d(h/2) - d(h)) / 3
}

func trigamma(x float64) float64 { return mathext.Zeta(2, x) }

// studentTLogDensityHand is log StudentT(y; nu, loc, s), written out.
func studentTLogDensityHand(y, nu, loc, s float64) float64 {
	a, _ := math.Lgamma((nu + 1) / 2)
	b, _ := math.Lgamma(nu / 2)
	z := (y - loc) / s
	return a - b - 0.5*math.Log(nu*math.Pi) - math.Log(s) - (nu+1)/2*math.Log1p(z*z/nu)
}

// robustPoint is one observation's log density ℓ and its second
// derivatives in the residual r and in us and un.
type robustPoint struct{ l, rr, ss, nn float64 }

// robustTerm is ℓ(r, us, un) = log StudentT(y; nu, eta, sigma) with
// residual r = y − eta, sigma = e^us, nu = 1 + e^un, and its second
// derivatives, analytic.
func robustTerm(y, eta, us, un float64) robustPoint {
	r := y - eta
	s, nu := math.Exp(us), 1+math.Exp(un)
	var p robustPoint
	p.l = studentTLogDensityHand(y, nu, eta, s)
	d := nu*s*s + r*r
	p.rr = -(nu + 1) * (nu*s*s - r*r) / (d * d)
	a := r * r / (nu * s * s)
	p.ss = -2 * (nu + 1) * a / ((1 + a) * (1 + a))
	c := r * r / (s * s)
	lnu := 0.5*mathext.Digamma((nu+1)/2) - 0.5*mathext.Digamma(nu/2) - 1/(2*nu) - 0.5*math.Log1p(c/nu) + (nu+1)*c/(2*nu*(nu+c))
	lnunu := 0.25*trigamma((nu+1)/2) - 0.25*trigamma(nu/2) + 1/(2*nu*nu) + c/(2*nu*(nu+c)) - c*(nu*nu+2*nu+c)/(2*nu*nu*(nu+c)*(nu+c))
	p.nn = lnunu*(nu-1)*(nu-1) + lnu*(nu-1)
	return p
}

const robustVI = `model robust
size N, P
data x : real[N, P]
data y : real[N]
latent beta : real[P] nonconjugate laplace
latent sigma : real<lower=0> nonconjugate laplace
latent nu : real<lower=1> nonconjugate laplace
beta ~ Normal(0, 10)
sigma ~ HalfCauchy(5)
nu ~ Gamma(2, 0.1)
for n in 1:N {
  y[n] ~ StudentT(nu, dot(x[n], beta), sigma)
}
`

// meanField is one fit read back: q(beta) = N(mb, Sb) and the scalar
// factors q(u_k) = N(m_k, v_k).
type meanField struct {
	mb *mat.VecDense
	Sb *mat.SymDense
	m  map[string]float64
	v  map[string]float64
}

func readMeanField(t *testing.T, r scalarResult, P int, scalars ...string) meanField {
	t.Helper()
	var beta gaussianJSON
	if err := json.Unmarshal(r.Latent["beta"], &beta); err != nil {
		t.Fatal(err)
	}
	if len(beta.Mean) != P {
		t.Fatalf("%s: beta has %d means, want %d", r.Method, len(beta.Mean), P)
	}
	q := meanField{mb: mat.NewVecDense(P, beta.Mean), Sb: mat.NewSymDense(P, nil), m: map[string]float64{}, v: map[string]float64{}}
	for i := range P {
		for j := i; j < P; j++ {
			q.Sb.SetSym(i, j, beta.Cov[i][j])
		}
	}
	for _, s := range scalars {
		m, sd := scalarOf(t, r, s)
		q.m[s], q.v[s] = m, sd*sd
	}
	return q
}

// handModel is a model's mean-field objectives written by hand: beta's,
// Σ_n phi(n, x_n·beta) − |beta|²/(2·prior²) with phi(q) point n's term
// under the other factors of q, and each scalar latent's, f(q, name).
type handModel struct {
	x       [][]float64
	prior   float64
	scalars []string
	phi     func(q meanField) func(n int, eta float64) float64
	f       func(q meanField, name string) func(u float64) float64
}

// scalarDerivs returns the gradient of a scalar factor's objective at its
// mean m (for the delta method that of f(μ) + ½ v f″(μ)) and f″(m).
func scalarDerivs(f func(float64) float64, m, v float64, delta bool) (g, h float64) {
	g, h = fdRich(f, m, 1e-3, 1), fdRich(f, m, 1e-2, 2)
	if delta {
		g += 0.5 * v * fdRich(f, m, 2e-2, 3)
	}
	return g, h
}

// betaDerivs returns the gradient of beta's objective at q's mean (for the
// delta method, that of f(μ) + ½ tr(∇²f(μ) Σ) with Σ q's) and the Hessian
// ∇²f there.
func (hm handModel) betaDerivs(q meanField, delta bool) (*mat.VecDense, *mat.SymDense) {
	P := q.mb.Len()
	grad := mat.NewVecDense(P, nil)
	hess := mat.NewSymDense(P, nil)
	for i := range P {
		grad.SetVec(i, -q.mb.AtVec(i)/(hm.prior*hm.prior))
		hess.SetSym(i, i, -1/(hm.prior*hm.prior))
	}
	phi := hm.phi(q)
	for n := range hm.x {
		xn := mat.NewVecDense(P, hm.x[n])
		eta := mat.Dot(xn, q.mb)
		f := func(e float64) float64 { return phi(n, e) }
		d1, d2 := fdRich(f, eta, 1e-3, 1), fdRich(f, eta, 1e-2, 2)
		if delta {
			// ∂/∂beta ½ tr(∇²f Σ) = ½ Σ_n phi‴(eta_n) (x_nᵀ Σ x_n) x_n
			d1 += 0.5 * fdRich(f, eta, 2e-2, 3) * mat.Inner(xn, q.Sb, xn)
		}
		grad.AddScaledVec(grad, d1, xn)
		hess.SymRankOne(hess, d2, xn)
	}
	return grad, hess
}

// newtonCov returns −H⁻¹ and the Newton step −H⁻¹g of beta's objective at
// q, failing the test if H is not negative definite.
func newtonCov(t *testing.T, q meanField, hm handModel, delta bool) (*mat.SymDense, *mat.VecDense) {
	t.Helper()
	g, H := hm.betaDerivs(q, delta)
	var negH mat.SymDense
	negH.ScaleSym(-1, H)
	var ch mat.Cholesky
	if !ch.Factorize(&negH) {
		t.Fatal("hand-written Hessian of beta's objective is not negative definite")
	}
	cov := mat.NewSymDense(g.Len(), nil)
	ch.InverseTo(cov)
	step := mat.NewVecDense(g.Len(), nil)
	step.MulVec(cov, g)
	return cov, step
}

// fixedPoint checks that q is a fixed point of the Laplace update (delta
// false) or the delta method's (delta true) on the hand-written objectives:
// for every factor, the Newton step of its mean's objective, in units of
// its sd, is below tol, and its covariance is −∇²f⁻¹ to tol (relative to
// the sds). It returns the largest error.
func (hm handModel) fixedPoint(t *testing.T, method string, q meanField, delta bool, tol float64) float64 {
	t.Helper()
	worst := 0.0
	cov, step := newtonCov(t, q, hm, delta)
	for i := range q.mb.Len() {
		e := math.Abs(step.AtVec(i)) / math.Sqrt(q.Sb.At(i, i))
		worst = math.Max(worst, e)
		if e > tol {
			t.Errorf("%s: beta[%d] is not a fixed point of the hand-written objective: Newton step %.3g sd", method, i+1, e)
		}
		for j := range q.mb.Len() {
			e := math.Abs(q.Sb.At(i, j)-cov.At(i, j)) / math.Sqrt(cov.At(i, i)*cov.At(j, j))
			worst = math.Max(worst, e)
			if e > tol {
				t.Errorf("%s: cov(beta)[%d,%d] = %.12g, hand-written −∇²f⁻¹ = %.12g", method, i+1, j+1, q.Sb.At(i, j), cov.At(i, j))
			}
		}
	}
	for _, k := range hm.scalars {
		m, v := q.m[k], q.v[k]
		g, h := scalarDerivs(hm.f(q, k), m, v, delta)
		step := math.Abs(g/h) / math.Sqrt(v)
		rel := math.Abs(v+1/h) / v
		worst = math.Max(worst, math.Max(step, rel))
		if step > tol || rel > tol || !(h < 0) {
			t.Errorf("%s: %s is not a fixed point of the hand-written objective: Newton step %.3g sd (gradient %.6g), variance %.12g vs −1/f″ = %.12g (rel. diff %.3g)", method, k, step, g, v, -1/h, rel)
		}
	}
	return worst
}

// coordinateAscent runs mean-field coordinate ascent on the hand-written
// objectives from q0: each factor in turn gets its mean by Newton's method
// (for the delta method with Σ updated along, Σ = −∇²f⁻¹, until both
// settle; ∇²f stands in for the delta objective's curvature, which moves
// the steps, not the fixed point) and its covariance −∇²f⁻¹.
func (hm handModel) coordinateAscent(t *testing.T, q0 meanField, delta bool) meanField {
	t.Helper()
	q := meanField{mb: mat.VecDenseCopyOf(q0.mb), Sb: mat.NewSymDense(q0.mb.Len(), nil), m: map[string]float64{}, v: map[string]float64{}}
	q.Sb.CopySym(q0.Sb)
	for k := range q0.m {
		q.m[k], q.v[k] = q0.m[k], q0.v[k]
	}
	// settled: a step below 1e-8 sd, above the finite differences' noise
	// (up to ~1e-9 sd for the delta method's third derivatives) and far
	// below the tests' tolerance
	const settled = 1e-8
	for sweep := range 2000 {
		moved := 0.0 // the largest step of a mean in this sweep, in sds
		for inner := 0; ; inner++ {
			cov, step := newtonCov(t, q, hm, delta)
			moved = 0
			for i := range step.Len() {
				step.SetVec(i, math.Max(-1, math.Min(1, step.AtVec(i))))
				moved = math.Max(moved, math.Abs(step.AtVec(i))/math.Sqrt(cov.At(i, i)))
			}
			q.mb.AddVec(q.mb, step)
			q.Sb.CopySym(cov)
			if moved < settled || inner == 50 {
				break
			}
		}
		for _, k := range hm.scalars {
			for inner := 0; ; inner++ {
				f := hm.f(q, k)
				g, h := scalarDerivs(f, q.m[k], q.v[k], delta)
				if !(h < 0) {
					t.Fatalf("hand-written coordinate ascent: %s's objective is not concave at %g", k, q.m[k])
				}
				step := math.Max(-1, math.Min(1, -g/h))
				moved = math.Max(moved, math.Abs(step)*math.Sqrt(-h))
				q.m[k] += step
				_, h = scalarDerivs(f, q.m[k], q.v[k], false)
				q.v[k] = -1 / h
				if math.Abs(step)*math.Sqrt(-h) < settled || inner == 50 {
					break
				}
			}
		}
		if moved < settled {
			t.Logf("hand-written coordinate ascent (delta %v): %d sweeps", delta, sweep+1)
			return q
		}
	}
	t.Fatal("hand-written coordinate ascent did not settle")
	return q
}

// compareFits checks vigen's fit q against the hand-written one h: means
// within tol sds, covariances within tol relative to the sds. It returns
// the largest difference.
func compareFits(t *testing.T, method string, q, h meanField, tol float64) float64 {
	t.Helper()
	worst := 0.0
	check := func(what string, got, want, scale float64) {
		e := math.Abs(got-want) / scale
		worst = math.Max(worst, e)
		if e > tol {
			t.Errorf("%s: %s = %.12g, hand-written coordinate ascent %.12g", method, what, got, want)
		}
	}
	for i := range q.mb.Len() {
		check("beta mean", q.mb.AtVec(i), h.mb.AtVec(i), math.Sqrt(h.Sb.At(i, i)))
		for j := range q.mb.Len() {
			check("beta cov", q.Sb.At(i, j), h.Sb.At(i, j), math.Sqrt(h.Sb.At(i, i)*h.Sb.At(j, j)))
		}
	}
	for k := range h.m {
		check(k+" mean (unconstrained)", q.m[k], h.m[k], math.Sqrt(h.v[k]))
		check(k+" variance (unconstrained)", q.v[k], h.v[k], h.v[k])
	}
	return worst
}

// fitsDeadline registers the case of test that fits src by Laplace and by
// delta with the fits canceled after a minute (they take well under a
// second): a wrong derivative can make each iteration's line searches fail
// slowly, for an hour over MaxIter iterations, and the test should then
// fail, not hang. runScalar runs it.
func fitsDeadline(test e2eTest, name, src, opts string) *e2eCase {
	return test.driver(name, src, "fit_laplace_delta_deadline.go", "/* OPTS */", opts)
}

// gridPoint is the i-th of G grid points over m ± 10 sd of q's factor k.
func gridPoint(q meanField, k string, i, G int) float64 {
	sd := math.Sqrt(q.v[k])
	return q.m[k] - 10*sd + 20*sd*(float64(i)+0.5)/float64(G)
}

// constrainedOf returns the constrained summary (mean, sd) of a scalar
// latent.
func constrainedOf(t *testing.T, r scalarResult, name string) (mean, sd float64) {
	t.Helper()
	var s struct {
		Constrained *struct{ Mean, SD float64 } `json:"constrained"`
	}
	if err := json.Unmarshal(r.Latent[name], &s); err != nil || s.Constrained == nil {
		t.Fatalf("%s: latent %s has no constrained summary: %s (%v)", r.Method, name, r.Latent[name], err)
	}
	return s.Constrained.Mean, s.Constrained.SD
}

// logNormalMoments returns the mean and sd of lo + exp(u), u ~ N(m, v).
func logNormalMoments(lo, m, v float64) (mean, sd float64) {
	return lo + math.Exp(m+v/2), math.Sqrt(math.Expm1(v)) * math.Exp(m+v/2)
}

var robustCase = fitsDeadline(slowTest("TestEndToEndRobustRegression"), "robust", robustVI, ", Tol: 1e-15, MeanTol: 1e-13, MaxIter: 1000")

func TestEndToEndRobustRegression(t *testing.T) {
	golden.SlowTier(t)
	rng := rand.New(rand.NewPCG(18, 6))
	const N, P = 200, 3
	trueBeta := []float64{1, 2, -0.5}
	const trueSigma, trueNu = 0.7, 4
	x := make([][]float64, N)
	y := make([]float64, N)
	for n := range x {
		x[n] = []float64{1, rng.NormFloat64(), rng.NormFloat64()}
		chi2 := 0.0
		for range trueNu {
			z := rng.NormFloat64()
			chi2 += z * z
		}
		y[n] = mat.Dot(mat.NewVecDense(P, x[n]), mat.NewVecDense(P, trueBeta)) + trueSigma*rng.NormFloat64()/math.Sqrt(chi2/trueNu)
	}
	// the model's objectives, written out by hand
	xSx := func(q meanField) ([]float64, []float64) { // x_nᵀ Σ_beta x_n, x_n·m_beta
		xs, eta := make([]float64, N), make([]float64, N)
		for n := range x {
			xn := mat.NewVecDense(P, x[n])
			xs[n], eta[n] = mat.Inner(xn, q.Sb, xn), mat.Dot(xn, q.mb)
		}
		return xs, eta
	}
	hm := handModel{x: x, prior: 10, scalars: []string{"sigma", "nu"},
		phi: func(q meanField) func(int, float64) float64 {
			ms, vs, mn, vn := q.m["sigma"], q.v["sigma"], q.m["nu"], q.v["nu"]
			return func(n int, e float64) float64 {
				p := robustTerm(y[n], e, ms, mn)
				return p.l + 0.5*vs*p.ss + 0.5*vn*p.nn
			}
		},
		f: func(q meanField, k string) func(float64) float64 {
			xs, eta := xSx(q)
			if k == "sigma" {
				mn, vn := q.m["nu"], q.v["nu"]
				return func(u float64) float64 {
					f := -math.Log1p(math.Exp(2*u)/25) + u // HalfCauchy(5) and the Jacobian
					for n := range x {
						p := robustTerm(y[n], eta[n], u, mn)
						f += p.l + 0.5*p.rr*xs[n] + 0.5*vn*p.nn
					}
					return f
				}
			}
			ms, vs := q.m["sigma"], q.v["sigma"]
			return func(u float64) float64 {
				nu := 1 + math.Exp(u)
				f := math.Log(nu) - 0.1*nu + u // Gamma(2, 0.1) and the Jacobian
				for n := range x {
					p := robustTerm(y[n], eta[n], ms, u)
					f += p.l + 0.5*p.rr*xs[n] + 0.5*vs*p.ss
				}
				return f
			}
		},
	}
	// start the hand-written coordinate ascent from least squares, where
	// beta's objective is concave (at beta = 0 the residuals are outliers)
	X := mat.NewDense(N, P, nil)
	for n := range x {
		X.SetRow(n, x[n])
	}
	var ols mat.VecDense
	if err := ols.SolveVec(X, mat.NewVecDense(N, y)); err != nil {
		t.Fatal(err)
	}
	start := meanField{mb: &ols, Sb: mat.NewSymDense(P, nil),
		m: map[string]float64{"sigma": 0, "nu": math.Log(9)}, v: map[string]float64{"sigma": 0.01, "nu": 0.1}}
	for i := range P {
		start.Sb.SetSym(i, i, 0.01)
	}

	data, _ := json.Marshal(map[string]any{"x": x, "y": y})
	res := runScalar(t, robustCase, data)
	for _, r := range res {
		delta := !strings.HasPrefix(r.Method, "laplace")
		q := readMeanField(t, r, P, "sigma", "nu")
		// tolerances: the finite differences are good to ~1e-8 relative
		// (Richardson, O(h⁴)); vigen stops at MeanTol 1e-13
		const tol = 1e-6
		fp := hm.fixedPoint(t, r.Method, q, delta, tol)
		h := hm.coordinateAscent(t, start, delta)
		cmp := compareFits(t, r.Method, q, h, tol)
		t.Logf("%s: %d iterations; largest error as a fixed point %.2g, largest difference from the hand-written coordinate ascent %.2g (in sds, or relative)", r.Method, len(r.ELBO), fp, cmp)

		// the constrained summaries are q's log-normal moments
		for _, c := range []struct {
			name string
			lo   float64
		}{{"sigma", 0}, {"nu", 1}} {
			gm, gs := constrainedOf(t, r, c.name)
			qm, qs := logNormalMoments(c.lo, q.m[c.name], q.v[c.name])
			scalarClose(t, r.Method, "E["+c.name+"]", gm, qm, 1e-10)
			scalarClose(t, r.Method, "sd["+c.name+"]", gs, qs, 1e-10)
			hm, hs := logNormalMoments(c.lo, h.m[c.name], h.v[c.name])
			t.Logf("%s: %s posterior mean %.6f sd %.6f; hand-written coordinate ascent %.6f, %.6f", r.Method, c.name, gm, gs, hm, hs)
		}
		// against the exact posterior of (sigma, nu) given beta = its mean,
		// on a grid over ±10 sds of q
		if !delta {
			var z, s1, s2, n1, n2 float64
			const G = 160
			lw := make([]float64, 0, G*G)
			for i := range G {
				us := gridPoint(q, "sigma", i, G)
				for j := range G {
					un := gridPoint(q, "nu", j, G)
					sg, nu := math.Exp(us), 1+math.Exp(un)
					l := -math.Log1p(sg*sg/25) + us + math.Log(nu) - 0.1*nu + un
					for n := range x {
						l += studentTLogDensityHand(y[n], nu, mat.Dot(mat.NewVecDense(P, x[n]), q.mb), sg)
					}
					lw = append(lw, l)
				}
			}
			top := lw[0]
			for _, l := range lw {
				top = math.Max(top, l)
			}
			for i := range G {
				for j := range G {
					w := math.Exp(lw[i*G+j] - top)
					sg, nu := math.Exp(gridPoint(q, "sigma", i, G)), 1+math.Exp(gridPoint(q, "nu", j, G))
					z += w
					s1, s2, n1, n2 = s1+w*sg, s2+w*sg*sg, n1+w*nu, n2+w*nu*nu
				}
			}
			s1, s2, n1, n2 = s1/z, s2/z, n1/z, n2/z
			t.Logf("exact posterior given beta (grid): sigma mean %.4f sd %.4f, nu mean %.4f sd %.4f", s1, math.Sqrt(s2-s1*s1), n1, math.Sqrt(n2-n1*n1))
		}
		// and sensible against the truth
		es, _ := constrainedOf(t, r, "sigma")
		en, _ := constrainedOf(t, r, "nu")
		if math.Abs(es-trueSigma) > 0.15 || en < 2 || en > 10 {
			t.Errorf("%s: E[sigma] = %.3f, E[nu] = %.3f; simulated with %g, %g", r.Method, es, en, trueSigma, float64(trueNu))
		}
		for i := range P {
			if d := math.Abs(q.mb.AtVec(i) - trueBeta[i]); d > 4*math.Sqrt(q.Sb.At(i, i)) {
				t.Errorf("%s: beta[%d] = %.3f ± %.3f, simulated with %g", r.Method, i+1, q.mb.AtVec(i), math.Sqrt(q.Sb.At(i, i)), trueBeta[i])
			}
		}
		t.Logf("%s: beta %.3f", r.Method, q.mb.RawVector().Data)
	}
}

// negBinPoint is one count's log density and its second derivatives in
// eta and up.
type negBinPoint struct{ l, ee, pp float64 }

// negBinTerm is one count's log NegativeBinomial(y; e^eta, phi) (Stan's
// neg_binomial_2, mean e^eta, variance mu + mu²/phi) with phi = e^up, and
// its second derivatives in eta and up, analytic.
func negBinTerm(y, eta, up float64) negBinPoint {
	mu, phi := math.Exp(eta), math.Exp(up)
	a, _ := math.Lgamma(y + phi)
	b, _ := math.Lgamma(y + 1)
	c, _ := math.Lgamma(phi)
	var p negBinPoint
	p.l = a - b - c + phi*math.Log(phi/(mu+phi)) + y*math.Log(mu/(mu+phi))
	p.ee = -(phi + y) * phi * mu / ((phi + mu) * (phi + mu))
	lp := mathext.Digamma(y+phi) - mathext.Digamma(phi) + math.Log(phi) + 1 - math.Log(phi+mu) - (phi+y)/(phi+mu)
	lpp := trigamma(y+phi) - trigamma(phi) + 1/phi - 1/(phi+mu) - (mu-y)/((phi+mu)*(phi+mu))
	p.pp = lpp*phi*phi + lp*phi
	return p
}

const negBinVI = `model negbin
size N, P
data x : real[N, P]
data y : int[N]
latent beta : real[P] nonconjugate laplace
latent phi : real<lower=0> nonconjugate laplace
beta ~ Normal(0, 10)
phi ~ Gamma(2, 0.5)
for n in 1:N {
  y[n] ~ NegativeBinomial(exp(dot(x[n], beta)), phi)
}
`

// poissonDraw draws a Poisson(lam) count by inversion (lam moderate).
func poissonDraw(rng *rand.Rand, lam float64) int {
	u, k, p := rng.Float64(), 0, math.Exp(-lam)
	for c := p; u > c; c += p {
		k++
		p *= lam / float64(k)
	}
	return k
}

var negBinCase = fitsDeadline(slowTest("TestEndToEndNegBinRegression"), "negbin", negBinVI, ", Tol: 1e-15, MeanTol: 1e-13, MaxIter: 1000")

func TestEndToEndNegBinRegression(t *testing.T) {
	golden.SlowTier(t)
	rng := rand.New(rand.NewPCG(18, 2))
	const N, P = 200, 3
	trueBeta := []float64{1, 0.6, -0.4}
	const truePhi = 3 // an integer: Gamma(3, ·) is a sum of three exponentials
	x := make([][]float64, N)
	y := make([]float64, N)
	for n := range x {
		x[n] = []float64{1, rng.NormFloat64(), rng.NormFloat64()}
		mu := math.Exp(mat.Dot(mat.NewVecDense(P, x[n]), mat.NewVecDense(P, trueBeta)))
		g := 0.0 // Gamma(phi, rate phi/mu): mean mu
		for range truePhi {
			g += rng.ExpFloat64()
		}
		y[n] = float64(poissonDraw(rng, g*mu/truePhi))
	}
	hm := handModel{x: x, prior: 10, scalars: []string{"phi"},
		phi: func(q meanField) func(int, float64) float64 {
			mp, vp := q.m["phi"], q.v["phi"]
			return func(n int, e float64) float64 {
				p := negBinTerm(y[n], e, mp)
				return p.l + 0.5*vp*p.pp
			}
		},
		f: func(q meanField, _ string) func(float64) float64 {
			xs, eta := make([]float64, N), make([]float64, N)
			for n := range x {
				xn := mat.NewVecDense(P, x[n])
				xs[n], eta[n] = mat.Inner(xn, q.Sb, xn), mat.Dot(xn, q.mb)
			}
			return func(u float64) float64 {
				f := 2*u - 0.5*math.Exp(u) // Gamma(2, 0.5) and the Jacobian
				for n := range x {
					p := negBinTerm(y[n], eta[n], u)
					f += p.l + 0.5*p.ee*xs[n]
				}
				return f
			}
		},
	}
	start := meanField{mb: mat.NewVecDense(P, nil), Sb: mat.NewSymDense(P, nil),
		m: map[string]float64{"phi": 0}, v: map[string]float64{"phi": 0.1}}
	for i := range P {
		start.Sb.SetSym(i, i, 0.01)
	}

	data, _ := json.Marshal(map[string]any{"x": x, "y": y})
	res := runScalar(t, negBinCase, data)
	for _, r := range res {
		delta := !strings.HasPrefix(r.Method, "laplace")
		q := readMeanField(t, r, P, "phi")
		const tol = 1e-6 // as in TestEndToEndRobustRegression
		fp := hm.fixedPoint(t, r.Method, q, delta, tol)
		h := hm.coordinateAscent(t, start, delta)
		cmp := compareFits(t, r.Method, q, h, tol)
		t.Logf("%s: %d iterations; largest error as a fixed point %.2g, largest difference from the hand-written coordinate ascent %.2g (in sds, or relative)", r.Method, len(r.ELBO), fp, cmp)

		gm, gs := constrainedOf(t, r, "phi")
		qm, qs := logNormalMoments(0, q.m["phi"], q.v["phi"])
		scalarClose(t, r.Method, "E[phi]", gm, qm, 1e-10)
		scalarClose(t, r.Method, "sd[phi]", gs, qs, 1e-10)
		hm, hs := logNormalMoments(0, h.m["phi"], h.v["phi"])
		t.Logf("%s: phi posterior mean %.6f sd %.6f; hand-written coordinate ascent %.6f, %.6f", r.Method, gm, gs, hm, hs)
		if !delta { // the exact posterior of phi given beta = its mean, on a grid
			const G = 2000
			lw := make([]float64, G)
			top := math.Inf(-1)
			for i := range G {
				u := gridPoint(q, "phi", i, G)
				lw[i] = 2*u - 0.5*math.Exp(u)
				for n := range x {
					lw[i] += negBinTerm(y[n], mat.Dot(mat.NewVecDense(P, x[n]), q.mb), u).l
				}
				top = math.Max(top, lw[i])
			}
			var z, p1, p2 float64
			for i := range G {
				w, ph := math.Exp(lw[i]-top), math.Exp(gridPoint(q, "phi", i, G))
				z, p1, p2 = z+w, p1+w*ph, p2+w*ph*ph
			}
			p1, p2 = p1/z, p2/z
			t.Logf("exact posterior given beta (grid): phi mean %.4f sd %.4f", p1, math.Sqrt(p2-p1*p1))
		}
		if math.Abs(gm-truePhi) > 3*gs {
			t.Errorf("%s: E[phi] = %.3f ± %.3f, simulated with %g", r.Method, gm, gs, float64(truePhi))
		}
		for i := range P {
			if d := math.Abs(q.mb.AtVec(i) - trueBeta[i]); d > 4*math.Sqrt(q.Sb.At(i, i)) {
				t.Errorf("%s: beta[%d] = %.3f ± %.3f, simulated with %g", r.Method, i+1, q.mb.AtVec(i), math.Sqrt(q.Sb.At(i, i)), trueBeta[i])
			}
		}
		t.Logf("%s: beta %.3f", r.Method, q.mb.RawVector().Data)
	}
}
