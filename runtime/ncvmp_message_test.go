package runtime

import (
	"math"
	"testing"
)

// TestNCVMPMessageIsNaturalGradient checks Eq. 7 against Algorithm 1,
// line 5, computed independently: θ = (m/v, −1/(2v)) for u(x) = (x, x²),
// ∂S/∂θ by central differences of S(m(θ), v(θ)) (S by the reference
// integral), C(θ) = cov(u(x)) from reference moments, φ = C⁻¹ ∂S/∂θ, and
// the message of NCVMPMessage must have φ = (m_f/v_f, −1/(2v_f)).
func TestNCVMPMessageIsNaturalGradient(t *testing.T) {
	for _, c := range [][3]float64{{0, 1, 1}, {1.5, 0.4, 0}, {-2, 6, 1}, {3, 0.05, 0}} {
		m, v, s := c[0], c[1], c[2]
		g := logisticFactor(s)
		S := func(th1, th2 float64) float64 {
			vv := -1 / (2 * th2)
			r, _, _ := refExpect(g, th1*vv, vv)
			return r
		}
		th1, th2 := m/v, -1/(2*v)
		h1, h2 := 1e-5*math.Max(1, math.Abs(th1)), 1e-5*math.Abs(th2)
		d1 := (S(th1+h1, th2) - S(th1-h1, th2)) / (2 * h1)
		d2 := (S(th1, th2+h2) - S(th1, th2-h2)) / (2 * h2)
		mom := func(k int) float64 {
			return refIntegrate(func(x float64) float64 { return math.Pow(x, float64(k)) }, m, v)
		}
		e1, e2, e3, e4 := mom(1), mom(2), mom(3), mom(4)
		c11, c12, c22 := e2-e1*e1, e3-e1*e2, e4-e2*e2
		det := c11*c22 - c12*c12
		phi1 := (c22*d1 - c12*d2) / det
		phi2 := (-c12*d1 + c11*d2) / det
		_, dm, dv := refExpect(g, m, v)
		msg := NCVMPMessage(m, v, dm, dv)
		if !nclose(msg.PrecMean, phi1, 1e-6) || !nclose(-msg.Prec/2, phi2, 1e-6) {
			t.Errorf("(%g,%g,s=%g): Eq. 7 gives (%g, %g), C⁻¹∂S/∂θ gives (%g, %g)", m, v, s, msg.PrecMean, -msg.Prec/2, phi1, phi2)
		}
	}
}

// TestNCVMPMessageConjugate checks Theorem 2: for a factor whose expected
// log is linear in the sufficient statistics, g(x) = b·x − c·x²/2, the
// NCVMP message is the VMP message (Prec = c, PrecMean = b) at every q.
func TestNCVMPMessageConjugate(t *testing.T) {
	b, c := 0.7, 2.5
	g := func(x float64) (float64, float64, float64) { return b*x - c*x*x/2, b - c*x, -c }
	for _, mv := range [][2]float64{{0, 1}, {3, 0.2}, {-1, 40}} {
		_, dm, dv := Hermite(0).Expect(g, mv[0], mv[1])
		msg := NCVMPMessage(mv[0], mv[1], dm, dv)
		if !nclose(msg.Prec, c, 1e-12) || !nclose(msg.PrecMean, b, 1e-12) {
			t.Errorf("(%g,%g): message %+v, want {%g %g}", mv[0], mv[1], msg, c, b)
		}
	}
}

func TestDamp(t *testing.T) {
	n, o := GaussianMessage{4, -2}, GaussianMessage{1, 3}
	d := n.Damp(o, 0.25)
	if !nclose(d.Prec, 3.25, 1e-15) || !nclose(d.PrecMean, -0.75, 1e-15) {
		t.Errorf("Damp: %+v", d)
	}
	if n.Damp(o, 0) != n {
		t.Errorf("α = 0 must leave the message unchanged")
	}
}

// quartic is g(x) = −x⁴/4, whose NCVMP iteration at m = 0 is
// v ← 1/(1/v0 + 3v): it oscillates about its fixed point v* (the root of
// 3v² + v/v0 − 1 = 0) with a contraction factor −3v*² ≈ −1 for large v0.
func quartic(m, v float64) (S, dSdm, dSdv float64) {
	return -(m*m*m*m + 6*m*m*v + 3*v*v) / 4, -(m*m*m + 3*m*v), -(6*m*m + 6*v) / 4
}

// TestNCVMP1DDampingOnOscillation checks that the driver detects the
// quartic factor's oscillation, switches damping on, and converges to the
// fixed point, which the undamped iteration does not reach in the same
// number of iterations; and that damping leaves the fixed point unchanged.
func TestNCVMP1DDampingOnOscillation(t *testing.T) {
	v0 := 1e4
	want := (-1/v0 + math.Sqrt(1/(v0*v0)+12)) / 6
	p := NCVMP1D{M0: 0, V0: v0, Factors: []Factor1{quartic}, MaxIter: 500}
	r := p.Run()
	if !r.Converged || !r.Damped || !nclose(r.V, want, 1e-10) || r.M != 0 {
		t.Errorf("damped run: %+v (want v %g)", r, want)
	}
	p.NoDamp = true
	u := p.Run()
	if u.Converged || u.Damped {
		t.Errorf("undamped run converged in %d iterations (damped: %d)", u.Iter, r.Iter)
	}
	t.Logf("quartic factor, v0 = %g: damped converged in %d iterations (α = %g); undamped after %d: v = %g (v* = %g)", v0, r.Iter, r.Alpha, u.Iter, u.V, want)
}
