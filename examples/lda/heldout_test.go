package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/examples/lda/lda"
	"github.com/vigen-go/vigen/golden"
	"github.com/vigen-go/vigen/runtime"
)

// fitSmall fits K = 3 topics to a small corpus over v terms.
func fitSmall(t *testing.T, docs [][][2]int, v int) *lda.Result {
	t.Helper()
	res, err := lda.Fit(context.Background(), &lda.Data{K: 3, V: v, W: docs}, lda.Options{MaxIter: 30, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// InferTheta's γ_d is the fixed point of Blei et al.'s per-document updates
// (Eqs. 6–7) with the topics held at the given λ, written here with gonum's
// digamma: φ_nk ∝ exp(ψ(γ_k) − ψ(Σ_j γ_j) + ψ(λ_kw) − ψ(Σ_v λ_kv)) and
// γ_k = α + Σ_n c_n φ_nk. Topics that moved with the test documents (a
// global update before the E-step) fail it.
func TestInferThetaHoldsTopicsFixed(t *testing.T) {
	const v, k, alpha = 15, 3, 0.1 // lda.vi's α
	res := fitSmall(t, small(1, 40, v), v)
	lambda := res.Latent.Beta.Params["param"]
	test := small(2, 8, v)
	gamma, unsettled, err := InferTheta(context.Background(), lambda, k, v, nil, nil, test, 1)
	if err != nil || unsettled != 0 {
		t.Fatalf("%v, %d unsettled", err, unsettled)
	}
	elogBeta := make([]float64, k*v)
	for j := range k {
		s := 0.0
		for w := range v {
			s += lambda[j*v+w]
		}
		for w := range v {
			elogBeta[j*v+w] = psi(lambda[j*v+w]) - psi(s)
		}
	}
	for d, doc := range test {
		g := gamma[d]
		sum := 0.0
		for _, x := range g {
			sum += x
		}
		next := []float64{alpha, alpha, alpha}
		for _, e := range doc {
			phi := make([]float64, k)
			z := 0.0
			for j := range k {
				phi[j] = math.Exp(psi(g[j]) - psi(sum) + elogBeta[j*v+e[0]-1])
				z += phi[j]
			}
			for j := range k {
				next[j] += float64(e[1]) * phi[j] / z
			}
		}
		if r := maxRelDiff(g, next); r > 1e-4 {
			t.Errorf("document %d: γ = %v is not the fixed point for the given topics (one more update gives %v, relative change %.1e)", d+1, g, next, r)
		}
	}
	if _, _, err := InferTheta(context.Background(), lambda[1:], k, v, nil, nil, test, 1); err == nil || !strings.Contains(err.Error(), "44 parameters for K = 3 and V = 15") {
		t.Errorf("short λ: error %v", err)
	}
}

// Term 15 never occurs in training: it is left out of the observed halves
// (the score is the same whether they have it or not; with η > 0 the topics
// give it a small probability, which would move θ) and of the held-out
// halves (counted as unseen, not scored).
func TestHeldoutIgnoresUnseenTerms(t *testing.T) {
	const v = 15
	var train [][][2]int
	for _, doc := range small(3, 40, v) {
		var keep [][2]int
		for _, e := range doc {
			if e[0] != v {
				keep = append(keep, e)
			}
		}
		train = append(train, keep)
	}
	res := fitSmall(t, train, v)
	obs, held := small(4, 6, v-1), small(5, 6, v-1)
	base, _, err := Heldout(context.Background(), res, nil, nil, train, obs, held, 1)
	if err != nil {
		t.Fatal(err)
	}
	with := func(docs [][][2]int, c int) [][][2]int {
		out := make([][][2]int, len(docs))
		for d, doc := range docs {
			out[d] = append([][2]int{{v, c + d}}, doc...)
		}
		return out
	}
	got, _, err := Heldout(context.Background(), res, nil, nil, train, with(obs, 5), with(held, 1), 1)
	if err != nil {
		t.Fatal(err)
	}
	want := base
	want.Unseen, want.UnseenTerms = 1+2+3+4+5+6, 1
	if got != want || base.Unseen != 0 || base.Tokens == 0 {
		t.Errorf("with unseen term %d: %+v, want %+v", v, got, want)
	}
	if _, _, err := Heldout(context.Background(), res, nil, nil, train, obs, held[1:], 1); err == nil || !strings.Contains(err.Error(), "line-aligned") {
		t.Errorf("misaligned halves: error %v", err)
	}
	// A term beyond the topics' V never occurred in training either: it is
	// left out like any unseen term, in both halves.
	beyond, _, err := Heldout(context.Background(), res, nil, nil, train, [][][2]int{{{16, 1}, {1, 1}}}, [][][2]int{{{16, 2}, {1, 1}}}, 1)
	if err != nil || beyond.Unseen != 2 || beyond.UnseenTerms != 1 || beyond.Tokens != 1 {
		t.Errorf("term beyond V: %+v, error %v; want 2 unseen tokens of 1 term and 1 scored", beyond, err)
	}
}

// The command's held-out mode: flags as examples/ctm's, the score on
// stdout and in the JSON, and bad combinations as errors.
func TestCommandHeldout(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, docs [][][2]int) string {
		var b bytes.Buffer
		if err := runtime.WriteLDAC(&b, docs); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	train := write("train.dat", small(6, 40, 20))
	obs := write("obs.dat", small(7, 5, 20))
	held := write("held.dat", small(8, 5, 20))
	args := []string{"-q", "-train", train, "-K", "3", "-heldout-obs", obs, "-heldout", held}
	var out, errOut bytes.Buffer
	if err := run(args, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); !strings.Contains(s, "held-out per-word log likelihood -") || !strings.Contains(s, "40 documents, 20 terms, 3 topics") {
		t.Errorf("output:\n%s", s)
	}
	out.Reset()
	if err := run(append(args, "-json"), &out, &errOut); err != nil {
		t.Fatal(err)
	}
	var r struct {
		Model   string
		Heldout *runtime.HeldoutScore
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil || r.Model != "lda" || r.Heldout == nil || !(r.Heldout.PerWord < 0) || r.Heldout.Tokens == 0 {
		t.Errorf("JSON: %v, %+v", err, r)
	}
	if errOut.Len() != 0 {
		t.Errorf("-q wrote to stderr:\n%s", errOut.String())
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-train", train, "-heldout", held}, "go together"},
		{[]string{"-heldout-obs", obs, "-heldout", held}, "needs the training corpus"},
		{[]string{"-train", train, "-ldac", train}, "the same flag"},
		{[]string{"-train", train, "-heldout-obs", obs, "-heldout", write("short.dat", small(8, 4, 20))}, "line-aligned"},
		{[]string{"-train", train, "-heldout-obs", obs, "-heldout", filepath.Join(dir, "none.dat")}, "none.dat"},
	} {
		err := run(append([]string{"-q", "-K", "3"}, c.args...), &out, &errOut)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one containing %q", c.args, err, c.want)
		}
	}
}

// sharedData returns the path of ../shared/data/<rel> next to the module,
// or skips the test with a message when it is absent (a fresh clone).
func sharedData(t testing.TB, rel string) string {
	t.Helper()
	dir, _ := os.Getwd()
	for d := dir; d != filepath.Dir(d); d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			p := filepath.Join(d, "..", "shared", "data", rel)
			if _, err := os.Stat(p); err != nil {
				t.Skipf("skipping: %s not found (the shared data sets are not in a fresh clone)", p)
			}
			return p
		}
	}
	t.Skip("skipping: module root not found")
	return ""
}

// On the AP split (../shared/data/README.md) the evaluator scores the
// 42,564 held-out tokens but the 280 of the 64 terms unseen in training,
// and three EM iterations with K = 10 already beat the unigram model (one
// topic: the smoothed training term frequencies) scored the same way.
func TestHeldoutAP(t *testing.T) {
	golden.SlowTier(t)
	if testing.Short() {
		t.Skip("skipping: fits AP (-short)")
	}
	trainDocs, err := runtime.ReadLDACFile(sharedData(t, "ap/ap-train.dat"))
	if err != nil {
		t.Fatal(err)
	}
	obs, err := runtime.ReadLDACFile(sharedData(t, "ap/ap-test-obs.dat"))
	if err != nil {
		t.Fatal(err)
	}
	held, err := runtime.ReadLDACFile(sharedData(t, "ap/ap-test-heldout.dat"))
	if err != nil {
		t.Fatal(err)
	}
	const v = 10473
	data := &lda.Data{K: 10, V: v, W: trainDocs}
	start, err := DocumentStart(data)
	if err != nil {
		t.Fatal(err)
	}
	res, err := lda.Fit(context.Background(), data, lda.Options{Start: start, MaxIter: 3})
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := Heldout(context.Background(), res, nil, nil, trainDocs, obs, held, 0)
	if err != nil {
		t.Fatal(err)
	}
	if s.Tokens != 42564-280 || s.Unseen != 280 || s.UnseenTerms != 64 {
		t.Errorf("scored %d tokens, left out %d of %d terms; want 42284, 280 of 64", s.Tokens, s.Unseen, s.UnseenTerms)
	}
	uni := make([]float64, v)
	total := 0.0
	for _, doc := range trainDocs {
		for _, e := range doc {
			uni[e[0]-1] += float64(e[1])
		}
	}
	for w := range uni {
		uni[w] += 0.01
		total += uni[w]
	}
	for w := range uni {
		uni[w] /= total
	}
	ones := make([][]float64, len(held))
	for d := range ones {
		ones[d] = []float64{1}
	}
	seen, _ := runtime.SeenTerms(trainDocs, v)
	u, err := runtime.HeldoutPerWord(ones, [][]float64{uni}, held, seen)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("K = 10 after 3 iterations: %.4f; unigram %.4f", s.PerWord, u.PerWord)
	if !(s.PerWord > u.PerWord+0.2) || s.PerWord > -7 {
		t.Errorf("held-out per word %.4f, unigram %.4f: want the topics at least 0.2 nats better, and below −7", s.PerWord, u.PerWord)
	}
}
