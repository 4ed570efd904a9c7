package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/vigen-go/vigen/examples/ctm/ctm"
	"github.com/vigen-go/vigen/runtime"
)

// handHeldout is document completion as this example computed it before
// it went through the generated Heldout: q(θ_d) fitted to convergence on
// the observed halves (with the terms whose β is at the floor for every
// topic dropped), the held-out halves scored by hand with π_d =
// softmax(E[θ_d]) (PerWordLogLik).
func handHeldout(p *apParams, obs, held [][][2]int, method string, workers int) (heldoutResult, error) {
	var r heldoutResult
	zero := func(w int) bool {
		for k := range p.K {
			if p.Beta[k][w-1] > runtime.ProbFloor {
				return false
			}
		}
		return true
	}
	kept := make([][][2]int, len(obs))
	for d, doc := range obs {
		for _, e := range doc {
			if !zero(e[0]) {
				kept[d] = append(kept[d], e)
			}
		}
	}
	data := &ctm.Data{K: p.K, V: p.V, W: kept, Beta: p.Beta, Mu0: p.Mu0, Sigma0: p.Sigma0}
	res, err := ctm.Fit(context.Background(), data, ctm.Options{Method: method, FixParams: true, Workers: workers})
	if err != nil {
		return r, err
	}
	unseen := map[int]bool{}
	means := make([][]float64, len(held))
	var scored [][][2]int
	for d, doc := range held {
		means[d] = res.Latent.Theta[d].Mean
		var keep [][2]int
		for _, e := range doc {
			if zero(e[0]) {
				r.Unseen += e[1]
				unseen[e[0]] = true
				continue
			}
			keep = append(keep, e)
			r.Tokens += e[1]
		}
		scored = append(scored, keep)
	}
	r.UnseenTerms = len(unseen)
	r.PerWord = PerWordLogLik(p.Beta, scored, means)
	if math.IsNaN(r.PerWord) || math.IsInf(r.PerWord, 0) {
		return r, fmt.Errorf("held-out log likelihood is %v", r.PerWord)
	}
	return r, nil
}

// The example's held-out score comes from the generated Heldout with
// HeldoutPlugIn and equals the protocol computed by hand: the same tokens
// scored and left out, and the per-word log likelihood to 1e-12 (the hand
// version fits the test documents until the ELBO settles, Heldout runs one
// iteration whose units settle; the CTM has no global factor, so the
// second iteration changes nothing).
func TestHeldoutIsTheGenericPlugIn(t *testing.T) {
	check := func(what string, p *apParams, obs, held [][][2]int) {
		got, err := evalHeldout(p, obs, held, "", 0)
		if err != nil {
			t.Fatal(err)
		}
		want, err := handHeldout(p, obs, held, "", 0)
		if err != nil {
			t.Fatal(err)
		}
		if d := math.Abs(got.PerWord - want.PerWord); d > 1e-12 || got.Tokens != want.Tokens || got.Unseen != want.Unseen || got.UnseenTerms != want.UnseenTerms {
			t.Errorf("%s: generic %+v, by hand %+v (per word differs by %.2g)", what, got, want, d)
		}
		t.Logf("%s: generic %.10f, by hand %.10f (%.2g apart)", what, got.PerWord, want.PerWord, got.PerWord-want.PerWord)
	}
	p, docs := smallCorpus(t, 80)
	var obs, held [][][2]int
	for _, doc := range docs[60:] {
		var o, h [][2]int
		for i, e := range doc {
			if i%2 == 0 {
				o = append(o, e)
			} else {
				h = append(h, e)
			}
		}
		obs, held = append(obs, o), append(held, h)
	}
	for _, row := range p.Beta { // one term unseen: probability 0 in every topic
		row[p.V-1] = 0
		sum := 0.0
		for _, b := range row {
			sum += b
		}
		for w := range row {
			row[w] /= sum
		}
	}
	check("synthetic", p, obs, held)
	params := "testdata/ap-k10.json.gz"
	ap := "../../../shared/data/ap/"
	if _, err := os.Stat(ap + "ap-test-obs.dat"); err != nil {
		t.Logf("AP: skipped, the AP split is not here (%v)", err)
		return
	}
	q, err := loadParams(params)
	if err != nil {
		t.Fatal(err)
	}
	o, h, err := readHalves(ap+"ap-test-obs.dat", ap+"ap-test-heldout.dat")
	if err != nil {
		t.Fatal(err)
	}
	if testing.Short() {
		o, h = o[:100], h[:100]
	}
	check(fmt.Sprintf("AP K = 10, %d test documents", len(o)), q, o, h)
}
