package main

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
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
