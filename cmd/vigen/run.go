package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	goruntime "runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/vigen-go/vigen/codegen"
	"github.com/vigen-go/vigen/derive"
	"github.com/vigen-go/vigen/runtime"
	"github.com/vigen-go/vigen/spec"
	"github.com/vigen-go/vigen/spec/ir"
)

// modulePath is vigen's module, which generated packages import the
// runtime from.
const modulePath = "github.com/vigen-go/vigen"

// runFlags are vigen run's options; those after model.vi are passed on to
// the fitting command unless vigen itself handles them.
type runFlags struct {
	data, out, method, plot string
	keep                    string
	plotUnits               unitRange
	noPSIS                  bool
	noSummary               bool
	psisDraws, psisUnits    int
	restarts                int
	seed                    uint64
	maxIter, workers        int
	tol                     float64
	quiet, rebuild          bool
	tols                    tolFlags
	svi                     sviFlags
	heldout                 heldoutFlags
	opts                    optFlags
}

func cmdRun(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f runFlags
	f.register(fs)
	path, ok := parseInterspersed(fs, args)
	if !ok {
		return 2
	}
	if bad := f.negative(); bad != "" {
		fmt.Fprintf(stderr, "vigen run: -%s must not be negative (0 means the default)\n", bad)
		return 2
	}
	if bad := f.opts.check(); bad != "" {
		fmt.Fprintf(stderr, "vigen run: %s\n", bad)
		return 2
	}
	if f.method != "" && f.method != "laplace" && f.method != "delta" && f.method != "ncvmp" {
		fmt.Fprintf(stderr, "vigen run: -method %q: want laplace, delta or ncvmp\n", f.method)
		return exitUsage
	}
	if bad := f.svi.check(); bad != "" {
		fmt.Fprintf(stderr, "vigen run: %s\n", bad)
		return 2
	}
	for _, d := range []struct {
		flag string
		n    int
	}{{"-psis-draws", f.psisDraws}, {"-psis-unit-draws", f.psisUnits}, {"-predict-draws", f.heldout.predictDraws}} {
		if err := runtime.CheckDraws(d.flag, d.n); err != nil {
			fmt.Fprintf(stderr, "vigen run: %v\n", err)
			return 2
		}
	}
	if path == "" || f.data == "" && len(f.heldout.ldac) == 0 && len(f.heldout.csv) == 0 && len(f.heldout.jsonl) == 0 {
		fmt.Fprint(stderr, "usage: vigen run model.vi -data data.json [-out result.json] [-method laplace|delta|ncvmp] [-seed N] [-plot DIR]\n")
		fs.PrintDefaults()
		fmt.Fprint(stderr, runExitStatus)
		return 2
	}
	src, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintln(stderr, "vigen:", err)
		return 1
	}
	// Errors point at the file as the user named it; the code is generated
	// from the base name, so the build is shared by every directory the
	// model is run from.
	if _, err := spec.Load(path, src); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	m, err := spec.Load(filepath.Base(path), src)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	// A -logc file computed for another model (an edited one too) is
	// refused before the build; its data is checked by the fit.
	if err := f.svi.checkModel(m.Name, m.SourceHash); err != nil {
		fmt.Fprintln(stderr, "vigen run:", err)
		return exitError
	}
	// Every output is checked before the build and the fit.
	if err := checkOutputs(f.outputs(m), f.inputs(path)); err != nil {
		fmt.Fprintln(stderr, "vigen:", err)
		return exitError
	}
	if f.data != "" {
		if _, err := os.Stat(f.data); err != nil {
			fmt.Fprintln(stderr, "vigen: -data:", err)
			return exitError
		}
	}
	sig := catchInterrupts()
	defer sig.stop()
	bin, err := cachedBuild(sig.ctx, m, f.genMethods(), f.rebuild, f.quiet, stderr)
	if err != nil {
		if s := sig.caught(); s != nil {
			fmt.Fprintf(stderr, "vigen: stopped by %v during the build; nothing was left in the cache\n", s)
			return exitError
		}
		fmt.Fprintln(stderr, err)
		return exitError
	}
	sink, err := newResultSink(sig.ctx, f.out, stdout, f.plot != "")
	if err != nil {
		if s := sig.caught(); s != nil {
			fmt.Fprintf(stderr, "vigen: stopped by %v before the fit: %v\n", s, err)
			return exitError
		}
		fmt.Fprintln(stderr, "vigen:", err)
		return exitError
	}
	defer sink.cleanup()
	code := runFit(sig, bin, f, sink, stderr)
	if code == exitError || code == exitUsage || sink.n == 0 {
		if code != exitError && code != exitUsage {
			fmt.Fprintln(stderr, "vigen: the fit wrote no result")
		}
		sink.abort()
		if code == exitUsage {
			return exitUsage
		}
		return exitError
	}
	if err := sink.commit(); err != nil {
		fmt.Fprintln(stderr, "vigen:", err)
		return exitError
	}
	if code == exitAfterResult {
		// The fit converged and its result is written; the command said
		// on stderr what failed after it. The plots are written still.
		fmt.Fprintf(stderr, "vigen: the result is written%s; what followed it failed\n", resultPlace(f.out))
		code = exitError
	}
	if f.plot != "" {
		result, err := sink.result()
		if err != nil {
			fmt.Fprintln(stderr, "vigen: plots:", err)
			return max(code, exitError)
		}
		files, err := writePlots(f.plot, result, f.plotUnits)
		if err != nil {
			fmt.Fprintln(stderr, "vigen: plots:", err)
			// The result is written; a fit that did not converge keeps
			// its status.
			return max(code, exitError)
		}
		if !f.quiet {
			fmt.Fprintf(stderr, "vigen: wrote %s\n", strings.Join(files, ", "))
		}
		removed, left, err := sweepPlots(f.plot, m.Name, files)
		if len(removed) > 0 && !f.quiet {
			fmt.Fprintf(stderr, "vigen: removed %s from %s: plots an earlier fit wrote there that this one does not draw\n", strings.Join(removed, ", "), f.plot)
		}
		if len(left) > 0 {
			fmt.Fprintf(stderr, "vigen: warning: %s in %s are plots of an earlier fit, not this one's; left as they are (remove them if they are stale)\n", strings.Join(left, ", "), f.plot)
		}
		if err != nil {
			fmt.Fprintln(stderr, "vigen: plots:", err)
			return max(code, exitError)
		}
	}
	return code
}

