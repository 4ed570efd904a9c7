package runtime

import (
	"fmt"
	"math"
)

// The natural parameters of the conjugate families, as SVI steps them
// (FitSVI): a factor of n elements with variational parameters params (one
// slice of n per parameter, in derive.ConjugateParamNames order) has the
// natural parameter vector eta = (η_1[0..n), η_2[0..n), …), one block per
// sufficient statistic of the family, in its exponential-family order. A
// convex combination of valid natural parameters is valid, which is what
// keeps SVI's steps inside the family.

// naturalFamily converts one element between the two parameterizations.
type naturalFamily struct {
	stats int
	// to writes the natural parameters of element (p[0], p[1], …) into eta.
	to func(eta, p []float64)
	// from is its inverse.
	from func(p, eta []float64)
}

// naturalFamilies has one entry per conjugate family SVI can step.
var naturalFamilies = map[string]naturalFamily{
	// t = log x, η = α − 1
	"Dirichlet": {1, func(eta, p []float64) { eta[0] = p[0] - 1 }, func(p, eta []float64) { p[0] = eta[0] + 1 }},
	// t = (log x, x), η = (α − 1, −β)
	"Gamma": {2, func(eta, p []float64) { eta[0], eta[1] = p[0]-1, -p[1] }, func(p, eta []float64) { p[0], p[1] = eta[0]+1, -eta[1] }},
	// t = (log x, log(1−x)), η = (a − 1, b − 1)
	"Beta": {2, func(eta, p []float64) { eta[0], eta[1] = p[0]-1, p[1]-1 }, func(p, eta []float64) { p[0], p[1] = eta[0]+1, eta[1]+1 }},
	// t = (log x, 1/x), η = (−α − 1, −β)
	"InverseGamma": {2, func(eta, p []float64) { eta[0], eta[1] = -p[0]-1, -p[1] }, func(p, eta []float64) { p[0], p[1] = -eta[0]-1, -eta[1] }},
	// t = (x, x²), η = (m/s², −1/(2s²)), params (m, s)
	"Normal": {2, func(eta, p []float64) {
		prec := 1 / (p[1] * p[1])
		eta[0], eta[1] = p[0]*prec, -0.5*prec
	}, func(p, eta []float64) {
		v := -0.5 / eta[1]
		p[0], p[1] = eta[0]*v, math.Sqrt(v)
	}},
}

// NaturalFamily reports whether SVI can step a conjugate factor of family.
func NaturalFamily(family string) bool {
	_, ok := naturalFamilies[family]
	return ok
}

// ToNatural writes the natural parameters of a factor of family with
// variational parameters params into eta (len(params[0]) × the family's
// number of statistics).
func ToNatural(family string, eta []float64, params ...[]float64) {
	nf, n := naturalOf(family, eta, params)
	var p, e [2]float64
	for i := 0; i < n; i++ {
		for k := range params {
			p[k] = params[k][i]
		}
		nf.to(e[:], p[:])
		for k := 0; k < nf.stats; k++ {
			eta[k*n+i] = e[k]
		}
	}
}

// FromNatural sets the variational parameters params of a factor of
// family to those with natural parameters eta (ToNatural's inverse).
func FromNatural(family string, eta []float64, params ...[]float64) {
	nf, n := naturalOf(family, eta, params)
	var p, e [2]float64
	for i := 0; i < n; i++ {
		for k := 0; k < nf.stats; k++ {
			e[k] = eta[k*n+i]
		}
		nf.from(p[:], e[:])
		for k := range params {
			params[k][i] = p[k]
		}
	}
}

func naturalOf(family string, eta []float64, params [][]float64) (naturalFamily, int) {
	nf, ok := naturalFamilies[family]
	if !ok || len(params) == 0 || len(params) > 2 {
		panic(fmt.Sprintf("vigen runtime: no natural parameters for %s with %d parameters", family, len(params)))
	}
	n := len(params[0])
	if len(eta) != nf.stats*n {
		panic(fmt.Sprintf("vigen runtime: %d natural parameters for %d elements of %s", len(eta), n, family))
	}
	return nf, n
}
