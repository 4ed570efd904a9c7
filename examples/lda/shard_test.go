package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/examples/lda/lda"
	"github.com/vigen-go/vigen/runtime"
)

// ldaShards makes the driver and n contiguous shards of docs under opts.
func ldaShards(t *testing.T, docs [][][2]int, k, v, n int, opts lda.Options) (runtime.Shard, []runtime.Shard) {
	t.Helper()
	shard := func(w [][][2]int, first int) runtime.Shard {
		m, err := lda.NewModel(&lda.Data{K: k, V: v, W: w})
		if err != nil {
			t.Fatal(err)
		}
		sh, err := m.Shard(opts, first, len(docs))
		if err != nil {
			t.Fatal(err)
		}
		return sh
	}
	var shards []runtime.Shard
	for s := 0; s < n; s++ {
		lo, hi := s*len(docs)/n, (s+1)*len(docs)/n
		shards = append(shards, shard(docs[lo:hi], lo))
	}
	return shard([][][2]int{}, 0), shards
}

// shardedLDA fits docs split into the given number of contiguous shards
// in this process, by runtime.FitShards (or FitShardsSVI under
// opts.Algorithm "svi"), and assembles the whole result from the
// driver's globals and the shards' locals.
func shardedLDA(t *testing.T, docs [][][2]int, k, v, shards int, opts lda.Options) *lda.Result {
	t.Helper()
	ctx := context.Background()
	driver, parts := ldaShards(t, docs, k, v, shards, opts)
	runner := &runtime.InProcessShards{Shards: parts}
	var fit *runtime.ShardFit
	var err error
	if opts.Algorithm == "svi" {
		fit, err = runtime.FitShardsSVI(ctx, driver, runner, opts.Sharded(), opts.SVI, opts.Seed)
	} else {
		fit, err = runtime.FitShards(ctx, driver, runner, opts.Sharded())
	}
	if err != nil {
		t.Fatal(err)
	}
	_, all := ldaShards(t, docs, k, v, 1, opts)
	locals, err := runner.Locals(fit.LocalsOf)
	if err != nil {
		t.Fatal(err)
	}
	out, err := runtime.WholeResult(ctx, all[0], fit, locals)
	if err != nil {
		t.Fatal(err)
	}
	return out.(*lda.Result)
}

// TestShardedFitIsTheFit: variational EM over 1, 3 and 8 shards, the
// E-steps shard by shard and the topics' update from their statistics
// combined exactly, is the single-process fit: same iterations and
// status, ELBO trace, topics and topic proportions to 1e-12. It starts
// where that fit does although each shard draws only its own units'
// starting values.
func TestShardedFitIsTheFit(t *testing.T) {
	opts := lda.Options{Seed: 3}
	opts.Tol = 1e-9
	shardedIsFit(t, opts)
}

// TestShardedFitGlobalChange: where the change of the topics decides
// convergence (MeanTol), the sharded fit measures it as the single-process
// fit does, and stops at the same iteration.
func TestShardedFitGlobalChange(t *testing.T) {
	opts := lda.Options{Seed: 3}
	opts.Tol, opts.MeanTol = 1e-3, math.Inf(1)
	elboOnly, err := lda.Fit(context.Background(), &lda.Data{K: 4, V: 30, W: small(7, 40, 30)}, opts)
	if err != nil {
		t.Fatal(err)
	}
	opts.MeanTol = 1e-6
	single := shardedIsFit(t, opts)
	if single.Iterations <= elboOnly.Iterations {
		t.Fatalf("the change of the topics does not decide: %d iterations with MeanTol, %d without", single.Iterations, elboOnly.Iterations)
	}
}

