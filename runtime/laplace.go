package runtime

import "math"

// GaussianFactor is one Gaussian factor q(θ) = N(Mean, Cov) of a
// nonconjugate latent, as the Laplace and delta updates see it: its
// parameters (slices into the variational state, updated in place), its
// method and the generated kernels of its objective f(θ) (Wang & Blei's
// Eq. 12), each bound to the rest of the state.
type GaussianFactor struct {
	// Mean (p) and Cov (p×p, row-major) are the factor's parameters.
	Mean, Cov []float64
	// Delta selects the delta method (Eq. 17); false selects Laplace
	// (Eq. 14).
	Delta bool
	// Closed marks the factor of a latent declared conjugate with a
	// Gaussian prior, whose objective f the compiler proved quadratic
	// (∇²f does not depend on θ). Its update is then the closed form of
	// Eq. 18, q(θ) ∝ exp f(θ): natural parameters η₁ = ∇f(0) and
	// η₂ = ½∇²f, i.e. Σ = −(∇²f)⁻¹ and μ = Ση₁ (Closed overrides Delta).
	Closed bool
	// Started, for a local factor, says whether its Cov has been set by an
	// update, so the delta method can start from it; the updates set it.
	// Nil (a global factor) means the delta method starts afresh each time.
	Started *bool
	// F evaluates f at x, writing ∇f into grad and ∇²f into hess.
	F func(x, grad, hess []float64) float64
	// DeltaF evaluates the delta-method objective f(μ) + ½Tr{∇²f(μ)Σ} at
	// x with Σ = cov, writing its gradient and Hessian in μ.
	DeltaF func(x, cov, grad, hess []float64) float64
	// Collapsed, if set, evaluates the collapsed objective g of a unit's
	// Gaussian whose alternation with a categorical latent has a fixed
	// point that Newton's method finds directly (Collapse).
	Collapsed func(x, grad, hess []float64) float64
	// CollapsedValue, if set, is Collapsed's value alone, for the last
	// step of Collapse's Newton method, where nothing needs the
	// derivatives.
	CollapsedValue func(x []float64) float64
	// Target, if set, is f(x) alone, the log of the density (up to a
	// constant) the factor approximates, for the diagnostic (Diagnose).
	Target func(x []float64) float64
	// NCVMP, if set, selects non-conjugate variational message passing
	// (Knowles & Minka 2011; NCVMPFactor) as the update, over Delta.
	NCVMP *NCVMPFactor
	// CollapsesDelta says the delta correction DeltaF − F does not depend
	// on the categorical latent (its probabilities sum to one per entry),
	// so Collapse also finds the delta method's fixed point.
	CollapsesDelta bool
}

// GaussianWork is one worker's scratch space for the updates of Gaussian
// factors. Its zero value is ready to use.
type GaussianWork struct {
	grad, curv, cov, prev, zero         []float64
	newton                              []float64 // Maximize's scratch
	dg, dh, fg, fh, sig, hc, dH, s3, xt []float64 // collapseDelta
	// NCVMPELBO is the ELBO that the last NCVMP update reached
	// (NCVMPVectorResult.ELBO), for its report.
	NCVMPELBO float64
}

// Step updates q (Update), records a status other than converged in tr
// as "name: status", and returns the relative change of q's mean.
func (w *GaussianWork) Step(tr Trouble, name string, q GaussianFactor, s NewtonSettings) float64 {
	prev := append(w.prev[:0], q.Mean...)
	if st := w.Update(q, s); st != StatusConverged {
		tr.Add(name + ": " + string(st))
	}
	change := L2Change(q.Mean, prev)
	w.prev = prev
	return change
}

// Update is the Laplace or delta update of q: Laplace (Eq. 14) maximizes f
// and sets Σ = −∇²f(θ̂)⁻¹; the delta method (Eq. 17) maximizes
// f(μ) + ½Tr{∇²f(μ)Σ} over μ with Σ fixed, then sets Σ = −∇²f(μ)⁻¹. Where
// ∇²f is not negative definite the covariance is regularized,
// (−∇²f + λI)⁻¹, so q stays a distribution, and the status says so
// (StatusIndefinite). The maximization's status is returned otherwise.
func (w *GaussianWork) Update(q GaussianFactor, s NewtonSettings) Status {
	if q.Closed {
		return w.closedUpdate(q)
	}
	if q.NCVMP != nil {
		return w.ncvmpUpdate(q, s)
	}
	p := len(q.Mean)
	mean, cov := q.Mean, q.Cov
	grad, hess := Grow(&w.grad, p), Grow(&w.curv, p*p)
	delta := q.Delta
	if delta && (q.Started == nil || !*q.Started) {
		// The delta method needs a Σ to start from: −∇²f⁻¹ at the current
		// mean, or the identity if that is not positive definite.
		q.F(mean, grad, hess)
		if !NegInvSPD(cov, hess, p) {
			Identity(cov, p)
		}
		q.setStarted()
	}
	obj := func(x, g, h []float64) float64 {
		var v float64
		if delta {
			v = q.DeltaF(x, cov, g, h)
		} else {
			v = q.F(x, g, h)
		}
		copy(hess, h)
		return v
	}
	r := MaximizeIn(obj, mean, s, &w.newton)
	if delta {
		// hess holds the Hessian of the delta objective; Σ needs ∇²f itself.
		q.F(mean, grad, hess)
	}
	// Maximize's last evaluation is at the returned mean, so ∇²f there is
	// in hess.
	next := Grow(&w.cov, p*p)
	lam, ok := NegInvSPDDamped(next, hess, p)
	if !ok {
		return StatusNotFinite
	}
	copy(cov, next)
	q.setStarted()
	if lam > 0 {
		return StatusIndefinite
	}
	return r.Status
}

