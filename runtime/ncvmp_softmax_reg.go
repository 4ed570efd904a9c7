package runtime

import (
	"errors"
	"fmt"
	"math"
)

// This file runs NCVMP (Knowles & Minka 2011, Algorithm 1) for multinomial
// softmax regression, the model of §5.2 and §6.4:
//
//	y_n ∈ {0, …, K−1},   p(y_n = k | W) = softmax_k(g_n),   g_kn = w_kᵀx_n,
//	w_k ~ N(μ0_k, Σ0) independently for k = 1..K,
//
// with x_n ∈ R^P (holding any intercept column). The variational family is
// q(W) = Π_k N(w_k; μ_k, Σ_k): one Gaussian block per class, mean field
// across classes, as VMP over the factor graph whose variables are the
// class weight vectors w_k. Under q the linear predictors are independent,
// g_kn ~ N(m_kn, v_kn) with m_kn = μ_kᵀx_n and v_kn = x_nᵀΣ_kx_n, and the
// expected log factor is bounded below by
//
//	S_n = m_{y_n,n} − B(m_{·n}, v_{·n}),
//
// where B is an upper bound on E[log Σ_k exp g_kn] (§5.2, Eqs. 10–12).

// SoftmaxFactors is what NCVMPSoftmax reads: N labelled observations with
// design rows x_n ∈ R^P and labels in {0, …, K−1}. DenseSoftmax implements
// it for a dense design.
type SoftmaxFactors interface {
	// Size returns the number of observations N, of classes K and the
	// dimension P of each w_k.
	Size() (n, k, p int)
	// Row returns x_n (length P). NCVMPSoftmax only reads it; it must not
	// allocate if the run is to be allocation-free per iteration.
	Row(n int) []float64
	// Label returns y_n ∈ {0, …, K−1}.
	Label(n int) int
}

// DenseSoftmax is a SoftmaxFactors over a dense N×P design X (row-major)
// with labels Y (length N) in {0, …, K−1}.
type DenseSoftmax struct {
	X    []float64
	Y    []int
	K, P int
}

// Size returns (len(Y), K, P).
func (f DenseSoftmax) Size() (int, int, int) { return len(f.Y), f.K, f.P }

// Row returns row n of X.
func (f DenseSoftmax) Row(n int) []float64 { return f.X[n*f.P : (n+1)*f.P] }

// Label returns Y[n].
func (f DenseSoftmax) Label(n int) int { return f.Y[n] }

// SoftmaxBound chooses the bound B on E[log Σ_k exp g_k] that NCVMPSoftmax
// uses (§5.2). The zero value is the tilted bound.
type SoftmaxBound int

const (
	// SoftmaxBoundTilted is the multivariate tilted bound, Eq. 12
	// (SoftmaxTiltedBound), with its variational a optimized exactly for
	// every factor at every evaluation.
	SoftmaxBoundTilted SoftmaxBound = iota
	// SoftmaxBoundQuadratic is Bouchard's bound (Eq. 11) combined with the
	// Jaakkola–Jordan quadratic (Eq. 8) (SoftmaxQuadraticBound). Its
	// messages are conjugate, so the iteration is VMP.
	SoftmaxBoundQuadratic
	// SoftmaxBoundAdaptive sends, for every factor at every evaluation, the
	// message of whichever of the quadratic and tilted bounds is currently
	// tighter (SoftmaxAdaptive), the paper's "adaptive" method.
	SoftmaxBoundAdaptive
	// SoftmaxBoundLog is the "log" bound, Eq. 10 (SoftmaxLogBound), the
	// tilted bound at a = 0.
	SoftmaxBoundLog
)

func (b SoftmaxBound) String() string {
	switch b {
	case SoftmaxBoundTilted:
		return "tilted"
	case SoftmaxBoundQuadratic:
		return "quadratic"
	case SoftmaxBoundAdaptive:
		return "adaptive"
	case SoftmaxBoundLog:
		return "log"
	}
	return fmt.Sprintf("SoftmaxBound(%d)", int(b))
}

