package runtime

import "math"

// GaussianMessage is a univariate Gaussian message m_{a→i}(x) ∝
// exp(PrecMean·x − ½Prec·x²) in natural parameters: Prec = 1/v_f and
// PrecMean = m_f/v_f. Messages multiply by adding these; a message may be
// improper (Prec ≤ 0) as long as the posterior they sum to is proper.
type GaussianMessage struct {
	Prec, PrecMean float64
}

// NCVMPMessage is the NCVMP message of Eq. 7 from a factor whose expected
// log S(m, v) has gradient (dSdm, dSdv) at the current q(x) = N(m, v):
//
//	1/v_f = −2 ∂S/∂v,   m_f/v_f = m/v_f + ∂S/∂m.
//
// It is φ = C(θ)⁻¹ ∂S/∂θ of Algorithm 1, line 5, written in the mean and
// variance: with u(x) = (x, x²) and θ = (m/v, −1/(2v)), the message
// exp(φ₁x + φ₂x²) has φ = (m_f/v_f, −1/(2v_f)), and C(θ)φ = ∂S/∂θ reduces
// to the two equations above (TestNCVMPMessageIsNaturalGradient checks
// this numerically).
func NCVMPMessage(m, v, dSdm, dSdv float64) GaussianMessage {
	prec := -2 * dSdv
	return GaussianMessage{Prec: prec, PrecMean: prec*m + dSdm}
}

// Damp returns the damped message of §7, φ^{1−α} φ_old^{α}: geometric
// mixing of the new message φ with the previous one, which in natural
// parameters is (1−α)φ + αφ_old. α = 0 is no damping; 0 ≤ α < 1. Damping
// leaves the fixed points of Algorithm 1 unchanged.
func (phi GaussianMessage) Damp(old GaussianMessage, alpha float64) GaussianMessage {
	return GaussianMessage{
		Prec:     (1-alpha)*phi.Prec + alpha*old.Prec,
		PrecMean: (1-alpha)*phi.PrecMean + alpha*old.PrecMean,
	}
}

// Factor1 is a non-conjugate factor of a univariate Gaussian variable: it
// returns the expected log factor S(m, v) under q(x) = N(m, v) and its
// partial derivatives, by quadrature (HermiteRule.ExpectLogistic) or a
// bound (LogisticTiltedBound, …).
type Factor1 func(m, v float64) (S, dSdm, dSdv float64)

// NCVMP1D runs Algorithm 1 of Knowles & Minka (2011) for one univariate
// latent x with a Gaussian prior N(M0, V0) (a conjugate factor: its
// message is the prior itself, Theorem 2) and non-conjugate factors.
type NCVMP1D struct {
	M0, V0  float64
	Factors []Factor1
	// Alpha is the damping factor of §7 switched on when oscillation is
	// detected (0 means 0.5). If it is still oscillating, α moves halfway
	// to 1 each time, up to 0.95.
	Alpha float64
	// Damp forces damping with Alpha from the first iteration.
	Damp bool
	// NoDamp never damps (to study the undamped iteration).
	NoDamp bool
	// MaxIter bounds the iterations (0 means 1000).
	MaxIter int
	// Tol is the convergence tolerance on the changes of m and v,
	// relative to max(1, |m|) and v (0 means 1e-12).
	Tol float64
}

// NCVMP1DResult is the outcome of NCVMP1D.Run.
type NCVMP1DResult struct {
	M, V      float64 // q(x) = N(M, V)
	Iter      int     // iterations run
	Converged bool
	// Damped says whether damping was on at the end, and Alpha its factor.
	Damped bool
	Alpha  float64
	// ELBO holds, per iteration, Σ_a S_a(m, v) + E[log N(x; M0, V0)] +
	// H[q] at the q after the update: the ELBO where every S is exact, a
	// lower bound on it where every S is a lower bound.
	ELBO []float64
	// Messages are the final messages of the non-conjugate factors.
	Messages []GaussianMessage
}

