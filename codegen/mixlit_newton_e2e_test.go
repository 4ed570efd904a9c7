package codegen

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/vigen-go/vigen/golden"
)

// mixlitNewtonCase evaluates mixlit's kernels and fits it (TestMixlitNewton).
var mixlitNewtonCase = slowTest("TestMixlitNewton").driver("mixlit", mixLiteralVI, "mixlit_kernels_and_fits.go")

// The latents, in the package's order of updates; nwDims and nwOffset are
// their dimensions and the offsets of their coordinates in (u0, u1, s0,
// s1, v).
const (
	nwMu = iota
	nwSigma
	nwW
)

var (
	nwNames  = [3]string{"mu", "sigma", "w"}
	nwDims   = [3]int{2, 2, 1}
	nwOffset = [3]int{0, 2, 4}
)

// nwHessStep is the step of each latent's Hessian by second differences
// of f (nwFiniteDiff), where the truncation error, h⁴ times f's sixth
// derivatives (large through exp(u1) and exp(−2s)), and the rounding
// error, about 5ε|f|/h² (|f| up to 1e4 at the points checked, beside
// Hessians in the thousands for mu and sigma and tens to hundreds for w),
// were measured to be smallest.
var nwHessStep = [3]float64{3e-4, 1e-3, 3e-3}

// nwState is q: each latent's mean and row-major covariance.
type nwState struct {
	mean, cov [3][]float64
}

func (s nwState) clone() nwState {
	var c nwState
	for b := range 3 {
		c.mean[b] = append([]float64(nil), s.mean[b]...)
		c.cov[b] = append([]float64(nil), s.cov[b]...)
	}
	return c
}

// nwJet is a number with its gradient and Hessian in (up to two)
// variables, in complex arithmetic.
type nwJet struct {
	v complex128
	d [2]complex128
	h [2][2]complex128
}

func nwConst(c float64) nwJet { return nwJet{v: complex(c, 0)} }

func nwVar(x complex128, i int) nwJet {
	j := nwJet{v: x}
	j.d[i] = 1
	return j
}

func (a nwJet) add(b nwJet) nwJet {
	a.v += b.v
	for i := range 2 {
		a.d[i] += b.d[i]
		for k := range 2 {
			a.h[i][k] += b.h[i][k]
		}
	}
	return a
}

func (a nwJet) scale(c float64) nwJet {
	cc := complex(c, 0)
	a.v *= cc
	for i := range 2 {
		a.d[i] *= cc
		for k := range 2 {
			a.h[i][k] *= cc
		}
	}
	return a
}

func (a nwJet) sub(b nwJet) nwJet     { return a.add(b.scale(-1)) }
func (a nwJet) plus(c float64) nwJet  { a.v += complex(c, 0); return a }
func (a nwJet) neg() nwJet            { return a.scale(-1) }
func (a nwJet) mul(b nwJet) nwJet     { return nwMul(a, b) }
func (a nwJet) mul3(b, c nwJet) nwJet { return nwMul(nwMul(a, b), c) }

func nwMul(a, b nwJet) nwJet {
	r := nwJet{v: a.v * b.v}
	for i := range 2 {
		r.d[i] = a.v*b.d[i] + b.v*a.d[i]
		for k := range 2 {
			r.h[i][k] = a.v*b.h[i][k] + b.v*a.h[i][k] + a.d[i]*b.d[k] + b.d[i]*a.d[k]
		}
	}
	return r
}

// chain is φ(a), given φ and its first two derivatives at a's value.
func (a nwJet) chain(f0, f1, f2 complex128) nwJet {
	r := nwJet{v: f0}
	for i := range 2 {
		r.d[i] = f1 * a.d[i]
		for k := range 2 {
			r.h[i][k] = f1*a.h[i][k] + f2*a.d[i]*a.d[k]
		}
	}
	return r
}

func nwExp(a nwJet) nwJet {
	e := cmplx.Exp(a.v)
	return a.chain(e, e, e)
}

func nwLogisticC(z complex128) complex128 {
	if real(z) >= 0 {
		return 1 / (1 + cmplx.Exp(-z))
	}
	e := cmplx.Exp(z)
	return e / (1 + e)
}

func nwLogistic(a nwJet) nwJet {
	s := nwLogisticC(a.v)
	return a.chain(s, s*(1-s), s*(1-s)*(1-2*s))
}

// nwSoftplus is log(1 + e^a).
func nwSoftplus(a nwJet) nwJet {
	z := a.v
	var sp complex128
	if real(z) > 0 {
		sp = z + cmplx.Log(1+cmplx.Exp(-z))
	} else {
		sp = cmplx.Log(1 + cmplx.Exp(z))
	}
	s := nwLogisticC(z)
	return a.chain(sp, s, s*(1-s))
}

