// Command vigen compiles a probabilistic model written in the .vi language
// into a Go package that fits it by variational inference.
//
// Usage:
//
//	vigen run model.vi -data data.json [-out result.json] [-plot DIR]   fit the model to data (built once, cached)
//	vigen gen [-o DIR] [-pkg NAME] [-kernels] model.vi   write the Go package for model.vi
//	vigen gen -check [-o DIR] [-pkg NAME] [-kernels] model.vi   exit 1, naming the files, if the package in DIR is not what gen writes
//	vigen check [-derive] model.vi            check model.vi and print a table of its nodes; -derive adds f, ∇f, ∇²f
//	vigen explain [-format md|tex] model.vi   print a derivation report: f, ∇f, ∇²f, updates, expectations, M-steps
//	vigen fmt [-w | -l] file.vi...            format .vi files canonically, comments kept
//	vigen summary [-rows N] result.json       print a result as a table: mean, sd, quantiles, diagnostics
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
//
// Every generated package names its .vi file and the SHA-256 of its source
// on its second line. vigen gen -check writes nothing: it exits 0 if DIR
// holds exactly what vigen gen would write now, and 1 otherwise, naming on
// stderr each file that is missing, stale (generated from another version
// of the model, or edited) or that gen would remove; for CI in projects
// that commit generated packages.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
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
  vigen run model.vi -data data.json [-out result.json] [-method laplace|delta|ncvmp] [-seed N] [-plot DIR]
                                            fit model.vi to data.json: generate, build (cached) and run
  vigen gen [-o DIR] [-pkg NAME] [-kernels] model.vi   generate a Go package from model.vi
  vigen gen -check [-o DIR] [-pkg NAME] [-kernels] model.vi
                                            write nothing; exit 1 naming the files if DIR is not what gen would write
  vigen check [-derive] model.vi            check model.vi: a table of its nodes and treatments (-derive: f, ∇f, ∇²f)
  vigen explain [-format md|tex] model.vi   a derivation report in Markdown with LaTeX math (default) or a LaTeX document
  vigen fmt [-w | -l] file.vi...            format .vi files canonically (-w: in place; -l: list those that differ)
  vigen summary [-rows N] result.json       a fit's posterior as a table: mean, sd, 5/50/95% per element; diagnostics

exit status: 0 success (vigen run: the fit converged, or -algorithm svi ran its passes; vigen gen -check: the package
is up to date); 1 an error (model, data, file, build; no result, or the plots failed; vigen gen -check: the package is
stale); 2 bad command line. vigen run (and vigen summary of its result) also exits 3 if the
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
	case "summary":
		return cmdSummary(args[1:], stdout, stderr)
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

// methodList is vigen gen's -methods: a comma-separated list of
// codegen.GenMethods, or a bad command line (exit 2).
type methodList []string

func (l *methodList) String() string { return strings.Join(*l, ",") }

func (l *methodList) Set(v string) error {
	*l = nil
	for _, m := range strings.Split(v, ",") {
		if !slices.Contains(codegen.GenMethods, m) {
			return fmt.Errorf("unknown method %q (want a comma-separated list of %s; ncvmp kernels come with a latent's `nonconjugate ncvmp` declaration)", m, strings.Join(codegen.GenMethods, ", "))
		}
		if !slices.Contains(*l, m) {
			*l = append(*l, m)
		}
	}
	return nil
}

// pkgName is vigen gen's -pkg: a name that can be a Go package's, or a
// bad command line (exit 2).
type pkgName string

func (p *pkgName) String() string { return string(*p) }

func (p *pkgName) Set(v string) error {
	if !token.IsIdentifier(v) || v == "main" || v == "_" {
		return fmt.Errorf("%q cannot be the name of a Go package", v)
	}
	*p = pkgName(v)
	return nil
}

