// Command vigen-beam fits LDA or the correlated topic model by variational
// EM whose E-steps run as Apache Beam pipelines over a corpus split into
// shards (package vigenbeam), and, with -compare, the same fit in one
// process, for the time per iteration and the held-out likelihood side by
// side. From runtime/beam, on the AP corpus split into 8 shards on the
// local runner (prism):
//
//	go run ./cmd/vigen-beam -model lda -K 10 -shards 8 -work /tmp/ap8 \
//	    -train ../../../shared/data/ap/ap-train.dat \
//	    -heldout-obs ../../../shared/data/ap/ap-test-obs.dat \
//	    -heldout ../../../shared/data/ap/ap-test-heldout.dat -compare
//
// -work names a directory that must not exist: the command creates it and
// writes there the shard files, the shards' local factors and each
// E-step's statistics, and nothing elsewhere but -out, which is written
// whole or not at all (a temporary file beside it, created before the fit,
// renamed over it at the end). -inputs names shard files already split:
// their names carry their number and the total, as -train writes them
// (shard-003-of-008.dat), or -shards gives their number; a set with a
// shard missing is refused. SIGINT or SIGTERM stops the fit between two
// pipelines (a second one at once): the command says so, writes no -out
// and exits 4; another error exits 1. Beam's own flags
// (--runner, and a runner's options) follow the command's; on a cluster
// runner the work directory must be one every worker reaches (gs://…
// on Dataflow), and the binary is the workers' too (see README.md).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/vigen-go/vigen/examples/ctm/ctm"
	"github.com/vigen-go/vigen/examples/lda/lda"
	"github.com/vigen-go/vigen/runtime"
	vigenbeam "github.com/vigen-go/vigen/runtime/beam"
	"github.com/vigen-go/vigen/runtime/beam/topics"
)

func main() {
	// the workers' entry point on a cluster; the flags are Beam's and ours
	flag.Usage = usage
	model := flag.String("model", "lda", "lda or ctm")
	train := flag.String("train", "", "training corpus (LDA-C), split into -shards files in the work directory")
	inputs := flag.String("inputs", "", "instead of -train: the shards, LDA-C files already split, as a pattern of any Beam file system (gs://bucket/ap/shard-*.dat), in name order")
	k := flag.Int("K", 10, "number of topics")
	v := flag.Int("V", 0, "vocabulary size (0: the largest term id of the training corpus)")
	shards := flag.Int("shards", 0, "number of shards: to split -train into (0: 8), or of the -inputs files (0: as their names say, shard-003-of-008.dat)")
	work := flag.String("work", "", "work directory to create (must not exist)")
	seed := flag.Uint64("seed", 1, "seed of the starting values")
	maxIter := flag.Int("maxiter", 0, "largest number of EM iterations (0: the default)")
	tol := flag.Float64("tol", 1e-6, "ELBO relative change that ends the fit (examples/lda's default)")
	meanTol := flag.Float64("meantol", math.Inf(1), "also require the relative L2 change of the global factors below this (inf: off, the ELBO alone decides, as in lda-c and examples/lda)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile here")
	obs := flag.String("heldout-obs", "", "observed halves of test documents (LDA-C)")
	held := flag.String("heldout", "", "held-out halves of the same documents (LDA-C)")
	algorithm := flag.String("algorithm", "ca", "ca (variational EM: one pipeline per E-step) or svi (stochastic variational inference: one pipeline per minibatch step and per pass's ELBO)")
	batch := flag.Int("batch", 0, "SVI: documents per minibatch (0: the default)")
	passes := flag.Int("passes", 0, "SVI: passes over the documents (0: the default)")
	compare := flag.Bool("compare", false, "also fit in one process and print both side by side")
	out := flag.String("out", "", "write the sharded fit's result (JSON) here; the file must not exist")
	quiet := flag.Bool("q", false, "no progress lines")
	flag.Parse()
	beam.Init()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "vigen-beam:", err)
			os.Exit(1)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	c := cmd{algorithm: *algorithm, batch: *batch, passes: *passes, model: *model, train: *train, inputs: *inputs, k: *k, v: *v, shards: *shards, work: *work, seed: *seed,
		maxIter: *maxIter, tol: *tol, meanTol: *meanTol, obs: *obs, held: *held, compare: *compare, out: *out, quiet: *quiet}
	ctx, stop := interruptible(os.Stderr)
	defer stop()
	code := exitStatus(c.run(ctx, os.Stdout, os.Stderr))
	pprof.StopCPUProfile()
	os.Exit(code)
}

// errInterrupted is the error of a fit stopped by SIGINT or SIGTERM.
var errInterrupted = errors.New("interrupted")

