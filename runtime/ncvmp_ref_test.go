package runtime

import (
	"math"
	"sync"

	"gonum.org/v1/gonum/integrate/quad"
)

// Reference integrals for the NCVMP tests: a 2000-point Gauss–Legendre rule
// over m ± 14 sd. The integrands are analytic in a strip of half-width π
// about the real line (log σ has its poles at iπ(2k+1)), so the rule's error
// is far below 1e-14 for every v ≤ 100 used here, and the tails beyond 14 sd
// weigh less than 1e-40.

const refLegendrePoints = 2000

var (
	refOnce    sync.Once
	refX, refW []float64
)

func refRule() ([]float64, []float64) {
	refOnce.Do(func() {
		refX, refW = make([]float64, refLegendrePoints), make([]float64, refLegendrePoints)
		quad.Legendre{}.FixedLocations(refX, refW, -1, 1)
	})
	return refX, refW
}

// refIntegrate returns ∫ f(x) N(x; m, v) dx over m ± 14 sd by the reference rule.
func refIntegrate(f func(x float64) float64, m, v float64) float64 {
	x, w := refRule()
	sd := math.Sqrt(v)
	h := 14 * sd
	var s float64
	for i, t := range x {
		z := t * 14
		s += w[i] * f(m+h*t) * math.Exp(-z*z/2)
	}
	return s * h / math.Sqrt(2*math.Pi*v)
}

// refExpect returns S, ∂S/∂m = E[g'], ∂S/∂v = ½E[g”] by the reference rule.
func refExpect(g LogFactor1, m, v float64) (S, dm, dv float64) {
	S = refIntegrate(func(x float64) float64 { f, _, _ := g(x); return f }, m, v)
	dm = refIntegrate(func(x float64) float64 { _, f, _ := g(x); return f }, m, v)
	dv = refIntegrate(func(x float64) float64 { _, _, f := g(x); return f }, m, v) / 2
	return
}

func logisticFactor(s float64) LogFactor1 {
	return func(x float64) (float64, float64, float64) { return LogisticLogFactor(s, x) }
}
