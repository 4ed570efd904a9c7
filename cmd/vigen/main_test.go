package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/codegen"
)

const good = `model tiny
size N, P
data x : real[N, P]
data y : int[N] in 0..1
const mu0 : real[P] = 0
const S : cov[P] = eye(P)
latent w : real[P] nonconjugate laplace
w ~ MvNormal(mu0, S)
for n in 1:N {
  y[n] ~ Bernoulli(logistic(dot(x[n], w)))
}
`

// runCLI runs vigen with args and returns the exit status and outputs.
func runCLI(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := run(args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func write(t *testing.T, dir, name, src string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestGenWritesPackage(t *testing.T) {
	dir := t.TempDir()
	vi := write(t, dir, "tiny.vi", good)
	out := filepath.Join(dir, "pkg")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"gen", "-o", out, vi}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	src, err := os.ReadFile(filepath.Join(out, "tiny.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(src, []byte(codegen.Header+"\n// source: tiny.vi sha256:")) {
		t.Errorf("generated file starts with %q", src[:80])
	}
	// A second run over its own output is allowed.
	if code := run([]string{"gen", "-o", out, vi}, &stdout, &stderr); code != 0 {
		t.Fatalf("regenerating: exit %d: %s", code, stderr.String())
	}
}

func TestGenRefusesToOverwriteForeignFile(t *testing.T) {
	dir := t.TempDir()
	vi := write(t, dir, "tiny.vi", good)
	out := filepath.Join(dir, "pkg")
	os.MkdirAll(out, 0o755)
	mine := write(t, out, "tiny.go", "package tiny // written by hand\n")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"gen", "-o", out, vi}, &stdout, &stderr); code == 0 {
		t.Fatal("gen overwrote a file it did not generate")
	}
	if !strings.Contains(stderr.String(), "refusing to overwrite") || !strings.Contains(stderr.String(), mine) {
		t.Errorf("stderr %q does not name the file", stderr.String())
	}
	if b, _ := os.ReadFile(mine); string(b) != "package tiny // written by hand\n" {
		t.Error("the hand-written file was changed")
	}
}

func TestMalformedModelGetsPositionedErrors(t *testing.T) {
	dir := t.TempDir()
	for name, src := range map[string]string{
		"syntax.vi":  "model m\nsize N\ndata y : int[N] in 0..1\nfor n in 1:N {\n  y[n] ~ Bernoulli(0.5\n}\n",
		"unknown.vi": strings.Replace(good, "dot(x[n], w)", "dot(z[n], w)", 1),
	} {
		vi := write(t, dir, name, src)
		for _, args := range [][]string{{"gen", "-o", filepath.Join(dir, "out"), vi}, {"check", vi}} {
			cmd := args[0]
			var stdout, stderr bytes.Buffer
			code := run(args, &stdout, &stderr)
			if code != 1 {
				t.Errorf("%s %s: exit %d, want 1", cmd, name, code)
			}
			if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `:\d+:\d+: `).MatchString(stderr.String()) {
				t.Errorf("%s %s: stderr lacks file:line:col: %q", cmd, name, stderr.String())
			}
		}
	}
}

func TestCheckDerive(t *testing.T) {
	dir := t.TempDir()
	vi := write(t, dir, "tiny.vi", good)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"check", "-derive", vi}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, want := range []string{"latent w", "softplus", "logistic", "S.inv[a,b]"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("check -derive output lacks %q:\n%s", want, stdout.String())
		}
	}
}