// nwLogAddExp is log(e^a + e^b) = a + softplus(b − a).
func nwLogAddExp(a, b nwJet) nwJet { return a.add(nwSoftplus(b.sub(a))) }

// Which statements' terms nwObjective sums.
const (
	nwPrior = 1 << iota // the latent's prior, with its log-Jacobian
	nwMix               // the mixture, over the data
	nwAll   = nwPrior | nwMix
)

// nwObjective is f(θ) of latent b (Eq. 12) with the other latents' q
// from st: the terms parts selects, of the statements that read b.
func nwObjective(y []float64, st *nwState, b int, theta []complex128, parts int) nwJet {
	var x [5]nwJet
	for o := range 3 {
		for i := range nwDims[o] {
			if o == b {
				x[nwOffset[o]+i] = nwVar(theta[i], i)
			} else {
				x[nwOffset[o]+i] = nwConst(st.mean[o][i])
			}
		}
	}
	u0, u1, s0, s1, v := x[0], x[1], x[2], x[3], x[4]
	logW, log1mW := nwSoftplus(v.neg()).neg(), nwSoftplus(v).neg() // log w, log(1 − w)
	var f nwJet
	if parts&nwPrior != 0 {
		switch b {
		case nwMu:
			// log N(mu_k; 0, 10), mu = (u0, u0 + exp(u1)), and the log-Jacobian u1
			mu2 := u0.add(nwExp(u1))
			f = u0.mul(u0).add(mu2.mul(mu2)).scale(-0.5 / 100).add(u1).plus(2 * (-halfLog2Pi - math.Log(10)))
		case nwSigma:
			// log 2·N(sigma_k; 0, 5), sigma_k = exp(s_k), and the log-Jacobian s_k
			for _, s := range []nwJet{s0, s1} {
				sig := nwExp(s)
				f = f.add(sig.mul(sig).scale(-0.5 / 25).add(s).plus(math.Ln2 - halfLog2Pi - math.Log(5)))
			}
		case nwW:
			// log Beta(w; 2, 2) = log 6 + log w + log(1 − w), and the
			// log-Jacobian log w + log(1 − w)
			f = logW.add(log1mW).scale(2).plus(math.Log(6))
		}
	}
	if parts&nwMix == 0 {
		return f
	}
	e1 := nwExp(u1)
	p1, p2 := nwExp(s0.scale(-2)), nwExp(s1.scale(-2)) // 1/sigma_k²
	w := nwLogistic(v)
	ww := w.mul(w.neg().plus(1)) // w(1 − w)
	for _, yn := range y {
		d1 := u0.neg().plus(yn)         // y − mu1
		d2 := u0.add(e1).neg().plus(yn) // y − mu2
		p1d1, p2d2 := p1.mul(d1), p2.mul(d2)
		// A_k = log weight_k − s_k − ½ p_k d_k² − ½ log 2π
		a1 := logW.sub(s0).sub(p1d1.mul(d1).scale(0.5)).plus(-halfLog2Pi)
		a2 := log1mW.sub(s1).sub(p2d2.mul(d2).scale(0.5)).plus(-halfLog2Pi)
		f = f.add(nwLogAddExp(a1, a2))
		// ∇A_k and ∇²A_k in (u0, u1, s0, s1, v)
		var g1, g2 [5]nwJet
		var h1, h2 [5][5]nwJet
		g1[0] = p1d1
		g1[2] = p1d1.mul(d1).plus(-1)
		g1[4] = w.neg().plus(1)
		g2[0] = p2d2
		g2[1] = p2d2.mul(e1)
		g2[3] = p2d2.mul(d2).plus(-1)
		g2[4] = w.neg()
		h1[0][0] = p1.neg()
		h1[0][2] = p1d1.scale(-2)
		h1[2][2] = p1d1.mul(d1).scale(-2)
		h1[4][4] = ww.neg()
		h2[0][0] = p2.neg()
		h2[0][1] = p2.mul(e1).neg()
		h2[1][1] = p2.mul3(e1, d2.sub(e1))
		h2[0][3] = p2d2.scale(-2)
		h2[1][3] = p2d2.mul(e1).scale(-2)
		h2[3][3] = p2d2.mul(d2).scale(-2)
		h2[4][4] = ww.neg()
		for i := range 5 {
			for k := range i {
				h1[i][k], h2[i][k] = h1[k][i], h2[k][i]
			}
		}
		r1, r2 := nwLogistic(a1.sub(a2)), nwLogistic(a2.sub(a1)) // softmax(A)
		var gbar [5]nwJet
		for i := range 5 {
			gbar[i] = r1.mul(g1[i]).add(r2.mul(g2[i]))
		}
		// ½tr(∇²ℓ S) over each other latent's coordinates
		for o := range 3 {
			if o == b {
				continue
			}
			n, off := nwDims[o], nwOffset[o]
			for i := range n {
				for k := range n {
					a, c := off+i, off+k
					h := r1.mul(h1[a][c].add(g1[a].mul(g1[c]))).add(r2.mul(h2[a][c].add(g2[a].mul(g2[c])))).sub(gbar[a].mul(gbar[c]))
					f = f.add(h.scale(0.5 * st.cov[o][i*n+k]))
				}
			}
		}
	}
	return f
}

