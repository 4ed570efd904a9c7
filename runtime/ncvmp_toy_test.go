package runtime

import (
	"math"
	"testing"
)

// The toy of §6.1: x with prior N(m0, v0) and one logistic factor σ(x).

// exactToy returns the mean and variance of the true posterior
// σ(x)N(x; m0, v0)/Z by the reference integral.
func exactToy(m0, v0 float64) (mean, variance float64) {
	sig := func(x float64) float64 { return Logistic(x) }
	Z := refIntegrate(sig, m0, v0)
	mean = refIntegrate(func(x float64) float64 { return x * Logistic(x) }, m0, v0) / Z
	variance = refIntegrate(func(x float64) float64 { d := x - mean; return d * d * Logistic(x) }, m0, v0) / Z
	return
}

// laplaceToy returns the Laplace approximation: the mode of
// log σ(x) + log N(x; m0, v0) by Newton, and −1/curvature there.
func laplaceToy(m0, v0 float64) (mean, variance float64) {
	x := m0
	for it := 0; it < 200; it++ {
		p := Logistic(x)
		g := 1 - p - (x-m0)/v0
		h := -p*(1-p) - 1/v0
		step := g / h
		x -= step
		if math.Abs(step) < 1e-15*math.Max(1, math.Abs(x)) {
			break
		}
	}
	p := Logistic(x)
	return x, 1 / (p*(1-p) + 1/v0)
}

// directToy maximizes the ELBO of q = N(m, v),
// E[log σ(x)] + E[log N(x; m0, v0)] + H[q], over (m, v) by Newton's method,
// independently of Eq. 7: E[log σ] by the reference integral, its gradient
// by the reparameterization x = m + sqrt(v)·z (∂/∂m = E[g'(x)],
// ∂/∂v = E[g'(x)(x − m)]/(2v)), the Hessian by central differences of that
// gradient, and a step-halving line search on the ELBO.
func directToy(m0, v0, m, v float64) (float64, float64) {
	g1 := func(x float64) float64 { return 1 - Logistic(x) }
	elbo := func(m, v float64) float64 {
		S := refIntegrate(func(x float64) float64 { return LogLogistic(x) }, m, v)
		d := m - m0
		return S - (d*d+v)/(2*v0) + 0.5*math.Log(v)
	}
	grad := func(m, v float64) (float64, float64) {
		gm := refIntegrate(g1, m, v)
		gv := refIntegrate(func(x float64) float64 { return g1(x) * (x - m) }, m, v) / (2 * v)
		return gm - (m-m0)/v0, gv - 1/(2*v0) + 1/(2*v)
	}
	for it := 0; it < 100; it++ {
		gm, gv := grad(m, v)
		if math.Abs(gm) < 1e-13 && math.Abs(gv)*v < 1e-13 {
			break
		}
		hm, hv := 1e-5*math.Max(1, math.Abs(m)), 1e-5*v
		a1, b1 := grad(m+hm, v)
		a0, b0 := grad(m-hm, v)
		a3, b3 := grad(m, v+hv)
		a2, b2 := grad(m, v-hv)
		hmm, hmv := (a1-a0)/(2*hm), ((a3-a2)/(2*hv)+(b1-b0)/(2*hm))/2
		hvv := (b3 - b2) / (2 * hv)
		det := hmm*hvv - hmv*hmv
		sm := -(hvv*gm - hmv*gv) / det
		sv := -(-hmv*gm + hmm*gv) / det
		e0 := elbo(m, v)
		for t := 1.0; t > 1e-10; t /= 2 {
			nm, nv := m+t*sm, v+t*sv
			if nv > 0 && elbo(nm, nv) >= e0-1e-14*math.Abs(e0) {
				m, v = nm, nv
				break
			}
		}
	}
	return m, v
}

func quadFactor(r *HermiteRule) Factor1 {
	return func(m, v float64) (float64, float64, float64) { return r.ExpectLogistic(1, m, v) }
}

func jjFactor(m, v float64) (float64, float64, float64) {
	S, a, b, _ := LogisticQuadraticBound(1, m, v)
	return S, a, b
}

func tiltedFactor(m, v float64) (float64, float64, float64) {
	S, a, b, _ := LogisticTiltedBound(1, m, v)
	return S, a, b
}

