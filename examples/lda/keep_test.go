package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/examples/lda/lda"
	"github.com/vigen-go/vigen/runtime"
)

// A result leaves out every token's q(z) unless Options.Keep names it, and
// says so in Omitted; the fit itself is the same bit for bit, so the two
// results differ only there and in the summary's rows of z.
func TestResultLeavesOutTokensUnlessKept(t *testing.T) {
	data := &lda.Data{K: 3, V: 20, W: small(7, 30, 20)}
	fit := func(keep ...string) *lda.Result {
		res, err := lda.Fit(context.Background(), data, lda.Options{MaxIter: 15, Seed: 4, Keep: keep})
		if err != nil {
			t.Fatal(err)
		}
		res.Seconds = 0
		return res
	}
	lean, kept, all := fit(), fit("z"), fit("all")
	if lean.Latent.Z != nil || !slices.Equal(lean.Omitted, []string{"z"}) {
		t.Errorf("default result: z %v, omitted %v; want z left out and omitted [z]", lean.Latent.Z != nil, lean.Omitted)
	}
	if kept.Latent.Z == nil || kept.Omitted != nil || all.Latent.Z == nil || all.Omitted != nil {
		t.Fatalf("Keep z / all: z kept %v / %v, omitted %v / %v", kept.Latent.Z != nil, all.Latent.Z != nil, kept.Omitted, all.Omitted)
	}
	if n := len(kept.Latent.Z.Params["prob"]); n != 3*len(runtimeTerms(data.W)) {
		t.Errorf("kept z has %d probabilities, want K × entries = %d", n, 3*len(runtimeTerms(data.W)))
	}
	a, _ := json.Marshal(kept)
	b, _ := json.Marshal(all)
	if !bytes.Equal(a, b) {
		t.Errorf("Keep z and Keep all give different results")
	}
	var zRows []runtime.SummaryRow
	for _, r := range kept.Summary {
		if strings.HasPrefix(r.Name, "z[") {
			zRows = append(zRows, r)
		}
	}
	if len(zRows) != len(kept.Latent.Z.Params["prob"]) {
		t.Errorf("the kept result's summary has %d rows of z, want one per probability, %d", len(zRows), len(kept.Latent.Z.Params["prob"]))
	}
	lean.Latent.Z, lean.Omitted = kept.Latent.Z, nil
	lean.Summary = append(lean.Summary, zRows...) // z is the last latent
	c, _ := json.Marshal(lean)
	if !bytes.Equal(a, c) {
		t.Errorf("leaving z out changed the rest of the result")
	}
	var raw struct {
		Latent map[string]json.RawMessage `json:"latent"`
	}
	d, _ := json.Marshal(fit())
	if err := json.Unmarshal(d, &raw); err != nil || string(raw.Latent["z"]) != "null" || !strings.Contains(string(d), `"omitted":["z"]`) {
		t.Errorf("JSON of the default result: z %s, want null and \"omitted\":[\"z\"] (err %v)", raw.Latent["z"], err)
	}
}

func runtimeTerms(docs [][][2]int) []int {
	var out []int
	for _, doc := range docs {
		for _, e := range doc {
			out = append(out, e[0])
		}
	}
	return out
}

// A fit started from a result without q(z) starts z at its closed-form
// optimum given the result's q(θ) and q(β) (Blei et al. 2003, Eq. 6), so the
// first sweep's γ is α plus the counts weighted by that φ (Eq. 7).
func TestStartWithoutZRestoresItsOptimum(t *testing.T) {
	const d, v, k = 15, 12, 3
	const alpha = 0.1 // lda.vi's default
	docs := small(2, d, v)
	data := &lda.Data{K: k, V: v, W: docs}
	res1, err := lda.Fit(context.Background(), data, lda.Options{MaxIter: 2, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if res1.Latent.Z != nil {
		t.Fatal("the start keeps z; the test needs it left out")
	}
	res2, err := lda.Fit(context.Background(), data, lda.Options{Start: res1, MaxIter: 1, LocalMaxIter: 1})
	if err != nil {
		t.Fatal(err)
	}
	lambda1, gamma1 := res1.Latent.Beta.Params["param"], res1.Latent.Theta.Params["param"]
	gamma2 := res2.Latent.Theta.Params["param"]
	psiSum := psiRowSums(lambda1, k, v)
	want := make([]float64, d*k)
	for dd, doc := range docs {
		g1 := gamma1[dd*k : (dd+1)*k]
		gs := 0.0
		for _, x := range g1 {
			gs += x
		}
		g := want[dd*k : (dd+1)*k]
		for kk := range g {
			g[kk] = alpha
		}
		row := make([]float64, k)
		for _, p := range doc {
			chenPhi(row, g1, gs, lambda1, psiSum, v, p[0])
			for kk := range row {
				g[kk] += float64(p[1]) * row[kk]
			}
		}
	}
	if dev := maxRelDiff(gamma2, want); dev > 1e-10 {
		t.Errorf("γ after one sweep from a start without z deviates from the closed forms by %.3g", dev)
	}
	if maxRelDiff(gamma2, gamma1) < 1e-6 {
		t.Errorf("γ did not move; the comparison is vacuous")
	}
}

// Keep names per-token latents only; a checkpoint holds them whatever Keep
// says, so that a resumed run continues exactly.
func TestKeepChecksAndCheckpointsHoldZ(t *testing.T) {
	data := &lda.Data{K: 2, V: 10, W: small(3, 10, 10)}
	for _, keep := range []string{"theta", "zz", ""} {
		_, err := lda.Fit(context.Background(), data, lda.Options{MaxIter: 2, Keep: []string{keep}})
		if err == nil || !strings.Contains(err.Error(), "not a per-token latent of lda; give one of z") {
			t.Errorf("Keep %q: error %v", keep, err)
		}
	}
	path := filepath.Join(t.TempDir(), "cp.json")
	res, err := lda.Fit(context.Background(), data, lda.Options{MaxIter: 3, Tol: 1e-300, Checkpoint: runtime.Checkpoint{Path: path, Every: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Latent.Z != nil {
		t.Errorf("the result keeps z without Keep")
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cp, err := lda.LoadResult(f)
	if err != nil {
		t.Fatal(err)
	}
	if cp.Latent.Z == nil || cp.Omitted != nil || len(cp.Latent.Z.Params["prob"]) != 2*len(runtimeTerms(data.W)) {
		t.Errorf("the checkpoint left z out (omitted %v)", cp.Omitted)
	}
}

// Resume continues a run exactly only from the whole state: a result that
// left z out is refused, naming what to resume from instead.
func TestResumeNeedsZ(t *testing.T) {
	data := &lda.Data{K: 2, V: 10, W: small(4, 10, 10)}
	res, err := lda.Fit(context.Background(), data, lda.Options{MaxIter: 3, Tol: 1e-300})
	if err != nil {
		t.Fatal(err)
	}
	_, err = lda.Fit(context.Background(), data, lda.Options{MaxIter: 6, Tol: 1e-300, Resume: res})
	if err == nil || !strings.Contains(err.Error(), "resume: the result leaves out z; resume from a checkpoint") {
		t.Errorf("Resume from a result without z: error %v", err)
	}
}
