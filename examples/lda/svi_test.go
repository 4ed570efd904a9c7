package main

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/examples/lda/lda"
	"github.com/vigen-go/vigen/runtime"
)

// SVI with the whole corpus as its one minibatch and ρ_0 = 1 (τ0 = 1) is
// one iteration of coordinate ascent: the documents are fitted against the
// same topics, and λ̂ = η + Σ_d (unit d's expected counts), from
// BetaNaturalPrior and BetaNaturalUnit, must be the batch update's λ, from
// BetaNatural, which derive built independently over the whole blanket.
func TestSVIFullBatchStepIsOneIteration(t *testing.T) {
	data, _ := Synthetic(3, SyntheticDocs)
	data.K = SyntheticK
	start, err := DocumentStart(data)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := lda.Fit(context.Background(), data, lda.Options{Start: start, MaxIter: 1, Keep: []string{"z"}})
	if err != nil {
		t.Fatal(err)
	}
	svi, err := lda.Fit(context.Background(), data, lda.Options{Start: start, Algorithm: "svi", LocalTol: runtime.DefaultLocalTol,
		SVI: runtime.SVISettings{BatchSize: len(data.W), Tau0: 1, Kappa: 1, Passes: 1}, Keep: []string{"z"}})
	if err != nil {
		t.Fatal(err)
	}
	if svi.Status != runtime.PassesStatus || svi.Iterations != 1 {
		t.Fatalf("svi: %s after %d passes", svi.Status, svi.Iterations)
	}
	for _, c := range []struct {
		name      string
		got, want []float64
	}{
		{"lambda", svi.Latent.Beta.Params["param"], ca.Latent.Beta.Params["param"]},
		{"gamma", svi.Latent.Theta.Params["param"], ca.Latent.Theta.Params["param"]},
		{"phi", svi.Latent.Z.Params["prob"], ca.Latent.Z.Params["prob"]},
	} {
		worst := 0.0
		for i := range c.want {
			worst = max(worst, math.Abs(c.got[i]-c.want[i])/math.Max(math.Abs(c.want[i]), 1))
		}
		if len(c.got) != len(c.want) || worst > 1e-12 {
			t.Errorf("%s: SVI's full-batch step differs from one CA iteration by %.3g (relative)", c.name, worst)
		}
	}
	if d := math.Abs(svi.ELBO[0]-ca.ELBO[0]) / math.Abs(ca.ELBO[0]); d > 1e-12 {
		t.Errorf("ELBO %v after the SVI step, %v after one iteration", svi.ELBO[0], ca.ELBO[0])
	}
}

// Minibatch SVI recovers the synthetic corpus's topics as batch coordinate
// ascent does (TestRecoversTrueTopics: within 0.1 in total variation), and
// its ELBO after 20 passes is not below batch's at convergence by more than
// 0.1% (it is above it on these corpora: batch stops in a local optimum
// slightly worse than the one SVI's noisy steps find).
func TestSVIRecoversTrueTopics(t *testing.T) {
	for seed := uint64(1); seed <= 2; seed++ {
		data, truth := Synthetic(seed, SyntheticDocs)
		data.K = SyntheticK
		start, err := DocumentStart(data)
		if err != nil {
			t.Fatal(err)
		}
		res, err := lda.Fit(context.Background(), data, lda.Options{Start: start, Algorithm: "svi", Seed: seed,
			SVI: runtime.SVISettings{BatchSize: 30, Tau0: 4, Passes: 20}})
		if err != nil {
			t.Fatal(err)
		}
		batch, err := lda.Fit(context.Background(), data, lda.Options{MaxIter: 200, Tol: 1e-6, MeanTol: 1e-4, Start: start})
		if err != nil {
			t.Fatal(err)
		}
		topics := TopicMeans(res)
		worst := 0.0
		for k, j := range MatchTopics(topics, truth) {
			worst = max(worst, TV(topics[k], truth[j]))
		}
		last, opt := res.ELBO[len(res.ELBO)-1], batch.ELBO[len(batch.ELBO)-1]
		t.Logf("seed %d: largest TV %.3f; ELBO %.2f after 20 passes, batch %.2f", seed, worst, last, opt)
		if worst > 0.1 {
			t.Errorf("seed %d: a topic fitted by SVI is %.3f from its true topic (> 0.1)", seed, worst)
		}
		if rel := (opt - last) / math.Abs(opt); rel > 1e-3 {
			t.Errorf("seed %d: SVI's ELBO %.3f is %.2g (relative) below batch's %.3f", seed, last, rel, opt)
		}
	}
}

func TestSVIOptionsChecked(t *testing.T) {
	data, _ := Synthetic(1, 20)
	data.K = 3
	for _, c := range []struct {
		opts lda.Options
		want string
	}{
		{lda.Options{Algorithm: "gibbs"}, `unknown algorithm "gibbs"`},
		{lda.Options{Algorithm: "svi", SVI: runtime.SVISettings{Kappa: 0.3}}, "outside (0.5, 1]"},
		{lda.Options{Algorithm: "svi", Checkpoint: runtime.Checkpoint{Path: t.TempDir() + "/cp.json", Every: 1}}, "cannot checkpoint"},
	} {
		_, err := lda.Fit(context.Background(), data, c.opts)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.opts.SVI, err, c.want)
		}
	}
}
