package main

import (
	"fmt"
	"math"

	"github.com/vigen-go/vigen/runtime"
)

// Laplace and delta-method variational inference (Wang & Blei 2013, §3.1
// and §3.2) for Bayesian multinomial softmax regression, the model of
// Knowles & Minka (2011) §6.4:
//
//	w_kd ~ N(0, 1) iid,   p(y_n = k | W) = softmax_k(g_n),   g_n = W x_n,
//
// y_n ∈ {0, …, K−1}, x_n ∈ R^P (with its intercept column), W ∈ R^{K×P}.
// q(W) is one full-covariance Gaussian over the K·P weights, flattened
// class-major (index k·P + d), and is fitted by vigen's own Laplace/delta
// update, runtime.GaussianWork.Step, exactly as generated code calls it for
// a global latent (see examples/logreg/logreg: gaussianTheta and
// UpdateGlobals).
//
// The kernels F and DeltaF below are written by hand because vigen's
// language cannot yet express this model: a K×P matrix latent read as one
// block, W * x[n] with W : real[K,P], is a documented gap, so the compiler
// cannot generate them. They compute what generated kernels would: the log
// joint f(θ) = log p(y, W) (Wang & Blei's Eq. 12, no other latents) with its
// gradient and Hessian, and the delta-method objective of Eq. 17,
// f(μ) + ½Tr{∇²f(μ)Σ}, with its gradient and Hessian in μ.
//
// Derivatives. With p_n = softmax(g_n) and A_n = diag p_n − p_n p_nᵀ (the
// Jacobian ∂p/∂g, and the Hessian of lse(g) = log Σ_k e^{g_k}),
//
//	f(θ) = Σ_n (g_{n,y_n} − lse(g_n)) − ½|θ|² − (KP/2) log 2π,
//	∂f/∂θ_{kP+d} = Σ_n (δ_{k,y_n} − p_nk) x_nd − θ_{kP+d},
//	∂²f/∂θ_{kP+d}∂θ_{lP+e} = −Σ_n A_n,kl x_nd x_ne − δ_{kl}δ_{de},
//
// i.e. ∇²f = −Σ_n A_n ⊗ x_n x_nᵀ − I. The delta term of one data point is
// ½Tr{H_n Σ} = −½ Σ_kl A_n,kl C_n,kl = −½ φ_n, where
// C_n,kl = x_nᵀ Σ_{kl} x_n is the K×K covariance of g_n under q (Σ_{kl} the
// P×P block of classes k, l); the prior adds −½Tr Σ, constant in μ. As a
// function of g (C fixed), φ = pᵀc − pᵀCp with c = diag C, and, since
// ∂p/∂g = A,
//
//	∇_g φ = A r,   r = c − 2Cp,   i.e. (∇φ)_j = p_j (r_j − r̄), r̄ = pᵀr;
//	∂²φ/∂g_j∂g_i = A_ji (r_j − r̄) + p_j (−2(CA)_ji − (Ar)_i + 2(ACp)_i),
//
// (differentiating p_j, r_j = c_j − 2(Cp)_j and r̄ in g_i in turn; these are
// the third and fourth derivatives of lse contracted with C). Both map back
// to θ through g_n = B_n θ, B_n = I_K ⊗ x_nᵀ: gradient entries ∇_k x_nd,
// Hessian entries H_kl x_nd x_ne. TestSoftmaxKernelsFD checks every kernel
// against central differences.

// softmaxPosterior is q(W) = N(Mean, Cov) for softmax regression with K
// classes and P inputs.
type softmaxPosterior struct {
	K, P int
	// Mean holds the K·P means class-major (index k·P + d); Cov is the
	// (K·P)×(K·P) covariance, row-major, in the same order.
	Mean []float64
	Cov  []float64
	// ELBO is the approximate objective of Wang & Blei's Eq. 21 at the
	// fit, f(μ) + ½Tr{∇²f(μ)Σ} + ½log|Σ| + (KP/2)(1 + log 2π), which at
	// Σ = −∇²f(μ)⁻¹ (both methods) is the Laplace evidence
	// f(μ) + ½log|Σ| + (KP/2) log 2π. It is not a bound.
	ELBO float64
	// Iter counts the updates of q run (one for Laplace); Converged says
	// the last one's maximization converged and, for the delta method,
	// that the relative change of the mean fell below runtime.DefaultMeanTol.
	Iter      int
	Converged bool
}

// softmaxModel holds the data of a softmax regression and the scratch of
// its kernels. Its methods are not safe for concurrent use.
type softmaxModel struct {
	x       []float64 // n×p, row-major
	y       []int
	n, p, k int
	// scratch
	g, pr, r, cp, s []float64
	c, hg           []float64 // K×K
	sx              []float64 // (K·P)×K
}