// gen replaces its files by rename, never by rewriting them in place, so an
// interrupted run leaves the previous package whole: a hard link to the old
// file keeps the old contents after regeneration.
func TestGenReplacesByRename(t *testing.T) {
	dir := t.TempDir()
	vi := write(t, dir, "tiny.vi", good)
	out := filepath.Join(dir, "pkg")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"gen", "-o", out, vi}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	gen := filepath.Join(out, "tiny.go")
	old, _ := os.ReadFile(gen)
	link := filepath.Join(dir, "old-link")
	if err := os.Link(gen, link); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	write(t, dir, "tiny.vi", strings.Replace(good, "mu0 : real[P] = 0", "mu0 : real[P] = 1", 1))
	if code := run([]string{"gen", "-o", out, vi}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if b, _ := os.ReadFile(gen); bytes.Equal(b, old) {
		t.Fatal("the model changed but the generated file did not")
	}
	if b, _ := os.ReadFile(link); !bytes.Equal(b, old) {
		t.Error("the old file was rewritten in place instead of replaced by rename")
	}
	if tmp, _ := filepath.Glob(filepath.Join(out, ".vigen-*")); len(tmp) > 0 {
		t.Errorf("temporary files left behind: %v", tmp)
	}
}

// After a change of package name, gen removes the file it generated under
// the old name, and only that: hand-written files, files generated from
// another model and non-Go files stay; a temporary file of an interrupted
// run goes.
func TestGenRemovesOnlyItsOwnStaleFiles(t *testing.T) {
	dir := t.TempDir()
	vi := write(t, dir, "tiny.vi", good)
	out := filepath.Join(dir, "pkg")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"gen", "-o", out, "-pkg", "first", vi}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	keep := map[string]string{
		"helper.go": "package second // hand-written\n",
		"other.go":  codegen.Header + "\n// source: other.vi\npackage second\n",
		"notes.txt": codegen.Header + "\n// source: tiny.vi\n",
	}
	for name, src := range keep {
		write(t, out, name, src)
	}
	write(t, out, ".vigen-second.go-123.tmp", "partial")
	if code := run([]string{"gen", "-o", out, "-pkg", "second", vi}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(out, "first.go")); !os.IsNotExist(err) {
		t.Errorf("first.go, generated earlier from tiny.vi, is still there (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(out, "second.go")); err != nil {
		t.Errorf("second.go was not written: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, ".vigen-second.go-123.tmp")); !os.IsNotExist(err) {
		t.Error("the leftover temporary file was not removed")
	}
	for name, src := range keep {
		if b, err := os.ReadFile(filepath.Join(out, name)); err != nil || string(b) != src {
			t.Errorf("%s was changed or removed (%v)", name, err)
		}
	}
}

// Ownership of a generated file is decided by the file itself, never by
// the relative path of the .vi it came from: two models whose files are
// both model.vi (in dirA and dirB) generated into one directory keep each
// its package, and a renamed or edited copy of a generated file stays. A
// file is removed only if it is byte for byte what gen writes for this
// model under its name, with or without -kernels. vigen once removed the
// first model's package and the edited copy, both of whose headers named
// the source model.vi.
func TestGenKeepsOtherModelsFiles(t *testing.T) {
	dir := t.TempDir()
	for _, m := range []string{"a", "b"} {
		os.MkdirAll(filepath.Join(dir, "dir"+strings.ToUpper(m)), 0o755)
		write(t, filepath.Join(dir, "dir"+strings.ToUpper(m)), "model.vi", strings.Replace(good, "model tiny", "model "+m, 1))
	}
	gen := func(sub string, args ...string) string {
		t.Helper()
		t.Chdir(filepath.Join(dir, sub))
		code, _, stderr := runCLI(append(append([]string{"gen", "-o", "../out"}, args...), "model.vi")...)
		if code != 0 {
			t.Fatalf("gen in %s: exit %d\n%s", sub, code, stderr)
		}
		return stderr
	}
	out := filepath.Join(dir, "out")
	read := func(name string) string {
		b, _ := os.ReadFile(filepath.Join(out, name))
		return string(b)
	}
	gen("dirA")
	first := read("a.go")
	if !strings.HasPrefix(first, codegen.Header+"\n// source: model.vi sha256:") {
		t.Fatalf("a.go starts %.80q", first)
	}
	// A renamed copy, edited, and one not edited: neither is a.go.
	edited := strings.Replace(first, "package a", "package a // mine", 1)
	write(t, out, "mine.go", edited)
	write(t, out, "copy.go", first)
	stderr := gen("dirB")
	if read("a.go") != first {
		t.Error("the package of model a, generated from dirA/model.vi, was removed by generating dirB/model.vi")
	}
	if read("b.go") == "" {
		t.Error("b.go was not written")
	}
	if read("mine.go") != edited || read("copy.go") != first {
		t.Error("a renamed copy of a generated file was removed")
	}
	if !strings.Contains(stderr, "left "+filepath.Join("..", "out", "a.go")+" alone") {
		t.Errorf("no note about a.go, which makes the directory hold two packages:\n%s", stderr)
	}

	// Same model, a new package name: the old file goes, generated with or
	// without -kernels; edited, it stays.
	for _, c := range []struct {
		args []string
		edit bool
	}{{nil, false}, {[]string{"-kernels"}, false}, {nil, true}} {
		os.RemoveAll(out)
		gen("dirA", append([]string{"-pkg", "first"}, c.args...)...)
		if c.edit {
			write(t, out, "first.go", strings.Replace(read("first.go"), "package first", "package first // mine", 1))
		}
		gen("dirA", append([]string{"-pkg", "second"}, c.args...)...)
		if _, err := os.Stat(filepath.Join(out, "first.go")); os.IsNotExist(err) == c.edit {
			t.Errorf("gen %v, then -pkg second, first.go edited %v: removed %v", c.args, c.edit, os.IsNotExist(err))
		}
	}
}

// gen refuses to write over a file that is not regular, and never reads
// it to decide (a FIFO would block the read for ever).
func TestGenRefusesNonRegularTarget(t *testing.T) {
	dir := t.TempDir()
	vi := write(t, dir, "tiny.vi", good)
	out := filepath.Join(dir, "pkg")
	os.MkdirAll(filepath.Join(out, "tiny.go"), 0o755)
	code, _, stderr := runCLI("gen", "-o", out, vi)
	if want := "refusing to overwrite " + filepath.Join(out, "tiny.go") + ": it is not a regular file"; code != 1 || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, stderr %q; want exit 1 and %q", code, stderr, want)
	}
}

