package codegen

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/spec"
)

// FuzzGenerate runs the whole compiler (parser, checker, derive, code
// generator) on arbitrary source. It must never panic; a model the checker
// accepts either generates code that type-checks (go/types, typecheck_test.go)
// or fails with errors that each carry a fuzz.vi:LINE:COL position. The
// seeds are every model in the repository (the examples, spec/testdata and
// derive's corpus) and compileModels.
//
//	go test ./codegen -run '^$' -fuzz '^FuzzGenerate$' -fuzztime 10m
func FuzzGenerate(f *testing.F) {
	n := 0
	for _, pat := range []string{
		filepath.Join("..", "examples", "*", "*.vi"),
		filepath.Join("..", "spec", "testdata", "*", "*.vi"),
		filepath.Join("..", "derive", "testdata", "corpus", "*.vi"),
	} {
		files, _ := filepath.Glob(pat)
		for _, p := range files {
			src, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(src)
			n++
		}
	}
	if n < 100 {
		f.Fatalf("only %d seed models", n)
	}
	// and the models that once generated code that did not compile
	for _, src := range compileModels {
		f.Add([]byte(src))
	}
	f.Add([]byte(scaledMeanVI))
	positioned := regexp.MustCompile(`^fuzz\.vi:\d+:\d+: \S`)
	f.Fuzz(func(t *testing.T, src []byte) {
		m, err := spec.Load("fuzz.vi", src)
		if err != nil {
			return // FuzzLoad in spec checks the checker's errors
		}
		files, err := generateModel(m, Options{})
		if err == nil {
			if len(files) == 0 {
				t.Fatal("Generate returned neither files nor an error")
			}
			if err := typeCheckFiles(files); err != nil {
				t.Fatal(err)
			}
			return
		}
		for _, line := range strings.Split(err.Error(), "\n") {
			if strings.HasPrefix(line, "\t") {
				continue // a hint
			}
			if !positioned.MatchString(line) {
				t.Errorf("error line without a position: %q", line)
			}
			if strings.Contains(line, "internal") || strings.Contains(line, "runtime error") {
				t.Errorf("internal failure: %q", line)
			}
		}
	})
}
