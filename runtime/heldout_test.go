package runtime

import (
	"math"
	"strings"
	"testing"
)

// heldoutCase: two topics over three terms, two test documents.
//
//	β_1 = (1/2, 1/4, 1/4), β_2 = (1/8, 1/8, 3/4)
//	θ_1 = (1/2, 1/2): term 1 (×2) has p = 1/4 + 1/16 = 5/16, term 3 has p = 1/8 + 3/8 = 1/2
//	θ_2 = (1, 0):     term 2 (×1) has p = 1/4
func heldoutCase() (theta, beta [][]float64, held [][][2]int) {
	beta = [][]float64{{0.5, 0.25, 0.25}, {0.125, 0.125, 0.75}}
	theta = [][]float64{{0.5, 0.5}, {1, 0}}
	held = [][][2]int{{{3, 1}, {1, 2}}, {{2, 1}}}
	return
}

// TestHeldoutPerWordByHand: (2 log 5/16 + log 1/2 + log 1/4) / 4 =
// (2 log 5 − 11 log 2) / 4.
func TestHeldoutPerWordByHand(t *testing.T) {
	theta, beta, held := heldoutCase()
	s, err := HeldoutPerWord(theta, beta, held, []bool{true, true, true})
	if err != nil {
		t.Fatal(err)
	}
	want := (2*math.Log(5) - 11*math.Log(2)) / 4
	if math.Abs(s.PerWord-want) > 1e-15 || s.Tokens != 4 || s.Unseen != 0 || s.UnseenTerms != 0 {
		t.Errorf("got %+v, want per word %v over 4 tokens, none unseen", s, want)
	}
}

// TestHeldoutPerWordExcludesUnseen: term 3 never occurs in training, so its
// token is neither scored nor counted: (2 log 5/16 + log 1/4) / 3. A
// seen-list shorter than the vocabulary counts the terms beyond it as unseen
// too.
func TestHeldoutPerWordExcludesUnseen(t *testing.T) {
	theta, beta, held := heldoutCase()
	train := [][][2]int{{{1, 4}}, {{2, 1}, {1, 1}}}
	want := HeldoutScore{PerWord: (2*math.Log(5) - 10*math.Log(2)) / 3, Tokens: 3, Unseen: 1, UnseenTerms: 1}
	seen, err := SeenTerms(train, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, seen := range [][]bool{seen, seen[:2]} {
		s, err := HeldoutPerWord(theta, beta, held, seen)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(s.PerWord-want.PerWord) > 1e-15 || s.Tokens != want.Tokens || s.Unseen != want.Unseen || s.UnseenTerms != want.UnseenTerms {
			t.Errorf("seen %v: got %+v, want %+v", seen, s, want)
		}
	}
	if _, err := SeenTerms([][][2]int{{{4, 1}}}, 3); err == nil || !strings.Contains(err.Error(), "document 1: term 4 is outside 1..3") {
		t.Errorf("term beyond V: error %v", err)
	}
	kept, tokens, terms := KeepSeen([][][2]int{{{3, 2}, {1, 1}}, {{3, 5}}}, seen)
	if len(kept) != 2 || len(kept[0]) != 1 || kept[0][0] != [2]int{1, 1} || len(kept[1]) != 0 || tokens != 7 || terms != 1 {
		t.Errorf("KeepSeen: %v, %d tokens, %d terms", kept, tokens, terms)
	}
}

// TestHeldoutPerWordErrors: bad shapes and impossible tokens are errors,
// never a NaN or −∞ score.
func TestHeldoutPerWordErrors(t *testing.T) {
	theta, beta, held := heldoutCase()
	all := []bool{true, true, true}
	for _, c := range []struct {
		name        string
		theta, beta [][]float64
		held        [][][2]int
		seen        []bool
		want        string
	}{
		{"documents", theta[:1], beta, held, all, "1 topic proportions for 2 documents"},
		{"no topics", theta, nil, held, all, "no topics"},
		{"ragged topics", theta, [][]float64{beta[0], beta[1][:2]}, held, all, "topic 2 has 2 terms"},
		{"proportions", [][]float64{theta[0], {1}}, beta, held, all, "document 2 has 1 topic proportions for 2 topics"},
		{"seen", theta, beta, held, []bool{true, true, true, true}, "4 terms seen in training, but the topics have 3"},
		{"zero probability", [][]float64{theta[0], {0, 1}}, [][]float64{beta[0], {0.25, 0, 0.75}}, held, all, "document 2: term 2 has probability 0"},
		{"nothing to score", theta, beta, held, []bool{false, false, false}, "no held-out tokens"},
	} {
		if _, err := HeldoutPerWord(c.theta, c.beta, c.held, c.seen); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

// HeldoutMixture is HeldoutPerWord on flat arrays, and refuses negative
// weights (an approximate expectation gone wrong) instead of scoring them.
func TestHeldoutMixture(t *testing.T) {
	mix := []float64{0.25, 0.75, 1, 0}
	topics := []float64{0.5, 0.5, 0, 0.1, 0.2, 0.7}
	held := [][][2]int{{{1, 2}, {3, 1}}, {{2, 1}, {3, 4}}}
	seen := []bool{true, true, false}
	got, err := HeldoutMixture(mix, topics, 2, held, seen)
	if err != nil {
		t.Fatal(err)
	}
	want, err := HeldoutPerWord([][]float64{{0.25, 0.75}, {1, 0}}, [][]float64{{0.5, 0.5, 0}, {0.1, 0.2, 0.7}}, held, seen)
	if err != nil || got != want || got.Unseen != 5 {
		t.Errorf("HeldoutMixture %+v, HeldoutPerWord %+v (%v)", got, want, err)
	}
	mix[1] = -0.01
	if _, err := HeldoutMixture(mix, topics, 2, held, seen); err == nil || !strings.Contains(err.Error(), "test document 1: mixture weight 2 is -0.01") {
		t.Errorf("negative weight: error %v", err)
	}
}

// WithBags adds LDA-C bags to the JSON data, and the size of their term
// ids when the JSON does not give it; a bag given twice is an error.
func TestWithBags(t *testing.T) {
	bags := map[string][][][2]int{"w": {{{3, 2}, {7, 1}}, {}}}
	out, added, err := WithBags([]byte(`{"K": 2}`), bags, map[string]string{"w": "V"})
	if err != nil || added["V"] != 7 || string(out) != `{"K":2,"V":7,"w":[[[3,2],[7,1]],[]]}` {
		t.Errorf("%s, %v, %v", out, added, err)
	}
	out, added, err = WithBags([]byte(`{"K": 2, "V": 9}`), bags, map[string]string{"w": "V"})
	if err != nil || len(added) != 0 || !strings.Contains(string(out), `"V":9`) {
		t.Errorf("%s, %v, %v", out, added, err)
	}
	if _, _, err := WithBags([]byte(`{"w": []}`), bags, nil); err == nil || !strings.Contains(err.Error(), `data "w" is given both`) {
		t.Errorf("bag twice: %v", err)
	}
	if _, _, err := WithBags([]byte(`[1]`), bags, nil); err == nil || !strings.Contains(err.Error(), "must be a JSON object") {
		t.Errorf("not an object: %v", err)
	}
}
