// Package vigenbeam runs the E-steps of a vigen model's sharded
// variational EM (runtime.FitShards) as Apache Beam pipelines, so that a
// fit scales out on any Beam runner: prism, the local runner, for tests
// and one machine; Dataflow, Flink or Spark on a cluster (beamx's
// --runner flag).
//
// Beam has no loops, and whether variational EM goes on depends on the
// ELBO of the last iteration, so the fit is an iterative driver
// (runtime.FitShards, in the program that calls it) that launches one
// pipeline per E-step:
//
//	shards ──ParDo(eStepFn, globals as a side input)──▶ statistics
//	       ──Combine(statsFn)──▶ the statistics of all units ──▶ a file
//
// Each eStepFn call opens one shard (its input file, through the
// model's registered Opener), sets the current globals, reads the
// shard's local factors as the previous E-step left them from the work
// directory, updates its units, writes their new local factors back and
// emits their expected sufficient statistics. statsFn merges statistics
// exactly (runtime.ShardStats: sums as exact expansions), so the
// combination does not depend on how the runner groups or orders the
// shards. The driver reads the combined statistics, runs the M-step and
// the convergence rule, and launches the next pipeline. The generated
// package knows nothing of Beam: it supplies a runtime.Shard.
//
// Local factors stay where the work directory is, three generations of
// them (the E-step being run, the one before, which FitShards may keep,
// and the one before that, kept if the last is not finite), so the work
// directory must be reachable by every worker: a
// local directory for prism, gs:// or another Beam file system on a
// cluster. A retried eStepFn writes the same bytes again: an E-step is a
// function of its inputs.
package vigenbeam

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	"github.com/vigen-go/vigen/runtime"
)

// ShardSpec is one shard of a sharded fit: its units are First+1 ..
// First+Units of Total (1-based), read from Input.
type ShardSpec struct {
	Index        int
	First, Units int
	Total        int
	Input        string
}

// Opener opens a shard of one generated model: spec's units, read from
// spec.Input, as a runtime.Shard, with the model's options encoded in
// config (the Opener's own format; JSON in the bundled ones). An empty
// Input asks for the driver's shard, of no units.
type Opener func(ctx context.Context, config []byte, spec ShardSpec) (runtime.Shard, error)

var (
	openersMu sync.Mutex
	openers   = map[string]Opener{}
)

// Register makes a model's Opener known by name. Call it from an init
// function: on a cluster, workers run the same binary and find the
// model by name.
func Register(name string, open Opener) {
	openersMu.Lock()
	defer openersMu.Unlock()
	openers[name] = open
}

// Open opens spec with the Opener registered as model.
func Open(ctx context.Context, model string, config []byte, spec ShardSpec) (runtime.Shard, error) {
	openersMu.Lock()
	open, ok := openers[model]
	openersMu.Unlock()
	if !ok {
		return nil, fmt.Errorf("no model %q is registered (vigenbeam.Register)", model)
	}
	return open(ctx, config, spec)
}

func init() {
	register.DoFn4x1[context.Context, task, []byte, func(*runtime.ShardStats), error](&eStepFn{})
	register.Emitter1[*runtime.ShardStats]()
	register.Combiner1[*runtime.ShardStats](&statsFn{})
	register.DoFn2x1[context.Context, *runtime.ShardStats, error](&writeFn{})
	beam.RegisterType(reflect.TypeOf(ShardSpec{}))
	beam.RegisterType(reflect.TypeOf(task{}))
	beam.RegisterCoder(reflect.TypeOf((*runtime.ShardStats)(nil)), encodeStats, decodeStats)
}

func encodeStats(s *runtime.ShardStats) ([]byte, error) { return s.MarshalBinary() }

func decodeStats(b []byte) (*runtime.ShardStats, error) {
	s := new(runtime.ShardStats)
	return s, s.UnmarshalBinary(b)
}

