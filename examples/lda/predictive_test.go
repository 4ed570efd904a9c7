package main

import (
	"context"
	"math"
	"testing"

	"github.com/vigen-go/vigen/examples/lda/lda"
	"github.com/vigen-go/vigen/golden"
	"github.com/vigen-go/vigen/runtime"
)

// halves splits each document's tokens into an observed and a held-out
// half, alternately token by token (in the order of its entries).
func halves(docs [][][2]int) (obs, held [][][2]int) {
	obs, held = make([][][2]int, len(docs)), make([][][2]int, len(docs))
	for d, doc := range docs {
		n := 0
		for _, e := range doc {
			a := (e[1] + 1 - n%2) / 2 // tokens n, n+1, … of which even ones are observed
			if a > 0 {
				obs[d] = append(obs[d], [2]int{e[0], a})
			}
			if b := e[1] - a; b > 0 {
				held[d] = append(held[d], [2]int{e[0], b})
			}
			n += e[1]
		}
	}
	return obs, held
}

// checkGeneratedHeldout compares the generated package's Model.Heldout
// (derived from lda.vi: Σ_k E[θ_dk] E[β_kw] by the expectation engine)
// with this package's hand-written Heldout on the same fit and split.
func checkGeneratedHeldout(t *testing.T, data *lda.Data, res *lda.Result, obs, held [][][2]int) runtime.HeldoutScore {
	t.Helper()
	m, err := lda.NewModel(data)
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.Heldout(context.Background(), res, obs, held, lda.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	want, unsettled, err := Heldout(context.Background(), res, data.Alpha, data.Eta, data.W, obs, held, 1)
	if err != nil {
		t.Fatal(err)
	}
	if d := math.Abs(got.PerWord - want.PerWord); d > 1e-10 || got.Tokens != want.Tokens || got.Unseen != want.Unseen ||
		got.UnseenTerms != want.UnseenTerms || got.Unsettled != unsettled {
		t.Errorf("generated Heldout %+v, hand-written %+v (%d unsettled): per-word differs by %.1e", got, want, unsettled, d)
	}
	if got.Predictive == "" {
		t.Error("no predictive label")
	}
	return got
}

// The generated Heldout equals the hand-written one on a synthetic split
// with terms unseen in training in both halves and an empty observed half.
func TestGeneratedHeldoutMatchesHand(t *testing.T) {
	corpus, _ := Synthetic(7, 260)
	var train [][][2]int
	for _, doc := range corpus.W[:200] {
		var keep [][2]int
		for _, e := range doc {
			if e[0] != 50 { // term 50 is unseen in training
				keep = append(keep, e)
			}
		}
		train = append(train, keep)
	}
	obs, held := halves(corpus.W[200:])
	obs[3] = nil
	data := &lda.Data{K: 5, V: SyntheticV, W: train}
	res, err := lda.Fit(context.Background(), data, lda.Options{MaxIter: 20, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	s := checkGeneratedHeldout(t, data, res, obs, held)
	if s.Unseen == 0 || s.Tokens == 0 {
		t.Errorf("%+v: the split should have unseen and scored tokens", s)
	}
	alpha := 0.3
	data.Alpha = &alpha
	res, err = lda.Fit(context.Background(), data, lda.Options{MaxIter: 5, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	checkGeneratedHeldout(t, data, res, obs, held)
}

// The same on the AP split (../shared/data), K = 10 after three iterations.
func TestGeneratedHeldoutMatchesHandAP(t *testing.T) {
	golden.SlowTier(t)
	if testing.Short() {
		t.Skip("skipping: fits AP (-short)")
	}
	train, err := runtime.ReadLDACFile(sharedData(t, "ap/ap-train.dat"))
	if err != nil {
		t.Fatal(err)
	}
	obs, err := runtime.ReadLDACFile(sharedData(t, "ap/ap-test-obs.dat"))
	if err != nil {
		t.Fatal(err)
	}
	held, err := runtime.ReadLDACFile(sharedData(t, "ap/ap-test-heldout.dat"))
	if err != nil {
		t.Fatal(err)
	}
	data := &lda.Data{K: 10, V: runtime.MaxTerm(train), W: train}
	res, err := lda.Fit(context.Background(), data, lda.Options{MaxIter: 3})
	if err != nil {
		t.Fatal(err)
	}
	s := checkGeneratedHeldout(t, data, res, obs, held)
	t.Logf("AP, K = 10, 3 iterations: %v", s)
}