// resultPlace says where the result went: " to PATH", or "" for stdout.
func resultPlace(out string) string {
	if out == "" {
		return ""
	}
	return " to " + out
}

// register defines vigen run's flags on fs. Every flag naming a file that
// vigen run writes must be in outputs (TestRunOutputsAreChecked).
func (f *runFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.data, "data", "", "JSON data file, keys as in model.vi (required unless -csv, -jsonl or -ldac give all the data)")
	fs.StringVar(&f.out, "out", "", "write the result JSON here (default: stdout)")
	fs.StringVar(&f.method, "method", "", "laplace or delta for every nonconjugate latent, or ncvmp for those declared so (default: as declared)")
	fs.Uint64Var(&f.seed, "seed", 0, "seed of the random starting values")
	fs.IntVar(&f.maxIter, "maxiter", 0, "maximum coordinate-ascent iterations (0: the generated package's default)")
	fs.Float64Var(&f.tol, "tol", 0, "relative ELBO change below which the run may end (0: the generated package's default; inf: no such criterion)")
	f.tols.register(fs)
	f.svi.register(fs)
	f.heldout.register(fs)
	f.opts.register(fs)
	fs.IntVar(&f.workers, "workers", 0, "goroutines updating units in parallel (0: all cores); results do not depend on it")
	fs.StringVar(&f.keep, "keep", "", "per-token latents (local to a bag's entries, like a topic model's z) to keep in the result, comma-separated, or all; left out by default")
	fs.IntVar(&f.restarts, "restarts", 0, "fit from this many seeds (-seed, -seed+1, …) in parallel and keep the largest ELBO; the result's restarts field lists them all")
	fs.BoolVar(&f.noSummary, "no-summary", false, "leave the per-element summary out of the result (vigen summary prints it from the result on demand)")
	fs.BoolVar(&f.noPSIS, "no-psis", false, "skip the approximation diagnostic (Pareto k̂ of each nonconjugate Gaussian factor against the density it approximates)")
	fs.IntVar(&f.psisDraws, "psis-draws", 0, "draws from each global Gaussian factor for the diagnostic (0: 1000)")
	fs.IntVar(&f.psisUnits, "psis-unit-draws", 0, "draws from each unit's Gaussian factor for the diagnostic (0: 1000, fewer (at least 200) beyond 1000 units)")
	f.plotUnits = defaultPlotUnits
	fs.Var(&f.plotUnits, "plot-units", "FROM:TO: the units a plot of a per-unit latent shows (default 1:50)")
	fs.StringVar(&f.plot, "plot", "", "write SVG plots of the ELBO trace and the posteriors into this directory")
	fs.BoolVar(&f.quiet, "q", false, "no progress on stderr")
	fs.BoolVar(&f.rebuild, "rebuild", false, "rebuild the model's command even if a cached build exists")
}