// Runner runs the E-steps of a sharded fit of Model over Shards as Beam
// pipelines on the runner beamx chooses (--runner; prism by default): a
// pipeline per E-step of variational EM (runtime.ShardRunner), or per
// minibatch step and per pass's ELBO of SVI (runtime.ShardStepRunner).
// One Runner runs one fit.
type Runner struct {
	Model  string
	Config []byte
	Shards []ShardSpec
	// Work is the work directory (a path any Beam file system takes): the
	// shards' local factors and each E-step's combined statistics go
	// there, as files named shard-*.locals and estep.stats.
	Work string
	// gens are, under SVI, the generation of each shard's locals: the
	// number of minibatch steps that visited it.
	gens []int
	// id tells this fit's pipelines and cached shards from any other's;
	// runs counts its pipelines.
	id, runs int64
}

// task is one shard's work in one pipeline: start from its locals of
// generation Read (0: its starting values), add the units' part of the
// ELBO if ELBO, visit all its units or those of Units (0-based, the
// shard's own), and keep its locals as generation Write (0: leave them,
// unchanged).
type task struct {
	Spec        ShardSpec
	Read, Write int
	All         bool
	Units       []int
	ELBO        bool
	// Pass, under SVI, is 1 + the pass whose end the task's ELBO is:
	// the shard's locals are kept as that pass's (0: not).
	Pass int
}

// passPath is where shard i's locals at the end of SVI pass pass are
// kept (two passes, by parity).
func passPath(work string, i, pass int) string {
	return fmt.Sprintf("%s/shard-%05d.pass%d.locals", work, i, pass%2)
}

// localsPath is where shard i's locals of generation gen are kept
// (runtime.LocalsKept generations, by gen modulo that).
func localsPath(work string, i, gen int) string {
	return fmt.Sprintf("%s/shard-%05d.%d.locals", work, i, gen%runtime.LocalsKept)
}

// run runs tasks as one pipeline and returns their combined statistics.
// A ctx done (an interrupt) stops the fit between pipelines: none starts
// after it, with an error wrapping ctx's, which the fit reports as
// canceled; the one running finishes (a job cut short on a cluster runner
// may leave its workers going, and its files half-written).
func (r *Runner) run(ctx context.Context, what string, globals []byte, tasks []task) (*runtime.ShardStats, error) {
	if len(tasks) == 0 {
		return nil, fmt.Errorf("%s: no shards", what)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s not started: %w", what, err)
	}
	r.runs++
	run := r.runs
	p, s := beam.NewPipelineWithRoot()
	g := beam.Create(s, globals)
	stats := beam.ParDo(s, &eStepFn{Model: r.Model, Config: r.Config, Work: r.Work, Fit: r.id},
		beam.CreateList(s, tasks), beam.SideInput{Input: g})
	out := fmt.Sprintf("%s/estep.stats", r.Work)
	beam.ParDo0(s, &writeFn{Path: out, Fit: r.id, Run: run}, beam.Combine(s, &statsFn{}, stats))
	job := context.WithoutCancel(ctx) // the running pipeline finishes
	if err := beamx.Run(job, p); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	b, err := ReadFile(job, out)
	if err != nil {
		return nil, fmt.Errorf("%s: reading the statistics: %w", what, err)
	}
	// the file is this pipeline's, not a stale one of an earlier run (a
	// runner may report a canceled job as done)
	if len(b) < 16 || int64(binary.LittleEndian.Uint64(b)) != r.id || int64(binary.LittleEndian.Uint64(b[8:])) != run {
		return nil, fmt.Errorf("%s: the pipeline wrote no statistics", what)
	}
	st, err := decodeStats(b[16:])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return st, nil
}

// EStep runs E-step it of variational EM over every shard as one
// pipeline and returns the combined statistics.
func (r *Runner) EStep(ctx context.Context, it int, globals []byte, elbo bool) (*runtime.ShardStats, error) {
	var tasks []task
	for _, sh := range r.Shards {
		tasks = append(tasks, task{Spec: sh, Read: it - 1, Write: it, All: true, ELBO: elbo})
	}
	st, err := r.run(ctx, fmt.Sprintf("E-step %d", it), globals, tasks)
	if err != nil {
		return nil, err
	}
	if want := r.Units(); st.Units != want || elbo && st.ELBOUnits != want {
		return nil, fmt.Errorf("E-step %d: statistics of %d units, want %d (a shard's output is missing)", it, st.Units, want)
	}
	return st, nil
}

