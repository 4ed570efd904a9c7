// Command vigen compiles a probabilistic model written in the .vi language
// into a Go package that fits it by variational inference.
//
// Usage:
//
//	vigen run model.vi -data data.json [-out result.json] [-plot DIR]   fit the model to data (built once, cached)
//	vigen gen [-o DIR] [-pkg NAME] [-kernels] model.vi   write the Go package for model.vi
//	vigen check [-derive] model.vi            check model.vi and print a table of its nodes; -derive adds f, ∇f, ∇²f
//	vigen explain [-format md|tex] model.vi   print a derivation report: f, ∇f, ∇²f, updates, expectations, M-steps
//	vigen fmt [-w | -l] file.vi...            format .vi files canonically, comments kept
//
// Errors in the model are printed as file:line:col: message, and vigen
// exits with status 1 (2 for a bad command line). vigen run exits 0 if the
// fit converged, 3 if it stopped at -maxiter, and 4 if it stopped for
// another reason (canceled by SIGINT or SIGTERM, not_finite, trouble); with
// 3 and 4 it still writes the result, and says on stderr why.
//
// vigen never overwrites a file it did not generate, and checks every file
// it will write before doing any work. It writes a regular file through a
// temporary file and a rename, and a device or pipe (-out /dev/stdout)
// directly, without reading it. gen removes only files that are exactly
// what it generates from the same model under another package name.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/vigen-go/vigen/codegen"
	"github.com/vigen-go/vigen/derive"
	"github.com/vigen-go/vigen/runtime"
	"github.com/vigen-go/vigen/spec"
	"github.com/vigen-go/vigen/spec/ir"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage:
  vigen run model.vi -data data.json [-out result.json] [-method laplace|delta] [-seed N] [-plot DIR]
                                            fit model.vi to data.json: generate, build (cached) and run
  vigen gen [-o DIR] [-pkg NAME] [-kernels] model.vi   generate a Go package from model.vi
  vigen check [-derive] model.vi            check model.vi: a table of its nodes and treatments (-derive: f, ∇f, ∇²f)
  vigen explain [-format md|tex] model.vi   a derivation report in Markdown with LaTeX math (default) or a LaTeX document
  vigen fmt [-w | -l] file.vi...            format .vi files canonically (-w: in place; -l: list those that differ)

