package runtime

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
)

// Factor is a fitted conjugate factor q(z) as it appears in a Result: its
// family, the shape of the latent (for categorical latents the last
// dimension is the category), and each variational parameter flattened in
// row-major order. For latents with one value per bag entry, rows follow
// the documents' (term, count) entries in order.
type Factor struct {
	Family string               `json:"family"`
	Shape  []int                `json:"shape"`
	Params map[string][]float64 `json:"params"`
}

// NewFactor copies params (name, values, name, values, ...) into a Factor.
func NewFactor(family string, shape []int, params ...any) *Factor {
	f := &Factor{Family: family, Shape: append([]int(nil), shape...), Params: map[string][]float64{}}
	for k := 0; k+1 < len(params); k += 2 {
		f.Params[params[k].(string)] = append([]float64(nil), params[k+1].([]float64)...)
	}
	return f
}

// Param returns the parameter name of a starting factor, checking that it
// has n values; what names the latent for errors.
func (f *Factor) Param(what, name string, n int) ([]float64, error) {
	if f == nil {
		return nil, fmt.Errorf("start: latent %q is missing", what)
	}
	v, ok := f.Params[name]
	if !ok {
		return nil, fmt.Errorf("start: latent %q has no parameter %q", what, name)
	}
	if len(v) != n {
		return nil, fmt.Errorf("start: latent %q parameter %q has %d values, want %d", what, name, len(v), n)
	}
	return v, nil
}

// Flat returns the mean and flat covariance of a starting Gaussian, checking
// that it has dimension n.
func (g *Gaussian) Flat(what string, n int) (mean, cov []float64, err error) {
	if g == nil {
		return nil, nil, fmt.Errorf("start: latent %q is missing", what)
	}
	if len(g.Mean) != n || len(g.Cov) != n {
		return nil, nil, fmt.Errorf("start: latent %q has dimension %d, want %d", what, len(g.Mean), n)
	}
	cov = make([]float64, 0, n*n)
	for i, row := range g.Cov {
		if len(row) != n {
			return nil, nil, fmt.Errorf("start: latent %q covariance row %d has %d entries, want %d", what, i+1, len(row), n)
		}
		cov = append(cov, row...)
	}
	return append([]float64(nil), g.Mean...), cov, nil
}

// SoftmaxRows replaces each row of length k of x (log-probabilities up to a
// constant per row) by its normalized exponential, stably.
func SoftmaxRows(x []float64, k int) {
	for off := 0; off+k <= len(x); off += k {
		row := x[off : off+k]
		mx := math.Inf(-1)
		for _, v := range row {
			mx = math.Max(mx, v)
		}
		s := 0.0
		for i, v := range row {
			row[i] = math.Exp(v - mx)
			s += row[i]
		}
		for i := range row {
			row[i] /= s
		}
	}
}

// NormalizeRows divides each row of length k of x (nonnegative weights)
// by its sum. It reports false, leaving x partly normalized, if a row's sum
// is zero or not finite (the weights under- or overflowed).
//
// Rows of 16 or more are summed and scaled by SumVec and ScaleVec
// (vectorized; their fixed order of additions, not left to right).
func NormalizeRows(x []float64, k int) bool {
	for off := 0; off+k <= len(x); off += k {
		row := x[off : off+k]
		var s float64
		if k >= 16 {
			s = SumVec(row)
		} else {
			for _, v := range row {
				s += v
			}
		}
		if !(s > 0) || math.IsInf(s, 0) {
			return false
		}
		inv := 1 / s
		if k >= 16 {
			ScaleVec(row, inv)
			continue
		}
		for i := range row {
			row[i] *= inv
		}
	}
	return true
}

// Fill sets every element of x to v.
func Fill(x []float64, v float64) {
	for i := range x {
		x[i] = v
	}
}

// Grow returns (*buf)[:n], reallocating *buf if it is too short.
func Grow(buf *[]float64, n int) []float64 {
	if cap(*buf) < n {
		*buf = make([]float64, n)
	}
	return (*buf)[:n]
}

// NewRand returns the generator a fit draws its random initial values from.
func NewRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
}

// InitPositive fills x with draws from the exponential distribution with
// mean 1: positive values spread widely enough to break the symmetry
// between the components of a conjugate factor (LDA's topics) without
// favouring any (lda-c starts its topics from uniform noise similarly).
func InitPositive(r *rand.Rand, x []float64) {
	for i := range x {
		x[i] = r.ExpFloat64()
	}
}

// InitNormal fills x with standard normal draws: the starting means of
// the factors of a two-plate model's second factor (PPCA's loadings),
// which must not all be 0, since zero means for both factors are a fixed
// point of their alternating updates (a saddle of the ELBO).
func InitNormal(r *rand.Rand, x []float64) {
	for i := range x {
		x[i] = r.NormFloat64()
	}
}

// Trouble counts the numerical problems of one iteration by kind, such as
// "theta: indefinite", so a status can say how often each happened.
type Trouble map[string]int

// Add records one occurrence of what.
func (t Trouble) Add(what string) { t[what]++ }

// String lists the problems, sorted, with counts above one:
// "theta: indefinite (3 units); z: ...".
func (t Trouble) String() string {
	var keys []string
	for k := range t {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k
		if t[k] > 1 {
			parts[i] += fmt.Sprintf(" (%d units)", t[k])
		}
	}
	return strings.Join(parts, "; ")
}
