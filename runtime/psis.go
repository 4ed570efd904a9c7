package runtime

import (
	"math"
	"slices"
)

// Pareto-smoothed importance sampling (Vehtari, Simpson, Gelman, Yao and
// Gabry, "Pareto smoothed importance sampling", JMLR 2024): the largest
// importance ratios are replaced by quantiles of a generalized Pareto
// distribution fitted to them, and the fitted shape k̂ says how far the
// proposal q is from the target. k̂ < 0.5: importance sampling from q is
// reliable (and q close); 0.5–0.7: usable with care; above 0.7 (or
// KHatThreshold of the draws): q is too far from the target to be trusted.

// KHatGood and KHatBad bound the diagnostic's three ranges (Vehtari et al.
// 2024, §3): below KHatGood q is close to the target, above KHatBad it is
// not to be trusted.
const (
	KHatGood = 0.5
	KHatBad  = 0.7
)

// PSIS smooths the log importance ratios r (log p − log q at draws from q)
// in place and returns the estimated Pareto shape k̂ of the ratios' tail.
// The tail is the M = ⌈min(S/5, 3√S)⌉ largest ratios; their excess over
// the next largest is fitted by a generalized Pareto distribution (Zhang &
// Stephens 2009 with the weakly informative prior of Vehtari et al.), and
// replaced by its quantiles at (i − ½)/M, capped at the largest raw ratio.
// Ratios that all lie within 1e-6 of each other (q equal to the target up
// to a constant, to rounding) have nothing to smooth: k̂ is 0. ok is false, and r left as it
// is, when k̂ cannot be estimated: fewer than 5 tail draws (S < 25), or a
// fit that fails. The ratios must be finite (the caller checks).
func PSIS(r []float64) (k float64, ok bool) {
	s := len(r)
	m := int(math.Ceil(math.Min(0.2*float64(s), 3*math.Sqrt(float64(s)))))
	if m < 5 || s <= m {
		return 0, false
	}
	order := make([]int, s)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case r[a] < r[b]:
			return -1
		case r[a] > r[b]:
			return 1
		}
		return 0
	})
	top := r[order[s-1]]
	cut := r[order[s-m-1]] // the largest ratio below the tail
	// exceedances of the tail in the weight scale exp(r − top)
	base := math.Exp(cut - top)
	x := make([]float64, m)
	for i := range m {
		x[i] = math.Exp(r[order[s-m+i]]-top) - base
	}
	if top-r[order[0]] < 1e-6 {
		return 0, true // flat: the weights agree to a factor of e^1e-6
	}
	k, sigma := GPDFit(x)
	if math.IsNaN(k) || math.IsInf(k, 0) || !(sigma > 0) {
		return 0, false
	}
	for i := range m {
		p := (float64(i) + 0.5) / float64(m)
		w := base + gpdQuantile(p, k, sigma)
		r[order[s-m+i]] = math.Min(math.Log(w)+top, top)
	}
	return k, true
}

// gpdQuantile is the p-quantile of the generalized Pareto distribution
// with location 0, shape k and scale sigma.
func gpdQuantile(p, k, sigma float64) float64 {
	if math.Abs(k) < 1e-12 {
		return -sigma * math.Log1p(-p)
	}
	return sigma * math.Expm1(-k*math.Log1p(-p)) / k
}

// GPDFit estimates the shape k and scale σ of a generalized Pareto
// distribution with location 0 from the sample x (sorted ascending,
// non-negative, largest positive): the empirical Bayes estimate of Zhang &
// Stephens (2009), the posterior mean of θ = −k/σ over a grid of
// 30 + ⌊√n⌋ points weighted by the profile likelihood, then k̂ shrunk
// toward ½ by a weakly informative prior worth 10 observations (k̂ ← (n k̂
// + 5)/(n + 10), Vehtari et al. 2024, App. C). Here k > 0 is a heavy tail
// (the opposite sign of Zhang & Stephens' k).
func GPDFit(x []float64) (k, sigma float64) {
	n := len(x)
	const prior = 3
	grid := 30 + int(math.Floor(math.Sqrt(float64(n))))
	q1 := x[int(math.Floor(float64(n)/4+0.5))-1] // the first quartile, 1-based as in the paper
	if n < 4 {
		q1 = x[0]
	}
	if q1 <= 0 {
		// ties at zero: the smallest positive value stands in
		for _, v := range x {
			if v > 0 {
				q1 = v
				break
			}
		}
	}
	theta := make([]float64, grid)
	ll := make([]float64, grid)
	for j := range grid {
		theta[j] = 1/x[n-1] + (1-math.Sqrt(float64(grid)/(float64(j+1)-0.5)))/prior/q1
		ll[j] = float64(n) * gpdProfile(theta[j], x)
	}
	// weights w_j = exp ℓ_j / Σ_i exp ℓ_i, the normalized likelihoods
	top := slices.Max(ll)
	if math.IsInf(top, -1) {
		return math.NaN(), math.NaN()
	}
	sum, thetaHat := 0.0, 0.0
	for j := range grid {
		w := math.Exp(ll[j] - top)
		sum += w
		thetaHat += theta[j] * w
	}
	thetaHat /= sum
	kz := 0.0 // Zhang & Stephens' k, mean log(1 − θ x)
	for _, v := range x {
		kz += math.Log1p(-thetaHat * v)
	}
	kz /= float64(n)
	sigma = -kz / thetaHat
	k = kz
	k = (float64(n)*k + 10*0.5) / (float64(n) + 10)
	return k, sigma
}

// gpdProfile is the profile log likelihood per observation of the
// generalized Pareto at θ = −k/σ: log(−θ/k) − k − 1 with k = mean
// log(1 − θ x) (Zhang & Stephens 2009, Eq. 4); −Inf where undefined.
func gpdProfile(theta float64, x []float64) float64 {
	k := 0.0
	for _, v := range x {
		k += math.Log1p(-theta * v)
	}
	k /= float64(len(x))
	v := math.Log(-theta/k) - k - 1
	if math.IsNaN(v) {
		return math.Inf(-1)
	}
	return v
}
