package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/vigen-go/vigen/examples/hierlogreg/hierlogreg"
	"github.com/vigen-go/vigen/runtime"
)

// Variational EM for the hierarchical model (per-group Laplace, M-steps
// for μ0 and Λ0), checkpointed every 2 iterations, cut off after 5 and
// resumed from iteration 4, ends bit-identical to the uninterrupted run.
func TestCheckpointResumeIsIdentical(t *testing.T) {
	data := smallData()
	data.Mu0, data.Lambda0 = nil, nil
	opts := hierlogreg.Options{MaxIter: 8, Seed: 2, Tol: 1e-300}
	full, err := hierlogreg.Fit(context.Background(), data, opts)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "h.checkpoint")
	cut := opts
	cut.MaxIter, cut.Checkpoint = 5, runtime.Checkpoint{Path: path, Every: 2}
	if _, err := hierlogreg.Fit(context.Background(), data, cut); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cp, err := hierlogreg.LoadResult(f)
	if err != nil || cp.Iterations != 4 {
		t.Fatalf("checkpoint: %v, iteration %d (want 4)", err, cp.Iterations)
	}
	opts.Resume = cp
	got, err := hierlogreg.Fit(context.Background(), data, opts)
	if err != nil {
		t.Fatal(err)
	}
	got.Seconds, full.Seconds = 0, 0
	a, _ := json.Marshal(got)
	b, _ := json.Marshal(full)
	if !bytes.Equal(a, b) || full.Iterations != 8 {
		t.Errorf("resumed run differs from the uninterrupted one (%d vs %d iterations, %s):\n%v\n%v", got.Iterations, full.Iterations, full.Status, got.ELBO, full.ELBO)
	}
}