// NCVMPSoftmax runs Algorithm 1 for Bayesian multinomial softmax regression
// (§5.2, §6.4) in the family q(W) = Π_k N(w_k; μ_k, Σ_k).
//
// Messages. Factor n reaches block k only through g_kn = w_kᵀx_n, so its
// message is the vector form of Eq. 7 derived for NCVMPVector (full
// covariance, offset 0): with
//
//	∂S_n/∂m_kn = [k = y_n] − ∂B/∂m_kn,    ∂S_n/∂v_kn = −∂B/∂v_kn,
//
// the message is Gaussian in w_k, exp(h_knᵀw_k − ½w_kᵀK_knw_k), with
//
//	K_kn = −2(∂S_n/∂v_kn) x_n x_nᵀ,
//	h_kn = (∂S_n/∂m_kn − 2(∂S_n/∂v_kn) m_kn) x_n.
//
// For the tilted bound at its optimal a, ∂B/∂v_kn = ½a_k(1−a_k) and
// ∂B/∂m_kn = a_k, which are the natural parameters given after Eq. 12
// (with d_k − 1 = [k = y_n], d. − K = 1). Line 7 of Algorithm 1 is then
//
//	Σ_k⁻¹ = Σ0⁻¹ + Σ_n K_kn,    Σ_k⁻¹μ_k = Σ0⁻¹μ0_k + Σ_n h_kn,
//
// and at a fixed point ∂L/∂μ_k = 0 and ∂L/∂Σ_k = 0 for the bound-ELBO L
// below (Theorem 1; for the adaptive choice, of the bound chosen at that
// point for each factor).
//
// Schedule. Classes are updated in turn, k = 1..K, as a VMP sweep over the
// variables w_k; after each class update the moments m_kn, v_kn of that
// class are recomputed, so the next class's messages see it.
//
// ELBO. After every sweep Run records
//
//	L(q) = Σ_n S_n + Σ_k (E_q[log N(w_k; μ0_k, Σ0)] + H[q_k]),
//
// which, because B is an upper bound, is a lower bound on the ELBO
// (NCVMPSoftmaxResult.Bound is always true); for SoftmaxBoundAdaptive each
// S_n uses the tighter of the two bounds.
//
// Damping and convergence are those of NCVMPVector: messages are mixed
// with the previous ones (in natural parameters) only once oscillation of
// the natural parameters is detected or an update would make a block
// improper, and convergence is judged on the undamped residual of line 7
// (for each class at its turn, as NCVMPVector's fully factorized family)
// together with the relative change of L.
//
// Recentring. Softmax is invariant to adding one number to all its
// arguments, and so are the bounds (B(m + c1, v) = B(m, v) + c), so
// shifting every μ_k by the same c ∈ R^P leaves Σ_n S_n unchanged and
// changes L only through the prior, −½Σ_k (μ_k + c − μ0_k)ᵀΣ0⁻¹(μ_k + c − μ0_k),
// which is maximized at c = −(1/K)Σ_k (μ_k − μ0_k). Class-at-a-time
// updates move along this direction only slowly (only the prior pins it,
// while the data couple the classes strongly), so with Recentre the step
// to the optimal c follows every sweep. At a fixed point c = 0 already
// (∂L/∂c = 0), so the fixed points are unchanged; it is the
// reparameterization idea the paper credits for the tilted bound's fast
// convergence (§6.4, parameter expansion), applied to the means.
type NCVMPSoftmax struct {
	Factors SoftmaxFactors
	// Mu0 is the prior mean, K×P row-major (class-major); nil means 0.
	Mu0 []float64
	// Sigma0 is the prior covariance Σ0 shared by all classes, P×P
	// row-major, symmetric positive definite.
	Sigma0 []float64
	// Bound chooses B (default SoftmaxBoundTilted).
	Bound SoftmaxBound
	// NCVMPControl holds the damping and convergence settings, as in
	// NCVMPVector (MaxIter counts sweeps over the K classes).
	NCVMPControl
	// Recentre adds, after every sweep, the exact maximization of L over a
	// shift of all class means by one common vector c ∈ R^P (see the
	// type's doc comment). It leaves the fixed points unchanged and speeds
	// up convergence when the data determine the classes' differences much
	// better than the prior determines their common part.
	Recentre bool
	// Backtrack rejects a class update that lowers L (by more than 1e-9
	// relative): block k's natural parameters are moved halfway back
	// towards their previous values, up to 30 times. NCVMP is not
	// guaranteed to increase L (§7), and from a diffuse start on strongly
	// separated data (UCI Thyroid) the tilted bound's first updates
	// overshoot and diverge. Like damping, this rescales steps only and
	// leaves the fixed points unchanged.
	Backtrack bool
}

