package main

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/examples/ctm/ctm"
	"github.com/vigen-go/vigen/runtime"
)

// taylorSoftmax is Eq. 19 for E[softmax(θ)_k] under θ ~ N(mu, cov), by
// hand: s_k + ½ Σ_ij H^k_ij Σ_ij with s = softmax(mu) and
// H^k_ij = ∂²s_k/∂θ_i∂θ_j = s_k[(δ_ik − s_i)(δ_jk − s_j) − s_i(δ_ij − s_j)].
func taylorSoftmax(mu, cov []float64) []float64 {
	K := len(mu)
	s := make([]float64, K)
	softmax(mu, s)
	out := make([]float64, K)
	delta := func(a, b int) float64 {
		if a == b {
			return 1
		}
		return 0
	}
	for k := range K {
		h := 0.0
		for i := range K {
			for j := range K {
				h += s[k] * ((delta(i, k)-s[i])*(delta(j, k)-s[j]) - s[i]*(delta(i, j)-s[j])) * cov[i*K+j]
			}
		}
		out[k] = s[k] + 0.5*h
	}
	return out
}

// The generated Heldout of ctm.vi scores by Σ_k E[softmax(θ_d)_k] β_kw
// with the expectation by Eq. 19 (its label says so), after fitting q(θ_d)
// to the observed halves with the params held fixed. This checks it
// against the same protocol computed by hand from q(θ_d). (examples/ctm's
// own evalHeldout scores with π_d = softmax(E[θ_d]), Heldout with
// Options.HeldoutPlugIn, checked in heldout_generic_test.go; this test
// logs both scores.)
func TestGeneratedHeldoutIsTaylorSoftmax(t *testing.T) {
	p, docs := smallCorpus(t, 80)
	var train [][][2]int
	for _, doc := range docs[:60] {
		var keep [][2]int
		for _, e := range doc {
			if e[0] != p.V { // the last term is unseen in training
				keep = append(keep, e)
			}
		}
		train = append(train, keep)
	}
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
	data := &ctm.Data{K: p.K, V: p.V, W: train}
	res, err := ctm.Fit(context.Background(), data, ctm.Options{MaxIter: 8, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	m, err := ctm.NewModel(data)
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.Heldout(context.Background(), res, obs, held, ctm.Options{})
	if err != nil {
		t.Fatal(err)
	}

	seen, err := runtime.SeenTerms(train, p.V)
	if err != nil {
		t.Fatal(err)
	}
	kept, _, _ := runtime.KeepSeen(obs, seen)
	test := &ctm.Data{K: p.K, V: p.V, W: kept}
	res.Params.Into(test)
	inf, err := ctm.Fit(context.Background(), test, ctm.Options{FixParams: true, MaxIter: 1, LocalMaxIter: runtime.HeldoutLocalMaxIter, AllowEmpty: true})
	if err != nil || inf.Iterations != 1 {
		t.Fatalf("%v, %d iterations", err, inf.Iterations)
	}
	taylor := make([][]float64, len(obs))
	plugin := make([][]float64, len(obs))
	for d, g := range inf.Latent.Theta {
		taylor[d] = taylorSoftmax(g.Mean, flatCov(g.Cov))
		plugin[d] = make([]float64, p.K)
		softmax(g.Mean, plugin[d])
	}
	want, err := runtime.HeldoutPerWord(taylor, res.Params.Beta, held, seen)
	if err != nil {
		t.Fatal(err)
	}
	if d := math.Abs(got.PerWord - want.PerWord); d > 1e-10 || got.Tokens != want.Tokens || got.Unseen != want.Unseen || got.Unseen == 0 {
		t.Errorf("generated Heldout %+v, by hand %+v: per-word differs by %.1e", got, want, d)
	}
	if got.Predictive == "" || !strings.Contains(got.Predictive, "approximate: Taylor (Eq. 19) in theta") {
		t.Errorf("label %q does not say E[softmax(θ)] is approximated by Eq. 19", got.Predictive)
	}
	pl, err := runtime.HeldoutPerWord(plugin, res.Params.Beta, held, seen)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("E[softmax(θ)] by Eq. 19: %.6f; softmax(E[θ]): %.6f", got.PerWord, pl.PerWord)
}

func flatCov(c [][]float64) []float64 {
	var out []float64
	for _, row := range c {
		out = append(out, row...)
	}
	return out
}
