package main

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// The priors of ar2.vi.
const (
	AlphaPriorSD    = 10.0 // alpha ~ Normal(0, 10)
	BetaPriorSD     = 1.0  // beta1, beta2 ~ Normal(0, 1)
	SigmaPriorScale = 1.0  // sigma ~ HalfNormal(1)
)

// The grid of Exact over u = log sigma: from uLo to uHi in steps of
// GridStep. The posterior of u is smooth, its sd about 1/√(2(T − 2)), and
// negligible at both ends (like sigma^(3 − T) below, e^(−sigma²/2) above).
const (
	uLo, uHi = -10.0, 4.0
	GridStep = 0.002
)

// Exact returns the exact posterior of the AR(2) model for the series y.
// Given sigma, the model is a Bayesian linear regression of y[t] on (1,
// y[t−1], y[t−2]), t = 3..T, with prior precision D = diag(1/10², 1, 1):
// the coefficients are N(m, Λ⁻¹) with Λ = D + XᵀX/σ², m = Λ⁻¹Xᵀy/σ², and
//
//	log p(y | σ) = −n log σ − yᵀy/(2σ²) + mᵀΛm/2 − log|Λ|/2 + const,
//
// so p(log sigma | y) ∝ HalfNormal(σ; 1)·σ·p(y | σ) is integrated on a grid
// (trapezoid rule); the coefficients' summaries are those of the mixture
// of Gaussians over it.
func Exact(y []float64) (*Posterior, error) { return exactOn(y, GridStep) }

func exactOn(y []float64, step float64) (*Posterior, error) {
	n := len(y) - 2
	if n < 1 {
		return nil, fmt.Errorf("exact posterior: the series has %d values, need at least 3", len(y))
	}
	xtx := mat.NewSymDense(3, nil)
	xty := mat.NewVecDense(3, nil)
	yty := 0.0
	for t := 2; t < len(y); t++ {
		x := [3]float64{1, y[t-1], y[t-2]}
		for i := range 3 {
			xty.SetVec(i, xty.AtVec(i)+x[i]*y[t])
			for j := i; j < 3; j++ {
				xtx.SetSym(i, j, xtx.At(i, j)+x[i]*x[j])
			}
		}
		yty += y[t] * y[t]
	}
	prior := [3]float64{1 / (AlphaPriorSD * AlphaPriorSD), 1 / (BetaPriorSD * BetaPriorSD), 1 / (BetaPriorSD * BetaPriorSD)}
	k := int(math.Round((uHi-uLo)/step)) + 1
	us, logw := make([]float64, k), make([]float64, k)
	means, vars := make([][3]float64, k), make([][3]float64, k)
	best := math.Inf(-1)
	for g := range us {
		u := uLo + float64(g)*step
		us[g] = u
		s2 := math.Exp(2 * u)
		L := mat.NewSymDense(3, nil)
		L.ScaleSym(1/s2, xtx)
		for i := range 3 {
			L.SetSym(i, i, L.At(i, i)+prior[i])
		}
		var ch mat.Cholesky
		if !ch.Factorize(L) {
			return nil, fmt.Errorf("exact posterior: the posterior precision at sigma = %g is not positive definite", math.Sqrt(s2))
		}
		b := mat.NewVecDense(3, nil)
		b.ScaleVec(1/s2, xty)
		var m mat.VecDense
		if err := ch.SolveVecTo(&m, b); err != nil {
			return nil, err
		}
		var cov mat.SymDense
		if err := ch.InverseTo(&cov); err != nil {
			return nil, err
		}
		lw := -float64(n)*u - yty/(2*s2) + mat.Dot(&m, b)/2 - ch.LogDet()/2
		lw += -s2/(2*SigmaPriorScale*SigmaPriorScale) + u // HalfNormal(σ; 1) and the Jacobian of σ = e^u
		logw[g] = lw
		best = math.Max(best, lw)
		for i := range 3 {
			means[g][i], vars[g][i] = m.AtVec(i), cov.At(i, i)
		}
	}
	w := make([]float64, k)
	total := 0.0
	for g := range w {
		w[g] = math.Exp(logw[g] - best)
		if g == 0 || g == k-1 {
			w[g] /= 2
		}
		total += w[g]
	}
	for g := range w {
		w[g] /= total
	}
	var coef [3]Summary
	for i := range 3 {
		mu, vr := make([]float64, k), make([]float64, k)
		for g := range w {
			mu[g], vr[g] = means[g][i], vars[g][i]
		}
		coef[i] = mixture(w, mu, vr)
	}
	var e1, e2 float64
	for g, u := range us {
		e1 += w[g] * math.Exp(u)
		e2 += w[g] * math.Exp(2*u)
	}
	sigma := Summary{Mean: e1, SD: math.Sqrt(e2 - e1*e1),
		Q05: math.Exp(gridQuantile(w, us, 0.05)), Q50: math.Exp(gridQuantile(w, us, 0.5)), Q95: math.Exp(gridQuantile(w, us, 0.95))}
	return &Posterior{Alpha: coef[0], Beta1: coef[1], Beta2: coef[2], Sigma: sigma}, nil
}

// mixture summarizes Σ_k w_k N(mean_k, vr_k); points of weight below 1e-14
// are left out of the quantiles.
func mixture(w, mean, vr []float64) Summary {
	var e1, e2 float64
	var idx []int
	for k := range w {
		e1 += w[k] * mean[k]
		e2 += w[k] * (vr[k] + mean[k]*mean[k])
		if w[k] > 1e-14 {
			idx = append(idx, k)
		}
	}
	sd := math.Sqrt(e2 - e1*e1)
	cdf := func(x float64) float64 {
		s := 0.0
		for _, k := range idx {
			s += w[k] * 0.5 * math.Erfc(-(x-mean[k])/math.Sqrt(2*vr[k]))
		}
		return s
	}
	q := func(p float64) float64 {
		a, b := e1-20*sd, e1+20*sd
		for range 200 {
			mid := (a + b) / 2
			if cdf(mid) < p {
				a = mid
			} else {
				b = mid
			}
			if b-a < 1e-10*sd {
				break
			}
		}
		return (a + b) / 2
	}
	return Summary{Mean: e1, SD: sd, Q05: q(0.05), Q50: q(0.5), Q95: q(0.95)}
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
