package runtime

import (
	"errors"
	"fmt"
	"math"
)

// This file runs non-conjugate variational message passing (NCVMP;
// Knowles & Minka 2011, Algorithm 1) for a Gaussian vector latent θ ∈ R^P
// with a Gaussian prior N(μ0, Σ0), read by N non-conjugate factors through
// univariate projections
//
//	u_n = x_nᵀθ + o_n,   log f_n(θ) = g_n(u_n),
//
// as in the regression part of §5 (logistic regression:
// g_n(u) = y_n log σ(u) + (1−y_n) log σ(−u); Poisson regression with a log
// link: g_n(u) = y_n u − e^u). Each factor's expected log is a function of
// the projection's mean and variance only,
//
//	S_n = E_q[g_n(u_n)] = S_n(m_n, v_n),
//
// which §5.1 computes by Gauss–Hermite quadrature (or bounds, Eq. 8–9).

// ProjectionFactors is what a model supplies to NCVMPVector: the factors'
// design rows, offsets and log-factor callbacks. A generated package would
// implement it over its data; LogisticProjections and PoissonProjections
// implement it for dense designs.
type ProjectionFactors interface {
	// Size returns the number of factors N and the dimension P of θ.
	Size() (n, p int)
	// Row returns x_n (length P). NCVMPVector only reads it; it must not
	// allocate if the run is to be allocation-free per iteration.
	Row(n int) []float64
	// Offset returns o_n.
	Offset(n int) float64
	// LogFactor returns g_n(u), g_n'(u) and g_n”(u), used by quadrature.
	LogFactor(n int, u float64) (g, dg, d2g float64)
}

// LogisticLabeled is implemented by ProjectionFactors whose factors are all
// logistic, g_n(u) = y_n·u − log(1+e^u). It enables the bounds of §5.1
// (NCVMPQuadraticBound, NCVMPTiltedBound) and the fast quadrature of
// HermiteRule.ExpectLogistic.
type LogisticLabeled interface {
	Label(n int) float64
}

// NCVMPExpectation chooses how NCVMPVector computes S_n(m, v) and its
// derivatives.
type NCVMPExpectation int

const (
	// NCVMPQuadrature is Gauss–Hermite quadrature (§5.1): ∂S/∂m = E[g'],
	// ∂S/∂v = ½E[g”]. The ELBO is exact up to quadrature error.
	NCVMPQuadrature NCVMPExpectation = iota
	// NCVMPQuadraticBound is the Jaakkola–Jordan bound, Eq. 8
	// (LogisticQuadraticBound); logistic factors only. The ELBO reported is
	// a lower bound, and the iteration is the classic Jaakkola–Jordan EM.
	NCVMPQuadraticBound
	// NCVMPTiltedBound is the tilted bound, Eq. 9 (LogisticTiltedBound);
	// logistic factors only. The ELBO reported is a lower bound.
	NCVMPTiltedBound
)

func (e NCVMPExpectation) String() string {
	switch e {
	case NCVMPQuadrature:
		return "quadrature"
	case NCVMPQuadraticBound:
		return "quadratic"
	case NCVMPTiltedBound:
		return "tilted"
	}
	return fmt.Sprintf("NCVMPExpectation(%d)", int(e))
}

