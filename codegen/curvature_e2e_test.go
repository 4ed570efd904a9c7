package codegen

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/golden"
)

// A Poisson regression under a hierarchical scale, every latent by the
// delta method: both objectives have nonzero fourth derivatives.
const curvatureVI = `model curv
size N, P
data x : real[N, P]
data y : int[N]
latent beta : real[P] nonconjugate delta
latent sigma : real<lower=0> nonconjugate delta
sigma ~ HalfNormal(1)
beta ~ Normal(0, sigma)
for n in 1:N {
  y[n] ~ Poisson(exp(dot(x[n], beta)))
}
`

var (
	curvature = slowTest("TestDeltaCurvatureStandIn")
	// curvatureCases are its fits with the full Hessian and with ∇²f
	// standing in (maxDeltaCurvature 0).
	curvatureCases = [2]*e2eCase{
		curvature.fits("curv", curvatureVI, ""),
		curvature.fits("curv", curvatureVI, "").around(func() func() {
			v := maxDeltaCurvature
			maxDeltaCurvature = 0
			return func() { maxDeltaCurvature = v }
		}),
	}
)

// TestDeltaCurvatureStandIn: where the delta objective's Hessian (fourth
// derivatives of f) would be too large to print, ∇²f stands in for it as
// Newton's curvature. The gradient is still exact, so the fit must reach
// the same fixed point as with the full Hessian; the generated kernels
// must say which terms use the stand-in.
func TestDeltaCurvatureStandIn(t *testing.T) {
	golden.SlowTier(t)
	rng := rand.New(rand.NewPCG(31, 7))
	const n, p = 60, 3
	x := make([][]float64, n)
	y := make([]int, n)
	for i := range x {
		x[i] = []float64{1, rng.NormFloat64(), rng.NormFloat64()}
		lam := math.Exp(0.5 + 0.3*x[i][1] - 0.4*x[i][2])
		// Poisson by inversion
		k, pk, u := 0, math.Exp(-lam), rng.Float64()
		for c := pk; u > c; c += pk {
			k++
			pk *= lam / float64(k)
		}
		y[i] = k
	}
	data, err := json.Marshal(map[string]any{"x": x, "y": y})
	if err != nil {
		t.Fatal(err)
	}
	run := func(c *e2eCase) map[string]any {
		out := c.run(t, data)
		var res []map[string]any
		if err := json.Unmarshal(out, &res); err != nil || len(res) != 2 {
			t.Fatalf("driver output: %v\n%s", err, out)
		}
		r := res[1] // the delta run
		if r["status"] != "converged" || !strings.HasPrefix(r["method"].(string), "delta") {
			t.Fatalf("%v: %v", r["method"], r["status"])
		}
		return r["latent"].(map[string]any)
	}
	full := run(curvatureCases[0])
	defer func(v float64) { maxDeltaCurvature = v }(maxDeltaCurvature)
	maxDeltaCurvature = 0
	if !strings.Contains(generatedSource(t, "curv", curvatureVI), "add ∇²f alone") {
		t.Errorf("with maxDeltaCurvature 0 no delta kernel says its Hessian is ∇²f alone")
	}
	standIn := run(curvatureCases[1])
	if n := compareJSONNumbers(t, "latent", full, standIn, 1e-7); n < 10 {
		t.Errorf("compared %d numbers, want the means, covariances and constrained summaries of beta and sigma", n)
	}
}

// compareJSONNumbers reports every number of a (decoded JSON) that differs
// from b's by more than tol, and returns how many numbers it compared.
func compareJSONNumbers(t *testing.T, path string, a, b any, tol float64) int {
	t.Helper()
	switch a := a.(type) {
	case float64:
		bv, ok := b.(float64)
		if !ok || math.Abs(a-bv) > tol*math.Max(1, math.Abs(a)) {
			t.Errorf("%s: %v, then %v", path, a, b)
		}
		return 1
	case []any:
		bs, ok := b.([]any)
		if !ok || len(bs) != len(a) {
			t.Errorf("%s: %v, then %v", path, a, b)
			return 0
		}
		n := 0
		for i := range a {
			n += compareJSONNumbers(t, fmt.Sprintf("%s[%d]", path, i), a[i], bs[i], tol)
		}
		return n
	case map[string]any:
		bm, ok := b.(map[string]any)
		if !ok || len(bm) != len(a) {
			t.Errorf("%s: %v, then %v", path, a, b)
			return 0
		}
		n := 0
		for k := range a {
			n += compareJSONNumbers(t, path+"."+k, a[k], bm[k], tol)
		}
		return n
	}
	if a != b {
		t.Errorf("%s: %v, then %v", path, a, b)
	}
	return 0
}