// parseInterspersed parses flags that come before or after the one
// positional argument (vigen run model.vi -data d.json, or the other way
// round). It returns the positional argument ("" if none) and false after
// reporting a parse error.
func parseInterspersed(fs *flag.FlagSet, args []string) (string, bool) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return "", false
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	switch len(pos) {
	case 0:
		return "", true
	case 1:
		return pos[0], true
	}
	fmt.Fprintf(fs.Output(), "vigen %s: one model file, not %d (%s)\n", fs.Name(), len(pos), strings.Join(pos, " "))
	return "", false
}

// runExitStatus is the part of vigen run's usage on exit statuses.
const runExitStatus = `exit status: 0 the fit converged (or -algorithm svi, ssmf, ssmf-a ran its passes); 1 an error, no result
  (unless stderr says the result is written and what followed it, predictions, held-out score or plots, failed);
  2 bad command line (a flag's value, a missing argument);
  3 the fit stopped at -maxiter without converging (status "max_iterations");
  4 it stopped for another reason (status "canceled" after SIGINT or SIGTERM, "not_finite: …",
  "diverged: …" when a stochastic fit's ELBO fell far below its best, "improper_posterior: …",
  or trouble in the last iteration). With 3 and 4 the result is written and stderr says why.
`

// Exit statuses of vigen run (and of the command it builds).
const (
	exitConverged = 0 // the fit converged; the result is written
	exitError     = 1 // an error in the model, the data, a file, the build, or an interrupt before the fit: no result; or what follows a converged fit's result (predictions, held-out score, plots) failed
	exitUsage     = 2 // bad command line
	// exitNotConverged: the fit stopped at -maxiter (status
	// "max_iterations"); the result, of the last iteration, is written.
	exitNotConverged = 3
	// exitFailed: the fit stopped for another reason (status "canceled",
	// "not_finite: …", "diverged: …", "improper_posterior: …", or trouble
	// in the last iteration); the result, of the last completed iteration,
	// is written.
	exitFailed = 4
	// exitAfterResult (the command's status only): the fit converged and
	// its result is written, but the held-out score or the predictions
	// that follow it failed. vigen run keeps the result and exits
	// exitError.
	exitAfterResult = 5
)

// interrupts catches SIGINT and SIGTERM for the whole of vigen run: during
// the build it cancels ctx (the build stops and its directory is removed);
// during the fit it forwards the signal to the fitting command, which
// stops within an iteration and writes its result. Ctrl-C in a terminal
// reaches both vigen and the command; the command then gets it twice,
// which is the same as once.
type interrupts struct {
	ctx    context.Context
	cancel context.CancelFunc
	ch     chan os.Signal
	mu     sync.Mutex
	got    os.Signal
	child  *os.Process
}

