package runtime

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Marginal is how the elements of a conjugate factor are summarized: the
// marginal mean, standard deviation and quantiles of every element,
// computed numerically from the factor's variational parameters. derive's
// distribution table points each conjugate family's Conjugacy at its entry
// of Marginals; result summaries, vigen summary and the plots read it.
type Marginal struct {
	// Params names the parameters as the factor stores them, in the
	// order Moments and Quantile take them.
	Params []string
	// Moments sets the mean and sd of every element from p (in Params
	// order, each flattened row-major; k is the last dimension, read by
	// the vector families). An undefined moment is NaN.
	Moments func(p [][]float64, k int, mean, sd []float64)
	// Quantile sets the prob-quantile of every element (p and k as for
	// Moments); nil where a quantile means nothing (a categorical's
	// indicators).
	Quantile func(p [][]float64, k int, prob float64, out []float64)
}

// Marginals is the table of conjugate families' marginals, one entry per
// family (a family that is a special case of another, the Exponential of
// the Gamma, has its q in that family).
var Marginals = map[string]*Marginal{
	"Normal": {Params: []string{"mean", "sd"},
		Moments:  elementwise(func(p []float64) (float64, float64) { return p[0], p[1] }),
		Quantile: elementwiseQuantile(1, func(p []float64, q float64) float64 { return distuv.Normal{Mu: p[0], Sigma: p[1]}.Quantile(q) })},
	// mean a/b, sd √a/b
	"Gamma": {Params: []string{"shape", "rate"},
		Moments:  elementwise(func(p []float64) (float64, float64) { return p[0] / p[1], math.Sqrt(p[0]) / p[1] }),
		Quantile: elementwiseQuantile(0, func(p []float64, q float64) float64 { return gammaQuantile(p[0], p[1], q) })},
	// mean b/(a−1) for a > 1, sd b/((a−1)√(a−2)) for a > 2; x = 1/y with
	// y ~ Gamma(shape, rate = scale): q_x(p) = 1/q_y(1 − p)
	"InverseGamma": {Params: []string{"shape", "scale"},
		Moments: elementwise(func(p []float64) (mean, sd float64) {
			a, b := p[0], p[1]
			mean, sd = math.NaN(), math.NaN()
			if a > 1 {
				mean = b / (a - 1)
			}
			if a > 2 {
				sd = b / ((a - 1) * math.Sqrt(a-2))
			}
			return mean, sd
		}),
		Quantile: elementwiseQuantile(0, func(p []float64, q float64) float64 { return 1 / gammaQuantile(p[0], p[1], 1-q) })},
	// mean a/(a+b), variance ab/((a+b)²(a+b+1))
	"Beta": {Params: []string{"a", "b"},
		Moments: elementwise(func(p []float64) (float64, float64) {
			s := p[0] + p[1]
			return p[0] / s, math.Sqrt(p[0] * p[1] / (s * s * (s + 1)))
		}),
		Quantile: elementwiseQuantile(0, func(p []float64, q float64) float64 { return distuv.Beta{Alpha: p[0], Beta: p[1]}.Quantile(q) })},
	// mean exp(m + s²/2), variance (exp(s²) − 1)·exp(2m + s²)
	"LogNormal": {Params: []string{"meanlog", "sdlog"},
		Moments: elementwise(func(p []float64) (float64, float64) {
			m, v := p[0], p[1]*p[1]
			return math.Exp(m + v/2), math.Sqrt(math.Expm1(v) * math.Exp(2*m+v))
		}),
		Quantile: elementwiseQuantile(1, func(p []float64, q float64) float64 { return distuv.LogNormal{Mu: p[0], Sigma: p[1]}.Quantile(q) })},
	// over each row: mean α_i/α₀, variance α_i(α₀−α_i)/(α₀²(α₀+1)); each
	// element's marginal is Beta(α_i, α₀ − α_i)
	"Dirichlet": {Params: []string{"param"},
		Moments: func(p [][]float64, k int, mean, sd []float64) {
			dirichletMarginals(p[0], k, func(i int, ai, a0 float64) {
				mean[i] = ai / a0
				sd[i] = math.Sqrt(ai * (a0 - ai) / (a0 * a0 * (a0 + 1)))
			})
		},
		Quantile: func(p [][]float64, k int, prob float64, out []float64) {
			dirichletMarginals(p[0][:len(out)], k, func(i int, ai, a0 float64) {
				switch {
				case !positive(ai, a0) || !(a0 >= ai):
					out[i] = math.NaN()
				case a0 == ai: // a row of one element: 1 for certain
					out[i] = 1
				default:
					out[i] = distuv.Beta{Alpha: ai, Beta: a0 - ai}.Quantile(prob)
				}
			})
		}},
	// as a one-hot vector: mean p_i, variance p_i(1−p_i)
	"Categorical": {Params: []string{"prob"},
		Moments: func(p [][]float64, _ int, mean, sd []float64) {
			for i, v := range p[0] {
				mean[i], sd[i] = v, math.Sqrt(max(0, v*(1-v))) // v may round past 1
			}
		}},
}

