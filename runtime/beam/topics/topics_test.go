package topics

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/vigen-go/vigen/examples/lda/lda"
	"github.com/vigen-go/vigen/runtime"
	vigenbeam "github.com/vigen-go/vigen/runtime/beam"
)

func TestMain(m *testing.M) { ptest.Main(m) }

// corpus draws d documents of 8 to 30 tokens over v terms, each leaning
// to a few terms.
func corpus(seed uint64, d, v int) [][][2]int {
	rng := rand.New(rand.NewPCG(seed, 42))
	docs := make([][][2]int, d)
	for i := range docs {
		counts := make([]int, v)
		focus := rng.IntN(v)
		for n := 8 + rng.IntN(23); n > 0; n-- {
			t := rng.IntN(v)
			if rng.Float64() < 0.5 {
				t = (focus + rng.IntN(4)) % v
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

// TestPipelineIsTheFit: LDA's variational EM with its E-steps run as Beam
// pipelines on the local runner (prism), over the corpus split into 1, 3
// and 8 shard files, is the single-process fit: the same iterations and
// status, and the ELBO trace, topics and topic proportions to 1e-12.
func TestPipelineIsTheFit(t *testing.T) {
	docs := corpus(7, 40, 30)
	c := Config{K: 4, V: 30, Seed: 3, Tol: 1e-7}
	single := fitOne(t, docs, c)
	if !single.Converged || single.Iterations < 5 {
		t.Fatalf("the single-process fit: %s after %d iterations; the test wants a converged fit of some length", single.Status, single.Iterations)
	}
	for _, shards := range []int{1, 3, 8} {
		t.Run(fmt.Sprint(shards), func(t *testing.T) { pipelineIsFit(t, docs, c, shards, single) })
	}
}

// TestPipelineSVIIsSVI: LDA's stochastic variational inference with each
// minibatch step and each pass's ELBO a pipeline on prism, over 3 shard
// files, is the single-process SVI fit to 1e-12.
func TestPipelineSVIIsSVI(t *testing.T) {
	docs := corpus(8, 40, 30)
	c := Config{K: 4, V: 30, Seed: 5, Algorithm: "svi"}
	c.SVI.BatchSize, c.SVI.Passes = 15, 2
	pipelineIsFit(t, docs, c, 3, fitOne(t, docs, c))
}

// fitOne is LDA's fit of docs under c in one process.
func fitOne(t *testing.T, docs [][][2]int, c Config) *lda.Result {
	t.Helper()
	r, err := lda.Fit(context.Background(), &lda.Data{K: c.K, V: c.V, W: docs}, c.LDAOptions())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// pipelineIsFit fits docs under c split into shards files, with Beam
// pipelines on prism (variational EM, or SVI under c.Algorithm), and
// checks the whole result against the single-process fit: the same
// iterations and status, and the ELBO trace, topics and topic
// proportions to 1e-12.
func pipelineIsFit(t *testing.T, docs [][][2]int, c Config, shards int, single *lda.Result) {
	t.Helper()
	config, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	specs, err := Split(docs, shards, dir)
	if err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	opts := c.LDAOptions()
	if err := opts.Prepare("lda", "z"); err != nil {
		t.Fatal(err)
	}
	r := &vigenbeam.Runner{Model: "lda", Config: config, Shards: specs, Work: work}
	ctx := context.Background()
	var fit *runtime.ShardFit
	if c.Algorithm == "svi" {
		fit, _, err = vigenbeam.FitSVI(ctx, r, opts.Sharded(), opts.SVI, opts.Seed)
	} else {
		fit, _, err = vigenbeam.Fit(ctx, r, opts.Sharded())
	}
	if err != nil {
		t.Fatal(err)
	}
	// the whole result: the fitted globals, the shards' locals
	all, err := Whole("lda", c, docs)
	if err != nil {
		t.Fatal(err)
	}
	locals, err := r.Locals(ctx, fit.LocalsOf)
	if err != nil {
		t.Fatal(err)
	}
	out, err := runtime.WholeResult(ctx, all, fit, locals)
	if err != nil {
		t.Fatal(err)
	}
	res := out.(*lda.Result)
	if res.Iterations != single.Iterations || res.Status != single.Status {
		t.Fatalf("%d iterations (%s), the single-process fit %d (%s)", res.Iterations, res.Status, single.Iterations, single.Status)
	}
	for _, x := range []struct {
		name      string
		got, want []float64
	}{
		{"ELBO", res.ELBO, single.ELBO},
		{"topics", res.Latent.Beta.Params["param"], single.Latent.Beta.Params["param"]},
		{"topic proportions", res.Latent.Theta.Params["param"], single.Latent.Theta.Params["param"]},
	} {
		if len(x.got) != len(x.want) {
			t.Fatalf("%s: %d numbers, want %d", x.name, len(x.got), len(x.want))
		}
		worst := 0.0
		for i, w := range x.want {
			worst = math.Max(worst, math.Abs(x.got[i]-w)/math.Abs(w))
		}
		t.Logf("%s: largest relative difference %.2g", x.name, worst)
		if worst > 1e-12 {
			t.Errorf("%s differs from the single-process fit by %.3g (relative)", x.name, worst)
		}
	}
}

// CheckComplete accepts the files of a whole split and refuses a set with
// a shard missing, doubled, from two splits or out of order, and
// unnumbered files whose count -shards does not give.
func TestCheckComplete(t *testing.T) {
	names := func(ns ...[2]int) []string {
		var out []string
		for _, n := range ns {
			out = append(out, "gs://b/ap/"+ShardName(n[0], n[1]))
		}
		return out
	}
	for _, c := range []struct {
		files    []string
		declared int
		want     string // "" accepted
	}{
		{names([2]int{1, 3}, [2]int{2, 3}, [2]int{3, 3}), 0, ""},
		{names([2]int{1, 3}, [2]int{2, 3}, [2]int{3, 3}), 3, ""},
		{names([2]int{1, 3}, [2]int{3, 3}), 0, "shard 2 of 3 missing"},
		{names([2]int{1, 3}, [2]int{2, 3}, [2]int{3, 3}), 4, "-shards says 4"},
		{names([2]int{1, 2}, [2]int{2, 3}), 0, "one split"},
		{[]string{"a/shard-1-of-10.dat", "a/shard-10-of-10.dat", "a/shard-2-of-10.dat"}, 0, "missing"},
		{[]string{"a/x.dat", "a/y.dat"}, 0, "give -shards"},
		{[]string{"a/x.dat", "a/y.dat"}, 3, "2 shard files match, and -shards says 3"},
		{[]string{"a/x.dat", "a/y.dat"}, 2, ""},
	} {
		err := CheckComplete(c.files, "PATTERN", c.declared)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%v, -shards %d: %v, want %q", c.files, c.declared, err, c.want)
		}
	}
	if got := ShardName(7, 1200); got != "shard-0007-of-1200.dat" {
		t.Errorf("ShardName(7, 1200) = %s", got)
	}
}
