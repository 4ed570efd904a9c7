package codegen

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/spec"
)

// linregNoDeltaCase is linreg generated without Options.Methods.
var linregNoDeltaCase = fastTest("TestDeltaKernelsOnlyOnRequest").driver("linreg", linregVI, "fit_laplace_delta_or_error.go").options(Options{})

// A package generated without Options.Methods carries the delta method's
// kernels only for latents declared delta (issue 39: only the kernels a
// model needs). Asked for the delta method anyway, its Fit says which
// kernels are missing and how to generate them, instead of failing to
// build or fitting something else; the Laplace fit of the same package is
// the exact posterior.
func TestDeltaKernelsOnlyOnRequest(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping compile-and-run test in -short mode")
	}
	m, err := spec.Load("linreg.vi", []byte(linregVI))
	if err != nil {
		t.Fatal(err)
	}
	files, err := generateModel(m, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if src := string(files[0].Src); strings.Contains(src, "BetaDelta") {
		t.Fatal("latent beta, declared laplace, got a delta kernel without Options.Methods")
	}
	if _, err := generateModel(m, Options{Methods: []string{"delta", "gibbs"}}); err == nil || !strings.Contains(err.Error(), `unknown method "gibbs"`) {
		t.Errorf("Options.Methods with gibbs: %v, want an error naming it", err)
	}
	// linreg2's latent is declared delta: its kernel is there unasked.
	m2, err := spec.Load("linreg2.vi", []byte(linreg2VI))
	if err != nil {
		t.Fatal(err)
	}
	files2, err := generateModel(m2, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(files2[0].Src), "func (m *Model) BetaDelta(") {
		t.Error("latent beta, declared delta, has no delta kernel")
	}

	x, y, data := linregData(rand.New(rand.NewPCG(11, 12)), 40, 3)
	mean, _ := exactPosterior(x, y, 0.5, 0.25, 2)
	out := linregNoDeltaCase.run(t, data)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 {
		t.Fatalf("driver output:\n%s", out)
	}
	var status string
	var b0 float64
	if _, err := fmt.Sscanf(lines[0], "laplace: %s %g", &status, &b0); err != nil || status != "converged" || math.Abs(b0-mean.AtVec(0)) > 1e-9 {
		t.Errorf("laplace: %q, want converged at the exact mean %.12g", lines[0], mean.AtVec(0))
	}
	want := "delta: error: linreg: method delta for beta needs the delta method's kernels, which this package was generated without; generate it with vigen gen -methods delta"
	if !strings.HasPrefix(lines[1], want) {
		t.Errorf("delta: %q, want %q", lines[1], want)
	}
}