// NCVMPVector runs Algorithm 1 for θ ∼ N(μ0, Σ0) and the factors of a
// ProjectionFactors, in one of two variational families.
//
// Full covariance (Diagonal false): q(θ) = N(μ, Σ) with natural parameters
// η = (Σ⁻¹μ, −½Σ⁻¹). A message from factor n is Gaussian in θ,
// m_n(θ) ∝ exp(h_nᵀθ − ½θᵀK_nθ). Eq. 7 (Algorithm 1, line 5:
// φ = C(η)⁻¹∂S/∂η) is gradient matching, ∂S̃_n/∂η = ∂S_n/∂η with
// S̃_n = E_q[log m_n]; since (μ, Σ) ↦ η is a bijection it is the same as
// matching the gradients in (μ, Σ) (the parameterization invariance §4.1
// uses). Here
//
//	S̃_n(μ, Σ) = h_nᵀμ − ½(μᵀK_nμ + tr K_nΣ),
//	∂S̃_n/∂μ = h_n − K_nμ,        ∂S̃_n/∂Σ = −½K_n,
//
// and, through m_n = x_nᵀμ + o_n, v_n = x_nᵀΣx_n,
//
//	∂S_n/∂μ = (∂S_n/∂m_n) x_n,    ∂S_n/∂Σ = (∂S_n/∂v_n) x_n x_nᵀ.
//
// Matching gives the vector form of Eq. 7:
//
//	K_n = −2(∂S_n/∂v_n) x_n x_nᵀ,
//	h_n = K_nμ + (∂S_n/∂m_n) x_n = (∂S_n/∂m_n − 2(∂S_n/∂v_n)(m_n − o_n)) x_n,
//
// so the offset enters only through S_n's arguments: the message's
// precision-times-mean uses x_nᵀμ = m_n − o_n, not m_n. (With P = 1, x = 1,
// o = 0 this is NCVMPMessage.) Line 7 then sets η = η_prior + Σ_n φ_n:
// Σ⁻¹ = Σ0⁻¹ + Σ_n K_n, Σ⁻¹μ = Σ0⁻¹μ0 + Σ_n h_n. At a fixed point this is
// Σ0⁻¹(μ − μ0) = Σ_n (∂S_n/∂m_n) x_n and Σ⁻¹ = Σ0⁻¹ − 2Σ_n(∂S_n/∂v_n)x_nx_nᵀ,
// which are ∂L/∂μ = 0 and ∂L/∂Σ = 0 for the ELBO L below (Theorem 1).
//
// Fully factorized (Diagonal true): q(θ) = Π_p N(μ_p, v_p), the
// per-variable setting in which the paper states Algorithm 1. Coordinates are updated in turn (the loop over
// variables i of Algorithm 1); the message from factor n to θ_p is Eq. 7
// with ∂S_n/∂μ_p = x_np ∂S_n/∂m_n and ∂S_n/∂v_p = x_np² ∂S_n/∂v_n, where
// m_n = x_nᵀμ + o_n and v_n = Σ_p x_np² v_p are taken under the current q of
// all coordinates:
//
//	1/v_{n→p} = −2 x_np² ∂S_n/∂v_n,
//	m_{n→p}/v_{n→p} = μ_p/v_{n→p} + x_np ∂S_n/∂m_n.
//
// The prior N(μ0, Σ0) is conjugate; its VMP message to θ_p (Theorem 2) has
// precision Λ0_pp and precision-times-mean (Λ0μ0)_p − Σ_{j≠p} Λ0_pj μ_j,
// with Λ0 = Σ0⁻¹.
//
// ELBO. After every iteration Run records
//
//	L(q) = Σ_n S_n(m_n, v_n) + E_q[log N(θ; μ0, Σ0)] + H[q],
//
// exact up to quadrature error with NCVMPQuadrature, a lower bound on the
// ELBO with a bound (NCVMPVectorResult.Bound).
//
// Damping (§7). Messages are mixed geometrically with the previous ones,
// φ^{1−α}φ_old^α, i.e. (1−α)φ + αφ_old in natural parameters, only when
// oscillation is detected (as NCVMP1D.Run: two successive steps of η in
// opposite directions without the second being less than half the first,
// twice in a row; α then moves halfway to 1, up to 0.95), or when an
// update would make q improper (α up to 0.99; beyond that Run stops with
// StatusIndefinite rather than freeze q). Mixing is linear, so Run mixes
// the sum of the non-conjugate messages, which equals the sum of the mixed
// messages. Damping does not move the fixed points, and convergence is
// measured on the undamped residual of line 7, so heavy damping cannot
// pass for convergence.
type NCVMPVector struct {
	Factors ProjectionFactors
	// Mu0 (length P) and Sigma0 (P×P, row-major, symmetric positive
	// definite) are the prior's mean and covariance.
	Mu0, Sigma0 []float64
	// Diagonal selects the fully factorized family.
	Diagonal bool
	// Expectation chooses quadrature (the default) or a bound.
	Expectation NCVMPExpectation
	// HermitePoints is the quadrature rule's size (0: DefaultHermitePoints,
	// accurate to about 1e-9 while every v_n ≤ 10; see Hermite).
	HermitePoints int
	// NCVMPControl holds the damping and convergence settings.
	NCVMPControl
	// Natural, if set, gives the prior in natural parameters instead of
	// Mu0 and Sigma0 (full-covariance family only): the part of log p
	// quadratic in θ, C + Hᵀθ − ½θᵀPrecθ, which may be improper (Prec
	// only positive semidefinite, as for a flat prior) when StartMu is
	// given and the factors supply the missing curvature.
	Natural *NaturalPrior
	// StartMu and StartSigma, if set, are the q that Run starts from
	// instead of the prior (messages are then first computed there).
	StartMu, StartSigma []float64
}

// NCVMPControl is the damping (§7) and convergence settings shared by
// NCVMPVector and NCVMPSoftmax.
type NCVMPControl struct {
	// Alpha is the damping factor used once oscillation is detected (0
	// means 0.5); it moves halfway to 1 (up to 0.95) each time oscillation
	// is detected again.
	Alpha float64
	// Damp forces damping from the first iteration; NoDamp never damps.
	Damp, NoDamp bool
	// MaxIter bounds the iterations (sweeps over all coordinates for the
	// diagonal family); 0 means 1000.
	MaxIter int
	// Tol bounds the relative change of the natural parameters that an
	// undamped update would make, |η_prior + Σ_n φ_n − η|/max(1, |η|)
	// (Euclidean norms; per coordinate at its turn for the diagonal
	// family); 0 means 1e-10.
	Tol float64
	// ELBOTol bounds the relative change of the ELBO,
	// |ΔL|/max(1, |L|); 0 means 1e-12. Run converges when both hold.
	ELBOTol float64
}