// nwEval is an objective's value, gradient and row-major Hessian.
type nwEval struct {
	Value      float64
	Grad, Hess []float64
}

func nwReal(theta []float64) []complex128 {
	z := make([]complex128, len(theta))
	for i, x := range theta {
		z[i] = complex(x, 0)
	}
	return z
}

// nwF is f of latent b at theta with its gradient and Hessian.
func nwF(y []float64, st *nwState, b int, theta []float64, parts int) nwEval {
	j := nwObjective(y, st, b, nwReal(theta), parts)
	p := len(theta)
	e := nwEval{Value: real(j.v), Grad: make([]float64, p), Hess: make([]float64, p*p)}
	for i := range p {
		e.Grad[i] = real(j.d[i])
		for k := range p {
			e.Hess[i*p+k] = real(j.h[i][k])
		}
	}
	return e
}

// nwDelta is the delta objective f(θ) + ½tr(∇²f(θ) C) of latent b with its
// exact gradient (by a complex step on the value, gradient and Hessian of
// f), and ∇²f at theta.
func nwDelta(y []float64, st *nwState, b int, theta, c []float64, parts int) (d nwEval, hf []float64) {
	p := len(theta)
	delta := func(j nwJet) complex128 {
		v := j.v
		for i := range p {
			for k := range p {
				v += complex(0.5*c[i*p+k], 0) * j.h[i][k]
			}
		}
		return v
	}
	fe := nwF(y, st, b, theta, parts)
	d = nwEval{Value: real(delta(nwObjective(y, st, b, nwReal(theta), parts))), Grad: make([]float64, p)}
	const step = 1e-20
	for m := range p {
		z := nwReal(theta)
		z[m] += complex(0, step)
		d.Grad[m] = imag(delta(nwObjective(y, st, b, z, parts))) / step
	}
	return d, fe.Hess
}

// nwDeltaHess is the Hessian of the delta objective: central differences
// (step 1e-5) of its exact gradient.
func nwDeltaHess(y []float64, st *nwState, b int, theta, c []float64, parts int) []float64 {
	p := len(theta)
	h := make([]float64, p*p)
	for k := range p {
		step := 1e-5 * math.Max(1, math.Abs(theta[k]))
		up, dn := append([]float64(nil), theta...), append([]float64(nil), theta...)
		up[k] += step
		dn[k] -= step
		gu, _ := nwDelta(y, st, b, up, c, parts)
		gd, _ := nwDelta(y, st, b, dn, c, parts)
		for i := range p {
			h[i*p+k] = (gu.Grad[i] - gd.Grad[i]) / (2 * step)
		}
	}
	for i := range p { // symmetrize
		for k := range i {
			m := (h[i*p+k] + h[k*p+i]) / 2
			h[i*p+k], h[k*p+i] = m, m
		}
	}
	return h
}

// nwFiniteDiff is the gradient and Hessian of value by central
// differences with steps h = 1e-4 (gradient) and hh (Hessian), relative
// to max(1, |θ_i|), extrapolated from h and h/2 (Richardson): the
// truncation error is O(h⁴), the rounding error about 5ε·|f|/h (/h²).
func nwFiniteDiff(value func([]float64) float64, theta []float64, hh float64) (grad, hess []float64) {
	p := len(theta)
	at := func(i, k int, hi, hk float64) float64 {
		x := append([]float64(nil), theta...)
		x[i] += hi
		x[k] += hk
		return value(x)
	}
	step := func(i int, h float64) float64 { return h * math.Max(1, math.Abs(theta[i])) }
	richardson := func(d func(h float64) float64, h float64) float64 { return (4*d(h/2) - d(h)) / 3 }
	grad, hess = make([]float64, p), make([]float64, p*p)
	for i := range p {
		grad[i] = richardson(func(h float64) float64 {
			hi := step(i, h)
			return (at(i, i, hi, 0) - at(i, i, -hi, 0)) / (2 * hi)
		}, 1e-4)
		for k := range p {
			hess[i*p+k] = richardson(func(h float64) float64 {
				hi, hk := step(i, h), step(k, h)
				return (at(i, k, hi, hk) - at(i, k, hi, -hk) - at(i, k, -hi, hk) + at(i, k, -hi, -hk)) / (4 * hi * hk)
			}, hh)
		}
	}
	return grad, hess
}

