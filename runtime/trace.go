package runtime

import (
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/gonum/floats"
)

// RelChange returns |cur−prev| / max(|prev|, 1e-300), the relative change of
// a scalar such as the ELBO between iterations; +Inf if prev or cur is not
// finite.
func RelChange(prev, cur float64) float64 {
	if !isFinite(prev) || !isFinite(cur) {
		return math.Inf(1)
	}
	return math.Abs(cur-prev) / math.Max(math.Abs(prev), 1e-300)
}

// L2Change returns ‖a−b‖₂ / max(‖b‖₂, 1), the relative change of a vector
// such as E[θ] between iterations (b the previous value). The norms are
// computed with scaling, so they do not overflow. It panics if the lengths
// differ.
func L2Change(a, b []float64) float64 {
	// the scaled (overflow-safe) sums of gonum only where the plain ones
	// overflow
	b = b[:len(a)]
	d2, n2 := SqDist(a, b), SumSq(b) // vectorized, in their fixed orders
	if math.IsInf(d2, 0) || math.IsInf(n2, 0) {
		return floats.Distance(a, b, 2) / math.Max(floats.Norm(b, 2), 1)
	}
	return math.Sqrt(d2) / math.Max(math.Sqrt(n2), 1)
}

// Progress is one coordinate-ascent iteration as reported to an
// Options.Progress callback.
type Progress struct {
	Iteration  int     // 1-based iteration number
	ELBO       float64 // (approximate) evidence lower bound after the iteration
	RelChange  float64 // RelChange(previous ELBO, ELBO)
	MeanChange float64 // largest L2Change of a global factor's parameters or a param
	Units      int     // number of plate units (0 without a plate)
	Settled    int     // units whose local factors settled this iteration
	Seconds    float64 // wall time since the fit started
	// Decreased marks an ELBO below the previous one (see Decreased).
	Decreased bool
	// Pending names the convergence criteria not yet met (Convergence's
	// Unmet, short forms): "elbo", "global", "7 units", "trouble",
	// "temperature".
	Pending []string
	// Temperature, in a tempered fit (TemperSettings), is the temperature
	// of the iteration (VT's E_q[T]) and TemperedELBO the tempered
	// objective there; 0 in an untempered fit. ELBO is at T = 1.
	Temperature, TemperedELBO float64
}

// String formats p for a log line:
//
//	iter   3  elbo -812.3456789  rel 1.2e-05  dmean 3.4e-04  units 1790/1797  0.12s  decreased  pending: elbo, 7 units
//
// (the units column only for models with a plate, "decreased" only when
// the ELBO went down, and the criteria pending only while there are any).
// A tempered fit adds its temperature and tempered ELBO after the ELBO:
// "T 4.6  tempered -1023.4567890", and "T 1" once at T = 1.
func (p Progress) String() string {
	units := ""
	if p.Units > 0 {
		units = fmt.Sprintf("  units %d/%d", p.Settled, p.Units)
	}
	switch {
	case p.Temperature == 1 && p.TemperedELBO == p.ELBO:
		units = "  T 1" + units // the tempered ELBO is the ELBO
	case p.Temperature > 0:
		units = fmt.Sprintf("  T %.4g  tempered %.7f", p.Temperature, p.TemperedELBO) + units
	}
	tail := ""
	if p.Decreased {
		tail += "  decreased"
	}
	if len(p.Pending) > 0 {
		tail += "  pending: " + strings.Join(p.Pending, ", ")
	}
	return fmt.Sprintf("iter %3d  elbo %.7f  rel %.1e  dmean %.1e%s  %.2fs%s",
		p.Iteration, p.ELBO, p.RelChange, p.MeanChange, units, p.Seconds, tail)
}
