package runtime

import "math"

// This file lets a generated model choose NCVMP (Knowles & Minka 2011) as
// the update of a nonconjugate latent's Gaussian factor, beside Laplace and
// the delta method: the compiler splits the latent's objective f(θ) into
// a part quadratic in θ (its Gaussian prior and every statement conjugate to
// it, whose VMP messages are exact) and statements that read θ through one
// linear form each, u_n = x_nᵀθ (derive.Projection); NCVMPVector then runs
// Algorithm 1 over them with Gauss–Hermite expectations (§5.1).

// ProjectionBatch is the non-conjugate statements of a generated model as
// NCVMPVector's factors: N projections of a P-vector latent, their rows
// (filled by Rows) and their log factors g_n, evaluated for all n at once by
// LogFactors at u (length N) into g, dg and d2g (g_n, g_n', g_n” at u_n).
// It implements ProjectionFactors and ProjectionExpecter.
type ProjectionBatch struct {
	N, P       int
	Rows       func(rows []float64)
	LogFactors func(u, g, dg, d2g []float64)

	rows, u, g, dg, d2g, sd []float64
}

// fill allocates b's scratch (once) and computes its rows.
func (b *ProjectionBatch) fill() {
	Grow(&b.rows, b.N*b.P)
	b.u, b.g, b.dg, b.d2g = Grow(&b.u, b.N), Grow(&b.g, b.N), Grow(&b.dg, b.N), Grow(&b.d2g, b.N)
	b.sd = Grow(&b.sd, b.N)
	clear(b.rows)
	b.Rows(b.rows)
}

// Size returns N and P.
func (b *ProjectionBatch) Size() (n, p int) { return b.N, b.P }

// Row returns x_n.
func (b *ProjectionBatch) Row(n int) []float64 { return b.rows[n*b.P : (n+1)*b.P] }

// Offset is 0: a generated log factor reads its offset itself.
func (b *ProjectionBatch) Offset(int) float64 { return 0 }

// LogFactor evaluates one factor, through a call for all (NCVMPVector uses
// ExpectAll instead).
func (b *ProjectionBatch) LogFactor(n int, u float64) (g, dg, d2g float64) {
	for i := range b.u {
		b.u[i] = u
	}
	b.LogFactors(b.u, b.g, b.dg, b.d2g)
	return b.g[n], b.dg[n], b.d2g[n]
}

// ExpectAll computes S_n = E[g_n(u)] for u ∼ N(m_n, v_n) and its
// derivatives ∂S/∂m = E[g'], ∂S/∂v = ½E[g”] with rule r: one call of
// LogFactors per node.
func (b *ProjectionBatch) ExpectAll(r *HermiteRule, m, v, S, dSdm, dSdv []float64) bool {
	clear(S)
	clear(dSdm)
	clear(dSdv)
	for n := range b.sd {
		b.sd[n] = math.Sqrt(2 * v[n])
	}
	for i, x := range r.X {
		for n := range b.u {
			b.u[n] = m[n] + b.sd[n]*x
		}
		b.LogFactors(b.u, b.g, b.dg, b.d2g)
		wi := r.W[i]
		for n := range b.u {
			S[n] += wi * b.g[n]
			dSdm[n] += wi * b.dg[n]
			dSdv[n] += wi * b.d2g[n]
		}
	}
	for n := range dSdv {
		dSdv[n] /= 2
	}
	return allFinite(S) && allFinite(dSdm) && allFinite(dSdv)
}

// NCVMPFactor is what a GaussianFactor needs for an NCVMP update: the
// quadratic part of f and the projections.
type NCVMPFactor struct {
	// Quad evaluates the part of f(θ) quadratic in θ at x, writing its
	// gradient and (constant) Hessian.
	Quad func(x, grad, hess []float64) float64
	// Batch holds the statements read through projections.
	Batch *ProjectionBatch
	// MaxIter bounds NCVMP's iterations per update (0: 1000).
	MaxIter int
}

// ncvmpUpdate runs NCVMP (NCVMPVector, full covariance) for q from its
// current mean and covariance, with the quadratic part of f as the prior in
// natural parameters: log p = f_Q(0) + ∇f_Q(0)ᵀθ + ½θᵀ∇²f_Qθ, and
// s.HermitePoints as the quadrature rule's size.
func (w *GaussianWork) ncvmpUpdate(q GaussianFactor, s NewtonSettings) Status {
	p := len(q.Mean)
	grad, hess := Grow(&w.grad, p), Grow(&w.curv, p*p)
	zero := Grow(&w.zero, p)
	clear(zero)
	c := q.NCVMP.Quad(zero, grad, hess)
	if !isFinite(c) || !allFinite(grad) || !allFinite(hess) {
		return StatusNotFinite
	}
	prec := make([]float64, p*p)
	for i := range prec {
		prec[i] = -hess[i]
	}
	b := q.NCVMP.Batch
	b.fill()
	start := Grow(&w.cov, p*p)
	copy(start, q.Cov)
	if !InvSPD(Grow(&w.dH, p*p), start, p) {
		Identity(start, p)
	}
	run := NCVMPVector{
		Factors:       b,
		Natural:       &NaturalPrior{Prec: prec, H: append([]float64(nil), grad...), C: c},
		StartMu:       q.Mean,
		StartSigma:    start,
		HermitePoints: s.HermitePoints,
		NCVMPControl:  NCVMPControl{MaxIter: q.NCVMP.MaxIter},
	}
	res, err := run.Run()
	if err != nil {
		return StatusNotFinite
	}
	copy(q.Mean, res.Mu)
	copy(q.Cov, res.Sigma)
	q.setStarted()
	w.NCVMPELBO = 0
	if len(res.ELBO) > 0 {
		w.NCVMPELBO = res.ELBO[len(res.ELBO)-1]
	}
	return res.Status
}

// QuadratureGap returns Σ_n (S_n − g_n(m_n) − ½ g_n”(m_n) v_n) over f's
// projections under q(θ) = N(mean, cov), with m_n = x_nᵀ mean,
// v_n = x_nᵀ cov x_n and S_n = E[g_n(u)], u ∼ N(m_n, v_n), by the
// points-point Gauss–Hermite rule (0: DefaultHermitePoints, the rule of the
// NCVMP update): what the ELBO's Taylor expansion of the projected
// statements (Eq. 21) misses against the expectations NCVMP's update
// integrates. Added to the Taylor ELBO it gives the bound NCVMP ascends.
// It is NaN when a value is not finite.
func (f *NCVMPFactor) QuadratureGap(mean, cov []float64, points int) float64 {
	b := f.Batch
	b.fill()
	m, v := make([]float64, b.N), make([]float64, b.N)
	cx := make([]float64, b.P)
	for n := range m {
		x := b.Row(n)
		m[n] = DotFMA(x, mean)
		for i := range cx {
			cx[i] = DotFMA(cov[i*b.P:(i+1)*b.P], x)
		}
		v[n] = max(DotFMA(x, cx), 0)
	}
	S, dSdm, dSdv := make([]float64, b.N), make([]float64, b.N), make([]float64, b.N)
	if !b.ExpectAll(Hermite(points), m, v, S, dSdm, dSdv) {
		return math.NaN()
	}
	b.LogFactors(m, b.g, b.dg, b.d2g)
	gap := 0.0
	for n := range S {
		gap += S[n] - b.g[n] - 0.5*b.d2g[n]*v[n]
	}
	if !isFinite(gap) {
		return math.NaN()
	}
	return gap
}
