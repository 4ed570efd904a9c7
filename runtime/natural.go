package runtime

import "fmt"

// The natural parameters of the conjugate families, as SVI steps them
// (FitSVI): a factor of n elements with variational parameters params (one
// slice of n per parameter, in the family's parameter order) has the
// natural parameter vector eta = (η_1[0..n), η_2[0..n), …), one block per
// sufficient statistic of the family, in its exponential-family order. A
// convex combination of valid natural parameters is valid, which is what
// keeps SVI's steps inside the family. The conversion of one element is
// the family's, printed into the generated package from its entry in the
// distribution table.

// maxNatural bounds the parameters and statistics of one element.
const maxNatural = 4

// ToNatural writes the natural parameters of a factor with variational
// parameters params into eta (len(params[0]) × the number of statistics);
// to writes those of one element (p[0], p[1], …) into e.
func ToNatural(eta []float64, to func(e, p []float64), params ...[]float64) {
	stats, n := naturalShape(eta, params)
	var p, e [maxNatural]float64
	for i := 0; i < n; i++ {
		for k := range params {
			p[k] = params[k][i]
		}
		to(e[:stats], p[:len(params)])
		for k := 0; k < stats; k++ {
			eta[k*n+i] = e[k]
		}
	}
}

// FromNatural sets the variational parameters params of a factor to those
// with natural parameters eta (ToNatural's inverse); from converts one
// element.
func FromNatural(eta []float64, from func(p, e []float64), params ...[]float64) {
	stats, n := naturalShape(eta, params)
	var p, e [maxNatural]float64
	for i := 0; i < n; i++ {
		for k := 0; k < stats; k++ {
			e[k] = eta[k*n+i]
		}
		from(p[:len(params)], e[:stats])
		for k := range params {
			params[k][i] = p[k]
		}
	}
}

func naturalShape(eta []float64, params [][]float64) (stats, n int) {
	if len(params) == 0 || len(params) > maxNatural {
		panic(fmt.Sprintf("vigen runtime: natural parameters of a factor with %d parameters", len(params)))
	}
	n = len(params[0])
	if n == 0 {
		return 0, 0
	}
	if len(eta)%n != 0 || len(eta)/n > maxNatural {
		panic(fmt.Sprintf("vigen runtime: %d natural parameters for %d elements", len(eta), n))
	}
	return len(eta) / n, n
}