// NaturalPrior is a Gaussian prior term in natural parameters,
// log p(θ) = C + Hᵀθ − ½θᵀPrecθ (NCVMPVector.Natural). A generated model
// supplies the quadratic part of its objective this way: the prior and every
// statement quadratic in θ, which VMP handles conjugately.
type NaturalPrior struct {
	Prec, H []float64
	C       float64
}

// ProjectionExpecter is implemented by ProjectionFactors that evaluate all
// factors' expectations in one call (generated models: ProjectionBatch).
// ExpectAll writes S_n(m_n, v_n), ∂S_n/∂m_n and ∂S_n/∂v_n for every n with
// rule r, and reports whether all are finite. NCVMPVector uses it with
// quadrature and the full-covariance family.
type ProjectionExpecter interface {
	ExpectAll(r *HermiteRule, m, v, S, dSdm, dSdv []float64) bool
}

// NCVMPVectorResult is the outcome of NCVMPVector.Run.
type NCVMPVectorResult struct {
	// Mu (P) and Sigma (P×P, row-major; diagonal for the fully factorized
	// family) describe q(θ).
	Mu, Sigma []float64
	// Status is StatusConverged, StatusMaxIterations, StatusNotFinite
	// when S, its derivatives or the ELBO were not finite, or
	// StatusIndefinite when no damping made the precision Σ⁻¹ = Λ0 + Σ_n K_n
	// positive definite (messages from factors that are not log-concave
	// can have negative precision). q is then the last proper iterate.
	Status Status
	// Iter is the number of iterations run.
	Iter int
	// ELBO holds L(q) after each iteration (a lower bound when Bound).
	ELBO  []float64
	Bound bool
	// NatChange and ELBOChange are the last relative changes of η and L.
	NatChange, ELBOChange float64
	// Unmet lists, for StatusMaxIterations, the criteria the last
	// iteration did not meet, in the long form of Convergence.Unmet;
	// MaxIterationsStatus(Unmet) is the status string a fit reports.
	Unmet []string
	// Damped says whether damping was on at the end, and Alpha its factor.
	Damped bool
	Alpha  float64
}

// ncvmpVectorWork holds Run's scratch, allocated once in setup.
type ncvmpVectorWork struct {
	n, p         int
	rule         *HermiteRule
	labels       LogisticLabeled
	prec0        []float64 // Λ0 = Σ0⁻¹
	h0           []float64 // Λ0μ0
	c0           float64   // the prior's log density at θ = 0
	batch        ProjectionExpecter
	bS, bdm, bdv []float64 // batched S_n and derivatives
	mu, cov      []float64 // current q
	lam, h       []float64 // current η: Σ⁻¹, Σ⁻¹μ (full); per-coordinate (diagonal)
	msgK         []float64 // Σ_n K_n (used, possibly damped)
	msgH         []float64 // Σ_n h_n
	freshK       []float64
	freshH       []float64
	newLam       []float64
	newH         []float64
	step         []float64 // Δη this iteration
	prevStep     []float64
	chol         []float64
	tmp          []float64
	m, v         []float64 // per-factor projection moments (diagonal)
}