// nwNegInv is −h⁻¹ for a negative definite p×p h (p ≤ 2), or false.
func nwNegInv(h []float64, p int) ([]float64, bool) {
	switch p {
	case 1:
		if !(h[0] < 0) {
			return nil, false
		}
		return []float64{-1 / h[0]}, true
	case 2:
		det := h[0]*h[3] - h[1]*h[2]
		if !(h[0] < 0 && det > 0) {
			return nil, false
		}
		return []float64{-h[3] / det, h[1] / det, h[2] / det, -h[0] / det}, true
	}
	panic("nwNegInv: dimension")
}

// nwNewton maximizes obj from x, in place, by Newton's method with
// curvature c (damped while not negative definite) and a backtracking
// line search, until a step below 1e-13 (relative to max(1, |x|)) has
// been taken. It returns the largest gradient entry at the end.
func nwNewton(x []float64, obj func([]float64) (v float64, g, c []float64)) (float64, error) {
	p := len(x)
	norm := func(v []float64) float64 {
		m := 0.0
		for _, e := range v {
			m = math.Max(m, math.Abs(e))
		}
		return m
	}
	f, g, c := obj(x)
	for it := 0; it < 200; it++ {
		var inv []float64
		for lam := 0.0; ; lam = math.Max(10*lam, 1e-8*(1+norm(c))) {
			damped := append([]float64(nil), c...)
			for i := range p {
				damped[i*p+i] -= lam
			}
			var ok bool
			if inv, ok = nwNegInv(damped, p); ok {
				break
			}
			if lam > 1e30 {
				return 0, fmt.Errorf("no ascent direction at %v (curvature %v)", x, c)
			}
		}
		d := make([]float64, p)
		for i := range p {
			for k := range p {
				d[i] += inv[i*p+k] * g[k]
			}
		}
		scale := math.Max(1, norm(x))
		xt := make([]float64, p)
		for t := 1.0; ; t /= 2 {
			for i := range p {
				xt[i] = x[i] + t*d[i]
			}
			ft, gt, ct := obj(xt)
			slope := 0.0
			for i := range p {
				slope += g[i] * d[i]
			}
			// near the maximum (a step below 1e-6) the full step is taken:
			// the change of f is at its rounding there
			if norm(d) <= 1e-6*scale || ft >= f+1e-4*t*slope {
				copy(x, xt)
				f, g, c = ft, gt, ct
				break
			}
			if t < 1e-12 {
				return 0, fmt.Errorf("line search failed at %v", x)
			}
		}
		if norm(d) <= 1e-13*scale {
			return norm(g), nil
		}
	}
	return 0, fmt.Errorf("no convergence in 200 Newton iterations from %v", x)
}

// nwUpdate is the Laplace or delta update of latent b in st, as the
// package makes it; it returns the largest gradient entry at the new mean.
func nwUpdate(y []float64, st *nwState, b int, delta bool) (float64, error) {
	p := nwDims[b]
	x := append([]float64(nil), st.mean[b]...)
	var gmax float64
	var err error
	if !delta {
		gmax, err = nwNewton(x, func(x []float64) (float64, []float64, []float64) {
			e := nwF(y, st, b, x, nwAll)
			return e.Value, e.Grad, e.Hess
		})
	} else {
		// A global factor's delta update starts from Σ = −∇²f⁻¹ at the
		// current mean (the identity if that is not negative definite).
		c, ok := nwNegInv(nwF(y, st, b, x, nwAll).Hess, p)
		if !ok {
			c = make([]float64, p*p)
			for i := range p {
				c[i*p+i] = 1
			}
		}
		gmax, err = nwNewton(x, func(x []float64) (float64, []float64, []float64) {
			d, hf := nwDelta(y, st, b, x, c, nwAll)
			return d.Value, d.Grad, hf
		})
	}
	if err != nil {
		return 0, fmt.Errorf("%s: %v", nwNames[b], err)
	}
	cov, ok := nwNegInv(nwF(y, st, b, x, nwAll).Hess, p)
	if !ok {
		return 0, fmt.Errorf("%s: ∇²f is not negative definite at the new mean %v", nwNames[b], x)
	}
	st.mean[b], st.cov[b] = x, cov
	return gmax, nil
}

// nwCoordinateAscent runs the updates of mu, sigma and w in turn from st,
// for sweeps iterations, or (sweeps 0) until no mean changes by more than
// 1e-14 relative (the package's L2Change) in an iteration. It returns the
// iterations run and the largest gradient entry at the end of an update.
func nwCoordinateAscent(y []float64, st *nwState, delta bool, sweeps int) (int, float64, error) {
	gmax := 0.0
	for it := 1; it <= 5000; it++ {
		change := 0.0
		for b := range 3 {
			prev := append([]float64(nil), st.mean[b]...)
			g, err := nwUpdate(y, st, b, delta)
			if err != nil {
				return it, 0, fmt.Errorf("iteration %d: %v", it, err)
			}
			gmax = math.Max(gmax, g)
			d2, n2 := 0.0, 0.0
			for i, m := range st.mean[b] {
				d2 += (m - prev[i]) * (m - prev[i])
				n2 += prev[i] * prev[i]
			}
			change = math.Max(change, math.Sqrt(d2)/math.Max(1, math.Sqrt(n2)))
		}
		if sweeps > 0 && it == sweeps || sweeps == 0 && change < 1e-14 {
			return it, gmax, nil
		}
	}
	return 5000, gmax, fmt.Errorf("no convergence in 5000 iterations")
}

