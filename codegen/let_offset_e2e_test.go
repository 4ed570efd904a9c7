package codegen

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/golden"
)

// An ARCH(1) model whose conditional variance is a let reading the lagged
// observation, y[t-1], inside a loop that starts at 2 (the checker
// panicked on an offset inside a let before).
const archLetVI = `model arch
size T
data y : real[T]
latent mu : real nonconjugate laplace
latent a0 : real<lower=0> nonconjugate laplace
latent a1 : real<lower=0, upper=1> nonconjugate laplace
mu ~ Normal(0, 10)
a0 ~ HalfNormal(1)
a1 ~ Beta(2, 2)
for t in 2:T {
  let s2 = a0 + a1 * (y[t-1] - mu)^2
  y[t] ~ Normal(mu, sqrt(s2))
}
`

// archInlineVI is archLetVI with the let's definition written where it is
// used.
var archInlineVI = strings.Replace(strings.Replace(archLetVI, "  let s2 = a0 + a1 * (y[t-1] - mu)^2\n", "", 1),
	"sqrt(s2)", "sqrt(a0 + a1 * (y[t-1] - mu)^2)", 1)

var (
	letOffsets     = slowTest("TestEndToEndLetReadsOffsets")
	archLetCase    = letOffsets.fits("arch", archLetVI, "")
	archInlineCase = letOffsets.fits("arch", archInlineVI, "")
)

// TestEndToEndLetReadsOffsets: the let form fits exactly as the same model
// with the definition written out where it is used.
func TestEndToEndLetReadsOffsets(t *testing.T) {
	golden.SlowTier(t)
	rng := rand.New(rand.NewPCG(41, 3))
	y := []float64{0}
	for len(y) < 300 {
		s2 := 0.2 + 0.5*(y[len(y)-1]-0.1)*(y[len(y)-1]-0.1)
		y = append(y, 0.1+math.Sqrt(s2)*rng.NormFloat64())
	}
	data, err := json.Marshal(map[string]any{"y": y})
	if err != nil {
		t.Fatal(err)
	}
	if archInlineVI == archLetVI {
		t.Fatal("the inline form is the let form")
	}
	type scalar struct {
		Mean, SD    float64
		Constrained *struct{ Mean, SD float64 }
	}
	type result struct {
		Method, Status string
		Converged      bool
		ELBO           []float64
		Latent         map[string]scalar
	}
	run := func(c *e2eCase) []result {
		out := c.run(t, data)
		var res []result
		if err := json.Unmarshal(out, &res); err != nil || len(res) != 2 {
			t.Fatalf("driver output: %v\n%s", err, out)
		}
		return res
	}
	let, plain := run(archLetCase), run(archInlineCase)
	for i := range let {
		if !let[i].Converged || !plain[i].Converged {
			t.Fatalf("%s: %s; inline %s", let[i].Method, let[i].Status, plain[i].Status)
		}
		for _, name := range []string{"mu", "a0", "a1"} {
			a, b := let[i].Latent[name], plain[i].Latent[name]
			if (a.Constrained == nil) != (name == "mu") || (b.Constrained == nil) != (name == "mu") {
				t.Fatalf("%s: constrained summaries of %s: %v, %v", let[i].Method, name, a.Constrained, b.Constrained)
			}
			if a.SD <= 0 || math.Abs(a.Mean-b.Mean) > 1e-12 || math.Abs(a.SD-b.SD) > 1e-12 {
				t.Errorf("%s: q(%s) = N(%.15g, %.15g²) with the let, N(%.15g, %.15g²) written out", let[i].Method, name, a.Mean, a.SD, b.Mean, b.SD)
			}
		}
		if d := math.Abs(let[i].ELBO[len(let[i].ELBO)-1] - plain[i].ELBO[len(plain[i].ELBO)-1]); d > 1e-9 {
			t.Errorf("%s: ELBO differs by %g", let[i].Method, d)
		}
	}
	c := let[0].Latent["a1"].Constrained
	t.Logf("a1: %.4f ± %.4f (simulated 0.5)", c.Mean, c.SD)
	if math.Abs(c.Mean-0.5) > 3*c.SD+0.05 {
		t.Errorf("E[a1] = %.4f ± %.4f, simulated 0.5", c.Mean, c.SD)
	}
}