// A refusal happens before anything is written.
func TestGenRefusalWritesNothing(t *testing.T) {
	dir := t.TempDir()
	vi := write(t, dir, "tiny.vi", good)
	out := filepath.Join(dir, "pkg")
	os.MkdirAll(out, 0o755)
	write(t, out, "tiny.go", "package tiny // mine\n")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"gen", "-o", out, vi}, &stdout, &stderr); code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries after a refusal, want only tiny.go", len(entries))
	}
}

// `vigen check` prints a table of every example model's nodes and the
// expectations its updates take; testdata/check holds the expected output
// (rewrite with -update).
func TestCheckTableGolden(t *testing.T) {
	models, err := filepath.Glob(filepath.Join("..", "..", "examples", "*", "*.vi"))
	if err != nil || len(models) < 5 {
		t.Fatalf("found %d example models (%v)", len(models), err)
	}
	for _, vi := range models {
		name := strings.TrimSuffix(filepath.Base(vi), ".vi")
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run([]string{"check", vi}, &stdout, &stderr); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			golden := filepath.Join("testdata", "check", name+".txt")
			if *update {
				os.MkdirAll(filepath.Dir(golden), 0o755)
				if err := os.WriteFile(golden, stdout.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./cmd/vigen -run TestCheckTableGolden -update)", err)
			}
			if stdout.String() != string(want) {
				t.Errorf("check output differs from %s:\n--- got\n%s--- want\n%s", golden, stdout.String(), want)
			}
			// Every declared name has a row, and every latent a treatment.
			m, err := load(vi)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range m.Vars {
				if v.Role.String() == "latent" && !regexp.MustCompile(`(?m)^`+v.Name+` +latent .*(conjugate|Laplace|delta)`).MatchString(stdout.String()) {
					t.Errorf("no treatment row for latent %s", v.Name)
				}
			}
		})
	}
}