// ELBO1D is the ELBO of q = N(m, v) for a prior N(m0, v0) and factors
// with expected logs S_a: Σ_a S_a + E_q[log N(x; m0, v0)] + H[q].
func ELBO1D(factors []Factor1, m0, v0, m, v float64) float64 {
	var e float64
	for _, f := range factors {
		S, _, _ := f(m, v)
		e += S
	}
	d := m - m0
	return e - (d*d+v)/(2*v0) - 0.5*math.Log(2*math.Pi*v0) + 0.5*math.Log(2*math.Pi*math.E*v)
}

// Run iterates Algorithm 1 from q = prior (the non-conjugate messages
// start at zero, i.e. uniform): each iteration computes every factor's
// message (Eq. 7) at the current q, damps it if damping is on, and sets
// θ = prior + Σ messages (line 7). Oscillation is detected when two
// successive steps of θ point in opposite directions (negative inner
// product) without the second being much smaller (|Δθ_t| > ½|Δθ_{t−1}|)
// twice in a row; then damping is switched on (or increased). An update
// that would make q improper (total precision ≤ 0) is not taken: damping
// is switched on or increased and the messages are mixed again.
func (p NCVMP1D) Run() NCVMP1DResult {
	alpha := p.Alpha
	if alpha == 0 {
		alpha = 0.5
	}
	maxIter := p.MaxIter
	if maxIter == 0 {
		maxIter = 1000
	}
	tol := p.Tol
	if tol == 0 {
		tol = 1e-12
	}
	damped := p.Damp && !p.NoDamp
	prior := GaussianMessage{Prec: 1 / p.V0, PrecMean: p.M0 / p.V0}
	msgs := make([]GaussianMessage, len(p.Factors))
	fresh := make([]GaussianMessage, len(p.Factors))
	m, v := p.M0, p.V0
	res := NCVMP1DResult{}
	var prevStep [2]float64
	osc := 0
	for it := 1; it <= maxIter; it++ {
		for a, f := range p.Factors {
			_, dm, dv := f(m, v)
			fresh[a] = NCVMPMessage(m, v, dm, dv)
		}
		var theta GaussianMessage
		for try := 0; ; try++ {
			theta = prior
			for a := range msgs {
				phi := fresh[a]
				if damped {
					phi = phi.Damp(msgs[a], alpha)
				}
				theta.Prec += phi.Prec
				theta.PrecMean += phi.PrecMean
			}
			if theta.Prec > 0 && !math.IsInf(theta.Prec, 0) || try >= 60 || p.NoDamp {
				break
			}
			if !damped {
				damped = true
			} else {
				alpha = (1 + alpha) / 2
			}
		}
		for a := range msgs {
			if damped {
				msgs[a] = fresh[a].Damp(msgs[a], alpha)
			} else {
				msgs[a] = fresh[a]
			}
		}
		nv := 1 / theta.Prec
		nm := theta.PrecMean * nv
		step := [2]float64{theta.Prec - 1/v, theta.PrecMean - m/v}
		dm, dvv := math.Abs(nm-m), math.Abs(nv-v)
		m, v = nm, nv
		res.Iter = it
		res.ELBO = append(res.ELBO, ELBO1D(p.Factors, p.M0, p.V0, m, v))
		if dm <= tol*math.Max(1, math.Abs(m)) && dvv <= tol*v {
			res.Converged = true
			break
		}
		if !p.NoDamp {
			dot := step[0]*prevStep[0] + step[1]*prevStep[1]
			n1 := math.Hypot(step[0], step[1])
			n0 := math.Hypot(prevStep[0], prevStep[1])
			if dot < 0 && n1 > 0.5*n0 {
				osc++
			} else {
				osc = 0
			}
			if osc >= 2 {
				if !damped {
					damped = true
				} else if alpha < 0.95 {
					alpha = math.Min(0.95, (1+alpha)/2)
				}
				osc = 0
			}
		}
		prevStep = step
	}
	res.M, res.V = m, v
	res.Damped, res.Alpha = damped, alpha
	if !damped {
		res.Alpha = 0
	}
	res.Messages = msgs
	return res
}
