package main

import (
	"context"
	"math"

	"github.com/vigen-go/vigen/examples/tempering/gmmsigma"
	"github.com/vigen-go/vigen/runtime"
)

// The tempered partition function of gmmsigma.vi (Mandt et al. 2016,
// Eq. 3), which variational tempering needs on its grid of temperatures.
// Tempering divides the log density of every statement inside the loop
// over n by T (Eq. 2), so with a = 1/T
//
//	C(T) = ∫ dπ dμ p(π) p(μ) Π_n Σ_k π_k^a ∫ dy N(y; μ_k, σ)^a.
//
// The inner integral is (2πσ²)^((1−a)/2) a^(−1/2) whatever μ_k, so μ
// integrates out, and expanding the product over n by the counts n_k of
// points in each component,
//
//	E_π[(Σ_k π_k^a)^N] = Σ_{n_1+…+n_K=N} N!/Π n_k! · B(α + a·n)/B(α)
//	                   = Γ(Kα) N! / Γ(Kα + aN) · Σ_n Π_k g(n_k),
//	g(j) = Γ(α + aj) / (Γ(α) j!),
//
// since Σ_k (α + a n_k) = Kα + aN for every n. The sum over compositions is
// the K-fold convolution of g evaluated at N: O(K N²), exact up to
// rounding. At T = 1 it is 1 (the joint is normalized), so log C(1) = 0.
//
// With unknown precisions (gmm.vi) the inner integral is
// (2π/τ_k)^((1−a)/2) a^(−1/2), and E over τ_k ~ Gamma(2, 1) of
// τ_k^(−m(1−a)/2), m points in component k, diverges once m(1−a)/2 ≥ 2:
// C(T) is infinite for every T > 1 and a sample of any size, and VT does
// not apply to that model. gmmLogCInfinite says so.

// gmmSigmaLogC returns log C(T) of gmmsigma.vi at each temperature of grid
// for N points, K components, weight concentration alpha and component sd
// sigma.
func gmmSigmaLogC(grid []float64, n, k int, alpha, sigma float64) []float64 {
	out := make([]float64, len(grid))
	for m, T := range grid {
		a := 1 / T
		lgKa, _ := math.Lgamma(float64(k) * alpha)
		lgKaN, _ := math.Lgamma(float64(k)*alpha + a*float64(n))
		lgN1, _ := math.Lgamma(float64(n) + 1)
		lgA, _ := math.Lgamma(alpha)
		// log g(j)
		lg := make([]float64, n+1)
		for j := range lg {
			x, _ := math.Lgamma(alpha + a*float64(j))
			f, _ := math.Lgamma(float64(j) + 1)
			lg[j] = x - lgA - f
		}
		// conv[j]: log Σ over compositions of j into the components so far
		conv := append([]float64(nil), lg...)
		next := make([]float64, n+1)
		for c := 1; c < k; c++ {
			for j := 0; j <= n; j++ {
				mx := math.Inf(-1)
				for i := 0; i <= j; i++ {
					mx = math.Max(mx, conv[i]+lg[j-i])
				}
				s := 0.0
				for i := 0; i <= j; i++ {
					s += math.Exp(conv[i] + lg[j-i] - mx)
				}
				next[j] = mx + math.Log(s)
			}
			conv, next = next, conv
		}
		logE := lgKa + lgN1 - lgKaN + conv[n]
		out[m] = float64(n)*((1-a)/2*math.Log(2*math.Pi*sigma*sigma)-0.5*math.Log(a)) + logE
	}
	return out
}

// gmmSigmaFingerprint is the fingerprint of gmmsigma.vi on data d that a
// file of its log C(T) carries (runtime.LogCFingerprint), so that vigen
// run -logc refuses it for another model or data: the model (its source's
// sha256) and data parts of the fingerprint of a fit, here of one
// iteration.
func gmmSigmaFingerprint(d *gmmsigma.Data) (*runtime.LogCFingerprint, error) {
	m, err := gmmsigma.NewModel(d)
	if err != nil {
		return nil, err
	}
	res, err := m.Fit(context.Background(), gmmsigma.Options{MaxIter: 1, Diagnose: runtime.DiagnoseSettings{Off: true}})
	if err != nil {
		return nil, err
	}
	return &runtime.LogCFingerprint{Model: res.Fingerprint.Model, Data: res.Fingerprint.Data}, nil
}

// expGrid returns m temperatures from 1 to tmax on an exponential scale,
// the paper's grid for VT (§4: 100 temperatures in [1, 10]).
func expGrid(m int, tmax float64) []float64 {
	g := make([]float64, m)
	for i := range g {
		g[i] = math.Pow(tmax, float64(i)/float64(m-1))
	}
	g[0], g[m-1] = 1, tmax
	return g
}
