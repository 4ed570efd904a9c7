package runtime

import (
	"strings"
	"testing"
)

// The divergence guard passes a noisy but healthy trace, a fit that
// recovers from a bad pass or two, and flags a fit whose ELBO stays far
// below its best for DivergedPasses passes, or ends there.
func TestDivergenceGuard(t *testing.T) {
	const units = 300
	for _, c := range []struct {
		name  string
		trace []float64
		at    int // the pass it is flagged at (1-based); 0: never
	}{
		{"rising", []float64{-9000, -3000, -1500, -1320, -1308, -1307.5, -1307.2}, 0},
		{"noisy", []float64{-1400, -1310, -1312, -1309, -1315, -1308, -1311}, 0},
		// SSMF's first steps: one bad pass, then back
		{"recovers", []float64{-7179, -137668, -4644, -2883, -2839}, 0},
		{"recovers after two", []float64{-1500, -1320, -5000, -4000, -1330, -1310}, 0},
		// the SSMF: near the optimum, then gone
		{"stays down", []float64{-3000, -1400, -1320, -14263, -20000, -15000, -14000}, 6},
		{"ends down", []float64{-3000, -1400, -1320, -1318, -14263}, 5},
		// a best near 0: one nat per unit is the margin
		{"near zero", []float64{-50, -10, -5, -200, -250, -300}, 0},
		{"near zero, gone", []float64{-50, -10, -5, -400, -350, -500}, 6},
	} {
		g := newDivergenceGuard(units)
		at := 0
		for i, e := range c.trace {
			if s := g.observe(i+1, e, i == len(c.trace)-1); s != "" {
				if !strings.HasPrefix(s, DivergedStatus+": ") {
					t.Errorf("%s: status %q", c.name, s)
				}
				at = i + 1
				break
			}
		}
		if at != c.at {
			t.Errorf("%s: flagged at pass %d, want %d", c.name, at, c.at)
		}
	}
}
