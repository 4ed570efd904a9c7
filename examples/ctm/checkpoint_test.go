package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/examples/ctm/ctm"
	"github.com/vigen-go/vigen/runtime"
)

// sameRun compares two results' JSON, Seconds aside: bit-identical
// posteriors, params and ELBO traces.
func sameRun(t *testing.T, got, want *ctm.Result) {
	t.Helper()
	a, b := *got, *want
	a.Seconds, b.Seconds = 0, 0
	ja, err1 := json.Marshal(&a)
	jb, err2 := json.Marshal(&b)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if !bytes.Equal(ja, jb) {
		t.Errorf("results differ: status %q vs %q, %d vs %d iterations, ELBO\n%v\nvs\n%v", a.Status, b.Status, a.Iterations, b.Iterations, a.ELBO, b.ELBO)
	}
}

// Variational EM with checkpoints every 3 iterations, stopped after 7 (as
// a crash would) and resumed from the last checkpoint (iteration 6), ends
// bit-identical to the uninterrupted run of 10 iterations.
func TestCheckpointResumeIsIdentical(t *testing.T) {
	_, docs := smallCorpus(t, 60)
	data := &ctm.Data{K: 3, W: docs, V: 15}
	for _, method := range []string{"laplace", "delta"} {
		opts := ctm.Options{MaxIter: 10, Seed: 3, Method: method, Tol: 1e-300}
		full, err := ctm.Fit(context.Background(), data, opts)
		if err != nil {
			t.Fatal(err)
		}
		if full.Iterations != 10 {
			t.Fatalf("%s: uninterrupted run stopped after %d iterations (%s)", method, full.Iterations, full.Status)
		}
		path := filepath.Join(t.TempDir(), "fit.checkpoint.json")
		crashed := opts
		crashed.MaxIter = 7
		crashed.Checkpoint = runtime.Checkpoint{Path: path, Every: 3}
		if _, err := ctm.Fit(context.Background(), data, crashed); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		cp, err := ctm.LoadResult(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if cp.Iterations != 6 || cp.Status != "checkpoint" || len(cp.ELBO) != 6 {
			t.Fatalf("%s: checkpoint at iteration %d with %d ELBO values, status %q; want 6, 6, checkpoint", method, cp.Iterations, len(cp.ELBO), cp.Status)
		}
		resumed := opts
		resumed.Resume = cp
		got, err := ctm.Fit(context.Background(), data, resumed)
		if err != nil {
			t.Fatal(err)
		}
		sameRun(t, got, full)
	}
}

// Fit refuses a checkpoint path holding anything but a checkpoint of its
// model, and LoadResult refuses another model's result.
func TestCheckpointNeverOverwritesForeignFiles(t *testing.T) {
	_, docs := smallCorpus(t, 10)
	dir := t.TempDir()
	mine := filepath.Join(dir, "notes.json")
	os.WriteFile(mine, []byte(`{"model": "ctm", "status": "converged"}`), 0o644)
	_, err := ctm.Fit(context.Background(), &ctm.Data{K: 3, W: docs, V: 15},
		ctm.Options{MaxIter: 2, Checkpoint: runtime.Checkpoint{Path: mine, Every: 1}})
	if err == nil || !strings.Contains(err.Error(), "refusing to overwrite "+mine) {
		t.Errorf("error %v, want a refusal naming %s", err, mine)
	}
	if b, _ := os.ReadFile(mine); string(b) != `{"model": "ctm", "status": "converged"}` {
		t.Error("the file was changed")
	}
	if _, err := ctm.LoadResult(strings.NewReader(`{"model": "lda", "iterations": 3}`)); err == nil || !strings.Contains(err.Error(), "lda") {
		t.Errorf("LoadResult of another model's result: error %v", err)
	}
}

// A cancellation is honoured within the iteration it arrives in: the E-step
// stops handing out documents, and Fit returns, marked "canceled", the
// state at the end of the last completed iteration, which is exactly what
// an uncanceled run of that many iterations returns. Both paths are
// driven deterministically (a timer racing the E-step made this test
// depend on the machine's load): a cancellation seen at the top of
// iteration 3, and one seen only by the E-step of iteration 3.
func TestCancelWithinIteration(t *testing.T) {
	_, docs := smallCorpus(t, 400)
	data := &ctm.Data{K: 3, W: docs, V: 15}
	opts := ctm.Options{MaxIter: 50, Seed: 3, Tol: 1e-300, Workers: 2}
	ref := opts
	ref.MaxIter = 2
	want, err := ctm.Fit(context.Background(), data, ref)
	if err != nil {
		t.Fatal(err)
	}
	want.Status = "canceled"
	// a canceled run skips the approximation diagnostic
	want.Diagnostics = nil
	for _, inEStep := range []bool{false, true} {
		ctx := &eStepCancel{Context: context.Background(), cancel: make(chan struct{})}
		o := opts
		o.Progress = func(p runtime.Progress) {
			if p.Iteration == 2 {
				ctx.fire(inEStep)
			}
		}
		res, err := ctm.Fit(ctx, data, o)
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != "canceled" || res.Iterations != 2 || res.Diagnostics != nil {
			t.Fatalf("in the E-step %v: status %q after %d iterations, want canceled with 2 complete", inEStep, res.Status, res.Iterations)
		}
		sameRun(t, res, want)
	}
}

// eStepCancel is a context canceled on fire: fully (Err and Done), or, to
// reach the E-step's own check, through Done alone, which only the E-step
// reads.
type eStepCancel struct {
	context.Context
	cancel         chan struct{}
	done, canceled bool
}

func (c *eStepCancel) fire(doneOnly bool) {
	close(c.cancel)
	c.done, c.canceled = true, !doneOnly
}

func (c *eStepCancel) Done() <-chan struct{} {
	if c.done {
		return c.cancel
	}
	return nil
}

func (c *eStepCancel) Err() error {
	if c.canceled {
		return context.Canceled
	}
	return nil
}

// Resume refuses to continue a run under anything that changes its fixed
// point, saying what differs: other data of the same shape, another
// method, other smoothing, or a checkpoint whose params were removed or
// edited (issue 15, item 11). The same checkpoint resumes with the data
// and options it was written with.
func TestResumeRefusesADifferentRun(t *testing.T) {
	_, docs := smallCorpus(t, 40)
	data := &ctm.Data{K: 3, W: docs, V: 15}
	path := filepath.Join(t.TempDir(), "fit.checkpoint.json")
	opts := ctm.Options{MaxIter: 4, Seed: 3, Tol: 1e-300, Checkpoint: runtime.Checkpoint{Path: path, Every: 2}}
	if _, err := ctm.Fit(context.Background(), data, opts); err != nil {
		t.Fatal(err)
	}
	load := func() *ctm.Result {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cp, err := ctm.LoadResult(f)
		if err != nil {
			t.Fatal(err)
		}
		return cp
	}
	resume := func(data *ctm.Data, opts ctm.Options, cp *ctm.Result) error {
		opts.Checkpoint, opts.Resume, opts.MaxIter = runtime.Checkpoint{}, cp, 6
		_, err := ctm.Fit(context.Background(), data, opts)
		return err
	}
	if err := resume(data, opts, load()); err != nil {
		t.Fatalf("resuming the same run: %v", err)
	}

	// Same shape, other counts: the first document's first count + 1.
	other := *data
	other.W = make([][][2]int, len(docs))
	for d := range docs {
		other.W[d] = append([][2]int(nil), docs[d]...)
	}
	other.W[0][0][1]++
	delta := opts
	delta.Method = "delta"
	smooth := opts
	smooth.Smoothing = 0.5
	noParams := load()
	noParams.Params = ctm.Params{}
	edited := load()
	edited.Params.Mu0[0] += 1e-9
	for _, c := range []struct {
		name string
		data *ctm.Data
		opts ctm.Options
		cp   *ctm.Result
		want string
	}{
		{"other data", &other, opts, load(), "the values of w differ"},
		{"other method", data, delta, load(), "method is delta,conjugate, the checkpoint was fitted with laplace,conjugate"},
		{"other smoothing", data, smooth, load(), "Smoothing is 0.5, the checkpoint was fitted with 0"},
		{"params removed", data, opts, noParams, "params are not the ones it was saved with"},
		{"params edited", data, opts, edited, "params are not the ones it was saved with"},
	} {
		err := resume(c.data, c.opts, c.cp)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.want)
		}
	}
	old := load()
	old.Fingerprint = nil
	if err := resume(data, opts, old); err == nil || !strings.Contains(err.Error(), "no fingerprint") {
		t.Errorf("checkpoint without a fingerprint: error %v", err)
	}
}
