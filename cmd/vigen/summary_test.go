package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// vigen summary prints each result in testdata/summary (fits of the
// examples by vigen run, seconds set to 0.5) as in its golden .txt: a
// Gaussian's normal quantiles, a constrained latent's on its own scale, a
// Gamma's and a Dirichlet's marginal quantiles, params, per-unit rows, the
// diagnostics and what the result leaves out. -update rewrites them.
func TestSummaryGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/summary/*.json")
	if len(files) < 5 {
		t.Fatalf("%d results in testdata/summary", len(files))
	}
	for _, f := range files {
		code, stdout, stderr := runCLI("summary", "-rows", "4", f)
		if code != 0 {
			t.Errorf("%s: exit %d: %s", f, code, stderr)
			continue
		}
		golden := strings.TrimSuffix(f, ".json") + ".txt"
		if *update {
			if err := os.WriteFile(golden, []byte(stdout), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		if stdout != string(want) {
			t.Errorf("%s: summary differs from %s:\n%s", f, golden, stdout)
		}
	}
}

// The numbers in the summaries are the result's: the logistic regression's
// first coefficient (mean and sd from its covariance, 5% = mean − 1.645 sd),
// the constrained scale's quantiles of eight schools' tau as the result
// states them.
func TestSummaryNumbers(t *testing.T) {
	_, out, _ := runCLI("summary", "testdata/summary/logreg.json")
	if !strings.Contains(out, "theta[1]  Normal             1.831      0.1678       1.555       1.831       2.107") {
		t.Errorf("logreg summary:\n%s", out)
	}
	_, out, _ = runCLI("summary", "testdata/summary/eightschools.json")
	if !strings.Contains(out, "tau     Normal/lower       5.286       4.321       1.262       4.092       13.27") {
		t.Errorf("eightschools summary:\n%s", out)
	}
	for _, bad := range [][]string{{"summary"}, {"summary", "-rows", "-1", "x.json"}} {
		if code, _, _ := runCLI(bad...); code != 2 {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "x.json"), []byte(`{"a": 1}`), 0o644)
	if code, _, stderr := runCLI("summary", filepath.Join(dir, "x.json")); code != 1 || !strings.Contains(stderr, "not a vigen result") {
		t.Errorf("not a result: exit %d, %q", code, stderr)
	}
}

// A result of several restarts says which seed it kept and how far apart
// the runs ended.
func TestSummaryRestarts(t *testing.T) {
	b, err := os.ReadFile("testdata/summary/logreg.json")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(b), `"model":`, `"restarts": {"seeds": [4, 5, 6], "elbo": [-3, null, -2.5], "status": ["converged", "error: x", "converged"], "best": 2, "spread": 0.5}, "model":`, 1)
	path := filepath.Join(t.TempDir(), "r.json")
	os.WriteFile(path, []byte(s), 0o644)
	code, out, stderr := runCLI("summary", path)
	if code != 0 || !strings.Contains(out, "restarts: 3 seeds, kept seed 6 (converged); the final ELBOs span 0.5") {
		t.Errorf("exit %d, %s\n%s", code, stderr, out)
	}
}

// A result whose fit failed (testdata/summary/failed/notfinite.json: a
// scale declared real, the ELBO NaN in iteration 1, written by vigen run
// before the checker refused such models) holds the starting values: the
// summary says so before the table, on stderr too, and exits as vigen run
// did (4); one stopped at the iteration limit says so and exits 3.
func TestSummaryFailedFit(t *testing.T) {
	code, out, stderr := runCLI("summary", "testdata/summary/failed/notfinite.json")
	warn := "warning: the fit failed (not_finite: the ELBO = NaN (mu: not_finite; sigma: not_finite) in iteration 1; the result is the state after iteration 0): " +
		"the result's values are the state the fit started from, not a posterior approximation\n"
	if code != exitFailed || !strings.Contains(out, warn) || !strings.Contains(stderr, "not a posterior approximation") {
		t.Errorf("not_finite: exit %d, stderr %q\n%s", code, stderr, out)
	}
	if strings.Index(out, warn) > strings.Index(out, "name ") {
		t.Errorf("the warning comes after the table:\n%s", out)
	}
	b, err := os.ReadFile("testdata/summary/logreg.json")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(b), `"converged": true`, `"converged": false`, 1)
	s = strings.Replace(s, `"status": "converged"`, `"status": "max_iterations"`, 1)
	if s == string(b) || !strings.Contains(s, `"max_iterations"`) {
		t.Fatal("logreg.json's converged and status fields not found")
	}
	path := filepath.Join(t.TempDir(), "r.json")
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ = runCLI("summary", path)
	if code != exitNotConverged || !strings.Contains(out, "warning: the fit did not converge: it stopped at the iteration limit after") {
		t.Errorf("max_iterations: exit %d\n%s", code, out)
	}
}