// shardedIsFit fits in one process and over 1, 3 and 8 shards with opts,
// checks they agree, and returns the single-process fit.
func shardedIsFit(t *testing.T, opts lda.Options) *lda.Result {
	const k, v = 4, 30
	docs := small(7, 40, v)
	single, err := lda.Fit(context.Background(), &lda.Data{K: k, V: v, W: docs}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !single.Converged || single.Iterations < 10 {
		t.Fatalf("the single-process fit: %s after %d iterations; the test wants a converged fit of some length", single.Status, single.Iterations)
	}
	for _, shards := range []int{1, 3, 8} {
		t.Run(fmt.Sprint(shards), func(t *testing.T) {
			r := shardedLDA(t, docs, k, v, shards, opts)
			if r.Iterations != single.Iterations || r.Status != single.Status {
				t.Fatalf("%d iterations (%s), the single-process fit %d (%s)", r.Iterations, r.Status, single.Iterations, single.Status)
			}
			for name, d := range map[string]float64{
				"ELBO":  maxRelDiff(r.ELBO, single.ELBO),
				"beta":  maxRelDiff(r.Latent.Beta.Params["param"], single.Latent.Beta.Params["param"]),
				"theta": maxRelDiff(r.Latent.Theta.Params["param"], single.Latent.Theta.Params["param"]),
			} {
				t.Logf("%s: largest relative difference %.2g", name, d)
				if d > 1e-12 {
					t.Errorf("%s differs from the single-process fit by %.3g (relative)", name, d)
				}
			}
		})
	}
	return single
}

// TestShardedSVIIsSVI: stochastic variational inference over 1, 3 and 8
// shards (runtime.FitShardsSVI: each minibatch's units updated by the
// shards holding them, the natural-gradient step from their statistics
// combined exactly) is the single-process SVI fit: the same minibatches,
// ELBO after each pass, topics and topic proportions to 1e-12.
func TestShardedSVIIsSVI(t *testing.T) {
	const k, v = 4, 30
	docs := small(9, 50, v)
	opts := lda.Options{Seed: 5, Algorithm: "svi"}
	opts.SVI.BatchSize, opts.SVI.Passes = 7, 4
	single, err := lda.Fit(context.Background(), &lda.Data{K: k, V: v, W: docs}, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, shards := range []int{1, 3, 8} {
		t.Run(fmt.Sprint(shards), func(t *testing.T) {
			r := shardedLDA(t, docs, k, v, shards, opts)
			if r.Iterations != single.Iterations || r.Status != single.Status {
				t.Fatalf("%d passes (%s), the single-process fit %d (%s)", r.Iterations, r.Status, single.Iterations, single.Status)
			}
			for _, x := range []struct {
				name      string
				got, want []float64
			}{
				{"ELBO", r.ELBO, single.ELBO},
				{"beta", r.Latent.Beta.Params["param"], single.Latent.Beta.Params["param"]},
				{"theta", r.Latent.Theta.Params["param"], single.Latent.Theta.Params["param"]},
			} {
				d := maxRelDiff(x.got, x.want)
				t.Logf("%s: largest relative difference %.2g", x.name, d)
				if len(x.got) != len(x.want) || d > 1e-12 {
					t.Errorf("%s differs from the single-process SVI fit by %.3g (relative)", x.name, d)
				}
			}
		})
	}
}

// nanAt is a runner whose E-step at iteration bad reports a NaN ELBO (the
// ELBO of iteration bad−1), and which records the shards' locals of each
// E-step as it ends.
type nanAt struct {
	*runtime.InProcessShards
	bad    int
	locals map[int][]byte
}

func (r *nanAt) EStep(ctx context.Context, it int, globals []byte, elbo bool) (*runtime.ShardStats, error) {
	st, err := r.InProcessShards.EStep(ctx, it, globals, elbo)
	if err != nil {
		return nil, err
	}
	if r.locals[it], err = r.InProcessShards.Locals(it); err != nil {
		return nil, err
	}
	if it == r.bad {
		st.ELBO = runtime.NewExactVec(1)
		st.ELBO.AddAt(0, math.NaN())
	}
	return st, nil
}

// TestShardedNotFiniteKeepsTheLastGoodIteration: when iteration 4's ELBO
// is NaN (seen in E-step 5), the fit ends not_finite with the globals of
// M-step 3 and the locals of E-step 3, although E-steps 4 and 5 have run
// since; the driver holds those globals.
func TestShardedNotFiniteKeepsTheLastGoodIteration(t *testing.T) {
	const k, v = 4, 30
	docs := small(7, 40, v)
	opts := lda.Options{Seed: 3}
	driver, shards := ldaShards(t, docs, k, v, 2, opts)
	runner := &nanAt{InProcessShards: &runtime.InProcessShards{Shards: shards}, bad: 5, locals: map[int][]byte{}}
	fit, err := runtime.FitShards(context.Background(), driver, runner, opts.Sharded())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(fit.Run.Status, "not_finite") || fit.Run.Iterations != 3 || fit.LocalsOf != 3 {
		t.Fatalf("status %q after %d iterations, locals of E-step %d; want not_finite after 3, locals of 3", fit.Run.Status, fit.Run.Iterations, fit.LocalsOf)
	}
	got, err := runner.Locals(fit.LocalsOf)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, runner.locals[3]) {
		t.Error("the kept locals are not those of E-step 3")
	}
	if bytes.Equal(got, runner.locals[5]) || bytes.Equal(got, runner.locals[4]) {
		t.Error("the kept locals are those of a later E-step")
	}
	held, err := driver.Globals()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(held, fit.Globals) {
		t.Error("the driver does not hold the kept globals")
	}
}

// nanPass is an SVI runner whose ELBO at the end of pass bad is NaN, and
// which records the shards' locals at the end of each pass.
type nanPass struct {
	*runtime.InProcessShards
	bad    int
	locals map[int][]byte
}

func (r *nanPass) ELBO(ctx context.Context, pass int, globals []byte) (*runtime.ShardStats, error) {
	st, err := r.InProcessShards.ELBO(ctx, pass, globals)
	if err != nil {
		return nil, err
	}
	if r.locals[pass], err = r.InProcessShards.Locals(pass); err != nil {
		return nil, err
	}
	if pass == r.bad {
		st.ELBO.AddAt(0, math.NaN())
	}
	return st, nil
}

// TestShardedSVINotFiniteKeepsTheLastGoodPass: when pass 3's ELBO is NaN,
// sharded SVI ends not_finite with pass 2's globals and locals, as FitSVI
// keeps its state after pass 2.
func TestShardedSVINotFiniteKeepsTheLastGoodPass(t *testing.T) {
	const k, v = 4, 30
	docs := small(9, 50, v)
	opts := lda.Options{Seed: 5, Algorithm: "svi"}
	opts.SVI.BatchSize, opts.SVI.Passes = 7, 4
	driver, shards := ldaShards(t, docs, k, v, 2, opts)
	runner := &nanPass{InProcessShards: &runtime.InProcessShards{Shards: shards}, bad: 3, locals: map[int][]byte{}}
	fit, err := runtime.FitShardsSVI(context.Background(), driver, runner, opts.Sharded(), opts.SVI, opts.Seed)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(fit.Run.Status, "not_finite") || fit.Run.Iterations != 2 || fit.LocalsOf != 2 {
		t.Fatalf("status %q after %d passes, locals of pass %d; want not_finite after 2, locals of 2", fit.Run.Status, fit.Run.Iterations, fit.LocalsOf)
	}
	got, err := runner.Locals(fit.LocalsOf)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, runner.locals[2]) || bytes.Equal(got, runner.locals[3]) {
		t.Error("the kept locals are not those of pass 2")
	}
	held, err := driver.Globals()
	if err != nil || !bytes.Equal(held, fit.Globals) {
		t.Errorf("the driver does not hold the kept globals (%v)", err)
	}
}