func catchInterrupts() *interrupts {
	ctx, cancel := context.WithCancel(context.Background())
	in := &interrupts{ctx: ctx, cancel: cancel, ch: make(chan os.Signal, 4)}
	signal.Notify(in.ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		for s := range in.ch {
			in.mu.Lock()
			if in.got == nil {
				in.got = s
			}
			in.cancel()
			if in.child != nil {
				// Where signals cannot be sent (Windows), the console
				// delivers Ctrl-C to the command itself.
				in.child.Signal(s)
			}
			in.mu.Unlock()
		}
	}()
	return in
}

// caught is the first signal caught, or nil.
func (in *interrupts) caught() os.Signal {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.got
}

// start starts cmd unless a signal came first; signals from then on are
// forwarded to it until wait.
func (in *interrupts) start(cmd *exec.Cmd) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.got != nil {
		return fmt.Errorf("stopped by %v before the fit", in.got)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	in.child = cmd.Process
	return nil
}

// wait waits for the command start started; no signal is sent to it after.
func (in *interrupts) wait(cmd *exec.Cmd) error {
	err := cmd.Wait()
	in.mu.Lock()
	in.child = nil
	in.mu.Unlock()
	return err
}

func (in *interrupts) stop() {
	signal.Stop(in.ch)
	close(in.ch)
	in.cancel()
}

// resultSink receives the fitting command's result JSON as the command
// writes it, so that vigen never holds it in memory (with every token's
// posterior it can take gigabytes): into a temporary file beside -out,
// which commit renames over it, or, without -out, into a spool file that
// commit copies to stdout. A fit that ends without a result (abort) leaves
// -out as it was and writes nothing on stdout. When the result must be read
// back (the plots) and -out is a device or pipe, written directly and
// never read, the sink also keeps a spool. A named pipe at -out is waited
// on for a reader until ctx is done (a signal), not for ever.
type resultSink struct {
	out    *runtime.AtomicFile // with -out
	spool  *os.File            // without -out, or a copy to read back
	stdout io.Writer
	path   string // -out
	n      int64  // bytes received
	werr   error  // the first write error
}

func newResultSink(ctx context.Context, out string, stdout io.Writer, readBack bool) (*resultSink, error) {
	s := &resultSink{stdout: stdout, path: out}
	var err error
	if out != "" {
		if s.out, err = runtime.CreateAtomicContext(ctx, out); err != nil || !readBack || !s.out.Direct() {
			return s, err
		}
	}
	if s.spool, err = os.CreateTemp("", "vigen-result-*.json"); err != nil && s.out != nil {
		s.out.Abort()
	}
	return s, err
}

func (s *resultSink) Write(p []byte) (int, error) {
	var n int
	var err error
	if s.out != nil {
		n, err = s.out.Write(p)
		if err == nil && s.spool != nil {
			n, err = s.spool.Write(p)
		}
	} else {
		n, err = s.spool.Write(p)
	}
	s.n += int64(n)
	if err != nil && s.werr == nil {
		s.werr = err
	}
	return n, err
}

// err is the first error writing the result, naming where it went: the
// fitting command, whose output stops there, dies of the broken pipe, and
// this is what the user must hear (a full disk, say).
func (s *resultSink) err() error {
	if s.werr == nil {
		return nil
	}
	if s.out != nil {
		return fmt.Errorf("writing the result: %w", s.werr)
	}
	return fmt.Errorf("writing the result to a temporary file (for stdout): %w", s.werr)
}

func (s *resultSink) commit() error {
	if s.out != nil {
		return s.out.Commit()
	}
	if _, err := s.spool.Seek(0, io.SeekStart); err != nil {
		return err
	}
	_, err := io.Copy(s.stdout, s.spool)
	return err
}

// abort discards the result: -out stays as it was, nothing goes to stdout.
func (s *resultSink) abort() {
	if s.out != nil {
		s.out.Abort()
	}
}

// cleanup removes the spool, if any.
func (s *resultSink) cleanup() {
	if s.spool != nil {
		s.spool.Close()
		os.Remove(s.spool.Name())
	}
}

// result reads the committed result back (for the plots).
func (s *resultSink) result() ([]byte, error) {
	if s.spool != nil {
		return os.ReadFile(s.spool.Name())
	}
	return os.ReadFile(s.path)
}

