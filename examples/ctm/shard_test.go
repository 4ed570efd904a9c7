package main

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/vigen-go/vigen/examples/ctm/ctm"
	"github.com/vigen-go/vigen/runtime"
)

// TestShardedEMIsTheFit: variational EM of the CTM over 1, 3 and 8
// shards (runtime.FitShards: each shard's E-step, then the params'
// M-step from their statistics combined exactly) is the single-process
// variational EM: same iterations, ELBO trace, params and per-document
// Gaussians to 1e-12 of
// their largest values. The params start from the seed in the driver, as
// the single-process fit starts them.
func TestShardedEMIsTheFit(t *testing.T) {
	shardedCTM(t, ctm.Options{Seed: 3, MaxIter: 40})
}

// TestShardedSVIIsSVI: the CTM's stochastic variational inference over
// 1, 3 and 8 shards (runtime.FitShardsSVI: each minibatch's units
// updated by the shards holding them, online EM's step of the params from
// their statistics combined exactly) is the single-process SVI fit.
func TestShardedSVIIsSVI(t *testing.T) {
	opts := ctm.Options{Seed: 4, Algorithm: "svi"}
	opts.SVI.BatchSize, opts.SVI.Passes = 9, 6
	shardedCTM(t, opts)
}

// shardedCTM fits a small corpus in one process and over 1, 3 and 8
// shards with opts (variational EM, or SVI), and checks that the fits
// agree to 1e-12 of each quantity's largest value.
func shardedCTM(t *testing.T, opts ctm.Options) {
	_, docs := smallCorpus(t, 60)
	const k, v = 3, 15
	svi := opts.Algorithm == "svi"
	data := func(w [][][2]int) *ctm.Model {
		m, err := ctm.NewModel(&ctm.Data{K: k, V: v, W: w})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	single, err := data(docs).Fit(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("single-process fit: %s after %d iterations", single.Status, single.Iterations)
	if single.Iterations < 5 {
		t.Fatalf("the single-process fit stopped after %d iterations (%s)", single.Iterations, single.Status)
	}
	flat := func(r *ctm.Result) map[string][]float64 {
		out := map[string][]float64{"ELBO": r.ELBO, "mu0": r.Params.Mu0}
		for _, row := range r.Params.Beta {
			out["beta"] = append(out["beta"], row...)
		}
		for _, row := range r.Params.Sigma0 {
			out["Sigma0"] = append(out["Sigma0"], row...)
		}
		for _, g := range r.Latent.Theta {
			out["theta means"] = append(out["theta means"], g.Mean...)
		}
		return out
	}
	want := flat(single)
	total := len(docs)
	for _, shards := range []int{1, 3, 8} {
		t.Run(fmt.Sprint(shards), func(t *testing.T) {
			driver, err := data([][][2]int{}).Shard(opts, 0, total)
			if err != nil {
				t.Fatal(err)
			}
			runner := &runtime.InProcessShards{}
			for s := 0; s < shards; s++ {
				lo, hi := s*total/shards, (s+1)*total/shards
				sh, err := data(docs[lo:hi]).Shard(opts, lo, total)
				if err != nil {
					t.Fatal(err)
				}
				runner.Shards = append(runner.Shards, sh)
			}
			var fit *runtime.ShardFit
			if svi {
				fit, err = runtime.FitShardsSVI(context.Background(), driver, runner, opts.Sharded(), opts.SVI, opts.Seed)
			} else {
				fit, err = runtime.FitShards(context.Background(), driver, runner, opts.Sharded())
			}
			if err != nil {
				t.Fatal(err)
			}
			all, err := data(docs).Shard(opts, 0, total)
			if err != nil {
				t.Fatal(err)
			}
			locals, err := runner.Locals(fit.LocalsOf)
			if err != nil {
				t.Fatal(err)
			}
			out, err := runtime.WholeResult(context.Background(), all, fit, locals)
			if err != nil {
				t.Fatal(err)
			}
			r := out.(*ctm.Result)
			if r.Iterations != single.Iterations || r.Status != single.Status {
				t.Fatalf("%d iterations (%s), the single-process fit %d (%s)", r.Iterations, r.Status, single.Iterations, single.Status)
			}
			got := flat(r)
			for _, name := range []string{"ELBO", "beta", "mu0", "Sigma0", "theta means"} {
				// norm-wise: the largest difference over the largest value
				diff, scale := 0.0, 0.0
				for i, w := range want[name] {
					diff, scale = math.Max(diff, math.Abs(got[name][i]-w)), math.Max(scale, math.Abs(w))
				}
				worst := diff / scale
				t.Logf("%s: largest difference over largest value %.2g", name, worst)
				if len(got[name]) != len(want[name]) || worst > 1e-12 {
					t.Errorf("%s differs from the single-process fit by %.3g (relative), %d numbers against %d", name, worst, len(got[name]), len(want[name]))
				}
			}
		})
	}
}