// interruptible returns a context that SIGINT or SIGTERM ends, saying so on
// stderr: the fit then stops between two pipelines. A second signal has
// its default effect, ending the command at once.
func interruptible(stderr io.Writer) (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		if cause := context.Cause(ctx); cause != context.Canceled { // a signal, not stop
			fmt.Fprintf(stderr, "vigen-beam: %v: stopping after the running pipeline (again to stop at once)\n", cause)
		}
		stop()
	}()
	return ctx, stop
}

// exitStatus reports err on stderr and returns the command's exit status:
// 0 without an error, 4 interrupted, 1 otherwise.
func exitStatus(_ []fitted, err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errInterrupted):
		fmt.Fprintln(os.Stderr, "vigen-beam:", err)
		return 4
	}
	fmt.Fprintln(os.Stderr, "vigen-beam:", err)
	return 1
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: vigen-beam -model lda|ctm -train corpus.dat -K 10 -shards 8 -work DIR [-heldout-obs F -heldout F] [-compare] [-out result.json] [Beam flags: --runner …]")
	flag.PrintDefaults()
}

type cmd struct {
	model, train, inputs, work, obs, held, out, algorithm string
	batch, passes                                         int
	k, v, shards, maxIter                                 int
	seed                                                  uint64
	tol, meanTol                                          float64
	compare, quiet                                        bool
}

// cpuSeconds is the CPU time of this process so far (prism runs the
// pipelines' workers in it).
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// fitted is one fit's outcome, as the comparison prints it.
type fitted struct {
	what             string
	iterations       int
	status           string
	elbo             float64
	wall, cpu        float64
	heldout          *runtime.HeldoutScore
	topics           []float64
	result           any
	estepWall, mWall float64
}

// run runs the command and returns its fits (the one-process fit first).
func (c cmd) run(ctx context.Context, stdout, stderr io.Writer) ([]fitted, error) {
	fits, err := c.fits(ctx, stdout, stderr)
	return fits, err
}