// runFit runs the model's command on the data, its result JSON (stdout)
// going to sink, and returns vigen's exit status: the command's, which says
// how the fit ended (exitConverged, exitNotConverged, exitFailed; the
// command says on stderr why a fit did not converge), or exitError if it
// ended without a result. Progress and errors go straight to stderr.
func runFit(sig *interrupts, bin string, f runFlags, sink *resultSink, stderr io.Writer) int {
	data := "" // only -ldac or -csv
	if f.data != "" {
		var err error
		if data, err = filepath.Abs(f.data); err != nil {
			fmt.Fprintln(stderr, "vigen:", err)
			return exitError
		}
	}
	args := setFlags(flagValue{"-data", data}, flagValue{"-method", f.method}, flagValue{"-seed", f.seed},
		flagValue{"-maxiter", f.maxIter}, flagValue{"-tol", f.tol})
	args = append(args, f.tols.args()...)
	args = append(args, f.svi.args()...)
	ho, err := f.heldout.args()
	if err != nil {
		fmt.Fprintln(stderr, "vigen:", err)
		return exitError
	}
	args = append(args, ho...)
	oa, err := f.opts.args()
	if err != nil {
		fmt.Fprintln(stderr, "vigen:", err)
		return exitError
	}
	args = append(args, oa...)
	args = append(args, setFlags(flagValue{"-workers", f.workers}, flagValue{"-keep", f.keep},
		flagValue{"-psis-draws", f.psisDraws}, flagValue{"-psis-unit-draws", f.psisUnits}, flagValue{"-restarts", f.restarts})...)
	if f.noPSIS {
		args = append(args, "-no-psis")
	}
	if f.noSummary {
		args = append(args, "-no-summary")
	}
	if f.quiet {
		args = append(args, "-q")
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, sink, stderr
	started, done, err := tieToParent(cmd)
	if err != nil {
		fmt.Fprintln(stderr, "vigen:", err)
		return exitError
	}
	defer done()
	// The parent-death signal is sent when the thread that started the
	// command ends: keep it until the command has ended.
	goruntime.LockOSThread()
	defer goruntime.UnlockOSThread()
	if err := sig.start(cmd); err != nil {
		fmt.Fprintln(stderr, "vigen:", err)
		return exitError
	}
	started()
	err = sig.wait(cmd)
	if werr := sink.err(); werr != nil {
		// The command was stopped by the broken pipe; what stopped it is
		// vigen's write.
		fmt.Fprintf(stderr, "vigen: %v\n", werr)
		return exitError
	}
	code := 0
	if err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			fmt.Fprintln(stderr, "vigen:", err)
			return exitError
		}
		code = exit.ExitCode()
	}
	switch code {
	case exitConverged, exitNotConverged, exitFailed, exitAfterResult:
		return code
	case exitUsage: // the command said why on stderr
		return exitUsage
	case -1: // killed by a signal before it could write a result
		fmt.Fprintf(stderr, "vigen: the fit ended without a result (%v)\n", err)
	}
	return exitError // otherwise the command said why on stderr
}

// genMethods are the kernels the run's -method needs beyond the declared
// ones (codegen.Options.Methods): -method delta builds the package with
// the delta method's kernels.
func (f *runFlags) genMethods() []string {
	if f.method == "delta" {
		return []string{"delta"}
	}
	return nil
}