// Run iterates Algorithm 1 from q = prior (non-conjugate messages start
// uniform, line 1). It returns an error only for invalid settings (shapes,
// a prior covariance that is not positive definite, a bound requested for
// factors that are not LogisticLabeled); numerical trouble is a Status.
// Beyond setup, Run does not allocate.
func (c NCVMPVector) Run() (NCVMPVectorResult, error) {
	if c.Factors == nil {
		return NCVMPVectorResult{}, errors.New("NCVMPVector: no factors")
	}
	n, p := c.Factors.Size()
	if c.Natural != nil {
		if p <= 0 || len(c.Natural.Prec) != p*p || len(c.Natural.H) != p {
			return NCVMPVectorResult{}, fmt.Errorf("NCVMPVector: P = %d, len(Natural.Prec) = %d, len(Natural.H) = %d", p, len(c.Natural.Prec), len(c.Natural.H))
		}
		if c.Diagonal {
			return NCVMPVectorResult{}, errors.New("NCVMPVector: a Natural prior needs the full-covariance family")
		}
	} else if p <= 0 || len(c.Mu0) != p || len(c.Sigma0) != p*p {
		return NCVMPVectorResult{}, fmt.Errorf("NCVMPVector: P = %d, len(Mu0) = %d, len(Sigma0) = %d", p, len(c.Mu0), len(c.Sigma0))
	}
	if c.StartMu != nil && (len(c.StartMu) != p || len(c.StartSigma) != p*p) {
		return NCVMPVectorResult{}, fmt.Errorf("NCVMPVector: P = %d, len(StartMu) = %d, len(StartSigma) = %d", p, len(c.StartMu), len(c.StartSigma))
	}
	w := &ncvmpVectorWork{n: n, p: p, rule: Hermite(c.HermitePoints)}
	if l, ok := c.Factors.(LogisticLabeled); ok {
		w.labels = l
	}
	if b, ok := c.Factors.(ProjectionExpecter); ok && c.Expectation == NCVMPQuadrature && w.labels == nil {
		if c.Diagonal {
			return NCVMPVectorResult{}, errors.New("NCVMPVector: factors evaluated in a batch (ProjectionExpecter) need the full-covariance family")
		}
		w.batch = b
	}
	if c.Expectation != NCVMPQuadrature && w.labels == nil {
		return NCVMPVectorResult{}, fmt.Errorf("NCVMPVector: the %v bound needs logistic factors (LogisticLabeled)", c.Expectation)
	}
	w.prec0 = make([]float64, p*p)
	w.h0 = make([]float64, p)
	alloc := func(k int) []float64 { return make([]float64, k) }
	w.mu, w.cov = alloc(p), alloc(p*p)
	w.chol, w.tmp = alloc(p*p), alloc(p*p)
	if c.Natural != nil {
		copy(w.prec0, c.Natural.Prec)
		copy(w.h0, c.Natural.H)
		w.c0 = c.Natural.C
		if c.StartMu == nil {
			// start from the prior, which must then be proper
			if !InvSPD(w.cov, w.prec0, p) {
				return NCVMPVectorResult{}, errors.New("NCVMPVector: the Natural prior is not proper and no start is given")
			}
			for i := 0; i < p; i++ {
				for j := 0; j < p; j++ {
					w.mu[i] += w.cov[i*p+j] * w.h0[j]
				}
			}
		}
	} else {
		if !InvSPD(w.prec0, c.Sigma0, p) {
			return NCVMPVectorResult{}, errors.New("NCVMPVector: Sigma0 is not positive definite")
		}
		ld, _ := LogDetSPD(c.Sigma0, p)
		// log N(θ; μ0, Σ0) = c0 + h0ᵀθ − ½θᵀΛ0θ
		var quad float64
		for i := 0; i < p; i++ {
			for j := 0; j < p; j++ {
				w.h0[i] += w.prec0[i*p+j] * c.Mu0[j]
			}
			quad += c.Mu0[i] * w.h0[i]
		}
		w.c0 = -0.5*quad - 0.5*(float64(p)*math.Log(2*math.Pi)+ld)
		copy(w.mu, c.Mu0)
		copy(w.cov, c.Sigma0)
	}
	if c.StartMu != nil {
		copy(w.mu, c.StartMu)
		copy(w.cov, c.StartSigma)
	}
	if c.Diagonal {
		w.lam, w.h = alloc(p), alloc(p)
		w.msgK, w.msgH, w.freshK, w.freshH = alloc(p), alloc(p), alloc(p), alloc(p)
		w.step, w.prevStep = alloc(2*p), alloc(2*p)
		w.m, w.v = alloc(n), alloc(n)
		// Start from the prior's (or the start's) marginals.
		for i := 0; i < p; i++ {
			for j := 0; j < p; j++ {
				if j != i {
					w.cov[i*p+j] = 0
				}
			}
		}
	} else {
		w.lam, w.h = alloc(p*p), alloc(p)
		w.msgK, w.msgH, w.freshK, w.freshH = alloc(p*p), alloc(p), alloc(p*p), alloc(p)
		w.newLam, w.newH = alloc(p*p), alloc(p)
		w.step, w.prevStep = alloc(p*p+p), alloc(p*p+p)
		if w.batch != nil {
			w.m, w.v = alloc(n), alloc(n)
			w.bS, w.bdm, w.bdv = alloc(n), alloc(n), alloc(n)
		}
		if c.StartMu == nil {
			copy(w.lam, w.prec0)
			copy(w.h, w.h0)
		} else if !InvSPD(w.lam, w.cov, p) {
			return NCVMPVectorResult{}, errors.New("NCVMPVector: StartSigma is not positive definite")
		} else {
			for i := 0; i < p; i++ {
				for j := 0; j < p; j++ {
					w.h[i] += w.lam[i*p+j] * w.mu[j]
				}
			}
		}
	}
	maxIter := c.MaxIter
	if maxIter <= 0 {
		maxIter = 1000
	}
	res := NCVMPVectorResult{ELBO: make([]float64, 0, maxIter), Bound: c.Expectation != NCVMPQuadrature}
	if c.Diagonal {
		c.runDiagonal(w, &res, maxIter)
	} else {
		c.runFull(w, &res, maxIter)
	}
	res.Mu = w.mu
	res.Sigma = w.cov
	return res, nil
}