// nwMaxDiff is the largest difference of a from want relative to the
// largest entry of want (at least floor).
func nwMaxDiff(a, want []float64, floor float64) float64 {
	scale, d := floor, 0.0
	for i := range want {
		scale = math.Max(scale, math.Abs(want[i]))
		d = math.Max(d, math.Abs(a[i]-want[i]))
	}
	return d / scale
}

// nwStateDiff is the largest difference between two states' means
// (relative to each entry) and covariances (relative to √(C_ii C_jj)),
// and where the largest of all is.
func nwStateDiff(a, want nwState) (mean, cov float64, where string) {
	worst := -1.0
	note := func(d float64, s string) {
		if d > worst {
			worst, where = d, s
		}
	}
	for b := range 3 {
		p := nwDims[b]
		for i := range p {
			d := math.Abs(a.mean[b][i]-want.mean[b][i]) / math.Abs(want.mean[b][i])
			mean = math.Max(mean, d)
			note(d, fmt.Sprintf("%s mean[%d]: %.15g, want %.15g", nwNames[b], i, a.mean[b][i], want.mean[b][i]))
			for k := range p {
				c := want.cov[b]
				d := math.Abs(a.cov[b][i*p+k]-c[i*p+k]) / math.Sqrt(c[i*p+i]*c[k*p+k])
				cov = math.Max(cov, d)
				note(d, fmt.Sprintf("%s cov[%d][%d]: %.15g, want %.15g", nwNames[b], i, k, a.cov[b][i*p+k], c[i*p+k]))
			}
		}
	}
	return mean, cov, where
}

// nwResultState reads q from a fit's result.
func nwResultState(t *testing.T, raw json.RawMessage) (nwState, string, int) {
	t.Helper()
	var r struct {
		Status     string
		Iterations int
		Latent     struct {
			Mu, Sigma gaussianJSON
			W         struct{ Mean, SD float64 }
		}
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("result: %v\n%s", err, raw)
	}
	var st nwState
	for b, g := range []gaussianJSON{r.Latent.Mu, r.Latent.Sigma} {
		if len(g.Mean) != 2 || len(g.Cov) != 2 {
			t.Fatalf("result: %s is %+v", nwNames[b], g)
		}
		st.mean[b] = g.Mean
		st.cov[b] = append(append([]float64(nil), g.Cov[0]...), g.Cov[1]...)
	}
	st.mean[nwW], st.cov[nwW] = []float64{r.Latent.W.Mean}, []float64{r.Latent.W.SD * r.Latent.W.SD}
	return st, r.Status, r.Iterations
}

// nwRandomPoint is a state near the posterior of twoNormalsData, with
// random SPD covariances.
func nwRandomPoint(rng *rand.Rand) nwState {
	var st nwState
	center := [5]float64{-2, math.Log(5), math.Log(0.7), math.Log(1.2), math.Log(0.35 / 0.65)}
	for b := range 3 {
		p := nwDims[b]
		st.mean[b] = make([]float64, p)
		for i := range p {
			st.mean[b][i] = center[nwOffset[b]+i] + 0.3*rng.NormFloat64()
		}
		// L Lᵀ with a random lower-triangular L
		l := make([]float64, p*p)
		for i := range p {
			for k := range i + 1 {
				l[i*p+k] = 0.1 * rng.NormFloat64()
			}
			l[i*p+i] = 0.05 + 0.2*rng.Float64()
		}
		st.cov[b] = make([]float64, p*p)
		for i := range p {
			for k := range p {
				for j := range p {
					st.cov[b][i*p+k] += l[i*p+j] * l[k*p+j]
				}
			}
		}
	}
	return st
}