func cmdGen(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "output directory (default: ./NAME, NAME the package)")
	var pkgFlag pkgName
	fs.Var(&pkgFlag, "pkg", "Go package name (default: the model name)")
	pkg := (*string)(&pkgFlag)
	kernels := fs.Bool("kernels", false, "emit data types and derivative kernels only (no Fit)")
	var methods methodList
	fs.Var(&methods, "methods", "comma-separated methods whose kernels every nonconjugate latent gets besides its declared one, for Options.Method: delta (the delta method's third derivatives; vigen run -method delta asks for them itself)")
	check := fs.Bool("check", false, "write nothing; exit 1, naming the files, unless the package in the output directory is what gen would write")
	d, code := parseAndDerive(fs, args, stderr)
	if d == nil {
		return code
	}
	m := d.Model
	files, err := codegen.Generate(d, codegen.Options{Package: *pkg, KernelsOnly: *kernels, Methods: methods})
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
	if *check {
		return checkGenerated(dir, d, files, stderr)
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
	left, err := removeStale(dir, d, files)
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
func removeStale(dir string, d *derive.Derivation, written []codegen.File) (left []string, err error) {
	remove, left, err := staleFiles(dir, d, written)
	if err != nil {
		return nil, err
	}
	for _, p := range remove {
		if err := os.Remove(p); err != nil {
			return left, err
		}
	}
	return left, nil
}

// staleFiles lists the files in dir that removeStale removes (remove), and
// the other files vigen generated that it leaves alone (left); d is the
// derivation of the model m whose package vigen gen writes.
//
// A Go file is removed only if it is exactly what vigen gen writes now for
// m with the package name of the file (NAME.go holds package NAME), with or
// without -kernels, byte for byte. That proves the file was generated from
// a model of the same name and source into that package and that nobody
// edited it, and whatever is removed can be written again, identically,
// with vigen gen -pkg NAME. A file of another model (even one whose .vi has
// the same relative name), an edited file, a renamed copy and a file an
// older vigen wrote all differ, and stay. The header's source line alone
// would not do: two copies of a model in different directories share it.
func staleFiles(dir string, d *derive.Derivation, written []codegen.File) (remove, left []string, err error) {
	keep := map[string]bool{}
	for _, f := range written {
		keep[f.Name] = true
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || keep[name] {
			continue
		}
		path := filepath.Join(dir, name)
		if isOurTemp(name, written) {
			remove = append(remove, path)
			continue
		}
		pkg, ok := strings.CutSuffix(name, ".go")
		if !ok {
			continue
		}
		old, err := os.ReadFile(path)
		if err != nil {
			return remove, left, err
		}
		if !bytes.HasPrefix(old, []byte(codegen.Header+"\n")) {
			continue
		}
		if regenerates(d, pkg, old) {
			remove = append(remove, path)
			continue
		}
		left = append(left, path)
	}
	return remove, left, nil
}

// checkGenerated is vigen gen -check: it compares the files gen would write
// into dir with what dir holds, writing nothing, and names on stderr each
// file that is missing or differs, and each file gen would remove. It
// returns 0 if there is none, else 1.
func checkGenerated(dir string, d *derive.Derivation, files []codegen.File, stderr io.Writer) int {
	m := d.Model
	status := 0
	for _, f := range files {
		path := filepath.Join(dir, f.Name)
		old, err := os.ReadFile(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			fmt.Fprintf(stderr, "vigen: %s is missing: vigen gen would write it from %s\n", path, m.File)
		case err != nil:
			fmt.Fprintln(stderr, "vigen:", err)
		case bytes.Equal(old, f.Src):
			continue
		default:
			fmt.Fprintf(stderr, "vigen: %s is stale: %s\n", path, staleReason(m, old, f.Src))
		}
		status = 1
	}
	remove, _, err := staleFiles(dir, d, files)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintln(stderr, "vigen:", err)
		return 1
	}
	for _, p := range remove {
		fmt.Fprintf(stderr, "vigen: %s is stale: vigen gen would remove it (an earlier output for %s under another package name, or a temporary file)\n", p, m.File)
		status = 1
	}
	return status
}

// staleReason says why old, a file in the output directory, is not now,
// what vigen gen writes for m: the line where they first differ, and
// whether the model's source changed since old was generated (the hash on
// its source line).
func staleReason(m *ir.Model, old, now []byte) string {
	if !bytes.HasPrefix(old, []byte(codegen.Header+"\n")) {
		return fmt.Sprintf("it was not generated by vigen (no %q header)", codegen.Header)
	}
	line := 1
	for i := 0; i < len(old) && i < len(now) && old[i] == now[i]; i++ {
		if old[i] == '\n' {
			line++
		}
	}
	oldSource, _, _ := strings.Cut(string(old[len(codegen.Header)+1:]), "\n")
	if oldSource != codegen.SourceLine(m.File, m.SourceHash) {
		return fmt.Sprintf("it was generated from another version of %s (%q, now %q); first difference at line %d", m.File, oldSource, codegen.SourceLine(m.File, m.SourceHash), line)
	}
	return fmt.Sprintf("it was generated from %s as it is now, but differs from what vigen gen writes at line %d (edited by hand, or written by another version of vigen or with other flags)", m.File, line)
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

// regenerates reports whether src is exactly what vigen gen writes for the
// model derived as d as package pkg, with or without -kernels and
// -methods delta.
func regenerates(d *derive.Derivation, pkg string, src []byte) bool {
	for _, kernels := range []bool{false, true} {
		for _, methods := range [][]string{nil, {"delta"}} {
			files, err := codegen.Generate(d, codegen.Options{Package: pkg, KernelsOnly: kernels, Methods: methods})
			if err == nil && len(files) == 1 && files[0].Name == pkg+".go" && bytes.Equal(files[0].Src, src) {
				return true
			}
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
	if _, err := codegen.Generate(d, codegen.Options{}); err != nil {
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
			fmt.Fprintf(stdout, "  ∂Tr{∇²f Σ}/∂%s[%s] = %s\n", o.Latent.Name, o.A.Name, derive.String(o.TraceGrad()))
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
	d, err := derive.Derive(m)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return nil, 1
	}
	return d, 0
}
