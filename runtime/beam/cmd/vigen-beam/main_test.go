package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/vigen-go/vigen/runtime"
)

func TestMain(m *testing.M) { ptest.Main(m) }

// TestCompare runs the command on a small corpus with -compare: the
// sharded fit's held-out likelihood is the single-process fit's, and the
// result file is written; a work directory that exists is refused.
func TestCompare(t *testing.T) {
	dir := t.TempDir()
	var docs [][][2]int
	for d := 0; d < 24; d++ {
		var doc [][2]int
		for v := 1; v <= 12; v++ {
			if (d+v)%3 == 0 || (d*v)%5 == 1 {
				doc = append(doc, [2]int{v, 1 + (d+v)%4})
			}
		}
		docs = append(docs, doc)
	}
	write := func(name string, docs [][][2]int) string {
		path := filepath.Join(dir, name)
		var b bytes.Buffer
		if err := runtime.WriteLDAC(&b, docs); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	c := cmd{model: "lda", algorithm: "ca", train: write("train.dat", docs), k: 3, shards: 4, work: filepath.Join(dir, "work"),
		seed: 1, tol: 1e-6, meanTol: -1, obs: write("obs.dat", docs[:5]), held: write("held.dat", docs[5:10]),
		compare: true, out: filepath.Join(dir, "result.json"), quiet: true}
	var out, errs bytes.Buffer
	fits, err := c.run(context.Background(), &out, &errs)
	if err != nil {
		t.Fatalf("%v\n%s", err, errs.String())
	}
	t.Log(out.String())
	if len(fits) != 2 || fits[0].heldout == nil || fits[1].heldout == nil {
		t.Fatalf("want two scored fits, got %+v", fits)
	}
	one, sharded := fits[0], fits[1]
	if one.iterations != sharded.iterations {
		t.Errorf("%d iterations in one process, %d in shards", one.iterations, sharded.iterations)
	}
	if d := math.Abs(one.heldout.PerWord-sharded.heldout.PerWord) / math.Abs(one.heldout.PerWord); d > 1e-12 {
		t.Errorf("held-out per word %v in one process, %v in shards (%.2g relative)", one.heldout.PerWord, sharded.heldout.PerWord, d)
	}
	if b, err := os.ReadFile(c.out); err != nil || !strings.Contains(string(b), `"model": "lda"`) {
		t.Errorf("result file: %v\n%.200s", err, b)
	}
	if _, err := c.run(context.Background(), &out, &errs); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("a second run over the same result file and work directory: %v", err)
	}
}

// TestCompareSVI: with -algorithm svi the sharded fit is the one-process
// SVI fit: the same passes, the held-out likelihood to 1e-12.
func TestCompareSVI(t *testing.T) {
	dir := t.TempDir()
	var docs [][][2]int
	for d := 0; d < 30; d++ {
		var doc [][2]int
		for v := 1; v <= 12; v++ {
			if (d+2*v)%3 == 0 || (d*v)%7 == 2 {
				doc = append(doc, [2]int{v, 1 + (d+v)%3})
			}
		}
		docs = append(docs, doc)
	}
	path := filepath.Join(dir, "train.dat")
	var b bytes.Buffer
	if err := runtime.WriteLDAC(&b, docs); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	c := cmd{model: "ctm", algorithm: "svi", batch: 8, passes: 2, train: path, k: 2, shards: 3,
		work: filepath.Join(dir, "work"), seed: 2, tol: 1e-6, meanTol: -1, obs: path, held: path, compare: true, quiet: true}
	var out, errs bytes.Buffer
	fits, err := c.run(context.Background(), &out, &errs)
	if err != nil {
		t.Fatalf("%v\n%s", err, errs.String())
	}
	t.Log(out.String())
	one, sharded := fits[0], fits[1]
	if one.iterations != 2 || sharded.iterations != 2 || one.status != sharded.status {
		t.Errorf("passes %d (%s) in one process, %d (%s) in shards; want 2", one.iterations, one.status, sharded.iterations, sharded.status)
	}
	if d := math.Abs(one.heldout.PerWord-sharded.heldout.PerWord) / math.Abs(one.heldout.PerWord); d > 1e-12 {
		t.Errorf("held-out per word %v in one process, %v in shards (%.2g relative)", one.heldout.PerWord, sharded.heldout.PerWord, d)
	}
}

// smallCorpus is a corpus of n short documents, written as LDA-C to
// dir/name.
func smallCorpus(t *testing.T, dir, name string, n int) (string, [][][2]int) {
	t.Helper()
	var docs [][][2]int
	for d := 0; d < n; d++ {
		var doc [][2]int
		for v := 1; v <= 12; v++ {
			if (d+v)%3 == 0 || (d*v)%5 == 1 {
				doc = append(doc, [2]int{v, 1 + (d+v)%4})
			}
		}
		docs = append(docs, doc)
	}
	var b bytes.Buffer
	if err := runtime.WriteLDAC(&b, docs); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, docs
}