// expect returns S_n(m, v) and its derivatives by the chosen method.
func (c *NCVMPVector) expect(w *ncvmpVectorWork, k int, m, v float64) (S, dSdm, dSdv float64) {
	switch c.Expectation {
	case NCVMPQuadraticBound:
		S, dSdm, dSdv, _ = LogisticQuadraticBound(w.labels.Label(k), m, v)
		return
	case NCVMPTiltedBound:
		S, dSdm, dSdv, _ = LogisticTiltedBound(w.labels.Label(k), m, v)
		return
	}
	if w.labels != nil {
		return w.rule.ExpectLogistic(w.labels.Label(k), m, v)
	}
	sd := math.Sqrt(2 * v)
	for i, x := range w.rule.X {
		g, g1, g2 := c.Factors.LogFactor(k, m+sd*x)
		wi := w.rule.W[i]
		S += wi * g
		dSdm += wi * g1
		dSdv += wi * g2
	}
	return S, dSdm, dSdv / 2
}

// elboPrior returns E_q[log N(θ; μ0, Σ0)] + H[q] for q = N(w.mu, w.cov),
// given log|Σ| = logdet.
func (c *NCVMPVector) elboPrior(w *ncvmpVectorWork, logdet float64) float64 {
	// E_q[c0 + h0ᵀθ − ½θᵀΛ0θ] = c0 + h0ᵀμ − ½(μᵀΛ0μ + tr Λ0Σ)
	p := w.p
	var lin, quad, tr float64
	for i := 0; i < p; i++ {
		lin += w.h0[i] * w.mu[i]
		for j := 0; j < p; j++ {
			quad += w.mu[i] * w.prec0[i*p+j] * w.mu[j]
			tr += w.prec0[i*p+j] * w.cov[j*p+i]
		}
	}
	fp := float64(p)
	logPrior := w.c0 + lin - 0.5*(quad+tr)
	entropy := 0.5*logdet + 0.5*fp*(1+math.Log(2*math.Pi))
	return logPrior + entropy
}

const (
	// ncvmpOscAlpha is the largest damping factor that oscillation
	// switches on; ncvmpMaxAlpha the largest that an improper update may
	// force. Beyond it q would barely move, and Run reports
	// StatusIndefinite instead.
	ncvmpOscAlpha = 0.95
	ncvmpMaxAlpha = 0.99
)

// ncvmpRunState is what runFull and runDiagonal carry from one iteration
// to the next: the damping (on or off, and α), the oscillation counter,
// the previous ELBO and the tolerances.
type ncvmpRunState struct {
	alpha, tol, etol, prevL float64
	damped                  bool
	osc                     int
}

func (c NCVMPControl) newRunState() ncvmpRunState {
	st := ncvmpRunState{alpha: c.Alpha, tol: c.Tol, etol: c.ELBOTol, damped: c.Damp && !c.NoDamp}
	if st.alpha == 0 {
		st.alpha = 0.5
	}
	if st.tol <= 0 {
		st.tol = 1e-10
	}
	if st.etol <= 0 {
		st.etol = 1e-12
	}
	return st
}

// converged ends an iteration whose ELBO is L and whose undamped change of
// η has squared norm dn (η's own nn): it records the changes in res and
// says whether both criteria are met; otherwise it updates the damping
// from the oscillation of η's steps.
func (st *ncvmpRunState) converged(c NCVMPControl, w *ncvmpVectorWork, res *NCVMPVectorResult, L, dn, nn float64) bool {
	res.NatChange = math.Sqrt(dn) / math.Max(1, math.Sqrt(nn))
	res.ELBOChange = math.Abs(L-st.prevL) / math.Max(1, math.Abs(L))
	st.prevL = L
	if res.NatChange <= st.tol && res.ELBOChange <= st.etol {
		res.Status = StatusConverged
		return true
	}
	if !c.NoDamp && oscillating(w.step, w.prevStep, &st.osc) {
		if !st.damped {
			st.damped = true
		} else if st.alpha < ncvmpOscAlpha {
			st.alpha = math.Min(ncvmpOscAlpha, (1+st.alpha)/2)
		}
	}
	copy(w.prevStep, w.step)
	return false
}

// finish sets the status of a run that used every iteration and reports
// the damping it ended with.
func (st *ncvmpRunState) finish(res *NCVMPVectorResult) {
	if res.Status == "" {
		res.Status = StatusMaxIterations
		res.Unmet = ncvmpUnmet(res, st.tol, st.etol)
	}
	res.Damped = st.damped
	if st.damped {
		res.Alpha = st.alpha
	}
}

// moreDamping switches damping on or moves α halfway to 1 (at most
// ncvmpMaxAlpha), and reports false when α is already there.
func moreDamping(damped *bool, alpha *float64) bool {
	if !*damped {
		*damped = true
		return true
	}
	if *alpha >= ncvmpMaxAlpha {
		return false
	}
	*alpha = math.Min(ncvmpMaxAlpha, (1+*alpha)/2)
	return true
}

