package runtime

import "math"

// Objective evaluates a function to be maximized at x, writes its gradient
// into grad (len n) and a symmetric curvature matrix into curv (n×n, flat
// row-major, full matrix): the Hessian, or for quasi-Newton use a
// negative-definite approximation of it. It returns the function value.
//
// Maximize passes its own scratch slices for x, grad and curv at trial points;
// an Objective must not retain them beyond the call except as described in
// Maximize.
type Objective func(x, grad, curv []float64) float64

// Status says why Maximize stopped.
type Status string

const (
	// StatusConverged means the Newton decrement fell below the tolerance
	// and the final curvature is negative definite.
	StatusConverged Status = "converged"
	// StatusMaxIterations means NewtonSettings.MaxIter iterations ran
	// without convergence; x is the last iterate.
	StatusMaxIterations Status = "max_iterations"
	// StatusLineSearchFailed means no ascent was found along the Newton
	// direction; x is the best point found.
	StatusLineSearchFailed Status = "line_search_failed"
	// StatusNotFinite means the objective or gradient was NaN/Inf at the
	// starting point, or the curvature at the current point had a NaN/Inf
	// entry so no step could be formed; x is the last finite iterate.
	StatusNotFinite Status = "not_finite"
	// StatusIndefinite means the decrement converged but the final curvature
	// is not negative definite (a saddle point or a flat direction), so
	// −C⁻¹ is not a covariance.
	StatusIndefinite Status = "indefinite_hessian"
)

// NewtonSettings controls Maximize. The zero value gives the defaults.
type NewtonSettings struct {
	// MaxIter is the maximum number of Newton iterations; 200 when ≤ 0.
	MaxIter int
	// Tol is the convergence tolerance; 1e-12 when ≤ 0. Maximize stops when
	// the Newton decrement gᵀ(−C)⁻¹g/2 ≤ Tol·(1+|f|), after taking that
	// last step. Values below 4ε ≈ 8.9e-16 are raised to it: a smaller
	// decrement is an increase of f below its rounding error.
	Tol float64
	// HermitePoints is the size of the Gauss–Hermite rule with which an
	// NCVMP update (NCVMPFactor) integrates its factors; 0 means
	// DefaultHermitePoints (128: about 1e-9 relative accuracy while the
	// projections' variances stay below 10; see Hermite).
	HermitePoints int
}

// NewtonResult reports how Maximize went.
type NewtonResult struct {
	Value       float64 // objective at the returned x
	Iterations  int     // Newton directions computed
	Evaluations int     // calls to the Objective
	Status      Status  // why it stopped
	Decrement   float64 // last Newton decrement gᵀ(−C+λI)⁻¹g/2
	Damping     float64 // largest damping λ that had to be added (0 if none)
}

const (
	newtonMaxIter   = 200
	newtonTol       = 1e-12
	minTol          = 4 * 0x1p-52 // decrements below 4ε·(1+|f|) are lost in f's rounding
	armijoC         = 1e-4        // sufficient increase: f(x+t·d) ≥ f(x) + c·t·gᵀd
	maxHalvings     = 40
	dampStart       = 1e-8 // first λ is dampStart·(1+max|C_ii|)
	dampGrowth      = 10
	maxDampAttempts = 400
)

// Maximize runs damped Newton with backtracking (Armijo) line search from x,
// updating x in place.
//
// Each step solves (−C + λI) d = g by Cholesky, with λ = 0 first and, if −C is
// not positive definite, λ increased from 1e-8·(1+max|diag C|) by ×10 until
// the factorization succeeds (C is symmetrized as (C+Cᵀ)/2). The trial point
// x + t·d is accepted when f(x+t·d) ≥ f(x) + 1e-4·t·gᵀd; backtracking halves
// t up to 40 times, and a non-finite objective value or gradient at a trial
// point counts as failure (the step shrinks). Once the decrement
// δ = gᵀd/2 ≤ Tol·(1+|f|) only the full step is tried; Maximize reports
// convergence whether or not rounding lets it be accepted.
//
// On return, grad and curv passed to the last call to obj correspond to the
// returned x (obj is called once more at the final x if needed), so the
// caller can form −C⁻¹. Status is StatusIndefinite when the decrement
// converged but the final curvature is not negative definite.
//
// Maximize allocates its scratch space (3n²+4n floats) once per call;
// MaximizeIn takes it from the caller.
func Maximize(obj Objective, x []float64, s NewtonSettings) NewtonResult {
	var buf []float64
	return MaximizeIn(obj, x, s, &buf)
}