// elementwise applies one element's moments to every element of a
// factor's parameters.
func elementwise(f func(p []float64) (mean, sd float64)) func([][]float64, int, []float64, []float64) {
	return func(p [][]float64, _ int, mean, sd []float64) {
		e := make([]float64, len(p))
		for i := range mean {
			for k := range p {
				e[k] = p[k][i]
			}
			mean[i], sd[i] = f(e)
		}
	}
}

// elementwiseQuantile is Marginal.Quantile for a family whose elements
// have their own parameters: q(p, prob) of each element's, NaN where one
// of the first free parameters (a location) is not finite or one of the
// others not positive and finite (gonum panics outside a family's domain).
func elementwiseQuantile(free int, q func(p []float64, prob float64) float64) func([][]float64, int, float64, []float64) {
	return func(p [][]float64, _ int, prob float64, out []float64) {
		e := make([]float64, len(p))
		for i := range out {
			for k := range p {
				e[k] = p[k][i]
			}
			if !finite(e[:free]) || !positive(e[free:]...) {
				out[i] = math.NaN()
				continue
			}
			out[i] = q(e, prob)
		}
	}
}

// positive reports whether every x is positive and finite.
func positive(x ...float64) bool {
	for _, v := range x {
		if !(v > 0) || math.IsInf(v, 1) {
			return false
		}
	}
	return true
}

// gammaQuantile is the prob-quantile of a Gamma(shape, rate). gonum's
// underflows to 0 deep in the lower tail of a small shape (0.05: the 5%
// quantile is 5.6e-27); there P(X ≤ x) ≈ (rate·x)^shape / Γ(shape+1), whose
// inverse stands in for it.
func gammaQuantile(shape, rate, prob float64) float64 {
	x := distuv.Gamma{Alpha: shape, Beta: rate}.Quantile(prob)
	if x == 0 && prob > 0 {
		lg, _ := math.Lgamma(shape + 1)
		x = math.Exp((math.Log(prob)+lg)/shape) / rate
	}
	return x
}

// dirichletMarginals calls f with each element i of the Dirichlet rows of
// length k in a, its parameter α_i and its row's α₀ = Σ α.
func dirichletMarginals(a []float64, k int, f func(i int, ai, a0 float64)) {
	for off := 0; off+k <= len(a); off += k {
		a0 := 0.0
		for _, v := range a[off : off+k] {
			a0 += v
		}
		for i := off; i < off+k; i++ {
			f(i, a[i], a0)
		}
	}
}

// FactorMarginals returns the marginal mean and sd of every element of a
// conjugate factor of family with the given shape and parameters (as a
// Result stores them, row-major), and its 5%, 50% and 95% quantiles for
// the first need elements, rounded up to whole rows (0: all; none for a
// family without quantiles): each quantile is a numerical inversion, and a
// topic model's topics have a million elements. It is an error for a
// family or parameters the table does not know.
func FactorMarginals(family string, shape []int, params map[string][]float64, need int) (mean, sd []float64, q [3][]float64, err error) {
	mg := Marginals[family]
	if mg == nil {
		return nil, nil, q, fmt.Errorf("no moments for a %s factor", family)
	}
	n := 1
	for _, s := range shape {
		n *= s
	}
	k := 1
	if len(shape) > 0 {
		k = shape[len(shape)-1]
	}
	if k == 0 || n == 0 {
		return nil, nil, q, nil // no elements
	}
	p := make([][]float64, len(mg.Params))
	for j, name := range mg.Params {
		v, ok := params[name]
		if !ok {
			return nil, nil, q, fmt.Errorf("%s factor has no parameter %q", family, name)
		}
		if len(v) != n {
			return nil, nil, q, fmt.Errorf("%s factor: parameter %q has %d values, shape %v needs %d", family, name, len(v), shape, n)
		}
		p[j] = v
	}
	mean, sd = make([]float64, n), make([]float64, n)
	mg.Moments(p, k, mean, sd)
	if mg.Quantile == nil {
		return mean, sd, q, nil
	}
	m := n
	if need > 0 {
		m = min(n, (need+k-1)/k*k)
	}
	for j := range p {
		p[j] = p[j][:m]
	}
	for j, prob := range []float64{0.05, 0.5, 0.95} {
		q[j] = make([]float64, m)
		mg.Quantile(p, k, prob, q[j])
	}
	return mean, sd, q, nil
}
