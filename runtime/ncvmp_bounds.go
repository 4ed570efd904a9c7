package runtime

import "math"

// Bounds on the expected logistic log factor of §5.1,
// S(m, v) = E[s·x − log(1+e^x)] for x ~ N(m, v) and label s ∈ {0, 1}: each
// returns a lower bound on S at its optimal variational parameter, with
// ∂/∂m and ∂/∂v at that optimum (envelope theorem). They are the K = 2
// case of the softmax bounds in ncvmp_softmax.go with x_0 = 0 fixed, since
// log(1+e^x) = log(e^0 + e^x).

// LogisticQuadraticBound is the Jaakkola–Jordan bound, Eq. 8, in
// expectation: with y = (2s−1)x, log σ(y) ≥ log σ(t) + (y−t)/2 − λ(t)(y²−t²),
// so S ≥ log σ(t) + (μ − t)/2 − λ(t)(μ² + v − t²) with μ = (2s−1)m. The
// optimal t is t = sqrt(m² + v) (ξ² = m² + v), where the λ term vanishes.
// At the optimum ∂/∂m = (2s−1)(½ − 2λ(t)μ) and ∂/∂v = −λ(t), so the
// NCVMP message (Eq. 7) is the VMP message of the quadratic bound:
// 1/v_f = 2λ(t), m_f/v_f = s − ½.
func LogisticQuadraticBound(s, m, v float64) (S, dSdm, dSdv, t float64) {
	sign := 2*s - 1
	mu := sign * m
	t = math.Sqrt(m*m + v)
	l := JJLambda(t)
	S = LogLogistic(t) + (mu-t)/2
	return S, sign * (0.5 - 2*l*mu), -l, t
}

// LogisticTiltedBound is the univariate tilted bound, Eq. 9:
//
//	S ≥ s·m − ½a²v − log(1 + e^{m + (1−2a)v/2})
//
// at the optimal a ∈ (0, 1), the root of a = σ(m + (1−2a)v/2). (The
// paper's text prints the fixed point as σ(m − (1−2a)v/2); differentiating
// Eq. 9 in a gives the + sign used here, and TestLogisticBounds checks that
// this a minimizes the bound.) At the optimum ∂/∂m = s − a and
// ∂/∂v = −½a(1−a), so 1/v_f = a(1−a) and m_f/v_f = m/v_f + s − a (§5.1).
func LogisticTiltedBound(s, m, v float64) (S, dSdm, dSdv, a float64) {
	mm := [2]float64{0, m}
	vv := [2]float64{0, v}
	var aa, dm, dv [2]float64
	T := SoftmaxTiltedBound(mm[:], vv[:], aa[:], dm[:], dv[:])
	return s*m - T, s - dm[1], -dv[1], aa[1]
}

// LogisticLogBound is the log bound, Eq. 10 with K = 2:
// S ≥ s·m − log(1 + e^{m + v/2}) (Eq. 9 at a = 0). ∂/∂m = s − σ(m + v/2),
// ∂/∂v = −σ(m + v/2)/2.
func LogisticLogBound(s, m, v float64) (S, dSdm, dSdv float64) {
	z := m + v/2
	p := Logistic(z)
	return s*m - Softplus(z), s - p, -p / 2
}