// oscillating updates the oscillation counter from the steps of η.
func oscillating(step, prev []float64, osc *int) bool {
	var dot, n1, n0 float64
	for i := range step {
		dot += step[i] * prev[i]
		n1 += step[i] * step[i]
		n0 += prev[i] * prev[i]
	}
	if dot < 0 && n1 > 0.25*n0 {
		*osc++
	} else {
		*osc = 0
	}
	if *osc >= 2 {
		*osc = 0
		return true
	}
	return false
}

// messagesFull computes, at the current q, every factor's Eq. 7 message
// summed into freshK, freshH, and returns Σ_n S_n and whether all were
// finite.
func (c *NCVMPVector) messagesFull(w *ncvmpVectorWork) (float64, bool) {
	p := w.p
	clear(w.freshK)
	clear(w.freshH)
	var sumS float64
	if w.batch != nil {
		// all projections' moments first, then every S_n in one call
		for k := 0; k < w.n; k++ {
			xm, v := projectionMoments(c.Factors.Row(k), w.mu, w.cov, p)
			w.m[k], w.v[k] = xm+c.Factors.Offset(k), v
		}
		if !w.batch.ExpectAll(w.rule, w.m, w.v, w.bS, w.bdm, w.bdv) {
			return math.NaN(), false
		}
	}
	for k := 0; k < w.n; k++ {
		x := c.Factors.Row(k)
		o := c.Factors.Offset(k)
		var S, dm, dv, xm float64
		if w.batch != nil {
			xm = w.m[k] - o
			S, dm, dv = w.bS[k], w.bdm[k], w.bdv[k]
		} else {
			var v float64
			xm, v = projectionMoments(x, w.mu, w.cov, p)
			S, dm, dv = c.expect(w, k, xm+o, v)
		}
		sumS += S
		// K_n = −2 ∂S/∂v x xᵀ, h_n = (∂S/∂m − 2 ∂S/∂v x_nᵀμ) x (see the
		// type's doc comment).
		kn := -2 * dv
		hn := dm + kn*xm
		for i := 0; i < p; i++ {
			w.freshH[i] += hn * x[i]
			kx := kn * x[i]
			for j := i; j < p; j++ {
				w.freshK[i*p+j] += kx * x[j]
			}
		}
	}
	for i := 0; i < p; i++ {
		for j := 0; j < i; j++ {
			w.freshK[i*p+j] = w.freshK[j*p+i]
		}
	}
	return sumS, isFinite(sumS) && allFinite(w.freshK) && allFinite(w.freshH)
}

func (c NCVMPVector) runFull(w *ncvmpVectorWork, res *NCVMPVectorResult, maxIter int) {
	p := w.p
	st := c.newRunState()
	// Messages start uniform: msgK = msgH = 0, q = prior.
	sumS, ok := c.messagesFull(w)
	if !ok {
		res.Status = StatusNotFinite
		return
	}
	ld0, _ := LogDetSPD(w.cov, p)
	st.prevL = sumS + c.elboPrior(w, ld0)
	for it := 1; it <= maxIter; it++ {
		// Line 7: η = η_prior + Σ messages, damped if on; an improper q
		// switches damping on (or increases it) and mixes again.
		proper := false
		for {
			a := 0.0
			if st.damped {
				a = st.alpha
			}
			for i := range w.newLam {
				w.newLam[i] = w.prec0[i] + (1-a)*w.freshK[i] + a*w.msgK[i]
			}
			for i := range w.newH {
				w.newH[i] = w.h0[i] + (1-a)*w.freshH[i] + a*w.msgH[i]
			}
			copy(w.chol, w.newLam)
			if cholLower(w.chol, p) {
				proper = true
				for i := range w.msgK {
					w.msgK[i] = (1-a)*w.freshK[i] + a*w.msgK[i]
				}
				for i := range w.msgH {
					w.msgH[i] = (1-a)*w.freshH[i] + a*w.msgH[i]
				}
				break
			}
			if c.NoDamp || !allFinite(w.freshK) || !moreDamping(&st.damped, &st.alpha) {
				break
			}
		}
		if !proper {
			res.Status = StatusIndefinite
			res.Iter = it
			break
		}
		for i := range w.newLam {
			w.step[i] = w.newLam[i] - w.lam[i]
		}
		for i := range w.newH {
			w.step[p*p+i] = w.newH[i] - w.h[i]
		}
		copy(w.lam, w.newLam)
		copy(w.h, w.newH)
		// Σ = Λ⁻¹, μ = Σh from the Cholesky factor of Λ.
		cholInverse(w.cov, w.chol, w.tmp, p)
		for i := 0; i < p; i++ {
			var s float64
			for j := 0; j < p; j++ {
				s += w.cov[i*p+j] * w.h[j]
			}
			w.mu[i] = s
		}
		logdet := -cholLogDet(w.chol, p)
		sumS, ok = c.messagesFull(w)
		L := sumS + c.elboPrior(w, logdet)
		res.Iter = it
		res.ELBO = append(res.ELBO, L)
		if !ok || !isFinite(L) {
			res.Status = StatusNotFinite
			break
		}
		// The change of η is measured undamped, as the residual of line 7
		// at the new q, η_prior + Σ_n φ_n − η: zero exactly at a fixed
		// point whatever the damping (a damped step is (1−α) times it).
		var dn, nn float64
		for i := range w.lam {
			d := w.prec0[i] + w.freshK[i] - w.lam[i]
			dn += d * d
			nn += w.lam[i] * w.lam[i]
		}
		for i := range w.h {
			d := w.h0[i] + w.freshH[i] - w.h[i]
			dn += d * d
			nn += w.h[i] * w.h[i]
		}
		if st.converged(c.NCVMPControl, w, res, L, dn, nn) {
			break
		}
	}
	st.finish(res)
}

