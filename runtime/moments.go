package runtime

import (
	"fmt"
	"math"
)

// factorMoments gives, per family of a conjugate factor, the marginal mean
// and standard deviation of every element from the factor's variational
// parameters (flattened row-major; k is the last dimension, the category
// or simplex dimension, used by the vector families). An undefined
// moment (an InverseGamma mean with shape ≤ 1) is NaN.
var factorMoments = map[string]struct {
	params  []string // the parameters the family's factor carries
	moments func(p map[string][]float64, k int, mean, sd []float64)
}{
	// Dirichlet(α) over each row: α_i/α₀ and α_i(α₀−α_i)/(α₀²(α₀+1)).
	"Dirichlet": {[]string{"param"}, func(p map[string][]float64, k int, mean, sd []float64) {
		a := p["param"]
		for off := 0; off+k <= len(a); off += k {
			a0 := 0.0
			for _, v := range a[off : off+k] {
				a0 += v
			}
			for i := off; i < off+k; i++ {
				mean[i] = a[i] / a0
				sd[i] = math.Sqrt(a[i] * (a0 - a[i]) / (a0 * a0 * (a0 + 1)))
			}
		}
	}},
	// Categorical(p) as a one-hot vector: p_i and p_i(1−p_i).
	"Categorical": {[]string{"prob"}, func(p map[string][]float64, _ int, mean, sd []float64) {
		for i, v := range p["prob"] {
			mean[i], sd[i] = v, math.Sqrt(v*(1-v))
		}
	}},
	// Gamma(shape a, rate b): a/b and a/b².
	"Gamma": {[]string{"shape", "rate"}, func(p map[string][]float64, _ int, mean, sd []float64) {
		a, b := p["shape"], p["rate"]
		for i := range a {
			mean[i], sd[i] = a[i]/b[i], math.Sqrt(a[i])/b[i]
		}
	}},
	// Beta(a, b): a/(a+b) and ab/((a+b)²(a+b+1)).
	"Beta": {[]string{"a", "b"}, func(p map[string][]float64, _ int, mean, sd []float64) {
		a, b := p["a"], p["b"]
		for i := range a {
			s := a[i] + b[i]
			mean[i], sd[i] = a[i]/s, math.Sqrt(a[i]*b[i]/(s*s*(s+1)))
		}
	}},
	// InverseGamma(shape a, scale b): b/(a−1) for a > 1 and
	// b²/((a−1)²(a−2)) for a > 2.
	"InverseGamma": {[]string{"shape", "scale"}, func(p map[string][]float64, _ int, mean, sd []float64) {
		a, b := p["shape"], p["scale"]
		for i := range a {
			mean[i], sd[i] = math.NaN(), math.NaN()
			if a[i] > 1 {
				mean[i] = b[i] / (a[i] - 1)
			}
			if a[i] > 2 {
				sd[i] = b[i] / ((a[i] - 1) * math.Sqrt(a[i]-2))
			}
		}
	}},
	// Normal(mean, sd).
	"Normal": {[]string{"mean", "sd"}, func(p map[string][]float64, _ int, mean, sd []float64) {
		copy(mean, p["mean"])
		copy(sd, p["sd"])
	}},
}

// Moments returns the marginal mean and standard deviation of every element
// of the latent (row-major, as in Params), or an error for a family or
// parameters it does not know.
func (f *Factor) Moments() (mean, sd []float64, err error) {
	fn, ok := factorMoments[f.Family]
	if !ok {
		return nil, nil, fmt.Errorf("no moments for a %s factor", f.Family)
	}
	n := 1
	for _, s := range f.Shape {
		n *= s
	}
	k := 1
	if len(f.Shape) > 0 {
		k = f.Shape[len(f.Shape)-1]
	}
	if k == 0 {
		return nil, nil, fmt.Errorf("%s factor of shape %v is empty", f.Family, f.Shape)
	}
	for _, name := range fn.params {
		v, ok := f.Params[name]
		if !ok {
			return nil, nil, fmt.Errorf("%s factor has no parameter %q", f.Family, name)
		}
		if len(v) != n {
			return nil, nil, fmt.Errorf("%s factor: parameter %q has %d values, shape %v needs %d", f.Family, name, len(v), f.Shape, n)
		}
	}
	mean, sd = make([]float64, n), make([]float64, n)
	fn.moments(f.Params, k, mean, sd)
	return mean, sd, nil
}

// ExpTo sets dst[i] = exp(src[i]).
func ExpTo(dst, src []float64) {
	for i, x := range src {
		dst[i] = math.Exp(x)
	}
}