// NCVMPSoftmaxResult is the outcome of NCVMPSoftmax.Run. Its fields mirror
// NCVMPVectorResult.
type NCVMPSoftmaxResult struct {
	// K and P are the numbers of classes and of weights per class.
	K, P int
	// Mu (K×P, class-major) holds the means μ_k and Sigma (K blocks of P×P,
	// row-major) the covariances Σ_k of q(W) = Π_k N(w_k; μ_k, Σ_k).
	Mu, Sigma []float64
	// Status is StatusConverged, StatusMaxIterations, StatusNotFinite when
	// a bound, its gradients or the ELBO were not finite, or
	// StatusIndefinite when no damping kept a block's precision positive
	// definite. q is then the last proper iterate.
	Status Status
	// Iter is the number of sweeps run.
	Iter int
	// ELBO holds L(q) after each sweep; Bound is true (it is a lower bound).
	ELBO  []float64
	Bound bool
	// NatChange and ELBOChange are the last relative changes of η and L.
	NatChange, ELBOChange float64
	// Unmet lists, for StatusMaxIterations, the unmet criteria (as
	// NCVMPVectorResult.Unmet).
	Unmet []string
	// Damped says whether damping was on at the end, and Alpha its factor.
	Damped bool
	Alpha  float64
	// TiltedFactors is, for SoftmaxBoundAdaptive, the number of factors for
	// which the tilted bound was the tighter in the final ELBO.
	TiltedFactors int
	// Backtracks counts the halvings of class updates made by Backtrack.
	Backtracks int
}

// ncvmpSoftmaxWork holds Run's scratch, allocated once in setup.
type ncvmpSoftmaxWork struct {
	n, k, p    int
	mu0        []float64 // K×P
	prec0      []float64 // Λ0 = Σ0⁻¹
	h0         []float64 // K×P: Λ0μ0_k
	logdet0    float64
	mu, cov    []float64 // K×P, K×P×P
	lam, h     []float64 // K×P×P, K×P: current η per class
	msgK       []float64 // K×P×P: Σ_n K_kn used (possibly damped)
	msgH       []float64 // K×P
	m, v       []float64 // N×K projection moments
	a          []float64 // N×K tilted parameters
	dm, dv     []float64 // K: ∂B/∂m, ∂B/∂v for one factor
	dmAll      []float64 // N×K: ∂B/∂m at the current moments (sumS)
	dvAll      []float64 // N×K: ∂B/∂v
	oldLam     []float64 // P×P, P: block k before its update
	oldH       []float64
	freshK     []float64 // P×P
	freshH     []float64 // P
	newLam     []float64
	newH       []float64
	chol       []float64
	tmp        []float64
	logdet     []float64 // K: log|Σ_k|
	vec        ncvmpVectorWork
	tiltedN    int
	backtracks int
}

// softmaxBacktracks bounds the halvings of one class update (Backtrack).
const softmaxBacktracks = 30

