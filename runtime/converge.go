package runtime

import (
	"fmt"
	"math"
	"strings"
)

// The defaults of the convergence rule (see Convergence). DefaultMaxIter is
// large enough for every bundled example to converge under the other
// defaults; a run that reaches it says which criterion was not yet met.
const (
	DefaultMaxIter      = 1000
	DefaultTol          = 1e-8
	DefaultMeanTol      = 1e-9
	DefaultLocalMaxIter = 100
	DefaultLocalTol     = 1e-6
)

// Convergence is the rule that ends a generated package's Fit. It is
// documented in one place, here (the README's "Convergence" section and
// each package's Options say the same):
//
// A fit has converged after an iteration in which all of these hold:
//
//  1. every unit's local factors settled: the largest relative change
//     (L2Change) of a unit's parameters in one sweep of its inner loop fell
//     below LocalTol within LocalMaxIter sweeps (a unit with one local
//     Gaussian updated by Laplace is settled after one update; with the
//     delta method it sweeps until its mean stops moving, since Σ is
//     updated after μ);
//  2. no numerical trouble was met (an indefinite Hessian, a Newton
//     optimization that did not converge, an M-step that failed);
//  3. the relative change of the ELBO from the previous iteration
//     (RelChange) is below Tol; and
//  4. the largest relative change of a global factor's parameters
//     (L2Change) is below MeanTol.
//
// Criteria 3 and 4 are skipped where one iteration is a fixed point: a
// model without global factors or params (each unit ran to its own fixed
// point), or a single global Gaussian updated by Laplace. Either tolerance
// can be switched off by setting it to +Inf (-tol inf, -meantol inf), so
// that the other alone decides. The fit stops without converging after
// MaxIter iterations; its status then starts with "max_iterations: " and
// lists the criteria not met in the last iteration.
//
// The ELBO of a fit with Laplace or delta updates can decrease from one
// iteration to the next: those updates are not ascent steps on the bound of
// Eq. 21 that is reported. Progress marks such a decrease.
type Convergence struct {
	MaxIter      int     // iterations (0: DefaultMaxIter)
	Tol          float64 // relative ELBO change (0: DefaultTol)
	MeanTol      float64 // relative change of a global factor (0: DefaultMeanTol)
	LocalMaxIter int     // sweeps of one unit's inner loop (0: DefaultLocalMaxIter)
	LocalTol     float64 // relative change that settles a unit (0: DefaultLocalTol)
}

// WithDefaults returns c with each zero or negative field replaced by its
// default. A NaN tolerance is replaced too.
func (c Convergence) WithDefaults() Convergence {
	if c.MaxIter <= 0 {
		c.MaxIter = DefaultMaxIter
	}
	if !(c.Tol > 0) {
		c.Tol = DefaultTol
	}
	if !(c.MeanTol > 0) {
		c.MeanTol = DefaultMeanTol
	}
	if c.LocalMaxIter <= 0 {
		c.LocalMaxIter = DefaultLocalMaxIter
	}
	if !(c.LocalTol > 0) {
		c.LocalTol = DefaultLocalTol
	}
	return c
}

// IterationCheck is what the convergence rule looks at after an iteration.
type IterationCheck struct {
	RelChange    float64 // RelChange of the ELBO from the previous iteration
	GlobalChange float64 // largest L2Change of a global factor's parameters
	Units        int     // number of units (0 without a plate)
	Settled      int     // units whose local factors settled
	Trouble      Trouble // numerical trouble met, besides unsettled units
	// FixedPoint says one iteration reaches the fixed point, so criteria 3
	// and 4 of Convergence do not apply.
	FixedPoint bool
}

// Unmet returns the criteria of c that s does not meet, each in a short
// form for a progress line ("elbo", "global", "7 units", "trouble") and a
// long one for a status. Both are empty when the fit has converged.
func (c Convergence) Unmet(s IterationCheck) (short, long []string) {
	if n := s.Units - s.Settled; n > 0 {
		short = append(short, fmt.Sprintf("%d units", n))
		long = append(long, fmt.Sprintf("%d of %d units unsettled after LocalMaxIter %d sweeps (LocalTol %.1g)", n, s.Units, c.LocalMaxIter, c.LocalTol))
	}
	if len(s.Trouble) > 0 {
		short = append(short, "trouble")
		long = append(long, s.Trouble.String())
	}
	if !s.FixedPoint {
		if !(s.RelChange < c.Tol) {
			short = append(short, "elbo")
			long = append(long, fmt.Sprintf("ELBO relative change %.2g ≥ Tol %.2g", s.RelChange, c.Tol))
		}
		if !(s.GlobalChange < c.MeanTol) {
			short = append(short, "global")
			long = append(long, fmt.Sprintf("global change %.2g ≥ MeanTol %.2g", s.GlobalChange, c.MeanTol))
		}
	}
	return short, long
}

// MaxIterationsStatus is the status of a fit stopped by MaxIter: it names
// the criteria (Unmet's long forms) that the last iteration did not meet.
func MaxIterationsStatus(long []string) string {
	if len(long) == 0 {
		return "max_iterations"
	}
	return "max_iterations: " + strings.Join(long, "; ")
}

// Decreased reports whether the ELBO went down from prev to cur by more
// than rounding (1e-12 relative): Laplace and delta updates are not ascent
// steps on the bound that is reported, so it can.
func Decreased(prev, cur float64) bool {
	if !isFinite(prev) || !isFinite(cur) {
		return false
	}
	return prev-cur > 1e-12*math.Max(math.Abs(prev), 1)
}
