package main

import (
	"fmt"
	"math"
)

// The priors of eightschools.vi and centred.vi.
const (
	MuPriorSD     = 5.0 // mu ~ Normal(0, 5)
	TauPriorScale = 5.0 // tau ~ HalfCauchy(5)
)

// The grid of Exact over u = log tau: from uLo to uHi in steps of uStep.
// The posterior of u decays like tau (e^u) below and like tau^(1−J) above,
// so the ends carry no mass that shows in any printed digit; the step
// makes the trapezoid rule (spectrally accurate for a smooth integrand
// whose tails vanish) exact to far more digits than are printed.
const (
	uLo, uHi, uStep = -20.0, 12.0, 0.005
)

// Exact returns the exact posterior of the eight-schools model (either
// parameterization: they are the same model) for effects y with standard
// errors sigma. Given tau, the y[j] are independent Normal(mu, sigma[j]² +
// tau²) with theta integrated out, and mu is Gaussian given tau and y; so
// p(tau | y) is known in closed form up to a constant, and every summary is
// a one-dimensional integral over u = log tau, computed on a fine grid:
//
//	p(u | y) ∝ HalfCauchy(e^u; 5)·e^u · ∫ N(mu; 0, 5²) Π_j N(y_j; mu, σ_j² + τ²) dmu
//	mu | tau, y ~ N(m, 1/P),  P = 1/25 + Σ 1/(σ_j² + τ²),  m = Σ (y_j/(σ_j² + τ²)) / P
//	theta_j | tau, y ~ N((1 − B_j) y_j + B_j m, σ_j²τ²/(σ_j² + τ²) + B_j²/P),  B_j = σ_j²/(σ_j² + τ²)
//
// Quantiles of mu and theta_j are those of the mixture of these Gaussians
// over the grid (by bisection), those of tau of the grid's distribution.
func Exact(y, sigma []float64) (*Posterior, error) {
	if len(y) != len(sigma) || len(y) == 0 {
		return nil, fmt.Errorf("exact posterior: %d effects and %d standard errors", len(y), len(sigma))
	}
	n := int(math.Round((uHi-uLo)/uStep)) + 1
	us := make([]float64, n)
	logw := make([]float64, n)
	muMean, muVar := make([]float64, n), make([]float64, n)
	J := len(y)
	thMean, thVar := make([][]float64, J), make([][]float64, J)
	for j := range thMean {
		thMean[j], thVar[j] = make([]float64, n), make([]float64, n)
	}
	best := math.Inf(-1)
	for k := range us {
		u := uLo + float64(k)*uStep
		us[k] = u
		tau2 := math.Exp(2 * u)
		P, lin, quad, logdet := 1/(MuPriorSD*MuPriorSD), 0.0, 0.0, 0.0
		for j := range y {
			v := sigma[j]*sigma[j] + tau2
			P += 1 / v
			lin += y[j] / v
			quad += y[j] * y[j] / v
			logdet += math.Log(v)
		}
		m := lin / P
		// log HalfCauchy(τ; s) + log τ (the Jacobian of τ = e^u), then the
		// marginal likelihood of y with mu and theta integrated out.
		lw := -math.Log1p(tau2/(TauPriorScale*TauPriorScale)) + u
		lw += -0.5*logdet - 0.5*math.Log(P) - 0.5*(quad-m*m*P)
		logw[k] = lw
		best = math.Max(best, lw)
		muMean[k], muVar[k] = m, 1/P
		for j := range y {
			s2 := sigma[j] * sigma[j]
			b := s2 / (s2 + tau2)
			thMean[j][k] = (1-b)*y[j] + b*m
			thVar[j][k] = s2*tau2/(s2+tau2) + b*b/P
		}
	}
	// Trapezoid weights, normalized.
	w := make([]float64, n)
	total := 0.0
	for k := range w {
		w[k] = math.Exp(logw[k] - best)
		if k == 0 || k == n-1 {
			w[k] /= 2
		}
		total += w[k]
	}
	if !(total > 0) || math.IsInf(total, 0) {
		return nil, fmt.Errorf("exact posterior: the integral over tau is %v", total)
	}
	for k := range w {
		w[k] /= total
	}
	p := &Posterior{Mu: mixture(w, muMean, muVar)}
	for j := range y {
		p.Theta = append(p.Theta, mixture(w, thMean[j], thVar[j]))
	}
	var e1, e2 float64
	for k, u := range us {
		e1 += w[k] * math.Exp(u)
		e2 += w[k] * math.Exp(2*u)
	}
	p.Tau = Summary{Mean: e1, SD: math.Sqrt(e2 - e1*e1)}
	p.Tau.Q05, p.Tau.Q50, p.Tau.Q95 = math.Exp(gridQuantile(w, us, 0.05)), math.Exp(gridQuantile(w, us, 0.5)), math.Exp(gridQuantile(w, us, 0.95))
	return p, nil
}

// mixture summarizes Σ_k w_k N(mean_k, vr_k).
func mixture(w, mean, vr []float64) Summary {
	var e1, e2 float64
	lo, hi := math.Inf(1), math.Inf(-1)
	for k := range w {
		e1 += w[k] * mean[k]
		e2 += w[k] * (vr[k] + mean[k]*mean[k])
		sd := math.Sqrt(vr[k])
		lo, hi = math.Min(lo, mean[k]-12*sd), math.Max(hi, mean[k]+12*sd)
	}
	cdf := func(x float64) float64 {
		s := 0.0
		for k := range w {
			s += w[k] * 0.5 * math.Erfc(-(x-mean[k])/math.Sqrt(2*vr[k]))
		}
		return s
	}
	q := func(p float64) float64 {
		a, b := lo, hi
		for range 100 {
			mid := (a + b) / 2
			if cdf(mid) < p {
				a = mid
			} else {
				b = mid
			}
			if b-a < 1e-9*math.Max(1, math.Abs(mid)) {
				break
			}
		}
		return (a + b) / 2
	}
	return Summary{Mean: e1, SD: math.Sqrt(e2 - e1*e1), Q05: q(0.05), Q50: q(0.5), Q95: q(0.95)}
}

// gridQuantile is the p-quantile of the distribution with weights w on the
// equally spaced points x: each weight is spread evenly over the cell of
// width h around its point, so the quantile is second-order accurate in h.
func gridQuantile(w, x []float64, p float64) float64 {
	h := x[1] - x[0]
	c := 0.0
	for k := range w {
		if c+w[k] >= p {
			return x[k] - h/2 + (p-c)/w[k]*h
		}
		c += w[k]
	}
	return x[len(x)-1]
}
