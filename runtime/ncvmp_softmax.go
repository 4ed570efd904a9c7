package runtime

import "math"

// Bounds on the softmax integral E[log Σ_k exp x_k] for a factorized
// Gaussian x_k ~ N(m_k, v_k) (Knowles & Minka 2011, §5.2), each with its
// variational parameters optimized and its gradients in m and v at the
// optimum (by the envelope theorem, the partial derivatives with the
// variational parameters held fixed). All are upper bounds, so the expected
// log softmax E[log softmax(x)_k] = m_k − E[log Σ_j exp x_j] is bounded
// from below, as the ELBO needs. None allocates; dm and dv, when not nil,
// must have len(m) entries and receive ∂/∂m_k and ∂/∂v_k.

// SoftmaxLogBound is the "log" bound, Eq. 10:
//
//	E[log Σ_k e^{x_k}] ≤ log Σ_k e^{m_k + v_k/2},
//
// the tilted bound (Eq. 12) at a = 0. ∂/∂m_k = p_k, ∂/∂v_k = p_k/2 with
// p = softmax(m + v/2).
func SoftmaxLogBound(m, v, dm, dv []float64) float64 {
	L := lseShift(m, v, nil, 0.5)
	if dm != nil || dv != nil {
		for k := range m {
			p := math.Exp(m[k] + v[k]/2 - L)
			if dm != nil {
				dm[k] = p
			}
			if dv != nil {
				dv[k] = p / 2
			}
		}
	}
	return L
}

// lseShift returns log Σ_k exp(m_k + c·v_k − a_k v_k) (a nil means a = 0).
func lseShift(m, v, a []float64, c float64) float64 {
	mx := math.Inf(-1)
	for k := range m {
		z := m[k] + c*v[k]
		if a != nil {
			z -= a[k] * v[k]
		}
		mx = math.Max(mx, z)
	}
	if math.IsInf(mx, 0) || math.IsNaN(mx) {
		return mx
	}
	var s float64
	for k := range m {
		z := m[k] + c*v[k]
		if a != nil {
			z -= a[k] * v[k]
		}
		s += math.Exp(z - mx)
	}
	return mx + math.Log(s)
}

// SoftmaxTiltedBound is the tilted bound of Eq. 12,
//
//	E[log Σ_k e^{x_k}] ≤ ½ Σ_j a_j² v_j + log Σ_k exp(m_k + (1−2a_k)v_k/2),
//
// valid for every real a (it is E[a·x] + log Σ_k E[e^{x_k − a·x}] by Jensen,
// and the a·m terms cancel). It returns the bound at the optimal a, which it
// writes to a (len(m) entries; a may be nil only if the caller does not
// want it — then a scratch array of up to 64 entries on the stack is used,
// and longer inputs panic).
//
// Optimization. The bound is convex in a; its stationarity condition is the
// paper's fixed point a = softmax(m + ½(1−2a)·v) (§5.2). Rather than iterate
// it (which oscillates once v_k a_k(1−a_k) > 1), write the fixed point as
// a_k = exp(m_k + v_k/2 − a_k v_k − L) with L = log Σ_k exp(m_k + (1−2a_k)v_k/2):
// given L each a_k is the closed form a_k = W(v_k e^{m_k + v_k/2 − L})/v_k
// (Lambert W; a_k = e^{m_k − L} when v_k = 0), and L is the root of the
// monotone equation Σ_k a_k(L) = 1, bracketed by log Σ exp(m − v/2) ≤ L ≤
// log Σ exp(m + v/2) and found by safeguarded Newton.
//
// Gradients at the optimum: ∂/∂m_k = p_k and ∂/∂v_k = ½a_k² + ½p_k(1−2a_k)
// with p = softmax(m + ½(1−2a)·v) (= a at the exact optimum, giving
// ∂/∂v_k = ½a_k(1−a_k) and the §5.2 messages).
func SoftmaxTiltedBound(m, v, a, dm, dv []float64) float64 {
	var scratch [64]float64
	if a == nil {
		if len(m) > len(scratch) {
			panic("runtime.SoftmaxTiltedBound: a is nil and len(m) > 64")
		}
		a = scratch[:len(m)]
	}
	lo := lseShift(m, v, nil, -0.5)
	hi := lseShift(m, v, nil, 0.5)
	// G(L) = Σ a_k(L) − 1 is decreasing: G(lo) ≥ 0 ≥ G(hi).
	G := func(L float64) (g, dg float64) {
		for k := range m {
			ak := tiltedA(m[k]+v[k]/2-L, v[k])
			a[k] = ak
			g += ak
			dg -= ak / (1 + v[k]*ak)
		}
		return g - 1, dg
	}
	L := hi
	for it := 0; it < 200; it++ {
		g, dg := G(L)
		if g == 0 {
			break
		}
		if g > 0 {
			lo = L
		} else {
			hi = L
		}
		next := L - g/dg
		if !(next > lo && next < hi) {
			next = lo + (hi-lo)/2
		}
		if math.Abs(next-L) <= 1e-15*math.Max(1, math.Abs(L)) || hi-lo <= 1e-15*math.Max(1, math.Abs(L)) {
			G(next)
			break
		}
		L = next
	}
	// The bound and its partials at these a (exact for any a).
	Ls := lseShift(m, v, a, 0.5)
	T := Ls
	for k := range m {
		T += a[k] * a[k] * v[k] / 2
		p := math.Exp(m[k] + (0.5-a[k])*v[k] - Ls)
		if dm != nil {
			dm[k] = p
		}
		if dv != nil {
			dv[k] = a[k]*a[k]/2 + p*(1-2*a[k])/2
		}
	}
	return T
}

