package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/vigen-go/vigen/examples/lda/lda"
	"github.com/vigen-go/vigen/runtime"
)

// Coordinate ascent with global conjugate topics, checkpointed every 4
// iterations, cut off after 9 and resumed from iteration 8, ends
// bit-identical to the uninterrupted 12 iterations.
func TestCheckpointResumeIsIdentical(t *testing.T) {
	data := &lda.Data{K: 3, V: 20, W: small(5, 40, 20)}
	opts := lda.Options{MaxIter: 12, Seed: 9, Tol: 1e-300}
	full, err := lda.Fit(context.Background(), data, opts)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "lda.checkpoint")
	cut := opts
	cut.MaxIter, cut.Checkpoint = 9, runtime.Checkpoint{Path: path, Every: 4}
	if _, err := lda.Fit(context.Background(), data, cut); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cp, err := lda.LoadResult(f)
	if err != nil || cp.Iterations != 8 {
		t.Fatalf("checkpoint: %v, iteration %d (want 8)", err, cp.Iterations)
	}
	opts.Resume = cp
	got, err := lda.Fit(context.Background(), data, opts)
	if err != nil {
		t.Fatal(err)
	}
	got.Seconds, full.Seconds = 0, 0
	a, _ := json.Marshal(got)
	b, _ := json.Marshal(full)
	if !bytes.Equal(a, b) {
		for i := range min(len(a), len(b)) {
			if a[i] != b[i] {
				t.Logf("first difference at byte %d: %s\nvs\n%s", i, a[max(0, i-200):min(len(a), i+100)], b[max(0, i-200):min(len(b), i+100)])
				break
			}
		}
	}
	if !bytes.Equal(a, b) || full.Iterations != 12 {
		t.Errorf("resumed run differs from the uninterrupted one (%d vs %d iterations):\n%v\n%v", got.Iterations, full.Iterations, got.ELBO, full.ELBO)
	}
}