// setBlock sets Σ_k = Λ_k⁻¹, μ_k = Σ_k h_k and log|Σ_k| from the Cholesky
// factor of Λ_k in w.chol, and recomputes the moments of class k.
func (c *NCVMPSoftmax) setBlock(w *ncvmpSoftmaxWork, k int) {
	p, pp := w.p, w.p*w.p
	cov, mu, h := w.cov[k*pp:(k+1)*pp], w.mu[k*p:(k+1)*p], w.h[k*p:(k+1)*p]
	cholInverse(cov, w.chol, w.tmp, p)
	for i := 0; i < p; i++ {
		var s float64
		for j := 0; j < p; j++ {
			s += cov[i*p+j] * h[j]
		}
		mu[i] = s
	}
	w.logdet[k] = -cholLogDet(w.chol, p)
	c.moments(w, k)
}

// Run iterates Algorithm 1 from q = prior (messages start uniform). It
// returns an error only for invalid settings (shapes, labels out of range,
// a prior covariance that is not positive definite, an unknown bound, or
// the adaptive bound with K > 64); numerical trouble is a Status. Beyond
// setup, Run does not allocate.
func (c NCVMPSoftmax) Run() (NCVMPSoftmaxResult, error) {
	if c.Factors == nil {
		return NCVMPSoftmaxResult{}, errors.New("NCVMPSoftmax: no factors")
	}
	n, K, p := c.Factors.Size()
	if n < 0 || K < 2 || p <= 0 || len(c.Sigma0) != p*p || (c.Mu0 != nil && len(c.Mu0) != K*p) {
		return NCVMPSoftmaxResult{}, fmt.Errorf("NCVMPSoftmax: N = %d, K = %d, P = %d, len(Mu0) = %d, len(Sigma0) = %d (want K ≥ 2, P ≥ 1, K·P, P·P)", n, K, p, len(c.Mu0), len(c.Sigma0))
	}
	if c.Bound < SoftmaxBoundTilted || c.Bound > SoftmaxBoundLog {
		return NCVMPSoftmaxResult{}, fmt.Errorf("NCVMPSoftmax: unknown bound %v", c.Bound)
	}
	if c.Bound == SoftmaxBoundAdaptive && K > 64 {
		return NCVMPSoftmaxResult{}, fmt.Errorf("NCVMPSoftmax: the adaptive bound supports K ≤ 64 classes, got %d", K)
	}
	for i := 0; i < n; i++ {
		if y := c.Factors.Label(i); y < 0 || y >= K {
			return NCVMPSoftmaxResult{}, fmt.Errorf("NCVMPSoftmax: label %d of observation %d is outside 0..%d", y, i, K-1)
		}
		if r := c.Factors.Row(i); len(r) != p {
			return NCVMPSoftmaxResult{}, fmt.Errorf("NCVMPSoftmax: row %d has length %d, want P = %d", i, len(r), p)
		}
	}
	alloc := func(k int) []float64 { return make([]float64, k) }
	w := &ncvmpSoftmaxWork{n: n, k: K, p: p}
	w.prec0 = alloc(p * p)
	if !InvSPD(w.prec0, c.Sigma0, p) {
		return NCVMPSoftmaxResult{}, errors.New("NCVMPSoftmax: Sigma0 is not positive definite")
	}
	w.logdet0, _ = LogDetSPD(c.Sigma0, p)
	w.mu0 = alloc(K * p)
	if c.Mu0 != nil {
		copy(w.mu0, c.Mu0)
	}
	w.h0 = alloc(K * p)
	for k := 0; k < K; k++ {
		for i := 0; i < p; i++ {
			var s float64
			for j := 0; j < p; j++ {
				s += w.prec0[i*p+j] * w.mu0[k*p+j]
			}
			w.h0[k*p+i] = s
		}
	}
	w.mu, w.cov = alloc(K*p), alloc(K*p*p)
	w.lam, w.h = alloc(K*p*p), alloc(K*p)
	w.msgK, w.msgH = alloc(K*p*p), alloc(K*p)
	w.m, w.v, w.a = alloc(n*K), alloc(n*K), alloc(n*K)
	w.dm, w.dv = alloc(K), alloc(K)
	w.dmAll, w.dvAll = alloc(n*K), alloc(n*K)
	w.oldLam, w.oldH = alloc(p*p), alloc(p)
	w.freshK, w.freshH = alloc(p*p), alloc(p)
	w.newLam, w.newH = alloc(p*p), alloc(p)
	w.chol, w.tmp = alloc(p*p), alloc(p*p)
	w.logdet = alloc(K)
	// The oscillation test runs on the step of η over a whole sweep.
	w.vec.step, w.vec.prevStep = alloc(K*(p*p+p)), alloc(K*(p*p+p))
	copy(w.mu, w.mu0)
	for k := 0; k < K; k++ {
		copy(w.cov[k*p*p:(k+1)*p*p], c.Sigma0)
		copy(w.lam[k*p*p:(k+1)*p*p], w.prec0)
		copy(w.h[k*p:(k+1)*p], w.h0[k*p:(k+1)*p])
		w.logdet[k] = w.logdet0
		c.moments(w, k)
	}
	maxIter := c.MaxIter
	if maxIter <= 0 {
		maxIter = 1000
	}
	res := NCVMPSoftmaxResult{K: K, P: p, ELBO: make([]float64, 0, maxIter), Bound: true}
	c.run(w, &res, maxIter)
	res.Mu, res.Sigma = w.mu, w.cov
	return res, nil
}

