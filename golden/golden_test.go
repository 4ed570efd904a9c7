// Package golden keeps the generated code of every example as golden files.
// A change to derive/, codegen/ or templates/ that alters generated code
// fails here until the golden files (and the committed example packages) are
// rewritten with
//
//	go test ./golden -update
//
// Golden files catch unintended changes; correctness is tested by running
// the generated code (examples/*, codegen's end-to-end tests).
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/codegen"
	"github.com/vigen-go/vigen/spec"
)

var update = flag.Bool("update", false, "rewrite golden files and the generated example packages")

// examples returns the example models: examples/NAME/NAME.vi, generated
// into examples/NAME/NAME/ (package NAME) by the example's go:generate line.
func examples(t *testing.T) []string {
	t.Helper()
	vis, err := filepath.Glob("../examples/*/*.vi")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, vi := range vis {
		name := strings.TrimSuffix(filepath.Base(vi), ".vi")
		if filepath.Base(filepath.Dir(vi)) == name {
			out = append(out, vi)
		}
	}
	if len(out) == 0 {
		t.Fatal("no example models found")
	}
	return out
}

func generate(t *testing.T, vi string) codegen.File {
	t.Helper()
	src, err := os.ReadFile(vi)
	if err != nil {
		t.Fatal(err)
	}
	m, err := spec.Load(vi, src)
	if err != nil {
		t.Fatal(err)
	}
	// An example whose go:generate line asks for -kernels is generated so.
	gen, _ := os.ReadFile(filepath.Join(filepath.Dir(vi), "gen.go"))
	files, err := codegen.Generate(m, codegen.Options{KernelsOnly: strings.Contains(string(gen), " -kernels ")})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 {
		t.Fatalf("%s: %d files generated, want 1", vi, len(files))
	}
	return files[0]
}

func TestGolden(t *testing.T) {
	for _, vi := range examples(t) {
		name := strings.TrimSuffix(filepath.Base(vi), ".vi")
		t.Run(name, func(t *testing.T) {
			f := generate(t, vi)
			golden := filepath.Join("testdata", name+".go.golden")
			pkg := filepath.Join(filepath.Dir(vi), name, f.Name)
			if *update {
				for _, p := range []string{golden, pkg} {
					if err := os.WriteFile(p, f.Src, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				return
			}
			for _, p := range []string{golden, pkg} {
				want, err := os.ReadFile(p)
				if err != nil {
					t.Fatalf("%v (run go test ./golden -update)", err)
				}
				if !bytes.Equal(f.Src, want) {
					t.Errorf("generated code for %s differs from %s; if the change is intended, run go test ./golden -update\n%s", vi, p, firstDiff(want, f.Src))
				}
			}
		})
	}
}

// Same model, same bytes: generation must not depend on map order.
func TestDeterministic(t *testing.T) {
	for _, vi := range examples(t) {
		first := generate(t, vi).Src
		for i := 0; i < 10; i++ {
			if again := generate(t, vi).Src; !bytes.Equal(first, again) {
				t.Fatalf("%s: two generations differ\n%s", vi, firstDiff(first, again))
			}
		}
	}
}

func TestHeader(t *testing.T) {
	for _, vi := range examples(t) {
		f := generate(t, vi)
		want := codegen.Header + "\n// source: " + filepath.Base(vi) + "\n\n"
		if !bytes.HasPrefix(f.Src, []byte(want)) {
			t.Errorf("%s: generated file does not start with %q", vi, want)
		}
	}
}

func firstDiff(a, b []byte) string {
	al, bl := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return "line " + strconv.Itoa(i+1) + ":\n- " + x + "\n+ " + y
		}
	}
	return ""
}
