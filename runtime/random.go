package runtime

import (
	"math"
	"math/rand/v2"
)

// RandGamma draws from Gamma(shape, 1) (Marsaglia and Tsang 2000; for
// shape < 1, Gamma(shape + 1)·U^(1/shape)). Divide by the rate for
// Gamma(shape, rate); normalize shape-α draws for a Dirichlet(α). Small
// shapes underflow to 0 (Gamma(0.01) draws are often below 1e-300).
func RandGamma(rng *rand.Rand, shape float64) float64 {
	if shape < 1 {
		return RandGamma(rng, shape+1) * math.Pow(rng.Float64(), 1/shape)
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		if math.Log(rng.Float64()) < 0.5*x*x+d-d*v+d*math.Log(v) {
			return d * v
		}
	}
}
