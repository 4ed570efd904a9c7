package codegen

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/golden"
	"github.com/vigen-go/vigen/spec"
	"github.com/vigen-go/vigen/spec/ir"
)

// FuzzGenerate runs the whole compiler (parser, checker, derive, code
// generator) on arbitrary source. It must never panic; a model the checker
// accepts either generates code that type-checks (go/types, typecheck_test.go)
// and computes nothing infinite or NaN from numbers alone
// (nonFiniteConstants), or fails with errors that each carry a
// fuzz.vi:LINE:COL position. The seeds are every model in the repository
// (the examples, spec/testdata and derive's corpus), compileModels,
// nameAndRangeModels and argRangeModels.
//
// Two classes of model are out of a byte mutator's reach, and the fuzz
// function mutates toward them itself: rename (when not 0) renames one of
// the model's names to one of the generator's own (generatorNames: the
// names the generated package declares and names.go's tables), and literal
// (when not 0) replaces one of its numbers by an extreme one
// (extremeLiterals). Both once made accepted models whose code did not
// compile; extreme numbers also made code that computed ±Inf from them.
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
	if !fuzzing {
		// its seeds, every model in the repository, take a minute of CPU:
		// the fuzzing command of the slow tier runs them first
		golden.SlowTier(f)
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
			f.Add(src, uint16(0), uint16(0))
		}
	}
	if n < 100 {
		f.Fatalf("only %d seed models", n)
	}
	// and the models that once generated code that did not compile
	for _, src := range compileModels {
		f.Add([]byte(src), uint16(0), uint16(0))
	}
	f.Add([]byte(scaledMeanVI), uint16(0), uint16(0))
	for _, src := range nameAndRangeModels {
		f.Add([]byte(src), uint16(0), uint16(0))
	}
	for _, src := range argRangeModels {
		f.Add([]byte(src), uint16(0), uint16(0))
	}
	// the mutations, on a model with an NCVMP latent and one with
	// predictions
	for k := range uint16(4) {
		f.Add([]byte(nameAndRangeModels[1]), 1+k*0x0101, 1+k*0x0103)
		f.Add([]byte(nameAndRangeModels[0]), 0x200+k*7, 0x100+k)
	}
	positioned := regexp.MustCompile(`^fuzz\.vi:\d+:\d+: \S`)
	f.Fuzz(func(t *testing.T, src []byte, rename, literal uint16) {
		src = withGeneratorName(src, rename)
		src = withExtremeLiteral(src, literal)
		m, err := spec.Load("fuzz.vi", src)
		if err != nil {
			return // FuzzLoad in spec checks the checker's errors
		}
		files, err := generateModel(m, Options{Methods: []string{"delta"}}) // what vigen run -method delta builds
		if err == nil {
			if len(files) == 0 {
				t.Fatal("Generate returned neither files nor an error")
			}
			if err := typeCheckFiles(files); err != nil {
				t.Fatal(err)
			}
			if bad := nonFiniteConstants(files); len(bad) > 0 {
				t.Fatalf("the generated code computes what is not finite from numbers alone:\n%s", strings.Join(bad, "\n"))
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

// nameAndRangeModels once passed the checker and generated code that did
// not compile: names the generator makes from the model's that were its
// own (Data's method LeftOut, the NCVMP method ncvmpW of a latent w, the
// tempering kernels logJointUnit and logNormUnit), and numbers folded out
// of float64's range (the precision 1/(1e-170)^2 printed as a Go constant
// expression, 1e200 * 1e200 printed as the identifier Inf). A model name
// longer than a file name can be is refused by the checker.
var nameAndRangeModels = []string{
	"model m\nsize N, P\ndata x : real[N, P]\ndata y : int[N] in 0..1\ndata leftOut : real\nlatent theta : real[P] nonconjugate laplace\ntheta ~ Normal(leftOut, 1)\nfor n in 1:N {\n  y[n] ~ Bernoulli(logistic(dot(x[n], theta)))\n}\n",
	"model m\nsize N, P\ndata x : real[N, P]\ndata y : int[N] in 0..1\ndata ncvmpW : real\nlatent w : real[P] nonconjugate ncvmp\nw ~ Normal(ncvmpW, 1)\nfor n in 1:N {\n  y[n] ~ Bernoulli(logistic(dot(x[n], w)))\n}\n",
	"model gmm\nsize N, K\ndata y : real[N]\nconst logJointUnit : real = 1\nconst logNormUnit : real = 10\nlatent pi : simplex[K] conjugate\nlatent mu : real[K] conjugate\nlatent tau : real[K] conjugate\nlatent z : int[N] in 1..K conjugate\npi ~ Dirichlet(logJointUnit)\nmu ~ Normal(0, logNormUnit)\ntau ~ Gamma(2, 1)\nfor n in 1:N {\n  z[n] ~ Categorical(pi)\n  y[n] ~ Normal(mu[z[n]], 1 / sqrt(tau[z[n]]))\n}\n",
	"model m\nsize N\ndata y : real[N]\nlatent mu : real conjugate\nmu ~ Normal(0, 1e-170)\nfor n in 1:N {\n  y[n] ~ Normal(mu, 1)\n}\n",
	"model m\nsize N\ndata y : real[N]\nlatent mu : real nonconjugate laplace\nmu ~ Normal(0, 1)\nfor n in 1:N {\n  y[n] ~ Normal(mu * 1e200 * 1e200, 1)\n}\n",
	"model m\nsize N\ndata y : real[N]\nlatent mu : real nonconjugate laplace\nmu ~ Normal(0, 1)\nfor n in 1:N {\n  y[n] ~ Normal(1e-200 * mu * 1e-200, 1 / 1e-320)\n}\n",
	"model " + strings.Repeat("m", 300) + "\nsize N\ndata y : real[N]\nlatent mu : real conjugate\nmu ~ Normal(0, 1)\nfor n in 1:N {\n  y[n] ~ Normal(mu, 1)\n}\n",
}

// argRangeModels once passed the checker and generated code that
// compiled but computed ±Inf from their numbers alone, so that their fits
// ended not_finite (nonFiniteConstants): the precision sd^(−2) of an sd
// of 1e-170 in a prior, a likelihood and a StudentT, and of a mean of
// 1e200 over an sd of 1e-100 multiplied out.
var argRangeModels = []string{
	"model m\nsize N\ndata y : real[N]\nlatent mu : real nonconjugate laplace\nmu ~ Normal(0, 1e-170)\nfor n in 1:N {\n  y[n] ~ Normal(mu, 1)\n}\n",
	"model m\nsize N\ndata y : real[N]\nlatent mu : real nonconjugate laplace\nmu ~ Normal(0, 1)\nfor n in 1:N {\n  y[n] ~ StudentT(4, mu, 1e-170)\n}\n",
	"model m\nsize N\ndata y : real[N]\nlatent mu : real nonconjugate laplace\nmu ~ Normal(1e200, 1e-100)\nfor n in 1:N {\n  y[n] ~ Normal(mu, 1)\n}\n",
}

// withGeneratorName renames, if k is not 0, the model's name number k>>8
// (modulo their number) in src to generatorNames(src)[k&0xff] (modulo).
// A src that does not load, or that Generate refuses, is returned as it is.
func withGeneratorName(src []byte, k uint16) []byte {
	if k == 0 {
		return src
	}
	m, err := spec.Load("fuzz.vi", src)
	if err != nil || len(m.Vars) == 0 {
		return src
	}
	names := generatorNames(m)
	if len(names) == 0 { // a model Generate refuses has no generator names
		return src
	}
	v := m.Vars[int(k>>8)%len(m.Vars)]
	to := names[int(k&0xff)%len(names)]
	word := regexp.MustCompile(`\b` + regexp.QuoteMeta(v.Name) + `\b`)
	return word.ReplaceAll(src, []byte(to))
}

// generatorNames are the generator's own names for m that no table of
// names.go reserves: the names its generated package declares (types,
// functions, fields, methods) but goReserved and the methods stemMethods
// makes from m's names, which every namer avoids by construction. Sorted,
// and only those that can be .vi identifiers (a letter first).
func generatorNames(m *ir.Model) []string {
	files, err := generateModel(m, Options{})
	if err != nil {
		return nil
	}
	scopes, err := declarations(files)
	if err != nil {
		return nil
	}
	reserved := map[string]bool{}
	for _, v := range m.Vars {
		reserved[v.Name] = true
		reserved[exported(v.Name)] = true
		reserved[lowerFirst(exported(v.Name))] = true
		for _, meth := range stemMethods(exported(v.Name)) {
			reserved[meth] = true
		}
	}
	set := map[string]bool{}
	for _, names := range scopes {
		for n := range names {
			if r := n[0]; !goReserved[n] && !reserved[n] && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
				set[n] = true
			}
		}
	}
	return keys(set)
}

// TestGeneratorNamesAsModelNames: each data variable of these models,
// renamed to each of the generator's own names (generatorNames), gives a
// package that compiles. Data's method LeftOut, the NCVMP method ncvmpW
// and the tempering kernels logJointUnit and logNormUnit once did not;
// FuzzGenerate's renaming explores the same at random over every model.
func TestGeneratorNamesAsModelNames(t *testing.T) {
	golden.SlowTier(t)
	for _, src := range []string{
		"model m\nsize N, P\ndata x : real[N, P]\ndata y : int[N] in 0..1\ndata c : real\nlatent w : real[P] nonconjugate ncvmp\nw ~ Normal(c, 1)\nfor n in 1:N {\n  y[n] ~ Bernoulli(logistic(dot(x[n], w)))\n}\n",
		"model gmm\nsize N, K\ndata y : real[N]\nconst c : real = 1\nlatent pi : simplex[K] conjugate\nlatent mu : real[K] conjugate\nlatent tau : real[K] conjugate\nlatent z : int[N] in 1..K conjugate\npi ~ Dirichlet(c)\nmu ~ Normal(0, 10)\ntau ~ Gamma(2, 1)\nfor n in 1:N {\n  z[n] ~ Categorical(pi)\n  y[n] ~ Normal(mu[z[n]], 1 / sqrt(tau[z[n]]))\n}\n",
	} {
		m, err := spec.Load("names.vi", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		names := generatorNames(m)
		if len(names) < 10 {
			t.Fatalf("%s: only %d generator names: %v", m.Name, len(names), names)
		}
		c := regexp.MustCompile(`\bc\b`)
		for _, to := range names {
			renamed, err := spec.Load("names.vi", c.ReplaceAll([]byte(src), []byte(to)))
			if err != nil {
				continue // a name the language keeps (a keyword, a function)
			}
			files, err := generateModel(renamed, Options{})
			if err == nil {
				err = typeCheckFiles(files)
			}
			if err != nil {
				t.Errorf("%s with c renamed %s: %v", m.Name, to, err)
			}
		}
	}
}

// extremeLiterals are numbers at and beyond the ends of float64's range
// and of what its arithmetic keeps: their squares, reciprocals and
// products overflow or underflow.
var extremeLiterals = []string{"1e-170", "1e200", "1e308", "1.7976931348623157e308", "5e-324", "1e-320", "2.2250738585072014e-308", "1e-160", "1e160", "0", "1e-300", "3e38"}

var numberLiteral = regexp.MustCompile(`\b[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?\b`)

// withExtremeLiteral replaces, if k is not 0, the number literal number
// k>>8 (modulo their number) of src by extremeLiterals[k&0xff] (modulo).
func withExtremeLiteral(src []byte, k uint16) []byte {
	if k == 0 {
		return src
	}
	at := numberLiteral.FindAllIndex(src, -1)
	if len(at) == 0 {
		return src
	}
	loc := at[int(k>>8)%len(at)]
	lit := extremeLiterals[int(k&0xff)%len(extremeLiterals)]
	out := append([]byte(nil), src[:loc[0]]...)
	out = append(out, lit...)
	return append(out, src[loc[1]:]...)
}

// TestWithGeneratorNameOfARefusedModel: a model that loads but that
// derive refuses has no generator names; withGeneratorName returns it as
// it is (CI's fuzzing once divided by their number, zero).
func TestWithGeneratorNameOfARefusedModel(t *testing.T) {
	src := []byte("model m\nsize N\ndata y : real[N]\nlatent mu : real conjugate\nmu ~ StudentT(3, 0, 1)\nfor n in 1:N {\n  y[n] ~ Normal(mu, 1)\n}\n")
	m, err := spec.Load("fuzz.vi", src)
	if err != nil {
		t.Fatalf("the model must load (derive refuses it): %v", err)
	}
	if _, err := generateModel(m, Options{}); err == nil {
		t.Fatal("derive must refuse the model: its conjugate latent has a StudentT prior")
	}
	if got := withGeneratorName(src, 0x3d); !bytes.Equal(got, src) {
		t.Fatalf("withGeneratorName changed a refused model:\n%s", got)
	}
}