func newSoftmaxModel(x []float64, y []int, n, p, k int) *softmaxModel {
	return &softmaxModel{x: x, y: y, n: n, p: p, k: k,
		g: make([]float64, k), pr: make([]float64, k), r: make([]float64, k),
		cp: make([]float64, k), s: make([]float64, k),
		c: make([]float64, k*k), hg: make([]float64, k*k), sx: make([]float64, k*p*k)}
}

// probs sets m.g = W x_n and m.pr = softmax(m.g) and returns lse(m.g).
func (m *softmaxModel) probs(theta []float64, n int) float64 {
	p := m.p
	xn := m.x[n*p : (n+1)*p]
	for k := range m.g {
		var s float64
		for d, xd := range xn {
			s += theta[k*p+d] * xd
		}
		m.g[k] = s
	}
	lse := runtime.LogSumExp(m.g)
	for k, gk := range m.g {
		m.pr[k] = math.Exp(gk - lse)
	}
	return lse
}

// addOuter adds Σ_kl coef_kl · (e_k e_lᵀ ⊗ x_n x_nᵀ) to the upper triangle
// of hess (D×D, D = K·P; for k < l the whole block, for k = l its upper
// triangle), reading coef (K×K, symmetric) for k ≤ l only; eval mirrors
// the result.
func (m *softmaxModel) addOuter(hess, coef []float64, n int) {
	p, K := m.p, m.k
	D := K * p
	xn := m.x[n*p : (n+1)*p]
	for k := 0; k < K; k++ {
		for l := k; l < K; l++ {
			a := coef[k*K+l]
			if a == 0 {
				continue
			}
			for d := 0; d < p; d++ {
				ad := a * xn[d]
				if ad == 0 {
					continue
				}
				row := hess[(k*p+d)*D+l*p:]
				e0 := 0
				if l == k {
					e0 = d
				}
				for e := e0; e < p; e++ {
					row[e] += ad * xn[e]
				}
			}
		}
	}
}

// logJoint is F of runtime.GaussianFactor: f(θ) = log p(y, W) at θ = W
// (class-major), its gradient into grad and its Hessian into hess.
func (m *softmaxModel) logJoint(theta, grad, hess []float64) float64 {
	return m.eval(theta, nil, grad, hess)
}

// deltaObjective is DeltaF of runtime.GaussianFactor: the delta-method
// objective of Wang & Blei's Eq. 17, f(μ) + ½Tr{∇²f(μ)Σ} with Σ = cov,
// with its gradient and Hessian in μ (Σ fixed).
func (m *softmaxModel) deltaObjective(mu, cov, grad, hess []float64) float64 {
	return m.eval(mu, cov, grad, hess)
}

// eval computes f (cov nil) or the delta objective (cov set).
func (m *softmaxModel) eval(theta, cov, grad, hess []float64) float64 {
	K, p := m.k, m.p
	D := K * p
	clear(grad)
	clear(hess)
	f := -0.5 * float64(D) * math.Log(2*math.Pi)
	for i, t := range theta {
		f -= 0.5 * t * t
		grad[i] = -t
		hess[i*D+i] = -1
	}
	if cov != nil {
		for i := 0; i < D; i++ {
			f -= 0.5 * cov[i*D+i]
		}
	}
	coef := m.hg
	for n := 0; n < m.n; n++ {
		xn := m.x[n*p : (n+1)*p]
		lse := m.probs(theta, n)
		pr := m.pr
		y := m.y[n]
		f += m.g[y] - lse
		// ∇_g of g_y − lse, and −A as the Hessian coefficient.
		for k := 0; k < K; k++ {
			m.s[k] = -pr[k]
			for l := 0; l < K; l++ {
				coef[k*K+l] = pr[k] * pr[l]
			}
			coef[k*K+k] -= pr[k]
		}
		m.s[y]++
		if cov != nil {
			m.covG(cov, n)
			f -= 0.5 * m.deltaTerm(coef)
		}
		for k := 0; k < K; k++ {
			if sk := m.s[k]; sk != 0 {
				gk := grad[k*p : (k+1)*p]
				for d, xd := range xn {
					gk[d] += sk * xd
				}
			}
		}
		m.addOuter(hess, coef, n)
	}
	runtime.MirrorUpper(hess, D)
	return f
}

// covG sets m.c to C_n, the K×K covariance of g_n = W x_n under
// q = N(·, cov): C_kl = x_nᵀ Σ_{kl} x_n.
func (m *softmaxModel) covG(cov []float64, n int) {
	K, p := m.k, m.p
	D := K * p
	xn := m.x[n*p : (n+1)*p]
	// sx[i, l] = Σ_e Σ[i, lP+e] x_ne
	for i := 0; i < D; i++ {
		row := cov[i*D:]
		for l := 0; l < K; l++ {
			var s float64
			for e, xe := range xn {
				s += row[l*p+e] * xe
			}
			m.sx[i*K+l] = s
		}
	}
	for k := 0; k < K; k++ {
		for l := 0; l < K; l++ {
			var s float64
			for d, xd := range xn {
				s += xd * m.sx[(k*p+d)*K+l]
			}
			m.c[k*K+l] = s
		}
	}
}