// moments sets m_kn = μ_kᵀx_n and v_kn = x_nᵀΣ_kx_n for class k and every n.
func (c *NCVMPSoftmax) moments(w *ncvmpSoftmaxWork, k int) {
	p, K := w.p, w.k
	mu := w.mu[k*p : (k+1)*p]
	cov := w.cov[k*p*p : (k+1)*p*p]
	for i := 0; i < w.n; i++ {
		x := c.Factors.Row(i)
		var m, v float64
		for a := 0; a < p; a++ {
			m += x[a] * mu[a]
			var sx float64
			row := cov[a*p : (a+1)*p]
			for b := range row {
				sx += row[b] * x[b]
			}
			v += x[a] * sx
		}
		if v < 0 {
			v = 0
		}
		w.m[i*K+k], w.v[i*K+k] = m, v
	}
}

// bound evaluates B and its gradients (into w.dm, w.dv) for factor i at
// the current moments, and returns B.
func (c *NCVMPSoftmax) bound(w *ncvmpSoftmaxWork, i int) float64 {
	K := w.k
	m, v, a := w.m[i*K:(i+1)*K], w.v[i*K:(i+1)*K], w.a[i*K:(i+1)*K]
	switch c.Bound {
	case SoftmaxBoundQuadratic:
		B, _ := SoftmaxQuadraticBound(m, v, w.dm, w.dv)
		return B
	case SoftmaxBoundAdaptive:
		B, tilted := SoftmaxAdaptive(m, v, a, w.dm, w.dv)
		if tilted {
			w.tiltedN++
		}
		return B
	case SoftmaxBoundLog:
		return SoftmaxLogBound(m, v, w.dm, w.dv)
	}
	return SoftmaxTiltedBound(m, v, a, w.dm, w.dv)
}

// sumS returns Σ_n S_n at the current moments and keeps every factor's
// ∂B/∂m, ∂B/∂v in dmAll, dvAll for the messages.
func (c *NCVMPSoftmax) sumS(w *ncvmpSoftmaxWork) float64 {
	var s float64
	K := w.k
	w.tiltedN = 0
	for i := 0; i < w.n; i++ {
		s += w.m[i*K+c.Factors.Label(i)] - c.bound(w, i)
		copy(w.dmAll[i*K:(i+1)*K], w.dm)
		copy(w.dvAll[i*K:(i+1)*K], w.dv)
	}
	return s
}