// cachedBuild returns the path of the fitting command for m, building it
// first unless the cache holds a build of the same generated code against
// the same vigen, runtime and Go toolchain. The cache is $VIGEN_CACHE, or
// vigen/ in the user's cache directory; each build is made in a temporary
// directory and renamed into place, so an interrupted or concurrent build
// never leaves a half-written one behind: a build stopped by a signal
// (ctx canceled) removes its directory, and one left by a vigen that was
// killed outright is swept by a later build once it is staleBuildAge old.
// quiet drops the lines saying which build is used; methods are
// codegen.Options.Methods.
func cachedBuild(ctx context.Context, m *ir.Model, methods []string, rebuild, quiet bool, stderr io.Writer) (string, error) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", errors.New("vigen run builds the model's code with the Go toolchain, and there is no go command on PATH; install Go from https://go.dev/dl/")
	}
	root, err := cacheRoot()
	if err != nil {
		return "", err
	}
	src := sourceDir()
	files, err := buildFiles(m, methods, src)
	if err != nil {
		return "", err
	}
	goVersion, err := exec.CommandContext(ctx, goTool, "env", "GOVERSION").Output()
	if err != nil {
		return "", fmt.Errorf("vigen: go env GOVERSION: %v", err)
	}
	key := buildKey(files, src, strings.TrimSpace(string(goVersion)))
	dir := filepath.Join(root, "run", m.Name+"-"+key)
	exe := m.Name
	if goruntime.GOOS == "windows" {
		exe += ".exe"
	}
	bin := filepath.Join(dir, exe)
	if _, err := os.Stat(bin); err == nil && !rebuild {
		if !quiet {
			fmt.Fprintf(stderr, "vigen: using the cached build of %s (%s)\n", m.Name, dir)
		}
		return bin, nil
	}
	if !quiet {
		fmt.Fprintf(stderr, "vigen: building %s into %s (once per model and vigen version)\n", m.Name, dir)
	}
	start := time.Now()
	if err := os.MkdirAll(filepath.Join(root, "run"), 0o755); err != nil {
		return "", fmt.Errorf("vigen: %v", err)
	}
	sweepStaleBuilds(filepath.Join(root, "run"), time.Now().Add(-staleBuildAge))
	tmp, err := os.MkdirTemp(filepath.Join(root, "run"), ".build-"+m.Name+"-*")
	if err != nil {
		return "", fmt.Errorf("vigen: %v", err)
	}
	defer os.RemoveAll(tmp)
	for _, f := range files {
		p := filepath.Join(tmp, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", fmt.Errorf("vigen: %v", err)
		}
		if err := os.WriteFile(p, f.Src, 0o644); err != nil {
			return "", fmt.Errorf("vigen: %v", err)
		}
	}
	build := exec.CommandContext(ctx, goTool, "build", "-o", exe, ".")
	build.Dir = tmp
	build.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	// Stopped, go build stops the compiler and linker it runs; a build
	// that does not stop within WaitDelay is killed.
	build.Cancel = func() error { return build.Process.Signal(os.Interrupt) }
	build.WaitDelay = 10 * time.Second
	if out, err := build.CombinedOutput(); err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", fmt.Errorf("vigen: building the generated code of %s failed; this is a bug in vigen, please report it with the model:\n%s", m.Name, out)
	}
	if rebuild {
		os.RemoveAll(dir)
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another vigen run built the same thing meanwhile; use it.
		if _, statErr := os.Stat(bin); statErr != nil {
			return "", fmt.Errorf("vigen: %v", err)
		}
	}
	if !quiet {
		fmt.Fprintf(stderr, "vigen: built in %.1fs\n", time.Since(start).Seconds())
	}
	return bin, nil
}

// staleBuildAge is the age from which a .build-* directory in the cache is
// taken to be left by a vigen that was killed (SIGKILL, a crash, a power
// cut) rather than a build in progress, and is removed.
const staleBuildAge = time.Hour

// sweepStaleBuilds removes the .build-* directories in dir last modified
// before cutoff. Errors are ignored: the sweep only saves space.
func sweepStaleBuilds(dir string, cutoff time.Time) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), ".build-") {
			continue
		}
		if fi, err := e.Info(); err == nil && fi.ModTime().Before(cutoff) {
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
}

// cacheRoot is $VIGEN_CACHE, or vigen/ in the user's cache directory.
func cacheRoot() (string, error) {
	if d := os.Getenv("VIGEN_CACHE"); d != "" {
		return filepath.Abs(d)
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("vigen: no cache directory for vigen run (%v); set VIGEN_CACHE", err)
	}
	return filepath.Join(d, "vigen"), nil
}

