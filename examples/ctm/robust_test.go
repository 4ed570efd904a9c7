package main

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/examples/ctm/ctm"
	"github.com/vigen-go/vigen/golden"
)

// reportable fails t if res holds a NaN or Inf anywhere: a Result must
// always be writable as JSON, which has neither.
func reportable(t *testing.T, res *ctm.Result) {
	t.Helper()
	if _, err := json.Marshal(res); err != nil {
		t.Fatalf("result cannot be written (status %q): %v", res.Status, err)
	}
	if strings.Contains(res.Status, "not_finite") {
		t.Errorf("status %q", res.Status)
	}
}

// A document made of one term repeated 10⁵ times: the per-document
// posterior must stay finite, and put its weight on the topic most likely to
// emit that term (the likelihood, 10⁵·log Σ_k softmax(θ)_k β_k,w, swamps the
// prior).
func TestOneTermRepeated(t *testing.T) {
	p := loadAPParams(t)
	term := 1 + 2*p.V/3
	best := 0
	for k := range p.K {
		if p.Beta[k][term-1] > p.Beta[best][term-1] {
			best = k
		}
	}
	for _, method := range []string{"laplace", "delta"} {
		data := &ctm.Data{K: p.K, V: p.V, W: [][][2]int{{{term, 100000}}}, Beta: p.Beta, Mu0: p.Mu0, Sigma0: p.Sigma0}
		res, err := ctm.Fit(context.Background(), data, ctm.Options{Method: method, FixParams: true})
		if err != nil {
			t.Fatal(err)
		}
		reportable(t, res)
		mean := res.Latent.Theta[0].Mean
		top := 0
		for k := range mean {
			if mean[k] > mean[top] {
				top = k
			}
		}
		if top != best {
			t.Errorf("%s: θ's largest component is topic %d, want %d (the topic with the largest β[k][%d]); mean %.3g",
				method, top+1, best+1, term, mean)
		}
		t.Logf("%s: status %s, θ[%d] = %.2f, ELBO %.6g", method, res.Status, best+1, mean[best], res.ELBO[len(res.ELBO)-1])
	}
}

// K = 200 topics on a small corpus: variational EM runs and every number it
// reports is finite.
func TestManyTopics(t *testing.T) {
	golden.SlowTier(t)
	if testing.Short() {
		t.Skip("K = 200 EM in -short mode")
	}
	rng := rand.New(rand.NewPCG(7, 8))
	const D, V = 40, 300
	docs := make([][][2]int, D)
	for d := range docs {
		for range 5 + rng.IntN(30) {
			docs[d] = append(docs[d], [2]int{1 + rng.IntN(V), 1 + rng.IntN(4)})
		}
		docs[d] = mergeTerms(docs[d])
	}
	res, err := ctm.Fit(context.Background(), &ctm.Data{K: 200, V: V, W: docs}, ctm.Options{MaxIter: 3, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	reportable(t, res)
	if len(res.ELBO) != 3 {
		t.Errorf("%d iterations, want 3 (status %s)", len(res.ELBO), res.Status)
	}
	t.Logf("status %s, ELBO %.6g", res.Status, res.ELBO)
}

// mergeTerms sums the counts of repeated terms, as bag data requires
// distinct terms per document.
func mergeTerms(doc [][2]int) [][2]int {
	counts := map[int]int{}
	var order []int
	for _, e := range doc {
		if counts[e[0]] == 0 {
			order = append(order, e[0])
		}
		counts[e[0]] += e[1]
	}
	out := make([][2]int, len(order))
	for i, w := range order {
		out[i] = [2]int{w, counts[w]}
	}
	return out
}

// A nearly singular prior covariance (rank one plus 10⁻⁹·I, condition
// number ~10¹⁰): per-document inference still reports finite numbers, and
// the posterior covariance is no wider than the prior along the thin
// directions.
func TestNearSingularSigma0(t *testing.T) {
	p := loadAPParams(t)
	k := p.K
	sigma := make([][]float64, k)
	for i := range sigma {
		sigma[i] = make([]float64, k)
		for j := range sigma[i] {
			sigma[i][j] = 0.5 // rank one: all-ones direction
		}
		sigma[i][i] += 1e-9
	}
	docs := [][][2]int{{{5, 3}, {100, 1}, {2000, 2}}, {{7, 1}}, {{1, 50}, {9, 50}}}
	for _, method := range []string{"laplace", "delta"} {
		res, err := ctm.Fit(context.Background(), &ctm.Data{K: k, V: p.V, W: docs, Beta: p.Beta, Mu0: p.Mu0, Sigma0: sigma},
			ctm.Options{Method: method, FixParams: true})
		if err != nil {
			t.Fatal(err)
		}
		reportable(t, res)
		for d, g := range res.Latent.Theta {
			// e₁ − e₂ is orthogonal to the all-ones direction: its prior
			// variance is 2·10⁻⁹, and the data can only shrink it.
			v := g.Cov[0][0] + g.Cov[1][1] - 2*g.Cov[0][1]
			if !(v <= 2e-9*(1+1e-6)) || math.IsNaN(v) {
				t.Errorf("%s: doc %d: posterior variance along e1−e2 is %g, above the prior's 2e-9", method, d+1, v)
			}
		}
		t.Logf("%s: status %s", method, res.Status)
	}
}