// `vigen fmt` over every example: the examples are kept in canonical form,
// so -l lists none and plain fmt prints each file unchanged; -w rewrites a
// messy copy into that form and leaves a formatted file untouched.
func TestFmtExamples(t *testing.T) {
	models, _ := filepath.Glob(filepath.Join("..", "..", "examples", "*", "*.vi"))
	if len(models) < 5 {
		t.Fatalf("found %d example models", len(models))
	}
	var stdout, stderr bytes.Buffer
	if code := run(append([]string{"fmt", "-l"}, models...), &stdout, &stderr); code != 0 || stdout.Len() > 0 {
		t.Errorf("exit %d; files not in canonical form (run vigen fmt -w):\n%s%s", code, stdout.String(), stderr.String())
	}
	for _, vi := range models {
		src, _ := os.ReadFile(vi)
		stdout.Reset()
		if code := run([]string{"fmt", vi}, &stdout, &stderr); code != 0 || stdout.String() != string(src) {
			t.Errorf("%s: fmt printed something else (exit %d)", vi, code)
		}
	}
	dir := t.TempDir()
	messy := write(t, dir, "m.vi", "model m\nsize N\ndata y:real[N]   # obs\nfor n in 1:N{y[n]~Normal(0,(1))}\n")
	if code := run([]string{"fmt", "-w", messy}, &stdout, &stderr); code != 0 {
		t.Fatalf("fmt -w: exit %d: %s", code, stderr.String())
	}
	want := "model m\nsize N\ndata y : real[N]  # obs\nfor n in 1:N {\n  y[n] ~ Normal(0, 1)\n}\n"
	if b, _ := os.ReadFile(messy); string(b) != want {
		t.Errorf("fmt -w wrote\n%s\nwant\n%s", b, want)
	}
	bad := write(t, dir, "bad.vi", "model m\nsize N\ndata y : real[N\n")
	stderr.Reset()
	if code := run([]string{"fmt", "-w", bad}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "bad.vi:") {
		t.Errorf("fmt of a syntax error: exit %d, stderr %q", code, stderr.String())
	}
	if b, _ := os.ReadFile(bad); string(b) != "model m\nsize N\ndata y : real[N\n" {
		t.Error("fmt -w changed a file with a syntax error")
	}
}

// TestUsageErrorsExit2: a bad command line (an unknown flag, a flag value
// out of its range, a missing argument) exits 2 in every subcommand, as
// the README says, and vigen run refuses it before building anything.
// vigen gen -pkg a-b and vigen run -method foo exited 1, the latter after
// a build, and the fitting command's own usage errors came back as 1.
func TestUsageErrorsExit2(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("VIGEN_CACHE", cache)
	vi, data := "../../examples/logreg/logreg.vi", "../../examples/logreg/data.json"
	for _, args := range [][]string{
		{"gen", "-pkg", "a-b", vi},
		{"gen", "-o", t.TempDir(), "-pkg", "main", vi},
		{"check", "-nope", vi},
		{"summary", "-rows", "-1", "r.json"},
		{"explain", "-format", "pdf", vi},
		{"run", vi, "-data", data, "-seed", "abc"},
		{"run", vi, "-data", data, "-batch", "-3", "-algorithm", "svi"},
		{"run", vi, "-data", data, "-algorithm", "gibbs"},
		{"run", vi, "-data", data, "-method", "foo"},
		{"run", vi, "-data", data, "-psis-draws", "-1"},
		{"run", vi, "-data", data, "-restarts", "-2"},
		{"run", vi},
	} {
		if code, stdout, stderr := runCLI(args...); code != exitUsage || stdout != "" || stderr == "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and why", args, code, stdout, stderr)
		}
	}
	if entries, _ := os.ReadDir(cache); len(entries) != 0 {
		t.Errorf("a bad command line was found only after building: the cache holds %v", entries)
	}
}