// closedUpdate is the closed-form update of a factor whose f is quadratic
// (GaussianFactor.Closed): with H = ∇²f, constant, and any μ₀,
// η₁ = ∇f(0) = ∇f(μ₀) − Hμ₀, so μ = −H⁻¹η₁ = μ₀ − H⁻¹∇f(μ₀): one Newton
// step from the current mean, exact. A Hessian that is not negative
// definite (an improper q) leaves q as it was and is reported as
// StatusIndefinite; non-finite numbers as StatusNotFinite.
func (w *GaussianWork) closedUpdate(q GaussianFactor) Status {
	p := len(q.Mean)
	grad, hess, next := Grow(&w.grad, p), Grow(&w.curv, p*p), Grow(&w.cov, p*p)
	fx := q.F(q.Mean, grad, hess)
	if math.IsNaN(fx) || math.IsInf(fx, 0) || !allFinite(grad) || !allFinite(hess) {
		return StatusNotFinite
	}
	if !NegInvSPD(next, hess, p) {
		return StatusIndefinite
	}
	for i := 0; i < p; i++ {
		var step float64
		for j := 0; j < p; j++ {
			step += next[i*p+j] * grad[j]
		}
		q.Mean[i] += step
	}
	copy(q.Cov, next)
	q.setStarted()
	return StatusConverged
}

func (q GaussianFactor) setStarted() {
	if q.Started != nil {
		*q.Started = true
	}
}

// Collapse moves a unit's q, whose alternation with a categorical latent
// the sweeps of Fig. 1 would otherwise run to its fixed point, straight to
// that fixed point by Newton's method: for Laplace (and for the delta
// method on a unit not yet started) the maximum of the collapsed objective
// g (q.Collapsed); then, for the delta method where q.CollapsesDelta, the
// fixed point of the alternation of the mean, the covariance and the
// categorical latent (CollapseDelta). The sweeps then confirm the point.
func (w *GaussianWork) Collapse(q GaussianFactor, s NewtonSettings) {
	if !q.Delta || q.Started == nil || !*q.Started {
		maximize(q.Collapsed, q.CollapsedValue, q.Mean, s, &w.newton)
	}
	if q.Delta && q.CollapsesDelta {
		w.CollapseDelta(q, s)
	}
}

// CollapseDelta moves q to the fixed point of the delta method's
// alternation of its mean, its covariance and the categorical latent:
// Σ = −∇²f(μ)⁻¹, then the mean maximizing g(μ) + ½Tr{∇²f(μ)Σ} with Σ fixed
// (the collapsed objective plus the delta correction DeltaF − F, which does
// not depend on the categorical latent). Its fixed points are the
// stationary points of Φ(μ) = g(μ) − ½ log|−∇²f(μ)|, whose gradient is
// ∇g + ½Tr{∂∇²f Σ(μ)}; Φ is maximized by Newton's method, its Hessian the
// objective's with Σ fixed plus ½Tr{Σ ∂_i∇²f Σ ∂_j∇²f} (AddTraceGram; ∂∇²f
// by forward differences of F), instead of by the alternation, which
// converges only linearly, on some units with a ratio near one.
func (w *GaussianWork) CollapseDelta(q GaussianFactor, s NewtonSettings) {
	p := len(q.Mean)
	mean, cov := q.Mean, q.Cov
	dg, dh := Grow(&w.dg, p), Grow(&w.dh, p*p)
	fg, fh := Grow(&w.fg, p), Grow(&w.fh, p*p)
	sig, hc := Grow(&w.sig, p*p), Grow(&w.hc, p*p)
	dH, s3, xt := Grow(&w.dH, p*p*p), Grow(&w.s3, p*p*p), Grow(&w.xt, p)
	phi := func(x, g, h []float64) float64 {
		q.F(x, fg, fh)
		for i := range hc {
			hc[i] = -fh[i]
		}
		logdet, ok := LogDetSPD(hc, p)
		if !ok || !NegInvSPD(sig, fh, p) {
			return math.NaN()
		}
		v := q.Collapsed(x, g, h) - logdet/2
		q.DeltaF(x, sig, dg, dh)
		for i := range g {
			g[i] += dg[i] - fg[i]
		}
		for i := range h {
			h[i] += dh[i] - fh[i]
		}
		for j := 0; j < p; j++ {
			copy(xt, x)
			step := 1e-6 * math.Max(math.Abs(x[j]), 1)
			xt[j] += step
			dj := dH[j*p*p : (j+1)*p*p]
			q.F(xt, dg, dj)
			for i := range dj {
				dj[i] = (dj[i] - fh[i]) / step
			}
		}
		AddTraceGram(h, sig, dH, s3, p)
		return v
	}
	MaximizeIn(phi, mean, s, &w.newton)
	q.F(mean, fg, fh)
	if NegInvSPD(sig, fh, p) {
		copy(cov, sig)
		q.setStarted()
	}
}