// tiltedA solves log a + v·a = r for a > 0 (a = W(v e^r)/v, or e^r when
// v = 0) by Newton's method in u = log a on the convex increasing function
// u + v e^u − r, started where it is nonnegative so the iterates decrease
// monotonically to the root.
func tiltedA(r, v float64) float64 {
	if v <= 0 {
		return math.Exp(r)
	}
	lv := math.Log(v)
	l := lv + r // w + log w = l with w = v·a
	var u float64
	if l > 1 {
		// w0 = l − log l ≥ 1 satisfies w0 + log w0 = l + log(1 − log l/l) ≤ l,
		// left of the root; one Newton step from there lands right of it
		// (the function is convex), so start at that step.
		w0 := l - math.Log(l)
		y := math.Log(w0)
		y -= (w0 + y - l) / (w0 + 1)
		u = y - lv
	} else {
		u = r // w = v e^r = e^l: w + log w ≥ l, right of the root
	}
	for it := 0; it < 100; it++ {
		e := v * math.Exp(u)
		f := u + e - r
		step := f / (1 + e)
		u -= step
		if math.Abs(step) <= 1e-15*math.Max(1, math.Abs(u)) {
			break
		}
	}
	return math.Exp(u)
}

// JJLambda is λ(t) = tanh(t/2)/(4t) = (σ(t) − ½)/(2t), the curvature of
// the Jaakkola–Jordan quadratic bound (Eq. 8), with its limit 1/8 at t = 0.
func JJLambda(t float64) float64 {
	t = math.Abs(t)
	if t < 1e-4 {
		return 0.125 - t*t/96
	}
	return math.Tanh(t/2) / (4 * t)
}

