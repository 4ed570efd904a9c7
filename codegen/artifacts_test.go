package codegen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/golden"
	"github.com/vigen-go/vigen/spec"
)

// TestGeneratedGlueHasNoArtifacts generates every example, every model of
// the derivative corpus and the models of codegen's end-to-end tests (with
// params, numeric and Gaussian M-steps, online EM), in full and as
// kernels only, and fails on any trace of string assembly in the output
// (golden.Artifacts: constant conditions, zero offsets, unit factors,
// additions of zero, else after return, loops that leave on their first
// pass, unused imports).
func TestGeneratedGlueHasNoArtifacts(t *testing.T) {
	golden.SlowTier(t)
	models := map[string]string{"linreg": linregVI, "linreg2": linreg2VI, "nmean": normalMeanVI, "gprec": gammaPrecVI,
		"fixedeff": fixedEffVI, "ldamap": ldaMAPVI, "schools": schoolsVI, "mfreg": meanFieldRegVI, "gp": gammaPoissonVI,
		"ctmb": ctmTopicsVI, "mlogreg": multiLogregVI, "ologreg": oneLogregVI, "doms": domainsVI, "mixscale": mixScaleVI,
		"mixprec": mixPrecVI, "cases": casesVI, "into": intoVI, "scaledmean": scaledMeanVI, "groupsum": groupSumVI}
	files, err := filepath.Glob("../examples/*/*.vi")
	if err != nil {
		t.Fatal(err)
	}
	corpus, err := filepath.Glob("../derive/testdata/corpus/*.vi")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 5 || len(corpus) < 50 {
		t.Fatalf("found %d examples and %d corpus models, want the five examples and the corpus", len(files), len(corpus))
	}
	for _, path := range append(files, corpus...) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		models[path] = string(b)
	}
	generated := 0
	for name, src := range models {
		file := name
		if !strings.HasSuffix(file, ".vi") {
			file += ".vi"
		}
		m, err := spec.Load(filepath.Base(file), []byte(src))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, kernels := range []bool{false, true} {
			out, err := generateModel(m, Options{KernelsOnly: kernels})
			if err != nil {
				continue // a model the generator refuses says why elsewhere
			}
			generated++
			for _, f := range out {
				for _, a := range golden.Artifacts(f.Src) {
					t.Errorf("%s (kernels only: %v): %s", name, kernels, a)
				}
			}
		}
	}
	if generated < 2*len(models)*3/4 {
		t.Errorf("generated %d packages of %d models, want most of them", generated, len(models))
	}
}

// TestGoBoolFolds checks that constant operands fold while a condition is
// built.
func TestGoBoolFolds(t *testing.T) {
	x, yes, no := cond("x"), constBool(true), constBool(false)
	for _, c := range []struct {
		got  goBool
		want string
	}{
		{x.and(yes), "x"}, {yes.and(x), "x"}, {x.and(no), "false"}, {no.and(x), "false"},
		{x.or(no), "x"}, {no.or(x), "x"}, {x.or(yes), "true"}, {yes.or(x), "true"},
		{x.and(cond("y")), "x && y"}, {x.or(cond("y")), "x || y"},
	} {
		if c.got.src != c.want {
			t.Errorf("got %q, want %q", c.got.src, c.want)
		}
	}
	w := newGoFile()
	w.If(no, func() { w.P("unreachable()") })
	w.If(yes, func() { w.P("always()") })
	w.IfElse(cond("err != nil"), func() { w.Return("err") }, func() { w.P("next()") })
	if got, want := w.String(), "always()\nif err != nil {\nreturn err\n}\nnext()\n"; got != want {
		t.Errorf("goFile wrote %q, want %q", got, want)
	}
	if got, want := times(0, "hi-lo")+" "+times(1, "hi-lo")+" "+times(2, "hi-lo")+" "+times(2, "n"), "0 hi-lo 2*(hi-lo) 2*n"; got != want {
		t.Errorf("times: %q, want %q", got, want)
	}
	if got, want := sliceExpr("x", "0", "")+" "+sliceExpr("x", "0", "n")+" "+sliceExpr("x", "n", ""), "x x[:n] x[n:]"; got != want {
		t.Errorf("sliceExpr: %q, want %q", got, want)
	}
}

// TestFuncBlanksUnusedParams checks that Func renames _ the parameters its
// body never names, and only those (a field's name, x.q, is not q).
func TestFuncBlanksUnusedParams(t *testing.T) {
	w := newGoFile()
	w.Func([]string{"f is f."}, "(a *T) f(q *state, w *scratch, d int) int", func() {
		w.P("x := a.q + d")
		w.Return("x")
	})
	want := "\n// f is f.\nfunc (a *T) f(_ *state, _ *scratch, d int) int {\n\tx := a.q + d\n\treturn x\n}\n"
	if got := w.String(); got != want {
		t.Errorf("Func wrote\n%s\nwant\n%s", got, want)
	}
}