func (c cmd) fits(ctx context.Context, stdout, stderr io.Writer) ([]fitted, error) {
	switch {
	case c.algorithm != "ca" && c.algorithm != "svi":
		return nil, fmt.Errorf("-algorithm %q: give ca or svi", c.algorithm)
	case c.model != "lda" && c.model != "ctm":
		return nil, fmt.Errorf("-model %q: give lda or ctm", c.model)
	case (c.train == "") == (c.inputs == ""):
		return nil, errors.New("give the training corpus, -train, or its shards, -inputs")
	case c.work == "":
		return nil, errors.New("give a work directory to create, -work")
	case (c.obs == "") != (c.held == ""):
		return nil, errors.New("-heldout-obs and -heldout go together")
	}
	// -out is checked, and its temporary file made, before any work
	var out *runtime.AtomicFile
	if c.out != "" {
		if _, err := os.Lstat(c.out); err == nil {
			return nil, fmt.Errorf("-out %s exists; vigen-beam does not overwrite files", c.out)
		}
		var err error
		if out, err = runtime.CreateAtomic(c.out); err != nil {
			return nil, fmt.Errorf("-out: %w", err)
		}
		defer out.Abort() // a no-op after Commit
	}
	var obs, held [][][2]int
	var err error
	if c.obs != "" {
		if obs, err = runtime.ReadLDACFile(c.obs); err != nil {
			return nil, err
		}
		if held, err = runtime.ReadLDACFile(c.held); err != nil {
			return nil, err
		}
	}
	if err := vigenbeam.NewWork(ctx, c.work); err != nil {
		return nil, err
	}
	var docs [][][2]int
	var specs []vigenbeam.ShardSpec
	if c.train != "" {
		if docs, err = runtime.ReadLDACFile(c.train); err != nil {
			return nil, err
		}
		shardDir := filepath.Join(c.work, "shards")
		if err := os.Mkdir(shardDir, 0o755); err != nil {
			return nil, err
		}
		if c.shards == 0 {
			c.shards = 8
		}
		if specs, err = topics.Split(docs, c.shards, shardDir); err != nil {
			return nil, err
		}
	} else {
		// the driver reads each shard once, for its size and for the
		// whole result
		if specs, docs, err = topics.Shards(ctx, c.inputs, c.shards); err != nil {
			return nil, err
		}
		c.shards = len(specs)
	}
	if c.v == 0 {
		c.v = runtime.MaxTerm(docs)
	}
	conf := topics.Config{K: c.k, V: c.v, Seed: c.seed, MaxIter: c.maxIter, Tol: c.tol, MeanTol: c.meanTol}
	if c.algorithm == "svi" {
		conf.Algorithm = "svi"
		conf.SVI.BatchSize, conf.SVI.Passes = c.batch, c.passes
	}
	if math.IsInf(conf.MeanTol, 1) {
		conf.MeanTol = -1 // off, in JSON
	}
	config, err := json.Marshal(conf)
	if err != nil {
		return nil, err
	}
	progress := func(what string) func(runtime.Progress) {
		if c.quiet {
			return nil
		}
		return func(p runtime.Progress) { fmt.Fprintf(stderr, "%s: %s\n", what, p) }
	}
	var fits []fitted
	if c.compare {
		f, err := c.single(ctx, conf, docs, obs, held, progress("one process"))
		if err != nil {
			return nil, err
		}
		fits = append(fits, f)
	}
	f, err := c.sharded(ctx, conf, config, specs, docs, obs, held, progress(fmt.Sprintf("%d shards", c.shards)))
	if err != nil {
		return nil, err
	}
	fits = append(fits, f)
	fmt.Fprintf(stdout, "%s, K = %d, V = %d, %d documents; %d shards on Beam's %s runner\n", c.model, c.k, c.v, len(docs), c.shards, runnerName())
	fmt.Fprintf(stdout, "%-22s %10s %10s %10s %12s %12s %16s  %s\n", "fit", "iterations", "wall s", "CPU s", "wall s/iter", "CPU s/iter", "ELBO", "held-out per word")
	for _, f := range fits {
		h := "-"
		if f.heldout != nil {
			h = fmt.Sprintf("%.10f (%d tokens)", f.heldout.PerWord, f.heldout.Tokens)
		}
		fmt.Fprintf(stdout, "%-22s %10d %10.2f %10.2f %12.3f %12.3f %16.6f  %s\n", f.what, f.iterations, f.wall, f.cpu,
			f.wall/float64(f.iterations), f.cpu/float64(f.iterations), f.elbo, h)
	}
	if len(fits) == 2 {
		a, b := fits[0], fits[1]
		worst := 0.0
		for i := range a.topics {
			if d := abs(a.topics[i]-b.topics[i]) / abs(a.topics[i]); d > worst {
				worst = d
			}
		}
		fmt.Fprintf(stdout, "ratios (shards / one process): wall per iteration %.2f, CPU per iteration %.2f\n",
			(b.wall/float64(b.iterations))/(a.wall/float64(a.iterations)), (b.cpu/float64(b.iterations))/(a.cpu/float64(a.iterations)))
		fmt.Fprintf(stdout, "largest relative difference of the topics: %.2g; held-out per word %s\n", worst, sameHeldout(a.heldout, b.heldout))
	}
	if out != nil {
		enc := json.NewEncoder(out)
		enc.SetIndent("", " ")
		if err := enc.Encode(f.result); err != nil {
			return nil, fmt.Errorf("-out: %w", err)
		}
		if _, err := os.Lstat(c.out); err == nil {
			return nil, fmt.Errorf("-out %s was made during the fit; vigen-beam does not overwrite files", c.out)
		}
		if err := out.Commit(); err != nil {
			return nil, fmt.Errorf("-out: %w", err)
		}
	}
	return fits, nil
}

// canceled is the error of a fit (what) stopped by an interrupt after n
// iterations.
func canceled(what string, n int) error {
	return fmt.Errorf("%w: %s stopped after %d iterations; nothing was written to -out", errInterrupted, what, n)
}