// projectionMoments returns xᵀμ and xᵀΣx (clamped at 0) for q = N(μ, Σ).
func projectionMoments(x, mu, cov []float64, p int) (xm, v float64) {
	for i := 0; i < p; i++ {
		xm += x[i] * mu[i]
		var sx float64
		for j := 0; j < p; j++ {
			sx += cov[i*p+j] * x[j]
		}
		v += x[i] * sx
	}
	return xm, math.Max(v, 0)
}

// projections sets w.m, w.v to every factor's m_n, v_n under the diagonal
// q, and returns Σ_n S_n at them (derivatives unused).
func (c *NCVMPVector) projections(w *ncvmpVectorWork, withS bool) (float64, bool) {
	p := w.p
	var sumS float64
	for k := 0; k < w.n; k++ {
		x := c.Factors.Row(k)
		m, v := c.Factors.Offset(k), 0.0
		for i := 0; i < p; i++ {
			m += x[i] * w.mu[i]
			v += x[i] * x[i] * w.cov[i*p+i]
		}
		w.m[k], w.v[k] = m, v
		if withS {
			S, _, _ := c.expect(w, k, m, v)
			sumS += S
		}
	}
	return sumS, isFinite(sumS)
}

func (c NCVMPVector) runDiagonal(w *ncvmpVectorWork, res *NCVMPVectorResult, maxIter int) {
	p := w.p
	st := c.newRunState()
	for i := 0; i < p; i++ {
		w.lam[i] = 1 / w.cov[i*p+i]
		w.h[i] = w.mu[i] * w.lam[i]
	}
	sumS, ok := c.projections(w, true)
	if !ok {
		res.Status = StatusNotFinite
		return
	}
	st.prevL = sumS + c.elboPrior(w, diagLogDet(w.cov, p))
	for it := 1; it <= maxIter; it++ {
		var dn, nn float64
		proper := true
		for i := 0; i < p; i++ {
			// Messages to θ_i (Eq. 7 through the projections), summed.
			var K, H float64
			for k := 0; k < w.n; k++ {
				xi := c.Factors.Row(k)[i]
				if xi == 0 {
					continue
				}
				_, dm, dv := c.expect(w, k, w.m[k], w.v[k])
				kn := -2 * dv * xi * xi
				K += kn
				H += kn*w.mu[i] + xi*dm
			}
			// The prior's conjugate message given the other coordinates.
			lam0, h0 := w.prec0[i*p+i], w.h0[i]
			for j := 0; j < p; j++ {
				if j != i {
					h0 -= w.prec0[i*p+j] * w.mu[j]
				}
			}
			a := 0.0
			if st.damped {
				a = st.alpha
			}
			var nl, nh float64
			for {
				mk := (1-a)*K + a*w.msgK[i]
				mh := (1-a)*H + a*w.msgH[i]
				nl, nh = lam0+mk, h0+mh
				if nl > 0 && isFinite(nl) && isFinite(nh) {
					w.msgK[i], w.msgH[i] = mk, mh
					break
				}
				if c.NoDamp || !isFinite(K) || !isFinite(H) || !moreDamping(&st.damped, &st.alpha) {
					proper = false
					break
				}
				a = st.alpha
			}
			if !proper {
				break
			}
			// The change is measured undamped (the residual of line 7
			// for θ_i), as in runFull.
			r1, r2 := lam0+K-w.lam[i], h0+H-w.h[i]
			dn += r1*r1 + r2*r2
			nn += nl*nl + nh*nh
			w.step[i], w.step[p+i] = nl-w.lam[i], nh-w.h[i]
			w.lam[i], w.h[i] = nl, nh
			// Update q(θ_i) and the projections that read it.
			nv, nm := 1/nl, nh/nl
			dmu, dvar := nm-w.mu[i], nv-w.cov[i*p+i]
			w.mu[i], w.cov[i*p+i] = nm, nv
			for k := 0; k < w.n; k++ {
				xi := c.Factors.Row(k)[i]
				w.m[k] += xi * dmu
				w.v[k] += xi * xi * dvar
			}
		}
		res.Iter = it
		if !proper {
			res.Status = StatusIndefinite
			break
		}
		// Recompute the projections exactly (no drift) and the ELBO.
		sumS, ok = c.projections(w, true)
		L := sumS + c.elboPrior(w, diagLogDet(w.cov, p))
		res.ELBO = append(res.ELBO, L)
		if !ok || !isFinite(L) {
			res.Status = StatusNotFinite
			break
		}
		if st.converged(c.NCVMPControl, w, res, L, dn, nn) {
			break
		}
	}
	st.finish(res)
}

