package derive

import (
	"math"
	"slices"
	"testing"
)

// ArgRange finds what a family computes from arguments written as
// numbers that float64 cannot hold: Normal(0, 1e-170)'s precision
// sd^(−2) is +Inf (the model checked and generated, and its fit ended
// not_finite, issue 38), Normal(0, 1e170)'s underflows to 0; while
// extreme arguments whose quantities stay in range, or underflow only
// where nothing positive is lost (the square of a tiny mean), pass.
func TestArgRange(t *testing.T) {
	all := func(n int) []bool {
		k := make([]bool, n)
		for i := range k {
			k[i] = true
		}
		return k
	}
	for _, c := range []struct {
		dist   string
		vals   []float64
		known  []bool
		want   string // the quantity; "" for none
		value  float64
		params []int
	}{
		{"Normal", []float64{0, 1e-170}, nil, "sd^(-2)", math.Inf(1), []int{1}},
		{"Normal", []float64{0, 1e170}, nil, "sd^(-2)", 0, []int{1}},
		// the mean is an unknown (a latent): the sd alone
		{"Normal", []float64{0, 1e-170}, []bool{false, true}, "sd^(-2)", math.Inf(1), []int{1}},
		// the mean's coefficient mean/sd² overflows once multiplied out
		{"Normal", []float64{1e200, 1e-100}, nil, "(-0.5)·mean·mean·sd^(-2)", math.Inf(-1), []int{0, 1}},
		{"LogNormal", []float64{0, 1e-170}, nil, "sdlog^(-2)", math.Inf(1), []int{1}},
		{"Uniform", []float64{1, 1}, nil, "log(−lower + upper)", math.Inf(-1), []int{0, 1}},
		{"Normal", []float64{0, 1e-150}, nil, "", 0, nil},  // precision 1e300
		{"Normal", []float64{0, 1e160}, nil, "", 0, nil},   // precision 1e-320, subnormal but positive
		{"Normal", []float64{1e-200, 1}, nil, "", 0, nil},  // mean² underflows: the mean is no positive quantity
		{"Gamma", []float64{1e-320, 1}, nil, "", 0, nil},   // lgamma(1e-320) = 736.8
		{"Exponential", []float64{1e308}, nil, "", 0, nil}, // log 1e308 = 709.2
		{"Poisson", []float64{1e-300}, nil, "", 0, nil},    // log 1e-300 = −690.8
		{"Bernoulli", []float64{1e-300}, nil, "", 0, nil},  // log(1 − p) = 0
		{"StudentT", []float64{1, 0, 1e-170}, nil, "scale^(-2)", math.Inf(1), []int{2}},
	} {
		known := c.known
		if known == nil {
			known = all(len(c.vals))
		}
		q := ArgRange(c.dist, c.vals, known)
		if c.want == "" {
			if q != nil {
				t.Errorf("%s%v: %s = %v, want no quantity out of range", c.dist, c.vals, q.Quantity, q.Value)
			}
			continue
		}
		if q == nil {
			t.Errorf("%s%v: no quantity out of range, want %s = %v", c.dist, c.vals, c.want, c.value)
			continue
		}
		if q.Quantity != c.want || !(q.Value == c.value) || !slices.Equal(q.Params, c.params) || q.Where == "" {
			t.Errorf("%s%v: %s = %v (arguments %v, %s); want %s = %v (arguments %v)", c.dist, c.vals, q.Quantity, q.Value, q.Params, q.Where, c.want, c.value, c.params)
		}
	}
}

// Every elementwise family of scalars is checked (its log density builds
// without a model) and finds nothing out of range at ordinary arguments.
func TestArgRangeOrdinaryArguments(t *testing.T) {
	n := 0
	for name, d := range Dists {
		if d.Family == nil || !d.Elementwise || d.Variadic {
			continue
		}
		scalar := d.Value.Shape == ""
		for _, p := range d.Params {
			scalar = scalar && p.Shape == ""
		}
		if !scalar {
			continue
		}
		args := make([]Val, len(d.Params))
		vals, known := make([]float64, len(d.Params)), make([]bool, len(d.Params))
		for k, p := range d.Params {
			x := T(p.Name)
			args[k] = Val{At: func([]Expr) Expr { return x }}
			vals[k], known[k] = 0.3+0.2*float64(k), true
		}
		xt := T(d.Value.Name)
		if _, ok := argForms(d, Val{At: func([]Expr) Expr { return xt }}, args); !ok {
			t.Errorf("%s: its quantities cannot be built without a model", name)
			continue
		}
		n++
		if q := ArgRange(name, vals, known); q != nil {
			t.Errorf("%s%v: %s = %v, out of range", name, vals, q.Quantity, q.Value)
		}
	}
	if n < 15 {
		t.Errorf("only %d families checked", n)
	}
}
