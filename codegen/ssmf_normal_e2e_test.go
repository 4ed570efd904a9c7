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

// ssmfPolishHook runs coordinate ascent from a result: the fixed point of
// the basin the result is in, and its ELBO.
const ssmfPolishHook = `package PKG

import "github.com/vigen-go/vigen/runtime"

// HookPolish starts from r's factors and sweeps coordinate ascent (every
// unit, then the globals) sweeps times, returning the ELBO it ends at.
func HookPolish(m *Model, r *Result, sweeps int) float64 {
	opts := Options{Seed: 1}
	q, err := m.newState(opts)
	if err != nil {
		panic(err)
	}
	if err := q.start(m, r); err != nil {
		panic(err)
	}
	a, w := &caModel{m: m, opts: opts}, &scratch{trouble: runtime.Trouble{}}
	units := a.Shape(q).Units
	for range sweeps {
		a.UpdateGlobals(q, w)
		for d := 0; d < units; d++ {
			a.UpdateUnit(q, w, d)
		}
	}
	return a.ELBO(q, 1, make([]float64, units))
}
`

// ssmfSeedsDriver fits the data by coordinate ascent, then by SSMF for
// every seed and batch size, in one process; for each SSMF fit it reports
// the status, the last ELBO, the ELBO of coordinate ascent started from
// the fit, and the component means.
const ssmfSeedsDriver = `package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"

	"github.com/vigen-go/vigen/runtime"
	model "tmpe2e/PKG"
)

func main() {
	var in struct {
		Data    json.RawMessage
		Seeds []uint64
		Runs  []struct{ Batch, Passes int }
	}
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		panic(err)
	}
	data, err := model.LoadData(bytes.NewReader(in.Data))
	if err != nil {
		panic(err)
	}
	m, err := model.NewModel(data)
	if err != nil {
		panic(err)
	}
	type fit struct {
		Seed     uint64
		Batch    int
		Status   string
		ELBO     float64
		Polished float64
		Means    []float64
	}
	var out struct {
		CA   float64
		Fits []fit
	}
	ca, err := m.Fit(context.Background(), model.Options{Seed: 1})
	if err != nil {
		panic(err)
	}
	out.CA = ca.ELBO[len(ca.ELBO)-1]
	for _, run := range in.Runs {
		b := run.Batch
		for _, seed := range in.Seeds {
			opts := model.Options{Seed: seed, Algorithm: "ssmf", SVI: runtime.SVISettings{BatchSize: b, Passes: run.Passes}}
			r, err := m.Fit(context.Background(), opts)
			if err != nil {
				panic(err)
			}
			f := fit{Seed: seed, Batch: b, Status: r.Status, Means: r.Latent.Mu.Params["mean"]}
			if len(r.ELBO) > 0 {
				f.ELBO = r.ELBO[len(r.ELBO)-1]
				f.Polished = model.HookPolish(m, r, 500)
			}
			out.Fits = append(out.Fits, f)
		}
	}
	json.NewEncoder(os.Stdout).Encode(out)
}
`

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
	raw := buildAndRunFiles(t, "mix2d", ssmfNormalMixtureVI, in, ssmfSeedsDriver, map[string]string{"hook.go": ssmfPolishHook})
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