// Units is the number of units of all shards.
func (r *Runner) Units() int {
	n := 0
	for _, s := range r.Shards {
		n += s.Units
	}
	return n
}

// Step runs SVI's step t (0-based) as one pipeline over the shards
// holding the minibatch's units (0-based among all).
func (r *Runner) Step(ctx context.Context, t int, globals []byte, units []int) (*runtime.ShardStats, error) {
	if r.gens == nil {
		r.gens = make([]int, len(r.Shards))
	}
	local := make([][]int, len(r.Shards))
	for _, d := range units {
		i, err := r.shardOf(d)
		if err != nil {
			return nil, err
		}
		local[i] = append(local[i], d-r.Shards[i].First)
	}
	var tasks []task
	for i, sh := range r.Shards {
		if len(local[i]) > 0 {
			tasks = append(tasks, task{Spec: sh, Read: r.gens[i], Write: r.gens[i] + 1, Units: local[i]})
		}
	}
	st, err := r.run(ctx, fmt.Sprintf("step %d", t+1), globals, tasks)
	if err != nil {
		return nil, err
	}
	if st.Units != len(units) {
		return nil, fmt.Errorf("step %d: statistics of %d units, want %d (a shard's output is missing)", t+1, st.Units, len(units))
	}
	for _, tk := range tasks {
		r.gens[tk.Spec.Index]++
	}
	return st, nil
}

// shardOf returns the shard holding unit d (0-based among all).
func (r *Runner) shardOf(d int) (int, error) {
	for i, sh := range r.Shards {
		if d >= sh.First && d < sh.First+sh.Units {
			return i, nil
		}
	}
	return 0, fmt.Errorf("no shard holds unit %d", d+1)
}

// ELBO runs the pass over all units that SVI's ELBO needs.
func (r *Runner) ELBO(ctx context.Context, pass int, globals []byte) (*runtime.ShardStats, error) {
	if r.gens == nil {
		r.gens = make([]int, len(r.Shards))
	}
	var tasks []task
	for i, sh := range r.Shards {
		tasks = append(tasks, task{Spec: sh, Read: r.gens[i], ELBO: true, Pass: pass + 1})
	}
	st, err := r.run(ctx, "the ELBO", globals, tasks)
	if err != nil {
		return nil, err
	}
	if want := r.Units(); st.ELBOUnits != want {
		return nil, fmt.Errorf("the ELBO of %d units, want %d (a shard's output is missing)", st.ELBOUnits, want)
	}
	return st, nil
}

// Locals returns the shards' locals the fit kept, joined in shard order
// (runtime.ConcatLocals): after E-step it (FitShards' LocalsOf), or under
// SVI after pass it. A whole-data Shard's SetLocals takes them. The
// starting locals (it = 0) are those a fresh shard has.
func (r *Runner) Locals(ctx context.Context, it int) ([]byte, error) {
	parts := make([][]byte, len(r.Shards))
	for i, s := range r.Shards {
		path := localsPath(r.Work, s.Index, it)
		if r.gens != nil {
			path = passPath(r.Work, s.Index, it)
		}
		b, err := ReadFile(ctx, path)
		if err != nil && it == 0 {
			sh, oerr := Open(ctx, r.Model, r.Config, s)
			if oerr != nil {
				return nil, oerr
			}
			b, err = sh.Locals(), nil
		}
		if err != nil {
			return nil, err
		}
		parts[i] = b
	}
	return runtime.ConcatLocals(parts)
}

// eStepFn runs one shard's task.
type eStepFn struct {
	Model  string
	Config []byte
	Work   string
	Fit    int64
}

// opened keeps the shards this process opened, by work directory and
// shard, with the generation of the locals they hold: a worker that runs
// a shard's next task too (every task, on a local runner, whose workers
// are this process) reuses it instead of reading its input and its
// locals again; a worker that did not reads both. A worker keeps the
// shards of one fit at a time.
var opened struct {
	sync.Mutex
	shards map[openedKey]openedShard
}

type openedKey struct {
	fit   int64
	work  string
	index int
}