// MaximizeIn is Maximize with its scratch space in *buf, grown as needed
// and kept there, so that a worker's repeated maximizations allocate
// nothing.
func MaximizeIn(obj Objective, x []float64, s NewtonSettings, scratch *[]float64) NewtonResult {
	return maximize(obj, nil, x, s, scratch)
}

// maximize is MaximizeIn. With value (obj's value alone) set, the caller
// needs no derivatives at the returned x: the step taken once the
// decrement has converged is judged by value alone, and the result's
// Status is not checked for definiteness there.
func maximize(obj Objective, value func(x []float64) float64, x []float64, s NewtonSettings, scratch *[]float64) NewtonResult {
	n := len(x)
	maxIter := s.MaxIter
	if maxIter <= 0 {
		maxIter = newtonMaxIter
	}
	tol := s.Tol
	if tol <= 0 {
		tol = newtonTol
	}
	tol = math.Max(tol, minTol)
	buf := Grow(scratch, 3*n*n+4*n)
	clear(buf)
	c, buf := buf[:n*n:n*n], buf[n*n:]  // curvature at x
	ct, buf := buf[:n*n:n*n], buf[n*n:] // curvature at the trial point
	h, buf := buf[:n*n:n*n], buf[n*n:]  // Cholesky factor of −C + λI
	g, buf := buf[:n:n], buf[n:]        // gradient at x
	gt, buf := buf[:n:n], buf[n:]       // gradient at the trial point
	d, xt := buf[:n:n], buf[n:2*n:2*n]  // Newton direction, trial point

	var res NewtonResult
	f := obj(x, g, c)
	res.Evaluations = 1
	res.Value = f
	if !isFinite(f) || !allFinite(g) {
		res.Status = StatusNotFinite
		return res
	}
	atX := true // the last call to obj was at x, with g and c
	for res.Iterations < maxIter {
		res.Iterations++
		lam, ok := newtonDirection(d, h, c, g, n)
		if !ok {
			res.Status = StatusNotFinite
			break
		}
		res.Damping = math.Max(res.Damping, lam)
		slope := dot(g, d) // gᵀd = gᵀ(−C+λI)⁻¹g = 2δ
		res.Decrement = slope / 2
		if !isFinite(slope) {
			res.Status = StatusLineSearchFailed
			break
		}
		converging := res.Decrement <= tol*(1+math.Abs(f))
		// Within ~1e4 rounding errors of f the Armijo test is decided by
		// rounding; the full Newton step is then judged by "no loss" instead.
		nearOptimum := converging || res.Decrement <= 1e4*minTol*(1+math.Abs(f))
		accepted := false
		if slope > 0 {
			t := 1.0
			for k := 0; k <= maxHalvings; k++ {
				for i := range xt {
					xt[i] = x[i] + t*d[i]
				}
				if converging && value != nil {
					// the last step: accepted or not, the loop ends here
					if ft := value(xt); isFinite(ft) && ft >= f-1e3*minTol*(1+math.Abs(f)) {
						copy(x, xt)
						f = ft
					}
					res.Evaluations++
					break
				}
				ft := obj(xt, gt, ct)
				res.Evaluations++
				atX = false
				// Near the optimum the full step is taken unless it loses more
				// than f's rounding error: its gain is itself at rounding level,
				// while it still shrinks the distance to the optimum quadratically.
				// (f is a sum of terms larger than itself, so its rounding
				// error is allowed a thousand units of 4ε|f|.)
				sufficient := ft >= f+armijoC*t*slope || nearOptimum && t == 1 && ft >= f-1e3*minTol*(1+math.Abs(f))
				if isFinite(ft) && allFinite(gt) && sufficient {
					copy(x, xt)
					g, gt = gt, g
					c, ct = ct, c
					f = ft
					atX, accepted = true, true
					break
				}
				if converging {
					break // at the optimum to within Tol; a rejected step is rounding
				}
				t /= 2
			}
		}
		if converging {
			res.Status = StatusConverged
			break
		}
		if !accepted {
			res.Status = StatusLineSearchFailed
			break
		}
	}
	if res.Status == "" {
		res.Status = StatusMaxIterations
	}
	if value != nil {
		res.Value = f
		return res
	}
	if !atX {
		f = obj(x, g, c)
		res.Evaluations++
	}
	res.Value = f
	if res.Status == StatusConverged && !negativeDefinite(h, c, n) {
		res.Status = StatusIndefinite
	}
	return res
}