// -out is checked before any work, not after the fit: a directory that
// does not exist is refused before the work directory is made.
func TestOutCheckedBeforeTheFit(t *testing.T) {
	dir := t.TempDir()
	train, _ := smallCorpus(t, dir, "train.dat", 12)
	c := cmd{model: "lda", algorithm: "ca", train: train, k: 2, shards: 2, work: filepath.Join(dir, "work"),
		seed: 1, tol: 1e-6, meanTol: -1, out: filepath.Join(dir, "missing", "result.json"), quiet: true}
	var out, errs bytes.Buffer
	_, err := c.run(context.Background(), &out, &errs)
	if err == nil || !strings.Contains(err.Error(), "-out") {
		t.Errorf("-out in a missing directory: %v, want an error naming -out", err)
	}
	if _, serr := os.Stat(c.work); serr == nil {
		t.Errorf("the work directory was made (the fit ran) before -out was refused: %v", err)
	}
}

// SIGINT during the fit stops it between two pipelines: the E-step after
// the signal does not start, the command says it was interrupted (exit 4)
// and leaves no -out, not even part of one. The progress line of the
// first iteration sends the signal to this process and waits until it is
// caught.
func TestInterruptStopsBetweenPipelines(t *testing.T) {
	dir := t.TempDir()
	train, _ := smallCorpus(t, dir, "train.dat", 12)
	ctx, stop := interruptible(io.Discard)
	defer stop()
	c := cmd{model: "lda", algorithm: "ca", train: train, k: 2, shards: 2, work: filepath.Join(dir, "work"),
		seed: 1, tol: 1e-300, meanTol: -1, maxIter: 1000, out: filepath.Join(dir, "result.json")}
	progress := writerFunc(func(p []byte) {
		if bytes.Contains(p, []byte("iter   1 ")) {
			syscall.Kill(os.Getpid(), syscall.SIGINT)
			<-ctx.Done()
		}
	})
	var out bytes.Buffer
	fits, err := c.run(ctx, &out, progress)
	if !errors.Is(err, errInterrupted) || !strings.Contains(err.Error(), "the sharded fit stopped after 1 iterations") {
		t.Fatalf("interrupted after the first iteration: %v, %d fits", err, len(fits))
	}
	if code := exitStatus(fits, err); code != 4 {
		t.Errorf("exit status %d, want 4", code)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*result.json*"))
	if len(left) > 0 {
		t.Errorf("an interrupted fit left %v", left)
	}
}

// writerFunc is an io.Writer calling f with each write.
type writerFunc func(p []byte)

func (f writerFunc) Write(p []byte) (int, error) {
	f(p)
	return len(p), nil
}

// A shard missing from the files -inputs matches is refused, not fitted
// around: -train's shards carry their number and the total in their
// names; other names need -shards, their count.
func TestInputsMissingShard(t *testing.T) {
	dir := t.TempDir()
	train, _ := smallCorpus(t, dir, "train.dat", 16)
	split := cmd{model: "lda", algorithm: "ca", train: train, k: 2, shards: 4, work: filepath.Join(dir, "work"),
		seed: 1, tol: 1e-6, meanTol: -1, maxIter: 2, quiet: true}
	var out, errs bytes.Buffer
	if _, err := split.run(context.Background(), &out, &errs); err != nil {
		t.Fatal(err)
	}
	shards := filepath.Join(split.work, "shards")
	if err := os.Remove(filepath.Join(shards, "shard-002-of-004.dat")); err != nil {
		t.Fatal(err)
	}
	c := split
	c.train, c.inputs, c.shards, c.work = "", filepath.Join(shards, "shard-*.dat"), 0, filepath.Join(dir, "work2")
	if _, err := c.run(context.Background(), &out, &errs); err == nil || !strings.Contains(err.Error(), "shard 2 of 4 missing") {
		t.Errorf("a shard missing: %v", err)
	}
	// the same files renamed without their numbers: -shards must say 4
	for i, f := range []string{"shard-001-of-004.dat", "shard-003-of-004.dat", "shard-004-of-004.dat"} {
		to := filepath.Join(dir, fmt.Sprintf("part-%d.dat", i))
		if err := os.Rename(filepath.Join(shards, f), to); err != nil {
			t.Fatal(err)
		}
	}
	c.inputs = filepath.Join(dir, "part-*.dat")
	for _, declared := range []int{0, 4} {
		c.shards, c.work = declared, filepath.Join(dir, fmt.Sprint("work-", declared))
		if _, err := c.run(context.Background(), &out, &errs); err == nil || !strings.Contains(err.Error(), "-shards") {
			t.Errorf("-shards %d, 3 unnumbered files: %v", declared, err)
		}
	}
}
