package runtime

import (
	"math"
	"math/rand/v2"
	"testing"
)

// RandGamma's draws have the mean and variance of Gamma(shape, 1) (both
// equal to shape) and E[log x] = ψ(shape), within 5 standard errors.
func TestRandGamma(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 200000
	for _, a := range []float64{0.3, 1, 2.5, 40} {
		var s, s2, l, l2 float64
		for range n {
			x := RandGamma(rng, a)
			s += x
			s2 += x * x
			lx := math.Log(x)
			l += lx
			l2 += lx * lx
		}
		mean, vr := s/n, s2/n-(s/n)*(s/n)
		if se := math.Sqrt(a / n); math.Abs(mean-a) > 5*se {
			t.Errorf("shape %g: mean %.5f, want %g ± %.5f", a, mean, a, se)
		}
		// the variance's standard error is √((m4 − σ⁴)/n), m4 = 3a² + 6a
		if se := math.Sqrt((3*a*a + 6*a - a*a) / n); math.Abs(vr-a) > 5*se {
			t.Errorf("shape %g: variance %.5f, want %g ± %.5f", a, vr, a, se)
		}
		lm := l / n
		if se := math.Sqrt((l2/n - lm*lm) / n); math.Abs(lm-Digamma(a)) > 5*se {
			t.Errorf("shape %g: E[log x] %.5f, want ψ = %.5f ± %.5f", a, lm, Digamma(a), se)
		}
	}
}