// deltaTerm returns φ = Σ_kl A_kl C_kl for the current m.pr and m.c, and
// adds −½∇_g φ to m.s and −½∇²_g φ to coef (K×K).
func (m *softmaxModel) deltaTerm(coef []float64) float64 {
	K := m.k
	pr, C, r, cp := m.pr, m.c, m.r, m.cp
	// cp = Cp, r = c − 2Cp, rbar = pᵀr, phi = pᵀc − pᵀCp.
	var phi, rbar, pcp float64
	for k := 0; k < K; k++ {
		var s float64
		for l := 0; l < K; l++ {
			s += C[k*K+l] * pr[l]
		}
		cp[k] = s
		r[k] = C[k*K+k] - 2*s
		phi += pr[k] * (C[k*K+k] - s)
		rbar += pr[k] * r[k]
		pcp += pr[k] * s
	}
	// ∇φ_j = p_j (r_j − r̄) = (Ar)_j; (ACp)_i = p_i (cp_i − pᵀCp).
	for j := 0; j < K; j++ {
		m.s[j] -= 0.5 * pr[j] * (r[j] - rbar)
	}
	for j := 0; j < K; j++ {
		for i := 0; i < K; i++ {
			aji := -pr[j] * pr[i]
			if i == j {
				aji += pr[j]
			}
			// (CA)_ji = Σ_l C_jl A_li = p_i (C_ji − (Cp)_j)
			ca := pr[i] * (C[j*K+i] - cp[j])
			ar := pr[i] * (r[i] - rbar)
			acp := pr[i] * (cp[i] - pcp)
			h := aji*(r[j]-rbar) + pr[j]*(-2*ca-ar+2*acp)
			coef[j*K+i] -= 0.5 * h
		}
	}
	return phi
}

// fitSoftmaxLaplace fits q(W) for softmax regression on x (n×p, row-major,
// with its intercept column) and labels y ∈ {0, …, k−1} by Laplace
// variational inference (delta false: one update, q = N(Ŵ, −∇²f(Ŵ)⁻¹) at
// the MAP Ŵ) or delta-method variational inference (delta true: starting
// from the Laplace fit, updates each maximizing Eq. 17 in μ with Σ fixed
// and then setting Σ = −∇²f(μ)⁻¹, until the mean settles), both by
// fitGaussianVI, i.e. runtime.GaussianWork.Step. It returns an error for
// inconsistent shapes or labels, or when the fit is not finite.
func fitSoftmaxLaplace(x []float64, y []int, n, p, k int, delta bool) (softmaxPosterior, error) {
	if n <= 0 || p <= 0 || k < 2 || len(x) != n*p || len(y) != n {
		return softmaxPosterior{}, fmt.Errorf("fitSoftmaxLaplace: n = %d, p = %d, k = %d, len(x) = %d, len(y) = %d", n, p, k, len(x), len(y))
	}
	for i, c := range y {
		if c < 0 || c >= k {
			return softmaxPosterior{}, fmt.Errorf("fitSoftmaxLaplace: y[%d] = %d not in [0, %d)", i, c, k)
		}
	}
	m := newSoftmaxModel(x, y, n, p, k)
	q, err := fitGaussianVI(m.logJoint, m.deltaObjective, k*p, delta)
	post := softmaxPosterior{K: k, P: p, Mean: q.Mean, Cov: q.Cov, Iter: q.Iter, Converged: q.Converged}
	if err != nil {
		return post, fmt.Errorf("fitSoftmaxLaplace: %w", err)
	}
	post.ELBO = approxObjective(m.deltaObjective, post.Mean, post.Cov)
	return post, nil
}

// approxObjective is Wang & Blei's approximate objective (Eq. 21 with the
// entropy's constants): f(μ) + ½Tr{∇²f(μ)Σ} + ½log|Σ| + (D/2)(1 + log 2π),
// evaluated with the delta kernel.
func approxObjective(DF func(x, cov, g, h []float64) float64, mu, cov []float64) float64 {
	D := len(mu)
	g, h := make([]float64, D), make([]float64, D*D)
	v := DF(mu, cov, g, h)
	ld, ok := runtime.LogDetSPD(cov, D)
	if !ok {
		return math.NaN()
	}
	return v + 0.5*ld + 0.5*float64(D)*(1+math.Log(2*math.Pi))
}