// elboPrior returns Σ_k E_q[log N(w_k; μ0_k, Σ0)] + H[q_k].
func (c *NCVMPSoftmax) elboPrior(w *ncvmpSoftmaxWork) float64 {
	p := w.p
	var L float64
	for k := 0; k < w.k; k++ {
		mu, mu0 := w.mu[k*p:(k+1)*p], w.mu0[k*p:(k+1)*p]
		cov := w.cov[k*p*p : (k+1)*p*p]
		var quad, tr float64
		for i := 0; i < p; i++ {
			di := mu[i] - mu0[i]
			for j := 0; j < p; j++ {
				quad += di * w.prec0[i*p+j] * (mu[j] - mu0[j])
				tr += w.prec0[i*p+j] * cov[j*p+i]
			}
		}
		// −½(quad + tr) − ½(P log 2π + log|Σ0|) + ½ log|Σ_k| + ½P(1 + log 2π)
		L += -0.5*(quad+tr) - 0.5*w.logdet0 + 0.5*w.logdet[k] + 0.5*float64(p)
	}
	return L
}

// recentre shifts every μ_k by c = −(1/K)Σ_k (μ_k − μ0_k), updating
// h_k = Σ_k⁻¹μ_k, the moments m_kn and the step of η.
func (c *NCVMPSoftmax) recentre(w *ncvmpSoftmaxWork) {
	p, pp, K := w.p, w.p*w.p, w.k
	shift := w.freshH // scratch (length P)
	clear(shift)
	for k := 0; k < K; k++ {
		for i := 0; i < p; i++ {
			shift[i] -= (w.mu[k*p+i] - w.mu0[k*p+i]) / float64(K)
		}
	}
	for k := 0; k < K; k++ {
		lam := w.lam[k*pp : (k+1)*pp]
		for i := 0; i < p; i++ {
			w.mu[k*p+i] += shift[i]
			var d float64
			for j := 0; j < p; j++ {
				d += lam[i*p+j] * shift[j]
			}
			w.h[k*p+i] += d
			w.vec.step[k*(pp+p)+pp+i] += d
		}
	}
	for i := 0; i < w.n; i++ {
		var d float64
		for a, xa := range c.Factors.Row(i) {
			d += xa * shift[a]
		}
		for k := 0; k < K; k++ {
			w.m[i*K+k] += d
		}
	}
}

// messages sums the Eq. 7 messages of every factor to class k at the
// current moments (whose bound gradients sumS left in dmAll, dvAll) into
// freshK, freshH, and reports whether all were finite.
func (c *NCVMPSoftmax) messages(w *ncvmpSoftmaxWork, k int) bool {
	p, K := w.p, w.k
	clear(w.freshK)
	clear(w.freshH)
	for i := 0; i < w.n; i++ {
		dSdm := -w.dmAll[i*K+k]
		if c.Factors.Label(i) == k {
			dSdm++
		}
		dSdv := -w.dvAll[i*K+k]
		kn := -2 * dSdv
		hn := dSdm + kn*w.m[i*K+k]
		x := c.Factors.Row(i)
		for a := 0; a < p; a++ {
			w.freshH[a] += hn * x[a]
			kx := kn * x[a]
			row := w.freshK[a*p : (a+1)*p]
			for b := a; b < p; b++ {
				row[b] += kx * x[b]
			}
		}
	}
	for a := 0; a < p; a++ {
		for b := 0; b < a; b++ {
			w.freshK[a*p+b] = w.freshK[b*p+a]
		}
	}
	return allFinite(w.freshK) && allFinite(w.freshH)
}

