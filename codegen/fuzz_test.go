package codegen

import (
	"flag"
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
//
// While fuzzing (not in a plain go test run, which still runs them as seeds)
// the seeds in slowSeeds are left out: Go's fuzzing worker panics
// ("deadlocked!") when one call of the fuzz function takes 10 seconds, and
// these, which take 2–5 seconds here uninstrumented, can take that long
// under the fuzzer's coverage instrumentation on a loaded machine.
func FuzzGenerate(f *testing.F) {
	fuzzing := false
	if fl := flag.Lookup("test.fuzz"); fl != nil && fl.Value.String() != "" {
		fuzzing = true
	}
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
			n++
			if fuzzing && slowSeeds[filepath.ToSlash(p)] {
				continue
			}
			f.Add(src)
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

// slowSeeds are the seed models whose generation takes seconds (measured
// uninstrumented: algebra.vi 2.5 s, dist_mixture.vi 2.4 s CPU, literalsizes.vi
// and mixture.vi 1.7–2.7 s), left out while fuzzing (see FuzzGenerate).
var slowSeeds = map[string]bool{
	"../spec/testdata/good/algebra.vi":          true,
	"../spec/testdata/good/literalsizes.vi":     true,
	"../spec/testdata/good/mixture.vi":          true,
	"../derive/testdata/corpus/dist_mixture.vi": true,
}