// TestMixlitNewton checks the two-component mixture mixlit (mixLiteralVI,
// issue 39) against a hand-written computation of what vigen's generated
// package optimizes.
//
// The objectives. Each latent is one Gaussian factor over its
// unconstrained coordinates: mu = (u0, u0 + exp(u1)) (ordered, log-Jacobian
// u1), sigma_k = exp(s_k) (log-Jacobian s_k), w = logistic(v) (log-Jacobian
// log w + log(1−w)). nwObjective writes f(θ) of Wang & Blei's Eq. 12 for
// one latent θ: the log densities of the statements that read θ (its
// prior with its normalizing constant and log-Jacobian, and the mixture),
// with the expectation over each other latent's q = N(m, S) taken as
// Eq. 19's second-order expansion, g(m) + ½tr(∇²g(m) S). The mixture's
// log density per point is ℓ = logaddexp(A1, A2), and its second
// derivatives in the other latents' coordinates are derived by hand:
// ∇²ℓ = Σ r_i (∇²A_i + ∇A_i ∇A_iᵀ) − (Σ r_i ∇A_i)(Σ r_i ∇A_i)ᵀ,
// r = softmax(A), with ∇A_i and ∇²A_i written out. f is evaluated in a
// small forward-mode arithmetic of this file (nwJet: a value with its
// gradient and Hessian in θ) over complex numbers, so that a complex step
// θ + iδe_m (δ = 1e-20) gives ∂_m of the value, the gradient and the
// Hessian without cancellation: third derivatives of f, for the gradient
// of the delta objective f + ½tr(∇²f C). That arithmetic is itself checked
// against central differences of f's value.
//
// The kernels. At six random points (θ and the other latents' means near
// the posterior, random SPD covariances) and at the fits' start, MuF,
// SigmaF and WF must equal the hand-written f, ∇f and ∇²f to 1e-10
// relative (to the largest entry of a gradient or Hessian), and MuDelta,
// SigmaDelta and WDelta the hand-written f + ½tr(∇²f C) and its gradient,
// C the latent's covariance: all are computed to rounding (about 1e-14
// is measured). The gradients and Hessians must also match central
// differences of the hand-written value (nwFiniteDiff, Richardson
// extrapolated) to 1e-6 relative: the gradients' differences (step 1e-4)
// agree to about 1e-10 and 4e-9 (w, whose gradient is small beside
// |f| ≈ 1e4); the Hessians' second differences, whose rounding error
// is about 5ε|f|/h², to 1.1e-7 at the steps of nwHessStep (to about 3e-6
// at a third or three times them). The delta kernels' Hessians only steer
// Newton's method, and are documented to hold the Hessian of the delta
// objective for the priors' terms and ∇²f alone for the mixture's (or the
// delta objective's for all terms, below a size limit): each must be one
// of the two, to 1e-6, against differences (step 1e-5) of the exact
// gradient of the delta objective.
//
// The fits. From the start of TestEndToEndLiteralDimensions, on
// twoNormalsData(400, 13), the package fits by Laplace and by delta, with
// the Newton tolerance at its floor (4ε), MeanTol 1e-13 and Tol 1e-15, and
// nwCoordinateAscent runs the same coordinate ascent by hand: the latents
// in the package's order (mu, sigma, w), each updated by Newton's method
// on the hand-written f (exact gradient and Hessian: Laplace) or on
// f + ½tr(∇²f C) (exact gradient, ∇²f to steer: delta) until a step below
// 1e-13 (the gradient is then at its rounding, about 1e-12), C set, as the
// package does for a global factor, to −∇²f⁻¹ at the current mean before
// each delta update; then Σ = −∇²f⁻¹ at the new mean. Means are compared
// relative to each entry, covariances relative to √(C_ii C_jj):
//   - after one and two iterations (the package run with MaxIter 1 and
//     2): the same steps in the same order. Laplace agrees to rounding
//     (tolerance 1e-11). The delta updates of the package agree to
//     5.5e-9 only (tolerance 1e-7): its Newton's method stops once the
//     decrement is below 4ε(1+|f|), after one more step, and with ∇²f
//     steering in place of the delta objective's Hessian it converges
//     linearly, so that last step, of up to √(8ε|f|/λ) ≈ 4e-7 (λ the
//     smallest curvature), leaves a fraction ρ (a few per cent) of itself.
//     At the fixed point each update starts at its maximum, and that error
//     is gone.
//   - at convergence, to 1e-8 (issue 39's tolerance): both full runs.
//     The package's stopping rule allows it: with MeanTol 1e-13 a run
//     stops within about 1e-13/(1 − ρ) of its fixed point, ρ the rate of
//     the coordinate ascent (11 iterations from this start). About 1e-14
//     is measured.
//   - the package's final state is a fixed point of the hand-written
//     updates: each latent's update from it moves its mean by at most
//     1e-8 relative, and its covariance is −∇²f⁻¹ at its mean to 1e-8.
//
// Both the full runs and the fixed-point check are done: the first says the
// package reaches the hand-written fixed point from the same start, the
// second that it stopped at it.
func TestMixlitNewton(t *testing.T) {
	golden.SlowTier(t)
	y := twoNormalsData(400, 13)
	start := nwState{
		mean: [3][]float64{{-1.5, math.Log(4)}, {0, 0}, {0}},
		cov:  [3][]float64{{1, 0, 0, 1}, {1, 0, 0, 1}, {1}},
	}
	startResult := startJSON("mixlit", map[string]any{
		"mu":    map[string]any{"family": "MvNormal", "mean": start.mean[nwMu], "cov": [][]float64{{1, 0}, {0, 1}}},
		"sigma": map[string]any{"family": "MvNormal", "mean": start.mean[nwSigma], "cov": [][]float64{{1, 0}, {0, 1}}},
		"w":     map[string]any{"family": "Normal", "mean": 0, "sd": 1},
	})
	rng := rand.New(rand.NewPCG(39, 1))
	points := []nwState{start}
	for range 6 {
		points = append(points, nwRandomPoint(rng))
	}
	type pointJSON struct{ MuMean, MuCov, SigmaMean, SigmaCov, WMean, WCov []float64 }
	var pts []pointJSON
	for _, p := range points {
		pts = append(pts, pointJSON{p.mean[nwMu], p.cov[nwMu], p.mean[nwSigma], p.cov[nwSigma], p.mean[nwW], p.cov[nwW]})
	}
	type fitJSON struct {
		Method                  string
		MaxIter                 int
		Tol, MeanTol, NewtonTol float64
		NewtonMaxIter           int
	}
	var fits []fitJSON
	for _, method := range []string{"laplace", "delta"} {
		for _, iters := range []int{1, 2} {
			fits = append(fits, fitJSON{Method: method, MaxIter: iters, NewtonTol: 1e-16})
		}
		fits = append(fits, fitJSON{Method: method, MaxIter: 5000, Tol: 1e-15, MeanTol: 1e-13, NewtonTol: 1e-16})
	}
	in, err := json.Marshal(map[string]any{"Data": map[string]any{"y": y}, "Start": startResult, "Points": pts, "Fits": fits})
	if err != nil {
		t.Fatal(err)
	}
	raw := mixlitNewtonCase.run(t, in)
	var out struct {
		Kernels []map[string]nwEval
		Fits    []json.RawMessage
	}
	if err := json.Unmarshal(raw, &out); err != nil || len(out.Kernels) != len(points) || len(out.Fits) != len(fits) {
		t.Fatalf("driver output: %v\n%.2000s", err, raw)
	}

	t.Run("kernels", func(t *testing.T) {
		// the largest relative differences, by check
		worst := map[string]float64{}
		check := func(what string, d, tol float64, k int) {
			t.Helper()
			worst[what] = math.Max(worst[what], d)
			if !(d <= tol) {
				t.Errorf("point %d: %s differ by %.3g relative (tolerance %.0e)", k, what, d, tol)
			}
		}
		for k, st := range points {
			for b, name := range nwNames {
				theta, c := st.mean[b], st.cov[b]
				value := func(x []float64) float64 { return nwF(y, &st, b, x, nwAll).Value }
				hand := nwF(y, &st, b, theta, nwAll)
				fdGrad, fdHess := nwFiniteDiff(value, theta, nwHessStep[b])
				kern := nwKernel(name, "F")
				gen := out.Kernels[k][kern]
				check(kern+" value and f", math.Abs(gen.Value-hand.Value)/math.Abs(hand.Value), 1e-10, k)
				check(kern+" gradient and ∇f", nwMaxDiff(gen.Grad, hand.Grad, 1e-300), 1e-10, k)
				check(kern+" Hessian and ∇²f", nwMaxDiff(gen.Hess, hand.Hess, 1e-300), 1e-10, k)
				check(kern+" gradient and differences of f", nwMaxDiff(gen.Grad, fdGrad, 1e-300), 1e-6, k)
				check(kern+" Hessian and differences of f", nwMaxDiff(gen.Hess, fdHess, 1e-300), 1e-6, k)
				check(name+": hand-written ∇f and differences of f", nwMaxDiff(hand.Grad, fdGrad, 1e-300), 1e-6, k)
				check(name+": hand-written ∇²f and differences of f", nwMaxDiff(hand.Hess, fdHess, 1e-300), 1e-6, k)

				// delta: f + ½tr(∇²f C), C the latent's covariance
				del, _ := nwDelta(y, &st, b, theta, c, nwAll)
				fdGrad, _ = nwFiniteDiff(func(x []float64) float64 {
					d, _ := nwDelta(y, &st, b, x, c, nwAll)
					return d.Value
				}, theta, nwHessStep[b])
				kern = nwKernel(name, "Delta")
				gen = out.Kernels[k][kern]
				check(kern+" value and f + ½tr(∇²f C)", math.Abs(gen.Value-del.Value)/math.Abs(del.Value), 1e-10, k)
				check(kern+" gradient and the hand-written one", nwMaxDiff(gen.Grad, del.Grad, 1e-300), 1e-10, k)
				check(kern+" gradient and differences of f + ½tr(∇²f C)", nwMaxDiff(gen.Grad, fdGrad, 1e-300), 1e-6, k)
				check(name+": hand-written delta gradient and differences", nwMaxDiff(del.Grad, fdGrad, 1e-300), 1e-6, k)
				// its Hessian: the delta objective's, or the priors' delta
				// objective's and the mixture's ∇²f
				full := nwDeltaHess(y, &st, b, theta, c, nwAll)
				split := nwDeltaHess(y, &st, b, theta, c, nwPrior)
				mix := nwF(y, &st, b, theta, nwMix).Hess
				for i := range split {
					split[i] += mix[i]
				}
				dFull, dSplit := nwMaxDiff(gen.Hess, full, 1e-300), nwMaxDiff(gen.Hess, split, 1e-300)
				if k == 0 {
					t.Logf("%s Hessian: %.2g from the delta objective's, %.2g from the prior's delta objective's and the mixture's ∇²f", kern, dFull, dSplit)
				}
				check(kern+" Hessian and one of the two forms", math.Min(dFull, dSplit), 1e-6, k)
			}
		}
		for _, what := range slices.Sorted(maps.Keys(worst)) {
			t.Logf("largest relative difference: %s: %.3g", what, worst[what])
		}
	})

	for mi, method := range []string{"laplace", "delta"} {
		t.Run(method, func(t *testing.T) {
			delta := method == "delta"
			results := out.Fits[3*mi : 3*mi+3]
			// one and two iterations
			for k, iters := range []int{1, 2} {
				got, _, n := nwResultState(t, results[k])
				if n != iters {
					t.Fatalf("MaxIter %d: %d iterations", iters, n)
				}
				st := start.clone()
				if _, _, err := nwCoordinateAscent(y, &st, delta, iters); err != nil {
					t.Fatal(err)
				}
				mean, cov, where := nwStateDiff(got, st)
				t.Logf("after %d iterations: means differ by %.3g relative, covariances by %.3g (%s)", iters, mean, cov, where)
				tol := 1e-11
				if delta {
					tol = 1e-7 // the package's Newton stops short (see above)
				}
				if mean > tol || cov > tol {
					t.Errorf("after %d iterations: means differ by %.3g, covariances by %.3g, tolerance %.0e: %s", iters, mean, cov, tol, where)
				}
			}

			// the fit
			got, status, n := nwResultState(t, results[2])
			if status != "converged" {
				t.Errorf("the package's fit: %s after %d iterations", status, n)
			}
			st := start.clone()
			iters, gmax, err := nwCoordinateAscent(y, &st, delta, 0)
			if err != nil {
				t.Fatal(err)
			}
			mean, cov, where := nwStateDiff(got, st)
			t.Logf("converged: the package in %d iterations, by hand in %d (largest gradient entry after a Newton update %.2g); means differ by %.3g relative, covariances by %.3g (%s)",
				n, iters, gmax, mean, cov, where)
			if mean > 1e-8 || cov > 1e-8 {
				t.Errorf("converged: means differ by %.3g, covariances by %.3g, tolerance 1e-8: %s", mean, cov, where)
			}
			for b, name := range nwNames {
				t.Logf("q(%s): mean %.12g, cov %.12g", name, got.mean[b], got.cov[b])
			}

			// the package's result is a fixed point of the hand-written updates
			for b, name := range nwNames {
				moved := got.clone()
				if _, err := nwUpdate(y, &moved, b, delta); err != nil {
					t.Fatal(err)
				}
				var only nwState
				for o := range 3 {
					only.mean[o], only.cov[o] = got.mean[o], got.cov[o]
				}
				only.mean[b], only.cov[b] = moved.mean[b], moved.cov[b]
				mean, cov, where := nwStateDiff(got, only)
				// and the covariance is −∇²f⁻¹ at the package's mean
				at, ok := nwNegInv(nwF(y, &got, b, got.mean[b], nwAll).Hess, nwDims[b])
				if !ok {
					t.Errorf("%s: ∇²f is not negative definite at the package's mean", name)
					continue
				}
				var atMean nwState
				for o := range 3 {
					atMean.mean[o], atMean.cov[o] = got.mean[o], got.cov[o]
				}
				atMean.cov[b] = at
				_, covAt, whereAt := nwStateDiff(got, atMean)
				t.Logf("fixed point: %s's update moves its mean by %.3g relative and its covariance by %.3g; −∇²f⁻¹ at its mean differs by %.3g",
					name, mean, cov, covAt)
				if mean > 1e-8 || cov > 1e-8 {
					t.Errorf("the hand-written update of %s from the package's result: %s", name, where)
				}
				if covAt > 1e-8 {
					t.Errorf("%s's covariance is not −∇²f⁻¹ at its mean: %s", name, whereAt)
				}
			}
		})
	}
}

// nwKernel is the name of latent name's kernel kind (F or Delta).
func nwKernel(name, kind string) string {
	return map[string]string{"mu": "Mu", "sigma": "Sigma", "w": "W"}[name] + kind
}
