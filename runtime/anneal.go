package runtime

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Anneal is a temperature schedule of annealed variational inference
// (AVI; Mandt et al. 2016, §2.2 and Algorithm 1, line 7): the likelihood
// terms, and with them the local natural parameters, are divided by a
// temperature T that falls from T0 to 1 over Length steps (coordinate-ascent
// iterations, or passes over the data for SVI) and stays at 1 after it; the
// prior is not tempered (§2: "by only annealing the likelihood and leaving
// the prior fixed"). At T = 1
// the model is the original one.
type Anneal struct {
	// T0 is the starting temperature, at least 1.
	T0 float64 `json:"t0,omitempty"`
	// Length is the number of steps over which T reaches 1 (> 0).
	Length float64 `json:"length,omitempty"`
	// Geometric selects T(t) = T0^(1 − t/Length); otherwise the schedule
	// is linear, T(t) = T0 − (T0 − 1)·t/Length, as in the paper's
	// experiments.
	Geometric bool `json:"geometric,omitempty"`
}

// At returns the temperature after t steps: T0 at t = 0, exactly 1 from
// t = Length on, non-increasing in between.
func (a Anneal) At(t float64) float64 {
	if t >= a.Length || a.T0 <= 1 {
		return 1
	}
	if t <= 0 {
		return a.T0
	}
	r := t / a.Length
	if a.Geometric {
		return math.Max(1, math.Pow(a.T0, 1-r))
	}
	return math.Max(1, a.T0-(a.T0-1)*r)
}

// String writes a in the form ParseAnneal reads.
func (a Anneal) String() string {
	kind := "linear"
	if a.Geometric {
		kind = "geometric"
	}
	return fmt.Sprintf("%s:%s:%s", kind, strconv.FormatFloat(a.T0, 'g', -1, 64), strconv.FormatFloat(a.Length, 'g', -1, 64))
}

// ParseAnneal reads a schedule written KIND:T0:LENGTH, with KIND linear or
// geometric (e.g. "linear:10:100": from T = 10 to T = 1 over 100 steps), as
// `vigen run -anneal` takes it.
func ParseAnneal(s string) (Anneal, error) {
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return Anneal{}, fmt.Errorf("anneal schedule %q: want KIND:T0:LENGTH, as in linear:10:100", s)
	}
	var a Anneal
	switch parts[0] {
	case "linear":
	case "geometric":
		a.Geometric = true
	default:
		return Anneal{}, fmt.Errorf("anneal schedule %q: kind %q is not linear or geometric", s, parts[0])
	}
	t0, err := strconv.ParseFloat(parts[1], 64)
	if err != nil || !(t0 >= 1) || math.IsInf(t0, 0) {
		return Anneal{}, fmt.Errorf("anneal schedule %q: starting temperature %q must be a number ≥ 1", s, parts[1])
	}
	l, err := strconv.ParseFloat(parts[2], 64)
	if err != nil || !(l > 0) || math.IsInf(l, 0) {
		return Anneal{}, fmt.Errorf("anneal schedule %q: length %q must be a positive number of steps", s, parts[2])
	}
	a.T0, a.Length = t0, l
	return a, nil
}