// last is the last ELBO of a trace (NaN for none).
func last(elbo []float64) float64 {
	if len(elbo) == 0 {
		return math.NaN()
	}
	return elbo[len(elbo)-1]
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func sameHeldout(a, b *runtime.HeldoutScore) string {
	switch {
	case a == nil || b == nil:
		return "not scored"
	case a.PerWord == b.PerWord:
		return "identical"
	default:
		return fmt.Sprintf("%.3g apart (%.2g relative)", abs(a.PerWord-b.PerWord), abs(a.PerWord-b.PerWord)/abs(a.PerWord))
	}
}

func runnerName() string {
	if f := flag.Lookup("runner"); f != nil && f.Value.String() != "" {
		return f.Value.String()
	}
	return "prism"
}

// single fits in one process: the generated package's Fit.
func (c cmd) single(ctx context.Context, conf topics.Config, docs, obs, held [][][2]int, progress func(runtime.Progress)) (fitted, error) {
	f := fitted{what: "one process"}
	wall, cpu := time.Now(), cpuSeconds()
	switch c.model {
	case "lda":
		m, err := lda.NewModel(&lda.Data{K: c.k, V: c.v, W: docs})
		if err != nil {
			return f, err
		}
		opts := conf.LDAOptions()
		opts.Progress, opts.NoSummary = progress, true
		opts.Diagnose.Off = true
		r, err := m.Fit(ctx, opts)
		if err != nil {
			return f, err
		}
		if r.Status == "canceled" {
			return f, canceled("the one-process fit", r.Iterations)
		}
		f.wall, f.cpu = time.Since(wall).Seconds(), cpuSeconds()-cpu
		f.result, f.topics = r, r.Latent.Beta.Params["param"]
		f.iterations, f.status, f.elbo = r.Iterations, r.Status, last(r.ELBO)
		if f.iterations == 0 {
			return f, fmt.Errorf("the one-process fit ended before its first iteration: %s", f.status)
		}
		if obs != nil {
			s, err := m.Heldout(ctx, r, obs, held, conf.LDAOptions())
			if err != nil {
				return f, err
			}
			f.heldout = &s
		}
	case "ctm":
		m, err := ctm.NewModel(&ctm.Data{K: c.k, V: c.v, W: docs})
		if err != nil {
			return f, err
		}
		opts := conf.CTMOptions()
		opts.Progress, opts.NoSummary = progress, true
		opts.Diagnose.Off = true
		r, err := m.Fit(ctx, opts)
		if err != nil {
			return f, err
		}
		if r.Status == "canceled" {
			return f, canceled("the one-process fit", r.Iterations)
		}
		f.wall, f.cpu = time.Since(wall).Seconds(), cpuSeconds()-cpu
		f.result = r
		for _, row := range r.Params.Beta {
			f.topics = append(f.topics, row...)
		}
		f.iterations, f.status, f.elbo = r.Iterations, r.Status, last(r.ELBO)
		if f.iterations == 0 {
			return f, fmt.Errorf("the one-process fit ended before its first iteration: %s", f.status)
		}
		if obs != nil {
			s, err := m.Heldout(ctx, r, obs, held, conf.CTMOptions())
			if err != nil {
				return f, err
			}
			f.heldout = &s
		}
	}
	return f, nil
}

// sharded fits with the E-steps as Beam pipelines, then assembles the
// whole result from the fitted globals and the shards' local factors.
func (c cmd) sharded(ctx context.Context, conf topics.Config, config []byte, specs []vigenbeam.ShardSpec, docs, obs, held [][][2]int, progress func(runtime.Progress)) (fitted, error) {
	f := fitted{what: fmt.Sprintf("%d shards (Beam)", len(specs))}
	r := &vigenbeam.Runner{Model: c.model, Config: config, Shards: specs, Work: c.work}
	opts := conf.LDAOptions() // the convergence rule is the one-process fit's
	if err := opts.Prepare("lda", "z"); err != nil {
		return f, err
	}
	conv := opts.Sharded()
	conv.Progress = progress
	wall, cpu := time.Now(), cpuSeconds()
	var fit *runtime.ShardFit
	var err error
	if c.algorithm == "svi" {
		fit, _, err = vigenbeam.FitSVI(ctx, r, conv, opts.SVI, opts.Seed)
	} else {
		fit, _, err = vigenbeam.Fit(ctx, r, conv)
	}
	if err != nil {
		return f, err
	}
	if fit.Run.Status == "canceled" {
		return f, canceled("the sharded fit", fit.Run.Iterations)
	}
	f.wall, f.cpu = time.Since(wall).Seconds(), cpuSeconds()-cpu
	f.iterations, f.status, f.elbo = fit.Run.Iterations, fit.Run.Status, last(fit.Run.ELBO)
	if f.iterations == 0 {
		return f, fmt.Errorf("the sharded fit ended before its first iteration: %s", f.status)
	}
	locals, err := r.Locals(ctx, fit.LocalsOf)
	if err != nil {
		return f, err
	}
	whole, err := topics.Whole(c.model, conf, docs)
	if err != nil {
		return f, err
	}
	fit.Run.Seconds = f.wall
	out, err := runtime.WholeResult(ctx, whole, fit, locals)
	if err != nil {
		return f, err
	}
	switch res := out.(type) {
	case *lda.Result:
		f.result, f.topics = res, res.Latent.Beta.Params["param"]
		if obs != nil {
			m, err := lda.NewModel(&lda.Data{K: c.k, V: c.v, W: docs})
			if err != nil {
				return f, err
			}
			s, err := m.Heldout(ctx, res, obs, held, conf.LDAOptions())
			if err != nil {
				return f, err
			}
			f.heldout = &s
		}
	case *ctm.Result:
		f.result = res
		for _, row := range res.Params.Beta {
			f.topics = append(f.topics, row...)
		}
		if obs != nil {
			m, err := ctm.NewModel(&ctm.Data{K: c.k, V: c.v, W: docs})
			if err != nil {
				return f, err
			}
			s, err := m.Heldout(ctx, res, obs, held, conf.CTMOptions())
			if err != nil {
				return f, err
			}
			f.heldout = &s
		}
	}
	return f, nil
}