func (c NCVMPSoftmax) run(w *ncvmpSoftmaxWork, res *NCVMPSoftmaxResult, maxIter int) {
	p, pp := w.p, w.p*w.p
	// The damping and convergence bookkeeping is NCVMPVector's.
	st := c.newRunState()
	var core NCVMPVectorResult
	defer func() {
		st.finish(&core)
		res.Status, res.Unmet, res.Damped, res.Alpha = core.Status, core.Unmet, core.Damped, core.Alpha
		res.NatChange, res.ELBOChange = core.NatChange, core.ELBOChange
		res.TiltedFactors = w.tiltedN
		res.Backtracks = w.backtracks
	}()
	Lcur := c.sumS(w) + c.elboPrior(w)
	st.prevL = Lcur
	if !isFinite(st.prevL) {
		core.Status = StatusNotFinite
		return
	}
	for it := 1; it <= maxIter; it++ {
		res.Iter = it
		var dn, nn float64
		for k := 0; k < w.k; k++ {
			lam, h := w.lam[k*pp:(k+1)*pp], w.h[k*p:(k+1)*p]
			msgK, msgH := w.msgK[k*pp:(k+1)*pp], w.msgH[k*p:(k+1)*p]
			h0 := w.h0[k*p : (k+1)*p]
			if !isFinite(Lcur) || !c.messages(w, k) {
				core.Status = StatusNotFinite
				return
			}
			// Line 7 for block k, damped if on; an improper block switches
			// damping on (or increases it) and mixes again.
			proper := false
			for {
				a := 0.0
				if st.damped {
					a = st.alpha
				}
				for i := range w.newLam {
					w.newLam[i] = w.prec0[i] + (1-a)*w.freshK[i] + a*msgK[i]
				}
				for i := range w.newH {
					w.newH[i] = h0[i] + (1-a)*w.freshH[i] + a*msgH[i]
				}
				copy(w.chol, w.newLam)
				if cholLower(w.chol, p) {
					proper = true
					for i := range msgK {
						msgK[i] = (1-a)*w.freshK[i] + a*msgK[i]
					}
					for i := range msgH {
						msgH[i] = (1-a)*w.freshH[i] + a*msgH[i]
					}
					break
				}
				if c.NoDamp || !moreDamping(&st.damped, &st.alpha) {
					break
				}
			}
			if !proper {
				core.Status = StatusIndefinite
				return
			}
			// The undamped residual of line 7 for class k at its turn.
			for i := range lam {
				d := w.prec0[i] + w.freshK[i] - lam[i]
				dn += d * d
				nn += w.newLam[i] * w.newLam[i]
			}
			for i := range h {
				d := h0[i] + w.freshH[i] - h[i]
				dn += d * d
				nn += w.newH[i] * w.newH[i]
			}
			copy(w.oldLam, lam)
			copy(w.oldH, h)
			copy(lam, w.newLam)
			copy(h, w.newH)
			c.setBlock(w, k)
			Lk := c.sumS(w) + c.elboPrior(w)
			// Backtracking: while the update lowers L, move block k back
			// halfway towards its previous η (a convex combination of two
			// positive definite precisions stays positive definite).
			for try := 0; c.Backtrack && try < softmaxBacktracks && !(Lk >= Lcur-1e-9*math.Max(1, math.Abs(Lcur))); try++ {
				for i := range lam {
					lam[i] = (lam[i] + w.oldLam[i]) / 2
					msgK[i] = lam[i] - w.prec0[i]
				}
				for i := range h {
					h[i] = (h[i] + w.oldH[i]) / 2
					msgH[i] = h[i] - h0[i]
				}
				copy(w.chol, lam)
				cholLower(w.chol, p)
				c.setBlock(w, k)
				Lk = c.sumS(w) + c.elboPrior(w)
				w.backtracks++
			}
			for i := range lam {
				w.vec.step[k*(pp+p)+i] = lam[i] - w.oldLam[i]
			}
			for i := range h {
				w.vec.step[k*(pp+p)+pp+i] = h[i] - w.oldH[i]
			}
			Lcur = Lk
		}
		if c.Recentre {
			c.recentre(w)
			Lcur = c.sumS(w) + c.elboPrior(w)
		}
		L := Lcur
		res.ELBO = append(res.ELBO, L)
		if !isFinite(L) {
			core.Status = StatusNotFinite
			return
		}
		if st.converged(c.NCVMPControl, &w.vec, &core, L, dn, nn) {
			return
		}
	}
}
