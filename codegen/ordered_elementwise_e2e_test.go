package codegen

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/golden"
)

// An ordered latent whose prior is given one element at a time.
const orderedElementwiseVI = `model ordel
size N, K
data y : real[N]
data x : real[N, K]
latent mu : ordered[K] nonconjugate laplace
for k in 1:K {
  mu[k] ~ Normal(0, 5)
}
for n in 1:N {
  y[n] ~ Normal(dot(x[n], mu), 1)
}
`

// orderedWholeVI is orderedElementwiseVI with the prior written whole.
var orderedWholeVI = strings.Replace(orderedElementwiseVI, "for k in 1:K {\n  mu[k] ~ Normal(0, 5)\n}", "mu ~ Normal(0, 5)", 1)

var (
	orderedElementwise     = slowTest("TestEndToEndOrderedElementwisePrior")
	orderedWholeCase       = orderedElementwise.fits("ordel", orderedWholeVI, "")
	orderedElementwiseCase = orderedElementwise.fits("ordel", orderedElementwiseVI, "")
)

// TestEndToEndOrderedElementwisePrior: an ordered[K] latent whose prior is
// written per element (mu[k] ~ … inside for k) gets the same log-Jacobian,
// and so the same fit, as the prior written whole (mu ~ …); derive failed
// with an index out of range on it before.
func TestEndToEndOrderedElementwisePrior(t *testing.T) {
	golden.SlowTier(t)
	rng := rand.New(rand.NewPCG(12, 9))
	const n, k = 40, 3
	truth := []float64{-1, 0.5, 2}
	x := make([][]float64, n)
	y := make([]float64, n)
	for i := range x {
		x[i] = make([]float64, k)
		for j := range x[i] {
			x[i][j] = rng.NormFloat64()
			y[i] += x[i][j] * truth[j]
		}
		y[i] += rng.NormFloat64()
	}
	data, err := json.Marshal(map[string]any{"x": x, "y": y})
	if err != nil {
		t.Fatal(err)
	}
	if orderedWholeVI == orderedElementwiseVI {
		t.Fatal("the whole-prior form is the per-element form")
	}
	run := func(c *e2eCase) []any {
		out := c.run(t, data)
		var res []map[string]any
		if err := json.Unmarshal(out, &res); err != nil || len(res) != 2 {
			t.Fatalf("driver output: %v\n%s", err, out)
		}
		var latents []any
		for _, r := range res {
			if r["status"] != "converged" {
				t.Fatalf("%v: %v", r["method"], r["status"])
			}
			latents = append(latents, r["latent"])
		}
		return latents
	}
	if n := compareJSONNumbers(t, "latent", run(orderedWholeCase), run(orderedElementwiseCase), 1e-12); n < 2*(k+k*k) {
		t.Errorf("compared %d numbers, want at least the means and covariances of both runs", n)
	}
}
