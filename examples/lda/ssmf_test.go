package main

import (
	"context"
	"math"
	"reflect"
	"testing"

	"github.com/vigen-go/vigen/examples/lda/lda"
	"github.com/vigen-go/vigen/runtime"
)

// With q(β) a point mass (a Dirichlet of concentration 1e20 times its
// mean), a draw of β is E[β] and the generated local fits given it are the
// mean-field ones: SSMF-A's full-batch step (ρ_0 = 1, N ramped to all
// documents at once) equals SVI's, in λ, γ and φ.
func TestSSMFAFromAPointMassIsSVI(t *testing.T) {
	data, _ := Synthetic(3, SyntheticDocs)
	data.K = SyntheticK
	start, err := DocumentStart(data)
	if err != nil {
		t.Fatal(err)
	}
	lam := start.Latent.Beta.Params["param"]
	v := len(lam) / data.K
	for k := 0; k < data.K; k++ {
		row := lam[k*v : (k+1)*v]
		sum := 0.0
		for _, x := range row {
			sum += x
		}
		for i := range row {
			row[i] *= 1e20 / sum
		}
	}
	one := runtime.SVISettings{BatchSize: len(data.W), Tau0: 1, Kappa: 1, Passes: 1}
	fit := func(global string) *lda.Result {
		s := one
		s.Global = global
		r, err := lda.Fit(context.Background(), data, lda.Options{Start: start, Algorithm: "svi", LocalTol: runtime.DefaultLocalTol, SVI: s, Seed: 5, Keep: []string{"z"}})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	svi, ssmfa := fit(""), fit(runtime.GlobalSSMFA)
	for _, c := range []struct {
		name      string
		got, want []float64
	}{
		{"lambda", ssmfa.Latent.Beta.Params["param"], svi.Latent.Beta.Params["param"]},
		{"gamma", ssmfa.Latent.Theta.Params["param"], svi.Latent.Theta.Params["param"]},
		{"phi", ssmfa.Latent.Z.Params["prob"], svi.Latent.Z.Params["prob"]},
	} {
		worst := 0.0
		for i := range c.want {
			worst = max(worst, math.Abs(c.got[i]-c.want[i])/math.Max(math.Abs(c.want[i]), 1))
		}
		if len(c.got) != len(c.want) || worst > 1e-8 {
			t.Errorf("%s: SSMF-A's step from a point mass differs from SVI's by %.3g (relative)", c.name, worst)
		}
	}
	// from the document start itself (a wide q(β)) the draw matters
	lam0, err := DocumentStart(data)
	if err != nil {
		t.Fatal(err)
	}
	start = lam0
	a, b := fit(""), fit(runtime.GlobalSSMFA)
	diff := 0.0
	for i, x := range a.Latent.Beta.Params["param"] {
		diff = max(diff, math.Abs(x-b.Latent.Beta.Params["param"][i]))
	}
	if diff < 1e-3 {
		t.Errorf("SSMF-A's step from a wide q(β) is SVI's (%.3g): the draw was not used", diff)
	}
}

// Every combination of global and local step gives the same result
// whatever the number of workers, and recovers the synthetic corpus's
// topics (within 0.15 in total variation; SVI's test asks 0.1 of mean field).
func TestSSMFRecoversTopicsDeterministically(t *testing.T) {
	data, truth := Synthetic(1, SyntheticDocs)
	data.K = SyntheticK
	start, err := DocumentStart(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, global := range []string{runtime.GlobalSSMF, runtime.GlobalSSMFA, runtime.GlobalMeanField} {
		for _, local := range []string{runtime.LocalMeanField, runtime.LocalGibbs} {
			if global == runtime.GlobalMeanField && local == runtime.LocalMeanField {
				continue // TestSVIRecoversTrueTopics
			}
			var first *lda.Result
			for _, workers := range []int{1, 3} {
				res, err := lda.Fit(context.Background(), data, lda.Options{Start: start, Algorithm: "svi", Seed: 2, Workers: workers,
					SVI: runtime.SVISettings{BatchSize: 30, Tau0: 4, Passes: 20, Global: global, Local: local, BurnIn: 5, Samples: 5}})
				if err != nil {
					t.Fatal(err)
				}
				res.Seconds = 0
				if first == nil {
					first = res
					continue
				}
				if !reflect.DeepEqual(first.Latent, res.Latent) || !reflect.DeepEqual(first.ELBO, res.ELBO) {
					t.Errorf("%s × %s: the result with 3 workers differs from 1's", global, local)
				}
			}
			topics := TopicMeans(first)
			worst := 0.0
			for k, j := range MatchTopics(topics, truth) {
				worst = max(worst, TV(topics[k], truth[j]))
			}
			t.Logf("%s × %s: largest TV %.3f, ELBO %.2f, %s", global, local, worst, first.ELBO[len(first.ELBO)-1], first.Status)
			if worst > 0.15 {
				t.Errorf("%s × %s: a fitted topic is %.3f from its true topic (> 0.15)", global, local, worst)
			}
		}
	}
}
