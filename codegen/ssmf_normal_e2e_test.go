package codegen

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/golden"
)

// A mixture of four 2-D Normal components with known sd 1 and fixed
// weights, a conjugate Normal prior on each component's mean and the
// assignments local: the model on which Algorithm 1's single-draw
// gradient sent the means to ±10³ (issue 38).
const ssmfNormalMixtureVI = `model mix2d
size N, K, P
data y : real[N, P]
const w : simplex[K]
latent mu : real[K, P] conjugate
latent z : int[N] in 1..K conjugate
mu ~ Normal(0, 10)
for n in 1:N {
  z[n] ~ Categorical(w)
  y[n] ~ Normal(mu[z[n]], 1)
}
`

// ssmfNormalMixtureData draws n points, in turn from the components at
// (±4, ±4) with sd 1.
func ssmfNormalMixtureData(n int) []byte {
	rng := rand.New(rand.NewPCG(38, 3))
	centers := [][2]float64{{4, 4}, {4, -4}, {-4, 4}, {-4, -4}}
	y := make([][]float64, n)
	for i := range y {
		c := centers[i%len(centers)]
		y[i] = []float64{c[0] + rng.NormFloat64(), c[1] + rng.NormFloat64()}
	}
	data, _ := json.Marshal(map[string]any{"N": n, "K": 4, "P": 2, "w": []float64{0.25, 0.25, 0.25, 0.25}, "y": y})
	return data
}

var ssmfNormalMixtureCase = slowTest("TestEndToEndSSMFNormalMixture").driver("mix2d", ssmfNormalMixtureVI, "fit_ssmf_seeds.go").hook("hook.go", "ca_polish.go")

// SSMF on Normal globals (issue 38): for every seed 1–10 at batches of 50
// (40 passes, 240 steps) and 300 (the whole data; 200 passes, one step
// each: at 40, SSMF like mean-field SVI is still climbing on some seeds,
// ELBO −1,415 and −1,569 for SSMF, −1,454 and −2,511 for SVI, with the
// means inside the data), the fit either ends at a fixed point of
// coordinate ascent (its ELBO within 2 nats of the one CA reaches from
// it; the last steps are ρ ≈ 0.02, so the iterates sit within a fraction
// of a posterior sd of the fixed point) with component means inside the
// data's range, or it ends with the status "diverged: …" (vigen run
// exits 4 on it). Before the fix 4 of 5 seeds
// ended at full batch with means at ±10² and beyond and status
// passes_completed (exit 0), the rest of the batch-50 fits at |μ| ≈ 10⁴
// or not finite. Either way a fit that lands in a worse local optimum is
// allowed (coordinate ascent itself does on seeds 5, 9 and 10), but one
// at least 5 seeds per batch size reach the CA's best.
func TestEndToEndSSMFNormalMixture(t *testing.T) {
	golden.SlowTier(t)
	seeds := []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	in, _ := json.Marshal(map[string]any{"Data": json.RawMessage(ssmfNormalMixtureData(300)), "Seeds": seeds, "Runs": []map[string]int{{"Batch": 50, "Passes": 40}, {"Batch": 300, "Passes": 200}}})
	raw := ssmfNormalMixtureCase.run(t, in)
	var out struct {
		CA   float64
		Fits []struct {
			Seed           uint64
			Batch          int
			Status         string
			ELBO, Polished float64
			Means          []float64
		}
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("driver output: %v\n%s", err, raw)
	}
	if len(out.Fits) != 2*len(seeds) {
		t.Fatalf("%d fits, want %d", len(out.Fits), 2*len(seeds))
	}
	best := map[int]int{}
	for _, f := range out.Fits {
		t.Logf("batch %d seed %d: %s, ELBO %.3f (CA from it %.3f, CA's best %.3f)", f.Batch, f.Seed, f.Status, f.ELBO, f.Polished, out.CA)
		if strings.HasPrefix(f.Status, "diverged: ") {
			continue
		}
		if !strings.HasPrefix(f.Status, "passes_completed") {
			t.Errorf("batch %d seed %d: status %q, want passes_completed or diverged", f.Batch, f.Seed, f.Status)
			continue
		}
		if !(math.Abs(f.ELBO-f.Polished) < 2) {
			t.Errorf("batch %d seed %d: ELBO %.3f with exit 0, but coordinate ascent from the fit reaches %.3f: not near a fixed point and not flagged as diverged", f.Batch, f.Seed, f.ELBO, f.Polished)
		}
		for i, m := range f.Means {
			if !(math.Abs(m) < 8) {
				t.Errorf("batch %d seed %d: mean %d = %.4g, outside the data", f.Batch, f.Seed, i+1, m)
			}
		}
		if math.Abs(f.ELBO-out.CA) < 2 {
			best[f.Batch]++
		}
	}
	for _, b := range []int{50, 300} {
		if best[b] < 5 {
			t.Errorf("batch %d: %d of %d seeds reach the CA's best ELBO %.3f, want at least 5", b, best[b], len(seeds), out.CA)
		}
	}
}