// SoftmaxQuadraticBound is the "quadratic" bound of §5.2: Bouchard's bound
// (Eq. 11) log Σ_k e^{x_k} ≤ a + Σ_k log(1 + e^{x_k − a}) with each
// log(1+e^y) bounded by the Jaakkola–Jordan quadratic (Eq. 8),
// log(1+e^y) ≤ log(1+e^t) + (y − t)/2 + λ(t)(y² − t²). Its K + 1 variational
// parameters are optimized: t_k² = (m_k − a)² + v_k in closed form, and a
// as the root of the derivative 1 − K/2 − 2 Σ_k λ(t_k)(m_k − a) (the
// optimized bound is convex in a, so the root is the minimum), by
// bisection. It returns the bound and a.
// ∂/∂m_k = ½ + 2λ(t_k)(m_k − a), ∂/∂v_k = λ(t_k).
func SoftmaxQuadraticBound(m, v, dm, dv []float64) (T, a float64) {
	K := float64(len(m))
	h := func(a float64) float64 {
		s := 1 - K/2
		for k := range m {
			d := m[k] - a
			s -= 2 * JJLambda(math.Sqrt(d*d+v[k])) * d
		}
		return s
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for k := range m {
		lo, hi = math.Min(lo, m[k]), math.Max(hi, m[k])
	}
	for w := 1.0; h(lo) > 0; w *= 2 {
		lo -= w
	}
	for w := 1.0; h(hi) < 0; w *= 2 {
		hi += w
	}
	for it := 0; it < 200 && hi-lo > 1e-15*math.Max(1, math.Abs(lo)); it++ {
		mid := lo + (hi-lo)/2
		if h(mid) > 0 {
			hi = mid
		} else {
			lo = mid
		}
	}
	a = lo + (hi-lo)/2
	T = a
	for k := range m {
		d := m[k] - a
		t := math.Sqrt(d*d + v[k])
		l := JJLambda(t)
		T += Softplus(t) + (d-t)/2 // λ(t)(E[y²] − t²) = 0 at the optimal t
		if dm != nil {
			dm[k] = 0.5 + 2*l*d
		}
		if dv != nil {
			dv[k] = l
		}
	}
	return T, a
}

// SoftmaxBouchardBound is Bouchard's bound, Eq. 11, in expectation,
//
//	E[log Σ_k e^{x_k}] ≤ a + Σ_k E[log(1 + e^{x_k − a})],
//
// with the univariate expectations by the Gauss–Hermite rule r (so the
// value is a bound up to the rule's error) and a optimized: the right side
// is convex in a with derivative 1 − Σ_k E[σ(x_k − a)], whose root is found
// by safeguarded Newton. It returns the bound and a.
// ∂/∂m_k = E[σ(x_k − a)], ∂/∂v_k = ½E[σ'(x_k − a)].
func SoftmaxBouchardBound(r *HermiteRule, m, v, dm, dv []float64) (T, a float64) {
	deriv := func(a float64) (d1, d2 float64) {
		d1 = 1
		for k := range m {
			// g(y) = −softplus(y − a): E[g'] = −E[σ], 2∂/∂v = −E[σ(1−σ)].
			_, gm, gv := r.ExpectLogistic(0, m[k]-a, v[k])
			d1 += gm
			d2 -= 2 * gv
		}
		return
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for k := range m {
		lo, hi = math.Min(lo, m[k]), math.Max(hi, m[k])
	}
	for w := 1.0; ; w *= 2 {
		if d, _ := deriv(lo); d <= 0 {
			break
		}
		lo -= w
	}
	for w := 1.0; ; w *= 2 {
		if d, _ := deriv(hi); d >= 0 {
			break
		}
		hi += w
	}
	a = lo + (hi-lo)/2
	for it := 0; it < 200; it++ {
		d1, d2 := deriv(a)
		if d1 > 0 {
			hi = a
		} else {
			lo = a
		}
		next := a - d1/d2
		if !(next > lo && next < hi) {
			next = lo + (hi-lo)/2
		}
		if math.Abs(next-a) <= 1e-15*math.Max(1, math.Abs(a)) {
			a = next
			break
		}
		a = next
	}
	T = a
	for k := range m {
		S, gm, gv := r.ExpectLogistic(0, m[k]-a, v[k])
		T -= S
		if dm != nil {
			dm[k] = -gm
		}
		if dv != nil {
			dv[k] = -gv
		}
	}
	return T, a
}

// SoftmaxAdaptive is the "adaptive" choice of §5.2: it evaluates the
// quadratic and the tilted bound and returns the tighter (smaller) one with
// its gradients, and whether it was the tilted one. a receives the tilted
// bound's parameters either way (as SoftmaxTiltedBound; it may be nil for
// len(m) ≤ 64). dm and dv must not be nil.
func SoftmaxAdaptive(m, v, a, dm, dv []float64) (T float64, tilted bool) {
	var sm, sv [64]float64
	if len(m) > len(sm) {
		panic("runtime.SoftmaxAdaptive: len(m) > 64")
	}
	qm, qv := sm[:len(m)], sv[:len(m)]
	Q, _ := SoftmaxQuadraticBound(m, v, qm, qv)
	T = SoftmaxTiltedBound(m, v, a, dm, dv)
	if T <= Q {
		return T, true
	}
	copy(dm, qm)
	copy(dv, qv)
	return Q, false
}
