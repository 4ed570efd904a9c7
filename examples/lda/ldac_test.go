package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/examples/lda/lda"
	"github.com/vigen-go/vigen/runtime"
)

// writeLDACModel writes logBeta and alpha as lda-c's save_lda_model does
// (lda-model.c): ROOT.beta with " %5.10f" per entry and a newline per
// topic, ROOT.other with num_topics, num_terms and "alpha %5.10f". It
// returns ROOT (dir/final).
func writeLDACModel(t *testing.T, dir string, logBeta [][]float64, alpha float64) string {
	t.Helper()
	root := filepath.Join(dir, "final")
	var b strings.Builder
	for _, row := range logBeta {
		for _, x := range row {
			fmt.Fprintf(&b, " %5.10f", x)
		}
		b.WriteString("\n")
	}
	if err := os.WriteFile(root+".beta", []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	other := fmt.Sprintf("num_topics %d\nnum_terms %d\nalpha %5.10f\n", len(logBeta), len(logBeta[0]), alpha)
	if err := os.WriteFile(root+".other", []byte(other), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

func logs(p [][]float64) [][]float64 {
	out := make([][]float64, len(p))
	for k, row := range p {
		out[k] = make([]float64, len(row))
		for v, x := range row {
			out[k][v] = math.Log(x)
		}
	}
	return out
}

// fixtureBeta is a 3-topic, 6-term model with distinct rows and columns;
// topic 2 gives term 1 lda-c's floor, log β = −100, and topic 3 gives term
// 2 a probability below the smallest float64, written as lda-c writes a
// subnormal expected count (fixtureLogs).
var fixtureBeta = [][]float64{
	{0.5, 0.2, 0.1, 0.1, 0.05, 0.05},
	{math.Exp(-100), 0.05, 0.15, 0.3, 0.2, 0.3},
	{0.3, 0, 0.1, 0.05, 0.25, 0.3},
}

const tinyLog = -755.0875647827 // from an lda-c fit to AP (final.beta)

func fixtureLogs() [][]float64 {
	l := logs(fixtureBeta)
	l[2][1] = tinyLog
	return l
}

const fixtureAlpha = 0.0402673676 // an α as lda-c fits it on AP with K = 10

func TestReadLDACModel(t *testing.T) {
	root := writeLDACModel(t, t.TempDir(), fixtureLogs(), fixtureAlpha)
	m, err := ReadLDACModel(root)
	if err != nil {
		t.Fatal(err)
	}
	if m.K != 3 || m.V != 6 || m.Alpha != fixtureAlpha {
		t.Fatalf("K = %d, V = %d, α = %v; want 3, 6, %v", m.K, m.V, m.Alpha, fixtureAlpha)
	}
	if m.LogBeta[1][0] != -100 || m.LogBeta[0][1] != -1.6094379124 || m.LogBeta[2][5] != -1.2039728043 || m.LogBeta[2][1] != tinyLog {
		t.Errorf("log β[2][1], [1][2], [3][6], [3][2] = %v, %v, %v, %v; want -100, -1.6094379124, -1.2039728043, %v",
			m.LogBeta[1][0], m.LogBeta[0][1], m.LogBeta[2][5], m.LogBeta[2][1], tinyLog)
	}
	beta := m.Beta()
	for k := range fixtureBeta {
		for v, want := range fixtureBeta[k] {
			if math.Abs(beta[k][v]-want) > 1e-10 {
				t.Errorf("β[%d][%d] = %v, want %v", k+1, v+1, beta[k][v], want)
			}
		}
	}
	// the point mass: E[β] = λ/Σλ = β, λ positive everywhere
	r := m.Result(0)
	lambda := r.Latent.Beta.Params["param"]
	if sh := r.Latent.Beta.Shape; len(sh) != 2 || sh[0] != 3 || sh[1] != 6 || len(lambda) != 18 {
		t.Fatalf("q(β) shape %v with %d parameters", sh, len(lambda))
	}
	mean := TopicMeans(r)
	for k := range fixtureBeta {
		for v, want := range fixtureBeta[k] {
			if math.Abs(mean[k][v]-want) > 1e-10 || !(lambda[k*6+v] > 0) {
				t.Errorf("E[β][%d][%d] = %v (λ = %v), want %v", k+1, v+1, mean[k][v], lambda[k*6+v], want)
			}
		}
	}

	// the entry below the smallest float64 still gets a finite E[log β]:
	// the fixture scores (term 2 in both halves)
	train := [][][2]int{{{1, 3}, {2, 1}, {3, 2}}, {{4, 2}, {5, 1}, {6, 4}}, {{2, 2}, {5, 3}}}
	obs := [][][2]int{{{2, 1}, {5, 2}}, {{1, 2}, {3, 1}}}
	held := [][][2]int{{{2, 1}, {6, 1}}, {{1, 1}, {4, 1}}}
	if s, err := ScoreLDAC(context.Background(), m, train, obs, held, m.Alpha, 0, lda.Options{}); err != nil || !(s.PerWord < 0) || s.Tokens != 4 {
		t.Errorf("scoring the fixture: %+v, %v", s, err)
	}

	bad := []struct{ beta, other, want string }{
		{" -0.6931471806 -0.6931471806\n", "num_topics 2\nnum_terms 2\nalpha 0.1\n", "1 rows, want num_topics = 2"},
		{" -0.6931471806 -0.6931471806\n -0.6931471806 -0.6931471806\n -0.6931471806 -0.6931471806\n", "num_topics 2\nnum_terms 2\nalpha 0.1\n", "more than num_topics"},
		{" -0.6931471806 -0.6931471806 -0.6931471806\n", "num_topics 1\nnum_terms 2\nalpha 0.1\n", "3 values, want num_terms = 2"},
		{" 0.5 0.5\n", "num_topics 1\nnum_terms 2\nalpha 0.1\n", "not a log-probability"},
		{" -1 -1\n", "num_topics 1\nnum_terms 2\nalpha 0.1\n", "sum to"},
		{" -0.6931471806 -0.6931471806\n", "num_topics 1\nnum_terms 2\n", "no alpha"},
		{" -0.6931471806 -0.6931471806\n", "num_topics 1\nnum_terms 2\nalpha 0\n", "positive"},
		{" -0.6931471806 -0.6931471806\n", "num_topics 1\nnum_terms 2\nalpha 0.1\neta 1\n", "unknown name"},
		{" -0.6931471806 -0.6931471806\n", "num_topics 1\nnum_topics 1\nnum_terms 2\nalpha 0.1\n", "twice"},
	}
	for i, c := range bad {
		dir := t.TempDir()
		root := filepath.Join(dir, "final")
		if err := os.WriteFile(root+".beta", []byte(c.beta), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(root+".other", []byte(c.other), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadLDACModel(root); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("case %d: error %v, want one containing %q", i+1, err, c.want)
		}
	}
}

// pointMassHeldout is document completion with the topics a point mass at
// beta, written out without the generated package: per test document,
// Blei et al.'s updates with E[log β] = log β, φ_nk ∝ β_kw exp(ψ(γ_k)) and
// γ_k = α + Σ_n c_n φ_nk, iterated from γ_k = α + N/K until γ changes by
// less than 1e-13 (relative), then Σ c log Σ_k (γ_k/Σγ) β_kw over the
// held-out tokens, per token. Terms not in train are left out of both
// halves.
func pointMassHeldout(t *testing.T, beta [][]float64, alpha float64, train, obs, held [][][2]int) float64 {
	t.Helper()
	k, v := len(beta), len(beta[0])
	seen := make([]bool, v)
	for _, doc := range train {
		for _, e := range doc {
			seen[e[0]-1] = true
		}
	}
	ok := func(w int) bool { return w <= v && seen[w-1] }
	ll, n := 0.0, 0
	for d := range obs {
		tokens := 0.0
		for _, e := range obs[d] {
			if ok(e[0]) {
				tokens += float64(e[1])
			}
		}
		gamma := make([]float64, k)
		for j := range gamma {
			gamma[j] = alpha + tokens/float64(k)
		}
		next, phi, lw := make([]float64, k), make([]float64, k), make([]float64, k)
		settled := false
		for it := 0; it < 100000 && !settled; it++ {
			for j := range next {
				next[j] = alpha
			}
			for _, e := range obs[d] {
				if !ok(e[0]) {
					continue
				}
				hi := math.Inf(-1)
				for j := range k {
					lw[j] = math.Log(beta[j][e[0]-1]) + psi(gamma[j])
					hi = max(hi, lw[j])
				}
				z := 0.0
				for j := range k {
					phi[j] = math.Exp(lw[j] - hi)
					z += phi[j]
				}
				for j := range k {
					next[j] += float64(e[1]) * phi[j] / z
				}
			}
			settled = maxRelDiff(next, gamma) < 1e-13
			copy(gamma, next)
		}
		if !settled {
			t.Fatalf("test document %d: γ did not settle", d+1)
		}
		sum := 0.0
		for _, g := range gamma {
			sum += g
		}
		for _, e := range held[d] {
			if !ok(e[0]) {
				continue
			}
			p := 0.0
			for j := range k {
				p += gamma[j] / sum * beta[j][e[0]-1]
			}
			ll += float64(e[1]) * math.Log(p)
			n += e[1]
		}
	}
	return ll / float64(n)
}

// lda-c's topics equal to a vigen fit's E[β] score what the generated
// evaluator gives that fit made a point mass (λ_k scaled to Σ_v λ_kv =
// 1e100, E[β] unchanged), what document completion with the point mass
// written by hand gives, with lda-c's α (not lda.vi's 0.1); the command
// prints the same.
func TestScoreLDACIsPointMassScore(t *testing.T) {
	const v, alpha = 6, 0.05
	train := small(1, 40, v)
	res := fitSmall(t, train, v)
	beta := TopicMeans(res)
	obs, held := halves(small(2, 12, v))
	root := writeLDACModel(t, t.TempDir(), logs(beta), alpha)
	m, err := ReadLDACModel(root)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	got, err := ScoreLDAC(ctx, m, train, obs, held, m.Alpha, 0, lda.Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got.Unsettled != 0 || got.Tokens == 0 {
		t.Fatalf("score %+v", got)
	}

	// the same evaluator on the vigen fit made a point mass
	lambda := res.Latent.Beta.Params["param"]
	point := make([]float64, len(lambda))
	for k := range 3 {
		s := 0.0
		for _, x := range lambda[k*v : (k+1)*v] {
			s += x
		}
		for w := range v {
			point[k*v+w] = lambda[k*v+w] / s * 1e100
		}
	}
	model, err := lda.NewModel(&lda.Data{K: 3, V: v, W: train, Alpha: ptr(alpha)})
	if err != nil {
		t.Fatal(err)
	}
	pm := &lda.Result{Latent: lda.Latent{Beta: runtime.NewFactor("Dirichlet", []int{3, v}, "param", point)}}
	vigen, err := model.Heldout(ctx, pm, obs, held, lda.Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if d := math.Abs(got.PerWord - vigen.PerWord); d > 1e-9 || got.Tokens != vigen.Tokens {
		t.Errorf("lda-c's files score %+v, the vigen fit as a point mass %+v: differ by %.1e", got, vigen, d)
	}

	// by hand, and α matters
	want := pointMassHeldout(t, beta, alpha, train, obs, held)
	if d := math.Abs(got.PerWord - want); d > 1e-6 {
		t.Errorf("score %.10f, point-mass document completion by hand %.10f: differ by %.1e", got.PerWord, want, d)
	}
	other := pointMassHeldout(t, beta, 0.1, train, obs, held)
	if math.Abs(other-want) < 1e-4 {
		t.Fatalf("the fixture does not tell α = %v from 0.1 (%.10f, %.10f)", alpha, want, other)
	}
	// vigen's own score of the fit, q(β) its Dirichlet: E[log β] = ψ(λ) − ψ(Σλ)
	// in the completion, not log E[β]
	own, err := model.Heldout(ctx, res, obs, held, lda.Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("point mass at E[β]: %.10f (by hand %.10f; with α = 0.1: %.10f); the fit's own q(β): %.10f", got.PerWord, want, other, own.PerWord)

	// the command, with lda-c's α and with -alpha
	files := t.TempDir()
	paths := map[string][][][2]int{"train.dat": train, "obs.dat": obs, "held.dat": held}
	for name, docs := range paths {
		var b bytes.Buffer
		if err := runtime.WriteLDAC(&b, docs); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(files, name), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		extra []string
		alpha float64
		from  string
		want  float64
	}{{nil, alpha, "lda-c", want}, {[]string{"-alpha", "0.1"}, 0.1, "-alpha", other}} {
		args := append([]string{"-model", root, "-train", filepath.Join(files, "train.dat"),
			"-heldout-obs", filepath.Join(files, "obs.dat"), "-heldout", filepath.Join(files, "held.dat"), "-json"}, c.extra...)
		var out, errOut bytes.Buffer
		if err := scoreLDAC(args, &out, &errOut); err != nil {
			t.Fatalf("score-ldac %v: %v (%s)", args, err, errOut.String())
		}
		var s ldacScore
		if err := json.Unmarshal(out.Bytes(), &s); err != nil {
			t.Fatal(err)
		}
		if s.K != 3 || s.V != v || s.Alpha != c.alpha || s.AlphaFrom != c.from || math.Abs(s.Heldout.PerWord-c.want) > 1e-6 {
			t.Errorf("score-ldac %v: %+v, want α = %v from %s and per-word %.10f", c.extra, s, c.alpha, c.from, c.want)
		}
	}
	// lda-c's num_terms below the training corpus's terms: another corpus
	short := &LDACModel{K: m.K, V: v - 1, Alpha: m.Alpha, LogBeta: m.LogBeta}
	if _, err := ScoreLDAC(ctx, short, train, obs, held, m.Alpha, 0, lda.Options{}); err == nil || !strings.Contains(err.Error(), "not the corpus") {
		t.Errorf("num_terms too small: error %v", err)
	}
}

// With LDAC_MODEL=DIR/final (an lda-c fit to ../shared/data/ap/ap-train.dat),
// the score of that fit, checked against the point-mass document
// completion by hand. Skipped without LDAC_MODEL.
func TestScoreLDACFilesAP(t *testing.T) {
	root := os.Getenv("LDAC_MODEL")
	if root == "" {
		t.Skip("skipping: set LDAC_MODEL=DIR/final to score an lda-c fit to AP")
	}
	var docs [3][][][2]int
	for i, name := range []string{"ap-train.dat", "ap-test-obs.dat", "ap-test-heldout.dat"} {
		var err error
		if docs[i], err = runtime.ReadLDACFile(sharedData(t, "ap/"+name)); err != nil {
			t.Fatal(err)
		}
	}
	m, err := ReadLDACModel(root)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	got, err := ScoreLDAC(ctx, m, docs[0], docs[1], docs[2], m.Alpha, 0, lda.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// the test documents fitted to 1e-12 with no cap on the sweeps
	tight, err := ScoreLDAC(ctx, m, docs[0], docs[1], docs[2], m.Alpha, 0, lda.Options{LocalMaxIter: 1000000, LocalTol: 1e-12})
	if err != nil {
		t.Fatal(err)
	}
	want := pointMassHeldout(t, m.Beta(), m.Alpha, docs[0], docs[1], docs[2])
	t.Logf("%s: K = %d, α = %v: per-word %.10f (%d tokens, %d unsettled); to 1e-12 %.10f; by hand %.10f",
		root, m.K, m.Alpha, got.PerWord, got.Tokens, got.Unsettled, tight.PerWord, want)
	if d := math.Abs(tight.PerWord - want); d > 1e-8 || tight.Unsettled != 0 {
		t.Errorf("fitted to 1e-12, differs from the point-mass completion by hand by %.1e (%d unsettled)", d, tight.Unsettled)
	}
	// with Heldout's defaults a document that does not settle within its
	// sweeps moves the score by some 1e-5 (AP, K = 10)
	if d := math.Abs(got.PerWord - want); d > 1e-4 || got.Unsettled == 0 && d > 1e-6 {
		t.Errorf("differs from the point-mass completion by hand by %.1e (%d unsettled)", d, got.Unsettled)
	}
}
