package main

import (
	"context"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/examples/ctm/ctm"
	"github.com/vigen-go/vigen/golden"
	"github.com/vigen-go/vigen/runtime"
)

// Online EM for the CTM's params β, μ0, Σ0 (Options.Algorithm "svi"): the
// stochastic analogue of variational EM's M-steps, on running averages of
// the expected sufficient statistics.

func bundledData(t *testing.T) *ctm.Data {
	t.Helper()
	f, err := os.Open("data.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := ctm.LoadData(f)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// checkParams wants β's rows on the simplex, μ0 finite and Σ0 symmetric
// positive definite.
func checkParams(t *testing.T, p ctm.Params, K int) {
	t.Helper()
	for k, row := range p.Beta {
		s := 0.0
		for v, x := range row {
			if !(x > 0) || math.IsInf(x, 0) {
				t.Fatalf("beta[%d][%d] = %v", k+1, v+1, x)
			}
			s += x
		}
		if math.Abs(s-1) > 1e-12 {
			t.Errorf("beta[%d] sums to %v", k+1, s)
		}
	}
	if i := runtime.FirstNonFinite(p.Mu0); i >= 0 {
		t.Errorf("mu0[%d] = %v", i+1, p.Mu0[i])
	}
	flat, err := runtime.Flat2("Sigma0", p.Sigma0, K, K, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := runtime.CheckSPD("Sigma0", flat, K); err != nil {
		t.Error(err)
	}
	for i := range K {
		for j := range K {
			if flat[i*K+j] != flat[j*K+i] {
				t.Errorf("Sigma0 is not symmetric at (%d, %d)", i+1, j+1)
			}
		}
	}
}

// relDiff is the largest relative difference between two params.
func relDiff(a, b ctm.Params) float64 {
	worst := 0.0
	cmp := func(x, y []float64) {
		for i := range x {
			worst = math.Max(worst, math.Abs(x[i]-y[i])/math.Max(math.Abs(y[i]), 1e-300))
		}
	}
	for k := range a.Beta {
		cmp(a.Beta[k], b.Beta[k])
		cmp(a.Sigma0[k], b.Sigma0[k])
	}
	cmp(a.Mu0, b.Mu0)
	return worst
}

// One pass of SVI whose single minibatch holds every document is one
// iteration of variational EM: every document's E-step, then the M-steps
// from all their statistics (the first step's ρ is 1). The result must be
// batch EM's first iteration, up to the order in which the documents'
// statistics are added (SVI adds them in the minibatch's shuffled order).
func TestSVIOnePassFullBatchIsOneEMIteration(t *testing.T) {
	d := bundledData(t)
	for _, opts := range []ctm.Options{{}, {Smoothing: 0.3, Shrinkage: 0.2}} {
		opts.Seed = 4
		batchOpts := opts
		batchOpts.MaxIter = 1
		batch, err := ctm.Fit(context.Background(), d, batchOpts)
		if err != nil {
			t.Fatal(err)
		}
		opts.Algorithm = "svi"
		opts.SVI = runtime.SVISettings{BatchSize: 1000, Passes: 1}
		svi, err := ctm.Fit(context.Background(), d, opts)
		if err != nil {
			t.Fatal(err)
		}
		if svi.Status != runtime.PassesStatus || len(svi.ELBO) != 1 || len(batch.ELBO) != 1 {
			t.Fatalf("svi: status %q, %d ELBOs; batch: %d ELBOs", svi.Status, len(svi.ELBO), len(batch.ELBO))
		}
		if r := relDiff(svi.Params, batch.Params); r > 1e-12 {
			t.Errorf("%+v: params differ from batch EM's first iteration by %.3g (relative)", opts, r)
		}
		if r := math.Abs(svi.ELBO[0]-batch.ELBO[0]) / math.Abs(batch.ELBO[0]); r > 1e-12 {
			t.Errorf("%+v: ELBO %v, batch EM's first iteration %v", opts, svi.ELBO[0], batch.ELBO[0])
		}
		checkParams(t, svi.Params, d.K)
	}
}

// Online EM must reach the neighbourhood of batch EM's optimum from the
// same start in a few passes, with finite ELBOs and proper params after
// every pass. With κ near ½ it forgets the statistics of the first passes,
// fitted under poor params, quickly (measured: after 20 passes of
// minibatches of 15 documents, 0.12% below batch EM's converged ELBO, where
// batch EM's 20th iteration is 0.36% below).
func TestOnlineEMApproachesBatchEM(t *testing.T) {
	golden.SlowTier(t)
	d := bundledData(t)
	batch, err := ctm.Fit(context.Background(), d, ctm.Options{Seed: 2, MaxIter: 1000, Tol: 1e-9})
	if err != nil {
		t.Fatal(err)
	}
	best := batch.ELBO[len(batch.ELBO)-1]
	const passes = 20
	passed := 0
	opts := ctm.Options{Seed: 2, Algorithm: "svi", SVI: runtime.SVISettings{BatchSize: 15, Tau0: 1, Kappa: 0.51, Passes: passes}}
	opts.Progress = func(p runtime.Progress) { passed++ }
	svi, err := ctm.Fit(context.Background(), d, opts)
	if err != nil {
		t.Fatal(err)
	}
	if svi.Status != runtime.PassesStatus || svi.Iterations != passes || len(svi.ELBO) != passes || passed != passes {
		t.Fatalf("status %q after %d passes with %d ELBOs and %d progress reports, want %d", svi.Status, svi.Iterations, len(svi.ELBO), passed, passes)
	}
	for i, e := range svi.ELBO {
		if math.IsNaN(e) || math.IsInf(e, 0) || e > 0 {
			t.Errorf("pass %d: ELBO %v", i+1, e)
		}
	}
	checkParams(t, svi.Params, d.K)
	gap := (best - svi.ELBO[passes-1]) / math.Abs(best)
	t.Logf("batch EM: %d iterations, ELBO %.6f; online EM's relative gap after %d passes %.3g", batch.Iterations, best, passes, gap)
	if !(math.Abs(gap) < 2.5e-3) {
		t.Errorf("after %d passes online EM's ELBO %v is %.3g (relative) from batch EM's %v", passes, svi.ELBO[passes-1], gap, best)
	}
}

// With harmonic steps (τ0 = 1, κ = 1) the running statistics are the
// average of every minibatch's so far, so online EM moves slowly, but it
// must move up from the first pass and keep proper params.
func TestOnlineEMHarmonicSteps(t *testing.T) {
	d := bundledData(t)
	const passes = 5
	svi, err := ctm.Fit(context.Background(), d, ctm.Options{Seed: 2, Algorithm: "svi", SVI: runtime.SVISettings{BatchSize: 25, Tau0: 1, Kappa: 1, Passes: passes}})
	if err != nil {
		t.Fatal(err)
	}
	if len(svi.ELBO) != passes {
		t.Fatalf("status %q, %d ELBOs, want %d", svi.Status, len(svi.ELBO), passes)
	}
	for i, e := range svi.ELBO {
		if math.IsNaN(e) || math.IsInf(e, 0) || e > 0 {
			t.Errorf("pass %d: ELBO %v", i+1, e)
		}
	}
	if !(svi.ELBO[passes-1] > svi.ELBO[0]) {
		t.Errorf("ELBO after the first pass %v, after the last %v: online EM made no progress", svi.ELBO[0], svi.ELBO[passes-1])
	}
	checkParams(t, svi.Params, d.K)
}

// With FixParams the CTM has nothing for SVI to step (no global latents,
// and its params are held): Fit must say so, not run.
func TestSVIWithFixedParamsIsAnError(t *testing.T) {
	d := bundledData(t)
	fit, err := ctm.Fit(context.Background(), d, ctm.Options{MaxIter: 2})
	if err != nil {
		t.Fatal(err)
	}
	fit.Params.Into(d)
	_, err = ctm.Fit(context.Background(), d, ctm.Options{Algorithm: "svi", FixParams: true})
	if err == nil {
		t.Fatal("SVI with FixParams ran")
	}
	if !strings.Contains(err.Error(), "stochastic variational inference") || !strings.Contains(err.Error(), "params") {
		t.Errorf("error %q does not say that SVI has no params to step", err)
	}
}