exit status: 0 success (vigen run: the fit converged, or -algorithm svi ran its passes); 1 an error (model, data, file,
build; no result, or the plots failed); 2 bad command line. vigen run also exits 3 if the
fit stopped at -maxiter without converging, 4 if it stopped for another reason (canceled
by SIGINT or SIGTERM, not_finite, trouble); with 3 and 4 the result is written and stderr
says why, also with -q.
`

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "gen":
		return cmdGen(args[1:], stdout, stderr)
	case "check":
		return cmdCheck(args[1:], stdout, stderr)
	case "explain":
		return cmdExplain(args[1:], stdout, stderr)
	case "fmt":
		return cmdFmt(args[1:], stdout, stderr)
	case "run":
		return cmdRun(args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "vigen: unknown command %q\n%s", args[0], usage)
	return 2
}

func load(path string) (*ir.Model, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return spec.Load(path, src)
}

// parseAndLoad parses a subcommand's flags and loads its one model file. It
// returns the model, or nil and the exit status after reporting the
// problem on stderr.
func parseAndLoad(fs *flag.FlagSet, args []string, stderr io.Writer) (*ir.Model, int) {
	if err := fs.Parse(args); err != nil {
		return nil, 2
	}
	if fs.NArg() != 1 {
		fmt.Fprint(stderr, usage)
		return nil, 2
	}
	m, err := load(fs.Arg(0))
	if err != nil {
		fmt.Fprintln(stderr, err)
		return nil, 1
	}
	return m, 0
}

func cmdGen(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "output directory (default: ./NAME, NAME the package)")
	pkg := fs.String("pkg", "", "Go package name (default: the model name)")
	kernels := fs.Bool("kernels", false, "emit data types and derivative kernels only (no Fit)")
	m, code := parseAndLoad(fs, args, stderr)
	if m == nil {
		return code
	}
	files, err := codegen.Generate(m, codegen.Options{Package: *pkg, KernelsOnly: *kernels})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	dir := *out
	if dir == "" {
		name := *pkg
		if name == "" {
			name = strings.TrimSuffix(files[0].Name, ".go")
		}
		dir = name
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	// Check every target before writing any, so a refusal leaves the
	// directory as it was.
	for _, f := range files {
		if err := checkOverwrite(filepath.Join(dir, f.Name)); err != nil {
			fmt.Fprintln(stderr, "vigen:", err)
			return 1
		}
	}
	for _, f := range files {
		if err := writeGenerated(filepath.Join(dir, f.Name), f.Src); err != nil {
			fmt.Fprintln(stderr, "vigen:", err)
			return 1
		}
	}
	left, err := removeStale(dir, m, files)
	if err != nil {
		fmt.Fprintln(stderr, "vigen:", err)
		return 1
	}
	for _, p := range left {
		fmt.Fprintf(stderr, "vigen: note: left %s alone: vigen generated it, but not from %s as it is now (another model's package, an edited copy or an older version); one directory holds one package, so remove it if it is stale\n", p, m.File)
	}
	return 0
}

// checkOverwrite refuses a path that exists and is not a regular file
// starting with vigen's generated-code header.
func checkOverwrite(path string) error {
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("refusing to overwrite %s: it is not a regular file", path)
	}
	return refuseForeign(path, len(codegen.Header), func(head []byte) bool { return bytes.HasPrefix(head, []byte(codegen.Header)) },
		fmt.Sprintf("it was not generated by vigen (no %q header)", codegen.Header))
}

// removeStale deletes the Go files in dir that an earlier vigen gen wrote
// from the same model under another package name (after a change of -pkg)
// and that this run did not write, and the temporary files an interrupted
// run left of the files it writes. It returns the other generated files it
// left alone, for a warning.
//
// A file is removed only if it is exactly what vigen gen writes now for m
// with the package name of the file (NAME.go holds package NAME), with or
// without -kernels, byte for byte. That proves the file was generated from
// a model of the same name and source into that package and that nobody
// edited it, and whatever is removed can be written again, identically,
// with vigen gen -pkg NAME. A file of another model (even one whose .vi has
// the same relative name), an edited file, a renamed copy and a file an
// older vigen wrote all differ, and stay. The header's source line alone
// would not do: two models in different directories share it.
func removeStale(dir string, m *ir.Model, written []codegen.File) (left []string, err error) {
	keep := map[string]bool{}
	for _, f := range written {
		keep[f.Name] = true
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || keep[name] {
			continue
		}
		path := filepath.Join(dir, name)
		if isOurTemp(name, written) {
			if err := os.Remove(path); err != nil {
				return left, err
			}
			continue
		}
		pkg, ok := strings.CutSuffix(name, ".go")
		if !ok {
			continue
		}
		old, err := os.ReadFile(path)
		if err != nil {
			return left, err
		}
		if !bytes.HasPrefix(old, []byte(codegen.Header+"\n")) {
			continue
		}
		if regenerates(m, pkg, old) {
			if err := os.Remove(path); err != nil {
				return left, err
			}
			continue
		}
		left = append(left, path)
	}
	return left, nil
}

// isOurTemp reports whether name is a temporary file WriteFileAtomic makes
// when writing one of the files written.
func isOurTemp(name string, written []codegen.File) bool {
	for _, f := range written {
		if strings.HasPrefix(name, ".vigen-"+f.Name+"-") && strings.HasSuffix(name, ".tmp") {
			return true
		}
	}
	return false
}

// regenerates reports whether src is exactly what vigen gen writes for m
// as package pkg, with or without -kernels.
func regenerates(m *ir.Model, pkg string, src []byte) bool {
	for _, kernels := range []bool{false, true} {
		files, err := codegen.Generate(m, codegen.Options{Package: pkg, KernelsOnly: kernels})
		if err == nil && len(files) == 1 && files[0].Name == pkg+".go" && bytes.Equal(files[0].Src, src) {
			return true
		}
	}
	return false
}

// writeGenerated writes src to path through a temporary file and a rename,
// so an interrupted run leaves the previous file intact. It refuses to
// replace a file that does not start with vigen's generated-code header.
func writeGenerated(path string, src []byte) error {
	if err := checkOverwrite(path); err != nil {
		return err
	}
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, src) {
		return nil
	}
	return runtime.WriteFileAtomic(path, src)
}

func cmdCheck(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	showDerive := fs.Bool("derive", false, "print f, its gradient and Hessian for each nonconjugate latent")
	d, code := parseAndDerive(fs, args, stderr)
	if d == nil {
		return code
	}
	m := d.Model
	// "ok" promises that vigen gen and vigen run accept the model.
	if _, err := codegen.Generate(m, codegen.Options{}); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	fmt.Fprintf(stdout, "%s: model %s is ok\n\n", m.File, m.Name)
	writeTable(stdout, d)
	if *showDerive {
		for _, o := range d.Objectives {
			fmt.Fprintf(stdout, "\nlatent %s: real[%s], %s update\n", o.Latent.Name, o.Dim, o.Latent.Treatment)
			fmt.Fprintf(stdout, "  f = %s\n", derive.String(o.F))
			fmt.Fprintf(stdout, "  ∂f/∂%s[%s] = %s\n", o.Latent.Name, o.A.Name, derive.String(o.Grad))
			fmt.Fprintf(stdout, "  ∂²f/∂%s[%s]∂%s[%s] = %s\n", o.Latent.Name, o.A.Name, o.Latent.Name, o.B.Name, derive.String(o.Hess))
			fmt.Fprintf(stdout, "  ∂Tr{∇²f Σ}/∂%s[%s] = %s\n", o.Latent.Name, o.A.Name, derive.String(o.TraceGrad))
		}
	}
	return 0
}

// parseAndDerive is parseAndLoad followed by the derivation, reporting
// errors the same way.
func parseAndDerive(fs *flag.FlagSet, args []string, stderr io.Writer) (*derive.Derivation, int) {
	m, code := parseAndLoad(fs, args, stderr)
	if m == nil {
		return nil, code
	}
	d, err := deriveSafely(m)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return nil, 1
	}
	return d, 0
}

// deriveSafely is derive.Derive, with a failure inside vigen reported as an
// error rather than a crash.
func deriveSafely(m *ir.Model) (d *derive.Derivation, err error) {
	defer func() {
		if r := recover(); r != nil {
			d, err = nil, fmt.Errorf("%s: internal error in vigen while deriving (please report it with the model): %v", m.File, r)
		}
	}()
	return derive.Derive(m)
}
