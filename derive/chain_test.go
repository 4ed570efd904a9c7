package derive_test

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/derive"
	"github.com/vigen-go/vigen/spec"
)

// TestChainDerivatives runs the corpus's time-chain models alone (they are
// part of TestCorpusDerivatives too): latents drawn in parts, read at
// offsets and in loops over part of their size, whose derivatives hold
// δ(t−1, a) and whose generated code scatters into grad[t-1].
func TestChainDerivatives(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping generated-code derivative checks in -short mode")
	}
	files, err := filepath.Glob(filepath.Join("testdata", "corpus", "chain_*.vi"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 3 {
		t.Fatalf("%d chain models in the corpus, want 3", len(files))
	}
	var cases []fdCase
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, fdCase{Name: strings.TrimSuffix(filepath.Base(f), ".vi"), File: filepath.Base(f), Src: src})
	}
	rep := runFDCases(t, "tmp-chain-", "ch_", cases, 3)
	if rep.Checked != len(cases) {
		t.Errorf("%d of %d chain models checked; skipped: %v", rep.Checked, len(cases), rep.Skipped)
	}
}

// TestChainObjectiveValue compares f(x) of an AR(1) latent drawn in parts
// with the log density written out: x[1] ~ N(0, 2²), x[t] ~ N(phi x[t−1],
// s²) for t ≥ 2, y[t] ~ N(x[t] x[t−1], 1) for t ≥ 2 — each element's prior
// counted once, the lags on the right elements.
func TestChainObjectiveValue(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "corpus", "chain_ar1.vi"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := spec.Load("chain_ar1.vi", src)
	if err != nil {
		t.Fatal(err)
	}
	d, err := derive.Derive(m)
	if err != nil {
		t.Fatal(err)
	}
	const P, phi, s = 6, 0.8, 0.5
	x := []float64{0.3, -0.2, 0.9, 0.4, -1.1, 0.6}
	y := []float64{0.1, 0.5, -0.3, 0.8, 0.2, -0.4}
	z := []float64{1.2, -0.7, 0.3, 0.5, -0.1, 0.9}
	env := &derive.Env{Sizes: map[string]int{"P": P}, Index: map[string]int{}, Tensors: map[string]*derive.Value{
		"theta": {Dims: []int{P}, Data: x}, "y": {Dims: []int{P}, Data: y}, "z": {Dims: []int{P}, Data: z},
		"phi": {Data: []float64{phi}}, "s": {Data: []float64{s}},
	}}
	lnorm := func(v, m, sd float64) float64 {
		r := (v - m) / sd
		return -0.5*math.Log(2*math.Pi) - math.Log(sd) - 0.5*r*r
	}
	want := lnorm(x[0], 0, 2)
	for k := 1; k < P; k++ {
		want += lnorm(x[k], phi*x[k-1], s) + lnorm(y[k], x[k]*x[k-1], 1)
	}
	for k := 0; k < P-1; k++ {
		want += lnorm(z[k], math.Exp(0.5*x[k+1])-x[k], 1.5)
	}
	if got := derive.Eval(d.Objectives[0].F, env); math.Abs(got-want) > 1e-12*math.Abs(want) {
		t.Errorf("f = %.15g, written out %.15g", got, want)
	}
}
