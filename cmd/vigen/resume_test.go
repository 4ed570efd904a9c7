package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/golden"
)

// A checkpoint of a model does not resume an edited one: the fingerprint
// names the model by its source's hash. A logit model's checkpoint once
// resumed a probit model with the same data and options, the ELBO trace
// mixing the two.
func TestRunResumeRefusesAnEditedModel(t *testing.T) {
	golden.SlowTier(t)
	if testing.Short() {
		t.Skip("builds two models (-short)")
	}
	t.Setenv("VIGEN_CACHE", t.TempDir())
	src, err := os.ReadFile("../../examples/hierlogreg/hierlogreg.vi")
	if err != nil {
		t.Fatal(err)
	}
	const logit = "Bernoulli(logistic(dot(x[n], theta[group[n]])))"
	if !strings.Contains(string(src), logit) {
		t.Fatalf("hierlogreg.vi no longer says %s", logit)
	}
	dir := t.TempDir()
	model, cp, data := filepath.Join(dir, "hierlogreg.vi"), filepath.Join(dir, "cp.json"), "../../examples/hierlogreg/data.json"
	write(t, dir, "hierlogreg.vi", string(src))
	if code, _, stderr := runCLI("run", model, "-data", data, "-maxiter", "2", "-checkpoint", cp, "-every", "1", "-q"); code != exitNotConverged {
		t.Fatalf("cut run: exit %d: %s", code, stderr)
	}
	write(t, dir, "hierlogreg.vi", strings.Replace(string(src), logit, "Bernoulli(Phi(dot(x[n], theta[group[n]])))", 1))
	code, stdout, stderr := runCLI("run", model, "-data", data, "-resume", cp, "-q")
	if want := "the model is not the one the checkpoint was fitted with"; code != exitError || stdout != "" || !strings.Contains(stderr, want) {
		t.Errorf("probit resuming logit: exit %d, stderr %q; want exit 1 and %q", code, stderr, want)
	}
}