// TestNCVMPToyFixedPoint checks Theorem 1 on the §6.1 toy: NCVMP with
// quadrature converges to the (m, v) that maximizes the ELBO directly, to
// 1e-6, for several priors including a large variance. For v0 = 100 it uses
// 1000 Hermite points: with the default, the quadrature error at posterior
// variances near 50 (about 1e-4, TestHermiteAccuracyTable) moves the fixed
// point by more than 1e-6.
func TestNCVMPToyFixedPoint(t *testing.T) {
	for _, c := range [][2]float64{{0, 1}, {2, 10}, {-5, 10}, {-20, 10}, {10, 4}, {0, 20}, {0, 100}, {-3, 100}} {
		m0, v0 := c[0], c[1]
		n := 0
		if v0 > 20 {
			n = 1000
		}
		r := NCVMP1D{M0: m0, V0: v0, Factors: []Factor1{quadFactor(Hermite(n))}}.Run()
		lm, lv := laplaceToy(m0, v0)
		dm, dv := directToy(m0, v0, lm, lv)
		if !r.Converged || !nclose(r.M, dm, 1e-6) || !nclose(r.V, dv, 1e-6) {
			t.Errorf("prior N(%g, %g): NCVMP (%.10g, %.10g) converged=%v after %d; direct ELBO max (%.10g, %.10g)", m0, v0, r.M, r.V, r.Converged, r.Iter, dm, dv)
		}
		for i := 1; i < len(r.ELBO); i++ {
			if r.ELBO[i] < r.ELBO[i-1]-1e-9 && !r.Damped {
				t.Logf("prior N(%g, %g): ELBO decreased at iteration %d (%g → %g)", m0, v0, i, r.ELBO[i-1], r.ELBO[i])
			}
		}
		t.Logf("prior N(%g, %g): NCVMP-quad %d iterations (damped %v), |Δm| %.1e |Δv| %.1e vs direct", m0, v0, r.Iter, r.Damped, math.Abs(r.M-dm), math.Abs(r.V-dv))
	}
}

// TestNCVMPToyComparison reproduces Figure 1(a) of §6.1: errors of the
// posterior mean and variance against the exact posterior of σ(x)N(x; m0, v0),
// for NCVMP with quadrature, NCVMP with the tilted bound, VMP with the
// quadratic bound (= NCVMP with it, the bound being conjugate) and Laplace,
// varying the prior mean at v0 = 10 and the prior variance at m0 = 0. It
// logs the table and asserts what the paper reports and is robust here:
// quadrature NCVMP has the smaller mean error than the quadratic bound, and
// the quadratic bound underestimates the variance by more than quadrature
// NCVMP (which errs only by the VB approximation); and, as the prior mean
// moves away from the symmetric point, the tilted bound's variance is
// closer than the quadratic bound's (asserted for |m0 + 5| ≥ 10 at v0 = 10;
// near the symmetric point the quadratic bound's variance is closer).
func TestNCVMPToyComparison(t *testing.T) {
	type method struct {
		name string
		run  func(m0, v0 float64) (float64, float64)
	}
	ncvmp := func(f Factor1) func(m0, v0 float64) (float64, float64) {
		return func(m0, v0 float64) (float64, float64) {
			r := NCVMP1D{M0: m0, V0: v0, Factors: []Factor1{f}}.Run()
			if !r.Converged {
				t.Errorf("prior N(%g,%g): no convergence in %d iterations", m0, v0, r.Iter)
			}
			return r.M, r.V
		}
	}
	methods := []method{
		{"NCVMP quad", ncvmp(quadFactor(Hermite(0)))},
		{"NCVMP tilted", ncvmp(tiltedFactor)},
		{"VMP quadratic", ncvmp(jjFactor)},
		{"Laplace", laplaceToy},
	}
	type row struct{ m0, v0 float64 }
	var rows []row
	for m0 := -20.0; m0 <= 20; m0 += 5 {
		rows = append(rows, row{m0, 10})
	}
	for _, v0 := range []float64{0.5, 1, 2, 5, 10, 15, 20} {
		rows = append(rows, row{0, v0})
	}
	t.Logf("errors (approximation − exact) of the posterior mean | variance")
	t.Logf("%6s %5s %9s %9s | %11s %11s %11s %11s | %11s %11s %11s %11s", "m0", "v0", "mean", "var",
		"quad", "tilted", "quadratic", "Laplace", "quad", "tilted", "quadratic", "Laplace")
	for _, r := range rows {
		em, ev := exactToy(r.m0, r.v0)
		var dm, dv [4]float64
		for i, meth := range methods {
			m, v := meth.run(r.m0, r.v0)
			dm[i], dv[i] = m-em, v-ev
		}
		t.Logf("%6g %5g %9.4f %9.4f | %11.2e %11.2e %11.2e %11.2e | %11.2e %11.2e %11.2e %11.2e", r.m0, r.v0, em, ev,
			dm[0], dm[1], dm[2], dm[3], dv[0], dv[1], dv[2], dv[3])
		// (m0 = −5, v0 = 10 is symmetric: every method gets the mean 0.)
		if r.v0 >= 2 && math.Abs(dm[2]) > 1e-8 && math.Abs(dm[0]) > math.Abs(dm[2]) {
			t.Errorf("prior N(%g,%g): quadrature mean error %g not below quadratic's %g", r.m0, r.v0, dm[0], dm[2])
		}
		if r.v0 >= 2 && dv[2] > dv[0] {
			t.Errorf("prior N(%g,%g): quadratic variance error %g not below quadrature's %g", r.m0, r.v0, dv[2], dv[0])
		}
		if math.Abs(r.m0+5) >= 10 && r.v0 == 10 && math.Abs(dv[1]) >= math.Abs(dv[2]) {
			t.Errorf("prior N(%g,%g): tilted variance error %g not below quadratic's %g", r.m0, r.v0, dv[1], dv[2])
		}
	}
}
