package codegen

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// flatLogitVI is a logistic regression whose coefficients have an improper
// flat prior: the data alone must make the posterior proper.
const flatLogitVI = `model flatlogit
size N, P
data x : real[N, P]
data y : int[N] in 0..1
latent theta : real[P] nonconjugate laplace
for n in 1:N {
  y[n] ~ Bernoulli(logistic(dot(x[n], theta)))
}
`

var flatLogitCase = fastTest("TestEndToEndImproperPosteriorIsNamed").driver("flatlogit", flatLogitVI, "fit_each_laplace.go")

// With a flat prior, separable, quasi-separable, constant-column and
// duplicated-column data make the posterior improper; Laplace used to
// report "converged" with sds of 10⁶ and more (issue 38). Each must end
// with status improper_posterior, naming the cause, and the well-posed
// control must still converge.
func TestEndToEndImproperPosteriorIsNamed(t *testing.T) {
	rng := rand.New(rand.NewPCG(38, 1))
	const n = 60
	z, y := make([]float64, n), make([]int, n)
	for i := range z {
		z[i] = rng.NormFloat64()
		if rng.Float64() < 1/(1+math.Exp(-(0.5+z[i]))) {
			y[i] = 1
		}
	}
	rows := func(f func(i int) []float64) [][]float64 {
		x := make([][]float64, n)
		for i := range x {
			x[i] = f(i)
		}
		return x
	}
	sep := make([]int, n) // y = [z > 0]: separated by z's coefficient
	quasi := make([]int, n)
	for i := range z {
		if z[i] > 0 {
			sep[i], quasi[i] = 1, 1
		}
	}
	zq := append([]float64(nil), z...)
	zq[0], zq[1], quasi[0], quasi[1] = 0, 0, 0, 1 // two ties at the boundary
	cases := []struct {
		name string
		x    [][]float64
		y    []int
		want string // the status's start; "converged" for the control
	}{
		{"separable", rows(func(i int) []float64 { return []float64{1, z[i]} }), sep,
			"improper_posterior: theta: the log density does not fall along"},
		{"quasi-separable", rows(func(i int) []float64 { return []float64{1, zq[i]} }), quasi,
			"improper_posterior: theta: the log density does not fall along"},
		{"all-ones column", rows(func(i int) []float64 { return []float64{1, 1, z[i]} }), y,
			"improper_posterior: theta is not identified: the log density changes by less than 1 along ±(0.71·theta[1] − 0.71·theta[2])"},
		{"duplicated column", rows(func(i int) []float64 { return []float64{1, z[i], z[i]} }), y,
			"improper_posterior: theta is not identified: the log density changes by less than 1 along ±(0.71·theta[2] − 0.71·theta[3])"},
		{"control", rows(func(i int) []float64 { return []float64{1, z[i]} }), y, "converged"},
	}
	var sets []map[string]any
	for _, c := range cases {
		sets = append(sets, map[string]any{"N": n, "P": len(c.x[0]), "x": c.x, "y": c.y})
	}
	data, _ := json.Marshal(sets)
	var res []resultJSON
	if err := json.Unmarshal(flatLogitCase.run(t, data), &res); err != nil || len(res) != len(cases) {
		t.Fatalf("driver output: %v (%d results)", err, len(res))
	}
	for i, c := range cases {
		r := res[i]
		t.Logf("%s: %s", c.name, r.Status)
		if !strings.HasPrefix(r.Status, c.want) || r.Converged != (c.want == "converged") {
			t.Errorf("%s: converged %v, status %q;\n want status %q…", c.name, r.Converged, r.Status, c.want)
		}
	}
	// the control's q is the classical Laplace approximation: a sd of
	// order 1/√N, not 10⁶
	for _, v := range res[len(res)-1].Latent["theta"].Cov {
		for _, c := range v {
			if math.Abs(c) > 1 {
				t.Errorf("control: covariance entry %v", c)
			}
		}
	}
}