// newtonDirection solves (−C + λI) d = g for the smallest λ in the sequence
// 0, λ₀, 10λ₀, 100λ₀, … (λ₀ = 1e-8·(1+max|C_ii|)) for which −C + λI is
// positive definite, leaving its Cholesky factor in h. It returns λ, and
// false if C has a non-finite entry.
func newtonDirection(d, h, c, g []float64, n int) (float64, bool) {
	scale := 0.0
	for i, v := range c {
		if !isFinite(v) {
			return 0, false
		}
		if i%(n+1) == 0 {
			scale = math.Max(scale, math.Abs(v))
		}
	}
	lam := 0.0
	for attempt := 0; ; attempt++ {
		loadNegated(h, c, n, lam)
		if cholLower(h, n) {
			break
		}
		if lam == 0 {
			lam = dampStart * (1 + scale)
		} else {
			lam *= dampGrowth
		}
		if attempt >= maxDampAttempts || math.IsInf(lam, 0) {
			return 0, false // unreachable for finite C: λ > n·max|C_ij| suffices
		}
	}
	cholSolve(d, h, g, n)
	return lam, true
}

// negativeDefinite reports whether the symmetric part of c is negative
// definite, using h as scratch.
func negativeDefinite(h, c []float64, n int) bool {
	for _, v := range c {
		if !isFinite(v) {
			return false
		}
	}
	loadNegated(h, c, n, 0)
	return cholLower(h, n)
}

// loadNegated writes the lower triangle of −(C+Cᵀ)/2 + λI into h.
func loadNegated(h, c []float64, n int, lam float64) {
	for i := 0; i < n; i++ {
		for j := 0; j < i; j++ {
			h[i*n+j] = -0.5 * (c[i*n+j] + c[j*n+i])
		}
		h[i*n+i] = lam - c[i*n+i]
	}
}

// cholLower factorizes, in place, the symmetric matrix whose lower triangle
// is in h as L Lᵀ (L lower triangular, written over that triangle):
//
//	L_jj = √(h_jj − Σ_{k<j} L_jk²),  L_ij = (h_ij − Σ_{k<j} L_ik L_jk) / L_jj  (i > j).
//
// It reports false if a pivot is not positive and finite (not positive
// definite, or NaN). The upper triangle is neither read nor written.
//
// The sums are DotFMA's, vectorized.
func cholLower(h []float64, n int) bool {
	for j := 0; j < n; j++ {
		rj := h[j*n : j*n+j]
		s := h[j*n+j] - DotFMA(rj, rj)
		if !(s > 0) || math.IsInf(s, 1) {
			return false
		}
		ljj := math.Sqrt(s)
		h[j*n+j] = ljj
		for i := j + 1; i < n; i++ {
			h[i*n+j] = (h[i*n+j] - DotFMA(h[i*n:i*n+j], rj)) / ljj
		}
	}
	return true
}

// cholSolve solves L Lᵀ d = g given the factor L from cholLower:
// forward substitution L y = g, then back substitution Lᵀ d = y (by columns
// of Lᵀ, i.e. rows of L, so memory is read contiguously). d may alias g.
func cholSolve(d, h, g []float64, n int) {
	copy(d, g)
	for i := 0; i < n; i++ {
		d[i] = (d[i] - DotFMA(h[i*n:i*n+i], d[:i])) / h[i*n+i]
	}
	for i := n - 1; i >= 0; i-- {
		d[i] /= h[i*n+i]
		AxpyFMA(-d[i], h[i*n:i*n+i], d[:i])
	}
}

func dot(a, b []float64) float64 {
	var s float64
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

func isFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func allFinite(v []float64) bool {
	for _, x := range v {
		if !isFinite(x) {
			return false
		}
	}
	return true
}
