package runtime

import (
	"fmt"
	"math"
)

// DivergedStatus begins the status of a stochastic fit (SVI, SSMF, SSMF-A,
// sharded SVI) that its divergence guard stopped or flagged: "diverged: "
// and what the ELBO did. vigen run exits with status 4 on it, as on every
// status other than converged and passes_completed.
const DivergedStatus = "diverged"

// Thresholds of the divergence guard. A stochastic fit maximizes the ELBO,
// a bound it computes exactly after each pass; its steps are noisy, so the
// ELBO need not rise every pass, but it must not fall far below the best
// it has reached and stay there. Far is more than the bound's own size
// (the ELBO worse than twice its best) or one nat per unit, whichever is
// larger: the healthy fits of the tests move by less than 1% of the ELBO
// between passes after the first (LDA, the CTM, the mixtures, the Poisson
// models), while the SSMF fits this guard was written for fell from
// −1,307 to −3,600 … −6·10⁶ and stayed there (the means had left the
// data for ±10¹…10⁴). The nat per unit covers a best ELBO near 0, where
// its own size says nothing. Three consecutive passes (DivergedPasses) let
// a fit recover from one bad step early on, when ρ_t is large; a fit whose
// last pass is that far down is flagged however long it has been there,
// since its result would be that pass's.
const (
	DivergedPasses = 3
)

// divergenceMargin is how far below best an ELBO must fall to count.
func divergenceMargin(best float64, units int) float64 {
	return math.Max(math.Abs(best), float64(units))
}

// divergenceGuard watches the ELBO of a stochastic fit pass by pass.
type divergenceGuard struct {
	units    int
	best     float64
	bestPass int
	below    int // consecutive passes more than the margin below best
}

func newDivergenceGuard(units int) *divergenceGuard {
	return &divergenceGuard{units: units, best: math.Inf(-1)}
}

// observe records the (finite) ELBO of pass; last marks the fit's last
// pass. It returns the fit's status if the fit has diverged, "" if not.
func (g *divergenceGuard) observe(pass int, elbo float64, last bool) string {
	if elbo > g.best {
		g.best, g.bestPass, g.below = elbo, pass, 0
		return ""
	}
	margin := divergenceMargin(g.best, g.units)
	if elbo >= g.best-margin {
		g.below = 0
		return ""
	}
	g.below++
	if g.below < DivergedPasses && !last {
		return ""
	}
	return fmt.Sprintf("%s: the ELBO fell from its best, %.7g after pass %d, to %.7g after pass %d, more than %.4g below it for %d pass(es) in a row; the result is that of pass %d, not a posterior to use (smaller steps, a larger -tau0 or -kappa, or -algorithm svi may fit; see README)",
		DivergedStatus, g.best, g.bestPass, elbo, pass, margin, g.below, pass)
}