// ncvmpUnmet returns the convergence criteria res does not meet.
func ncvmpUnmet(res *NCVMPVectorResult, tol, etol float64) []string {
	var long []string
	if !(res.NatChange <= tol) {
		long = append(long, fmt.Sprintf("natural-parameter relative change %.2g ≥ Tol %.2g", res.NatChange, tol))
	}
	if !(res.ELBOChange <= etol) {
		long = append(long, fmt.Sprintf("ELBO relative change %.2g ≥ ELBOTol %.2g", res.ELBOChange, etol))
	}
	return long
}

func diagLogDet(cov []float64, p int) float64 {
	var s float64
	for i := 0; i < p; i++ {
		s += math.Log(cov[i*p+i])
	}
	return s
}

// cholLogDet returns log|a| = 2Σ log L_ii from a's lower Cholesky factor
// (cholLower's; only the lower triangle of l is read, as in cholInverse).
func cholLogDet(l []float64, p int) float64 {
	var s float64
	for i := 0; i < p; i++ {
		s += math.Log(l[i*p+i])
	}
	return 2 * s
}

// cholInverse writes a⁻¹ = L⁻ᵀL⁻¹ into dst from a's lower Cholesky factor
// l, using tmp (p×p) for L⁻¹.
func cholInverse(dst, l, tmp []float64, p int) {
	// tmp = L⁻¹ (lower triangular), column by column.
	clear(tmp[:p*p])
	for j := 0; j < p; j++ {
		tmp[j*p+j] = 1 / l[j*p+j]
		for i := j + 1; i < p; i++ {
			var s float64
			for k := j; k < i; k++ {
				s -= l[i*p+k] * tmp[k*p+j]
			}
			tmp[i*p+j] = s / l[i*p+i]
		}
	}
	for i := 0; i < p; i++ {
		for j := 0; j <= i; j++ {
			var s float64
			for k := i; k < p; k++ {
				s += tmp[k*p+i] * tmp[k*p+j]
			}
			dst[i*p+j] = s
			dst[j*p+i] = s
		}
	}
}

// LogisticProjections are logistic factors g_n(u) = y_n·u − log(1+e^u)
// (y_n ∈ {0, 1}) of u_n = x_nᵀθ + o_n over a dense N×P design X
// (row-major). O holds the offsets o_n and may be nil (all zero).
type LogisticProjections struct {
	X, Y, O []float64
	P       int
}

func (f LogisticProjections) Size() (int, int)     { return len(f.Y), f.P }
func (f LogisticProjections) Row(n int) []float64  { return f.X[n*f.P : (n+1)*f.P] }
func (f LogisticProjections) Offset(n int) float64 { return offsetAt(f.O, n) }
func (f LogisticProjections) Label(n int) float64  { return f.Y[n] }
func (f LogisticProjections) LogFactor(n int, u float64) (g, dg, d2g float64) {
	return LogisticLogFactor(f.Y[n], u)
}

// PoissonProjections are Poisson factors with a log link,
// g_n(u) = y_n·u − e^u (dropping −log y_n!), of u_n = x_nᵀθ + o_n over a
// dense N×P design X (row-major); O (offsets, e.g. log exposures) may be
// nil. Their exact S_n(m, v) = y_n m − e^{m+v/2} lets tests check the
// quadrature.
type PoissonProjections struct {
	X, Y, O []float64
	P       int
}

func (f PoissonProjections) Size() (int, int)     { return len(f.Y), f.P }
func (f PoissonProjections) Row(n int) []float64  { return f.X[n*f.P : (n+1)*f.P] }
func (f PoissonProjections) Offset(n int) float64 { return offsetAt(f.O, n) }
func (f PoissonProjections) LogFactor(n int, u float64) (g, dg, d2g float64) {
	e := math.Exp(u)
	return f.Y[n]*u - e, f.Y[n] - e, -e
}

func offsetAt(o []float64, n int) float64 {
	if o == nil {
		return 0
	}
	return o[n]
}
