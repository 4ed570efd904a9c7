package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
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
	"time"

	"github.com/vigen-go/vigen/codegen"
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
	seed                    uint64
	maxIter, workers        int
	tol                     float64
	quiet, rebuild          bool
	tols                    tolFlags
}

func cmdRun(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f runFlags
	fs.StringVar(&f.data, "data", "", "JSON data file, keys as in model.vi (required)")
	fs.StringVar(&f.out, "out", "", "write the result JSON here (default: stdout)")
	fs.StringVar(&f.method, "method", "", "laplace or delta for every nonconjugate latent (default: as declared)")
	fs.Uint64Var(&f.seed, "seed", 0, "seed of the random starting values")
	fs.IntVar(&f.maxIter, "maxiter", 0, "maximum coordinate-ascent iterations (0: the generated package's default)")
	fs.Float64Var(&f.tol, "tol", 0, "relative ELBO change that ends the run (0: the generated package's default)")
	f.tols.register(fs)
	fs.IntVar(&f.workers, "workers", 0, "goroutines updating units in parallel (0: all cores); results do not depend on it")
	fs.StringVar(&f.plot, "plot", "", "write SVG plots of the ELBO trace and the posteriors into this directory")
	fs.BoolVar(&f.quiet, "q", false, "no progress on stderr")
	fs.BoolVar(&f.rebuild, "rebuild", false, "rebuild the model's command even if a cached build exists")
	path, ok := parseInterspersed(fs, args)
	if !ok {
		return 2
	}
	if path == "" || f.data == "" {
		fmt.Fprint(stderr, "usage: vigen run model.vi -data data.json [-out result.json] [-method laplace|delta] [-seed N] [-plot DIR]\n")
		fs.PrintDefaults()
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
	if f.out != "" {
		if err := checkResultTarget(f.out); err != nil {
			fmt.Fprintln(stderr, "vigen:", err)
			return 1
		}
	}
	bin, err := cachedBuild(m, f.rebuild, stderr)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	result, code := runFit(bin, f, stderr)
	if code != 0 {
		return code
	}
	if f.out != "" {
		err = runtime.WriteFileAtomic(f.out, result)
	} else {
		_, err = stdout.Write(result)
	}
	if err != nil {
		fmt.Fprintln(stderr, "vigen:", err)
		return 1
	}
	if f.plot != "" {
		files, err := writePlots(f.plot, result)
		if err != nil {
			fmt.Fprintln(stderr, "vigen: plots:", err)
			return 1
		}
		if !f.quiet {
			fmt.Fprintf(stderr, "vigen: wrote %s\n", strings.Join(files, ", "))
		}
	}
	return 0
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

// runFit runs the model's command on the data and returns the result JSON
// it writes on stdout; progress and errors go straight to stderr. While it
// runs, vigen ignores interrupts: the command itself stops at Ctrl-C and
// still writes the result of the last completed iteration.
func runFit(bin string, f runFlags, stderr io.Writer) ([]byte, int) {
	data, err := filepath.Abs(f.data)
	if err != nil {
		fmt.Fprintln(stderr, "vigen:", err)
		return nil, 1
	}
	args := []string{"-data", data}
	if f.method != "" {
		args = append(args, "-method", f.method)
	}
	if f.seed != 0 {
		args = append(args, "-seed", fmt.Sprint(f.seed))
	}
	if f.maxIter != 0 {
		args = append(args, "-maxiter", fmt.Sprint(f.maxIter))
	}
	if f.tol != 0 {
		args = append(args, "-tol", fmt.Sprint(f.tol))
	}
	args = append(args, f.tols.args()...)
	if f.workers != 0 {
		args = append(args, "-workers", fmt.Sprint(f.workers))
	}
	if f.quiet {
		args = append(args, "-q")
	}
	var out bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, &out, stderr
	interrupts := make(chan os.Signal, 1)
	signal.Notify(interrupts, os.Interrupt)
	defer signal.Stop(interrupts)
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return nil, 1 // the command said why on stderr
		}
		fmt.Fprintln(stderr, "vigen:", err)
		return nil, 1
	}
	return out.Bytes(), 0
}

// checkResultTarget refuses to overwrite anything at path but a result
// vigen wrote (a JSON object with "model" and "status").
func checkResultTarget(path string) error {
	return refuseForeign(path, func(old []byte) bool {
		var head struct {
			Model  *string `json:"model"`
			Status *string `json:"status"`
		}
		return json.Unmarshal(old, &head) == nil && head.Model != nil && head.Status != nil
	}, "it is not a result vigen wrote")
}

// cachedBuild returns the path of the fitting command for m, building it
// first unless the cache holds a build of the same generated code against
// the same vigen, runtime and Go toolchain. The cache is $VIGEN_CACHE, or
// vigen/ in the user's cache directory; each build is made in a temporary
// directory and renamed into place, so an interrupted or concurrent build
// never leaves a half-written one behind.
func cachedBuild(m *ir.Model, rebuild bool, stderr io.Writer) (string, error) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", errors.New("vigen run builds the model's code with the Go toolchain, and there is no go command on PATH; install Go from https://go.dev/dl/")
	}
	root, err := cacheRoot()
	if err != nil {
		return "", err
	}
	src := sourceDir()
	files, err := buildFiles(m, src)
	if err != nil {
		return "", err
	}
	goVersion, err := exec.Command(goTool, "env", "GOVERSION").Output()
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
		fmt.Fprintf(stderr, "vigen: using the cached build of %s (%s)\n", m.Name, dir)
		return bin, nil
	}
	fmt.Fprintf(stderr, "vigen: building %s into %s (once per model and vigen version)\n", m.Name, dir)
	start := time.Now()
	if err := os.MkdirAll(filepath.Join(root, "run"), 0o755); err != nil {
		return "", fmt.Errorf("vigen: %v", err)
	}
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
	build := exec.Command(goTool, "build", "-o", exe, ".")
	build.Dir = tmp
	build.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	if out, err := build.CombinedOutput(); err != nil {
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
	fmt.Fprintf(stderr, "vigen: built in %.1fs\n", time.Since(start).Seconds())
	return bin, nil
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
func buildFiles(m *ir.Model, src string) ([]codegen.File, error) {
	pkg, err := codegen.Generate(m, codegen.Options{Package: "model"})
	if err != nil {
		return nil, err
	}
	driver, err := codegen.Driver(m, "vigenrun/model")
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
