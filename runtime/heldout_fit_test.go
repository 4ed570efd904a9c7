package runtime

import (
	"context"
	"math"
	"reflect"
	"strings"
	"testing"
)

type fakeLatent struct{ Global, Local string }

type fakeParams struct{ P int }

// fakeHeldout is a HeldoutModel that checks what Heldout asks of it: the
// training bag has terms 1 and 2 of 3, so term 3 is unseen.
type fakeHeldout struct {
	t          *testing.T
	docs       [][][2]int
	iterations int
	calls      *[]string
}

func (f fakeHeldout) Bag() ([]int, []float64, int) { return []int{1, 2, 1}, []float64{1, 2, 0}, 3 }

func (f fakeHeldout) Docs(docs [][][2]int) (HeldoutModel[fakeLatent, fakeParams], error) {
	*f.calls = append(*f.calls, "Docs")
	f.docs = docs
	return f, nil
}

func (f fakeHeldout) Start(opts Settings[fakeLatent, fakeParams]) (fakeLatent, error) {
	*f.calls = append(*f.calls, "Start")
	if opts.MaxIter != 1 || !opts.FixParams || opts.Algorithm != "ca" || opts.Start != nil {
		f.t.Errorf("Start: opts are not Heldout()'s: %+v", opts)
	}
	return fakeLatent{Global: "start", Local: "start"}, nil
}

func (f fakeHeldout) Globals(l, g fakeLatent) fakeLatent {
	l.Global = g.Global
	return l
}

func (f fakeHeldout) Fit(_ context.Context, opts Settings[fakeLatent, fakeParams]) (*Result[fakeLatent, fakeParams], error) {
	*f.calls = append(*f.calls, "Fit")
	if want := [][][2]int{{{1, 1}}, {{2, 1}}}; !reflect.DeepEqual(f.docs, want) {
		f.t.Errorf("Fit on documents %v, want the observed halves without term 3, %v", f.docs, want)
	}
	if s := opts.Start; s == nil || s.Latent != (fakeLatent{Global: "trained", Local: "start"}) || s.Params.P != 7 {
		f.t.Errorf("Fit starts from %+v, want the trained globals and params with the local start", s)
	}
	if opts.MaxIter != 1 || !opts.FixParams || opts.Seed != 5 {
		f.t.Errorf("Fit: opts %+v, want Heldout() of the caller's", opts)
	}
	return &Result[fakeLatent, fakeParams]{Iterations: f.iterations, Status: "canceled", Unsettled: []int{2},
		Latent: fakeLatent{Global: "moved", Local: "fitted"}, Params: fakeParams{P: 8}}, nil
}

func (f fakeHeldout) Predictive(start Settings[fakeLatent, fakeParams]) ([]float64, []float64, int, error) {
	*f.calls = append(*f.calls, "Predictive")
	if s := start.Start; s == nil || s.Latent != (fakeLatent{Global: "trained", Local: "fitted"}) || s.Params.P != 7 || start.Method != "laplace" {
		f.t.Errorf("Predictive under %+v (method %q), want the fitted locals with the trained globals and params, method laplace", s, start.Method)
	}
	theta, beta, _ := heldoutCase()
	var mix, topics []float64
	for _, r := range theta {
		mix = append(mix, r...)
	}
	for _, r := range beta {
		topics = append(topics, r...)
	}
	return mix, topics, 2, nil
}

// TestHeldoutAlgorithm checks runtime.Heldout's steps on a fake model:
// the split at the training terms, the one-iteration fit of the test
// documents' locals from the trained globals, the predictive read with
// the trained globals, and the score of heldoutCase without term 3.
func TestHeldoutAlgorithm(t *testing.T) {
	var calls []string
	m := fakeHeldout{t: t, iterations: 1, calls: &calls}
	r := &Result[fakeLatent, fakeParams]{Latent: fakeLatent{Global: "trained", Local: "train"}, Params: fakeParams{P: 7}}
	_, _, held := heldoutCase()
	obs := [][][2]int{{{1, 1}, {3, 2}}, {{2, 1}}}
	opts := Settings[fakeLatent, fakeParams]{Method: "laplace", Seed: 5, MaxIter: 50}
	s, err := Heldout(context.Background(), HeldoutModel[fakeLatent, fakeParams](m), r, obs, held, opts, "label")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"Docs", "Start", "Fit", "Predictive"}; !reflect.DeepEqual(calls, want) {
		t.Errorf("calls %v, want %v", calls, want)
	}
	want := HeldoutScore{PerWord: (2*math.Log(5) - 10*math.Log(2)) / 3, Tokens: 3, Unseen: 1, UnseenTerms: 1, Unsettled: 1, Predictive: "label"}
	if math.Abs(s.PerWord-want.PerWord) > 1e-15 {
		t.Errorf("per word %v, want %v", s.PerWord, want.PerWord)
	}
	s.PerWord = want.PerWord
	if s != want {
		t.Errorf("score %+v, want %+v", s, want)
	}

	if _, err := Heldout(context.Background(), HeldoutModel[fakeLatent, fakeParams](m), nil, obs, held, opts, ""); err == nil || !strings.Contains(err.Error(), "no fit") {
		t.Errorf("no fit: error %v", err)
	}
	m.iterations = 0
	if _, err := Heldout(context.Background(), HeldoutModel[fakeLatent, fakeParams](m), r, obs, held, opts, ""); err == nil || !strings.Contains(err.Error(), "the fit of the test documents stopped: canceled") {
		t.Errorf("a fit that stopped: error %v", err)
	}
}