// buildFiles is the module vigen run builds: the generated package in
// model/, the command in main.go, and a go.mod that finds vigen's runtime
// in the source vigen was built from (or, failing that, at vigen's
// released version through the module proxy); src is that source, or "".
func buildFiles(m *ir.Model, methods []string, src string) ([]codegen.File, error) {
	d, err := derive.Derive(m)
	if err != nil {
		return nil, err
	}
	pkg, err := codegen.Generate(d, codegen.Options{Package: "model", Methods: methods})
	if err != nil {
		return nil, err
	}
	driver, err := codegen.Driver(d, "vigenrun/model")
	if err != nil {
		return nil, err
	}
	files := []codegen.File{driver}
	for _, f := range pkg {
		files = append(files, codegen.File{Name: "model/" + f.Name, Src: f.Src})
	}
	mod, sum, err := runModule(src)
	if err != nil {
		return nil, err
	}
	files = append(files, codegen.File{Name: "go.mod", Src: mod})
	if sum != nil {
		files = append(files, codegen.File{Name: "go.sum", Src: sum})
	}
	return files, nil
}

// runModule returns the go.mod (and go.sum) of vigen run's build module,
// which takes vigen from src if it is not "".
func runModule(src string) (mod, sum []byte, err error) {
	if src != "" {
		goMod, err := os.ReadFile(filepath.Join(src, "go.mod"))
		if err != nil {
			return nil, nil, fmt.Errorf("vigen: %v", err)
		}
		sum, err = os.ReadFile(filepath.Join(src, "go.sum"))
		if err != nil {
			return nil, nil, fmt.Errorf("vigen: %v", err)
		}
		mod = fmt.Appendf(nil, "module vigenrun\n\n%s\n\nrequire %s v0.0.0\n\nreplace %s => %s\n",
			goLine(goMod), modulePath, modulePath, strconv.Quote(src))
		return mod, sum, nil
	}
	info, ok := debug.ReadBuildInfo()
	if !ok || !strings.HasPrefix(info.Main.Version, "v") {
		return nil, nil, errors.New("vigen: cannot find vigen's source (for the runtime the model's code needs): build vigen from a checkout, or install it with go install " + modulePath + "/cmd/vigen@latest")
	}
	mod = fmt.Appendf(nil, "module vigenrun\n\ngo %s\n\nrequire %s %s\n", strings.TrimPrefix(goruntime.Version(), "go"), modulePath, info.Main.Version)
	return mod, nil, nil
}

// sourceDir is the root of the vigen module this binary was built from, if
// its source is still there (a checkout, or the module cache after go
// install), or "".
func sourceDir() string {
	_, file, _, ok := goruntime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return ""
	}
	root := filepath.Dir(filepath.Dir(filepath.Dir(file)))
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil || !bytes.HasPrefix(mod, []byte("module "+modulePath+"\n")) {
		return ""
	}
	return root
}

// goLine is the go directive of a go.mod file.
func goLine(goMod []byte) string {
	for _, l := range strings.Split(string(goMod), "\n") {
		if strings.HasPrefix(l, "go ") {
			return l
		}
	}
	return "go " + strings.TrimPrefix(goruntime.Version(), "go")
}

// buildKey identifies a build: the files built (generated code, command,
// go.mod with the runtime's location), the runtime's own source when vigen
// builds against a source directory src (so editing it invalidates the
// cache), vigen's version and the Go toolchain.
func buildKey(files []codegen.File, src, goVersion string) string {
	h := sha256.New()
	put := func(name string, b []byte) {
		fmt.Fprintf(h, "%s %d\n", name, len(b))
		h.Write(b)
	}
	put("go", []byte(goVersion))
	if info, ok := debug.ReadBuildInfo(); ok {
		put("vigen", []byte(info.Main.Version))
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" || s.Key == "vcs.modified" {
				put(s.Key, []byte(s.Value))
			}
		}
	}
	for _, f := range files {
		put(f.Name, f.Src)
	}
	if src != "" {
		names, _ := filepath.Glob(filepath.Join(src, "runtime", "*.go"))
		sort.Strings(names)
		for _, n := range names {
			if strings.HasSuffix(n, "_test.go") {
				continue
			}
			b, _ := os.ReadFile(n)
			put(filepath.Base(n), b)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}
