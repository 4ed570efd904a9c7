package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/examples/lda/lda"
	"github.com/vigen-go/vigen/golden"
	"github.com/vigen-go/vigen/runtime"
)

// corpus draws d documents over v terms, each with a favourite block of
// terms, as bags with 1-based ids.
func corpus(seed uint64, d, v int) [][][2]int {
	rng := rand.New(rand.NewPCG(seed, 9))
	docs := make([][][2]int, d)
	for i := range docs {
		counts := make([]int, v)
		focus := rng.IntN(v)
		for n := 10 + rng.IntN(20); n > 0; n-- {
			t := rng.IntN(v)
			if rng.Float64() < 0.6 {
				t = (focus + rng.IntN(3)) % v
			}
			counts[t]++
		}
		for t, c := range counts {
			if c > 0 {
				docs[i] = append(docs[i], [2]int{t + 1, c})
			}
		}
	}
	return docs
}

func writeLDAC(t *testing.T, path string, docs [][][2]int) string {
	t.Helper()
	var b bytes.Buffer
	if err := runtime.WriteLDAC(&b, docs); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// vigen run lda.vi reads the documents from an LDA-C file (-ldac w=FILE,
// the JSON holding only K), fits, and scores the held-out halves
// (-heldout-obs, -heldout): the score on stderr (also with -q) and in
// -heldout-out is the one lda.Model.Heldout gives in-process for the same
// fit, with V the largest term id of the training file.
func TestRunHeldout(t *testing.T) {
	golden.SlowTier(t)
	if testing.Short() {
		t.Skip("builds a model (-short)")
	}
	t.Setenv("VIGEN_CACHE", t.TempDir())
	dir := t.TempDir()
	train := corpus(1, 40, 18) // terms 1..18; the test documents also use 19 and 20
	obs, held := corpus(2, 6, 20), corpus(3, 6, 20)
	trainPath := writeLDAC(t, filepath.Join(dir, "train.dat"), train)
	obsPath := writeLDAC(t, filepath.Join(dir, "obs.dat"), obs)
	heldPath := writeLDAC(t, filepath.Join(dir, "held.dat"), held)
	dataPath := filepath.Join(dir, "data.json")
	if err := os.WriteFile(dataPath, []byte(`{"K": 3}`), 0o644); err != nil {
		t.Fatal(err)
	}
	scorePath := filepath.Join(dir, "score.json")
	for _, alg := range []string{"ca", "svi"} {
		args := []string{"run", "../../examples/lda/lda.vi", "-data", dataPath, "-ldac", "w=" + trainPath, "-seed", "3", "-algorithm", alg,
			"-heldout-obs", obsPath, "-heldout", heldPath, "-heldout-out", scorePath, "-q"}
		if alg == "svi" {
			args = append(args, "-batch", "8", "-passes", "3")
		}
		code, stdout, stderr := runCLI(args...)
		if code != exitConverged {
			t.Fatalf("%s: exit %d:\n%s", alg, code, stderr)
		}
		var res lda.Result
		if err := json.Unmarshal([]byte(stdout), &res); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(scorePath)
		if err != nil {
			t.Fatal(err)
		}
		var got runtime.HeldoutScore
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		opts := lda.Options{Seed: 3, Algorithm: alg}
		if alg == "svi" {
			opts.SVI = runtime.SVISettings{BatchSize: 8, Passes: 3}
		}
		m, err := lda.NewModel(&lda.Data{K: 3, V: 18, W: train})
		if err != nil {
			t.Fatal(err)
		}
		fit, err := m.Fit(context.Background(), opts)
		if err != nil {
			t.Fatal(err)
		}
		want, err := m.Heldout(context.Background(), fit, obs, held, opts)
		if err != nil {
			t.Fatal(err)
		}
		if got != want || want.Unseen == 0 || !strings.Contains(stderr, want.String()) || !strings.Contains(stderr, "predictive: "+want.Predictive) {
			t.Errorf("%s: vigen run scored %+v, stderr:\n%s\nlda.Model.Heldout: %+v", alg, got, stderr, want)
		}
		if !equalFloats(res.ELBO, fit.ELBO) {
			t.Errorf("%s: vigen run's fit differs from the package's: ELBO %v, want %v", alg, res.ELBO, fit.ELBO)
		}
	}

	// bad combinations are refused before the fit, with the reason
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"../../examples/lda/lda.vi", "-data", dataPath, "-ldac", "w=" + trainPath, "-heldout", heldPath}, "-heldout-obs and -heldout go together"},
		{[]string{"../../examples/lda/lda.vi", "-data", dataPath, "-ldac", "x=" + trainPath}, `lda.vi has no bag data variable "x" (its bags: w)`},
		{[]string{"../../examples/lda/lda.vi", "-data", "../../examples/lda/data.json", "-ldac", "w=" + trainPath}, `"w" is given both in the JSON data and as an LDA-C file`},
		{[]string{"../../examples/logreg/logreg.vi", "-data", "../../examples/logreg/data.json", "-heldout-obs", obsPath, "-heldout", heldPath},
			"logreg has no held-out evaluation: logreg.vi:5:7: model logreg has no bag data variable"},
		{[]string{"../../examples/logreg/logreg.vi", "-data", "../../examples/logreg/data.json", "-ldac", "w=" + trainPath}, "logreg.vi has no bag data variable (`data w : bag[D] of 1..V`)"},
	} {
		code, _, stderr := runCLI(append([]string{"run", "-q"}, c.args...)...)
		if code == exitConverged || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr:\n%s\nwant it to contain %q", c.args, code, stderr, c.want)
		}
	}
}

func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