type openedShard struct {
	shard  runtime.Shard
	spec   ShardSpec
	model  string
	config string
	gen    int
}

// take removes and returns the shard f opened for spec with the locals
// of generation gen, if this process has it.
func (f *eStepFn) take(spec ShardSpec, gen int) runtime.Shard {
	opened.Lock()
	defer opened.Unlock()
	k := openedKey{f.Fit, f.Work, spec.Index}
	o, ok := opened.shards[k]
	delete(opened.shards, k)
	if ok && o.spec == spec && o.model == f.Model && o.config == string(f.Config) && o.gen == gen {
		return o.shard
	}
	return nil
}

// forget drops the shards this process keeps open for fit id.
func forget(id int64) {
	opened.Lock()
	defer opened.Unlock()
	for k := range opened.shards {
		if k.fit == id {
			delete(opened.shards, k)
		}
	}
}

func (f *eStepFn) keep(spec ShardSpec, sh runtime.Shard, gen int) {
	opened.Lock()
	defer opened.Unlock()
	if opened.shards == nil {
		opened.shards = map[openedKey]openedShard{}
	}
	for k := range opened.shards {
		if k.fit != f.Fit {
			delete(opened.shards, k) // another fit's: a worker keeps one fit's shards
		}
	}
	opened.shards[openedKey{f.Fit, f.Work, spec.Index}] = openedShard{sh, spec, f.Model, string(f.Config), gen}
}

func (f *eStepFn) ProcessElement(ctx context.Context, tk task, globals []byte, emit func(*runtime.ShardStats)) error {
	spec := tk.Spec
	fail := func(err error) error { return fmt.Errorf("shard %d (%s): %w", spec.Index+1, spec.Input, err) }
	sh := f.take(spec, tk.Read)
	reuse := sh != nil && tk.Read > 0
	if !reuse {
		var err error
		if sh, err = Open(ctx, f.Model, f.Config, spec); err != nil {
			return fail(err)
		}
	}
	if sh.Units() != spec.Units {
		return fail(fmt.Errorf("%d units, the fit expects %d", sh.Units(), spec.Units))
	}
	if err := sh.SetGlobals(globals); err != nil {
		return fail(err)
	}
	if tk.Read > 0 && !reuse {
		b, err := ReadFile(ctx, localsPath(f.Work, spec.Index, tk.Read))
		if err != nil {
			return fail(fmt.Errorf("its local factors: %w", err))
		}
		if err := sh.SetLocals(b); err != nil {
			return fail(err)
		}
	}
	units := tk.Units
	if tk.All {
		units = nil
	} else if units == nil {
		units = []int{} // none: the ELBO alone (an empty list may decode as nil)
	}
	st, err := sh.EStep(ctx, tk.ELBO, units)
	if err != nil {
		return fail(err)
	}
	if tk.Pass > 0 {
		// the locals at the end of an SVI pass, which the fit may keep
		if err := writeFile(ctx, passPath(f.Work, spec.Index, tk.Pass-1), sh.Locals()); err != nil {
			return fail(err)
		}
	}
	gen := tk.Read
	if tk.Write > 0 {
		if err := writeFile(ctx, localsPath(f.Work, spec.Index, tk.Write), sh.Locals()); err != nil {
			return fail(err)
		}
		gen = tk.Write
	}
	f.keep(spec, sh, gen)
	emit(st)
	return nil
}

// statsFn merges statistics exactly; its accumulator is the model's
// statistics, runtime.ShardStats (the zero value is empty).
type statsFn struct{}

