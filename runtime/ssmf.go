package runtime

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Structured stochastic mean field (Hoffman 2014). Mean-field SVI fits
// each minibatch's local factors to the expectations of the global ones,
// E_q[t(β)]. SSMF keeps the dependence q(z_d | β) instead: each step draws
// β̃ from q(β), fits (or samples) the local variables given β̃, and moves λ
// along a stochastic natural gradient of the marginal bound L(λ) (Eq. 21):
//
//	SSMF   (Alg. 1, Eq. 26): λ̂ = η + F(λ)⁻¹ J(u, λ)ᵀ (N_t/|B|) Σ_b η_b,
//	SSMF-A (Alg. 2, Eq. 29): λ̂ = η + (N_t/|B|) Σ_b η_b,
//
// with λ ← (1 − ρ_t) λ + ρ_t λ̂ as in SVI. J = ∂t(R(u, λ))/∂λ is the
// Jacobian of the sufficient statistics of the reparameterized draw β̃ =
// R(u, λ) (Eq. 12–16), F = ∂²A/∂λ∂λᵀ the Fisher information of q(β), η_b
// unit b's statistics given β̃ (UnitNatural with the local factors fitted
// or sampled given β̃), and N_t = min(t·|B|, N) ramps the data size up over
// the first pass (§2.2). The family-specific parts, the draw and
// F⁻¹Jᵀv, are one table entry per family (reparam.go).
//
// The local step given β̃ is the model's own: mean field (UpdateUnit, with
// the global expectations set to those of a point mass at β̃) or Gibbs
// sampling (GibbsUnit: each local latent drawn from its complete
// conditional, Chen's complete conditionals with the others at their
// draws).

// SVI global steps (SVISettings.Global) and local steps (Local).
const (
	GlobalMeanField = "meanfield"
	GlobalSSMF      = "ssmf"
	GlobalSSMFA     = "ssmf-a"
	LocalMeanField  = "meanfield"
	LocalGibbs      = "gibbs"
)

// SVISampled is what SSMF and SSMF-A need of a model besides SVIGlobals:
// a way to fit the local factors given a draw of the global ones. The
// families of the global factors are SVIShape.Families.
type SVISampled[S any] interface {
	// SetMoments sets the expectations of global factor g that the local
	// updates read to those of a point mass whose sufficient statistics
	// are t (in the layout of Natural: one block per statistic of the
	// family, in its exponential-family order). SetNatural restores them.
	SetMoments(q S, g int, t []float64)
}

// GibbsUnits is what a Gibbs local step needs of a model.
type GibbsUnits[S, W any] interface {
	// GibbsUnit replaces unit d's local factors by a Gibbs sampler's
	// estimate of them: burnIn sweeps, then samples sweeps, each drawing
	// every local latent of the unit in update order from its complete
	// conditional given the current draws of the others (the closed-form
	// update with the others at point masses) and the global factors as
	// they are set. Categorical factors end as the average of their kept
	// draws; the other local factors as their closed-form update given
	// that average. The chain starts from the unit's current factors.
	GibbsUnit(q S, w W, d int, rng *rand.Rand, burnIn, samples int)
}

// DrawStats draws one value from each element (each row of k, for a vector
// family) of a factor of family with parameters params (one slice per
// parameter, in the family's order, all covering the same elements), and
// writes the draw's sufficient statistics into stats: stats[j] holds
// statistic j of the family's exponential-family order for every element
// (nil for a statistic the caller does not keep). Small Dirichlet and
// Gamma shapes are drawn in log space, so log x is finite where x would
// underflow. It panics on a family outside the table (generated code only
// calls it for families the table has).
func DrawStats(family string, k int, rng *rand.Rand, params [][]float64, stats [][]float64) {
	f := reparams[family]
	if f == nil || f.drawStats == nil {
		panic(fmt.Sprintf("vigen runtime: no sampler for family %s", family))
	}
	f.drawStats(k, rng, params, stats)
}

// DrawCategoricalRows replaces each row of k probabilities in prob by a
// draw: the one-hot indicator of a category drawn from the row, or, with
// counts (one per row; nil means 1), the fractions of a Multinomial(count,
// row) draw (the row stands for count tokens that share it, as a bag
// entry's do).
func DrawCategoricalRows(prob []float64, k int, counts []float64, rng *rand.Rand) {
	for r := 0; r*k < len(prob); r++ {
		row := prob[r*k : (r+1)*k]
		c := 1
		if counts != nil {
			c = int(counts[r] + 0.5)
		}
		drawMultinomialFractions(row, c, rng)
	}
}

// drawMultinomialFractions replaces p by n/c, n ~ Multinomial(c, p) (c ≥ 1;
// p need not be normalized), by c categorical draws. A row with no
// positive total (all zero, or NaN) becomes NaN, which the fit's check of
// its state reports, rather than a silent draw.
func drawMultinomialFractions(p []float64, c int, rng *rand.Rand) {
	if c < 1 {
		c = 1
	}
	var tot float64
	for _, x := range p {
		tot += x
	}
	if !(tot > 0) || math.IsInf(tot, 1) {
		for j := range p {
			p[j] = math.NaN()
		}
		return
	}
	var cnt [64]int
	counts := cnt[:0]
	if len(p) <= len(cnt) {
		counts = cnt[:len(p)]
	} else {
		counts = make([]int, len(p))
	}
	last := 0 // the last category of positive probability, where rounding lands
	for j, x := range p {
		if x > 0 {
			last = j
		}
	}
	for i := 0; i < c; i++ {
		u := rng.Float64() * tot
		j := 0
		for ; j < last; j++ {
			u -= p[j]
			if u < 0 {
				break
			}
		}
		counts[j]++
	}
	for j := range p {
		p[j] = float64(counts[j]) / float64(c)
	}
}