func (statsFn) MergeAccumulators(a, b *runtime.ShardStats) (*runtime.ShardStats, error) {
	out := new(runtime.ShardStats)
	for _, x := range []*runtime.ShardStats{a, b} {
		if x == nil {
			continue // a fresh accumulator
		}
		if err := out.Merge(x); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// writeFn writes the combined statistics where the driver reads them.
// The file starts with the fit's id and the pipeline's number, which the
// driver checks.
type writeFn struct {
	Path     string
	Fit, Run int64
}

func (f *writeFn) ProcessElement(ctx context.Context, st *runtime.ShardStats) error {
	b, err := st.MarshalBinary()
	if err != nil {
		return err
	}
	head := binary.LittleEndian.AppendUint64(nil, uint64(f.Fit))
	head = binary.LittleEndian.AppendUint64(head, uint64(f.Run))
	return writeFile(ctx, f.Path, append(head, b...))
}

// NewWork makes the work directory of a fit: a local one must not exist
// and is created; one on another file system (gs://…) must hold no
// files. A fit writes only its own files there and overwrites none of
// anyone else's.
func NewWork(ctx context.Context, work string) error {
	if !strings.Contains(work, "://") {
		if err := os.Mkdir(work, 0o755); err != nil {
			return fmt.Errorf("work directory: %w (give one that does not exist yet)", err)
		}
		return nil
	}
	files, err := List(ctx, work+"/*")
	if err != nil {
		return err
	}
	if len(files) > 0 {
		return fmt.Errorf("work directory %s holds files (%s, …); give an empty one", work, files[0])
	}
	return nil
}

// List lists the files matching pattern on any Beam file system, sorted.
func List(ctx context.Context, pattern string) ([]string, error) {
	fs, err := filesystem.New(ctx, pattern)
	if err != nil {
		return nil, err
	}
	defer fs.Close()
	files, err := fs.List(ctx, pattern)
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	return files, nil
}

// ReadFile reads a file of any Beam file system (local, gs://, …).
func ReadFile(ctx context.Context, path string) ([]byte, error) {
	fs, err := filesystem.New(ctx, path)
	if err != nil {
		return nil, err
	}
	defer fs.Close()
	r, err := fs.OpenRead(ctx, path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

func writeFile(ctx context.Context, path string, b []byte) error {
	fs, err := filesystem.New(ctx, path)
	if err != nil {
		return err
	}
	defer fs.Close()
	w, err := fs.OpenWrite(ctx, path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, bytes.NewReader(b)); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// Fit runs variational EM over r's shards (runtime.FitShards) with the
// E-steps as pipelines, from the driver's shard of r.Model under
// r.Config, and returns the fit and the driver, which holds the fitted
// global factors and params (its Result has no units).
func Fit(ctx context.Context, r *Runner, s runtime.ShardSettings) (*runtime.ShardFit, runtime.Shard, error) {
	driver, err := r.driver(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer forget(r.id)
	fit, err := runtime.FitShards(ctx, driver, r, s)
	if err != nil {
		return nil, nil, err
	}
	return fit, driver, nil
}

// driver checks r's shards and opens the driver's shard of r.Model.
func (r *Runner) driver(ctx context.Context) (runtime.Shard, error) {
	total := r.Units()
	for i, sh := range r.Shards {
		if sh.Index != i || sh.Total != total || sh.Units < 1 {
			return nil, fmt.Errorf("shard %d: index %d, %d units of %d; want index %d, at least one unit, of %d", i+1, sh.Index, sh.Units, sh.Total, i, total)
		}
		if sh.First != total-r.unitsFrom(i) {
			return nil, fmt.Errorf("shard %d starts at unit %d; the shards before it hold %d", i+1, sh.First+1, total-r.unitsFrom(i))
		}
	}
	if r.gens != nil || r.runs > 0 {
		return nil, errors.New("a Runner runs one fit; this one has run")
	}
	r.id = time.Now().UnixNano()
	return Open(ctx, r.Model, r.Config, ShardSpec{Total: total})
}

// unitsFrom is the number of units of shards i and after.
func (r *Runner) unitsFrom(i int) int {
	n := 0
	for _, sh := range r.Shards[i:] {
		n += sh.Units
	}
	return n
}

// FitSVI runs stochastic variational inference over r's shards
// (runtime.FitShardsSVI) with each minibatch step, and each pass's ELBO,
// as a pipeline over the shards holding its units.
func FitSVI(ctx context.Context, r *Runner, s runtime.ShardSettings, svi runtime.SVISettings, seed uint64) (*runtime.ShardFit, runtime.Shard, error) {
	driver, err := r.driver(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer forget(r.id)
	fit, err := runtime.FitShardsSVI(ctx, driver, r, s, svi, seed)
	if err != nil {
		return nil, nil, err
	}
	return fit, driver, nil
}
