package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/golden"
)

// vigen run passes every tolerance through, and -tol alone can shorten a
// run once -meantol is switched off (before, a hidden mean-change
// tolerance had to hold too, and -meantol did not exist).
func TestRunTolerancesReachTheFit(t *testing.T) {
	golden.SlowTier(t)
	if testing.Short() {
		t.Skip("builds a model (-short)")
	}
	t.Setenv("VIGEN_CACHE", t.TempDir())
	model, data := "../../examples/lda/lda.vi", "../../examples/lda/data.json"
	type result struct {
		Converged  bool   `json:"converged"`
		Status     string `json:"status"`
		Iterations int    `json:"iterations"`
	}
	fit := func(want int, args ...string) result {
		t.Helper()
		code, stdout, stderr := runCLI(append([]string{"run", model, "-data", data, "-q"}, args...)...)
		if code != want {
			t.Fatalf("%v: exit %d, want %d:\n%s", args, code, want, stderr)
		}
		var r result
		if err := json.Unmarshal([]byte(stdout), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	full := fit(exitConverged)
	short := fit(exitConverged, "-tol", "1e-3", "-meantol", "inf")
	if !full.Converged || !short.Converged || short.Iterations >= full.Iterations {
		t.Errorf("defaults: %s after %d iterations; -tol 1e-3 -meantol inf: %s after %d, want converged sooner",
			full.Status, full.Iterations, short.Status, short.Iterations)
	}
	capped := fit(exitNotConverged, "-localmaxiter", "1", "-localtol", "1e-300", "-maxiter", "3")
	if capped.Converged || capped.Iterations != 3 || !strings.Contains(capped.Status, "units unsettled after LocalMaxIter 1 sweeps") {
		t.Errorf("-localmaxiter 1 -localtol 1e-300 -maxiter 3: %s after %d iterations, want 3 unconverged", capped.Status, capped.Iterations)
	}
}

// A negative tolerance or count is a usage error, not silently the default.
func TestRunRefusesNegativeTolerances(t *testing.T) {
	for _, flag := range []string{"-maxiter", "-tol", "-meantol", "-localtol", "-localmaxiter", "-workers"} {
		code, _, stderr := runCLI("run", "../../examples/lda/lda.vi", "-data", "../../examples/lda/data.json", flag, "-5")
		if code != 2 || !strings.Contains(stderr, flag+" must not be negative") {
			t.Errorf("%s -5: exit %d, stderr %q; want 2 and the flag named", flag, code, stderr)
		}
	}
}

// vigen run leaves every token's q(z) out of the result and says so on
// stderr; -keep z keeps it, and -keep names only per-token latents.
func TestRunKeepsTokensOnRequest(t *testing.T) {
	golden.SlowTier(t)
	if testing.Short() {
		t.Skip("builds a model (-short)")
	}
	t.Setenv("VIGEN_CACHE", t.TempDir())
	model, data := "../../examples/lda/lda.vi", "../../examples/lda/data.json"
	type result struct {
		Latent  map[string]json.RawMessage `json:"latent"`
		Omitted []string                   `json:"omitted"`
	}
	fit := func(want int, args ...string) (result, string) {
		t.Helper()
		code, stdout, stderr := runCLI(append([]string{"run", model, "-data", data, "-maxiter", "3"}, args...)...)
		if code != want {
			t.Fatalf("%v: exit %d, want %d:\n%s", args, code, want, stderr)
		}
		var r result
		if want != exitError {
			if err := json.Unmarshal([]byte(stdout), &r); err != nil {
				t.Fatal(err)
			}
		}
		return r, stderr
	}
	lean, stderr := fit(exitNotConverged)
	if string(lean.Latent["z"]) != "null" || len(lean.Omitted) != 1 || !strings.Contains(stderr, "leaves out the per-token latents z (-keep z keeps them)") {
		t.Errorf("default: z %.40s, omitted %v, stderr %q", lean.Latent["z"], lean.Omitted, stderr)
	}
	kept, _ := fit(exitNotConverged, "-keep", "z")
	if !strings.Contains(string(kept.Latent["z"]), `"prob"`) || kept.Omitted != nil {
		t.Errorf("-keep z: z %.40s, omitted %v", kept.Latent["z"], kept.Omitted)
	}
	if _, stderr := fit(exitError, "-keep", "theta"); !strings.Contains(stderr, `keep "theta": not a per-token latent of lda; give one of z`) {
		t.Errorf("-keep theta: stderr %q", stderr)
	}
}

// vigen run -csv y,x=table.csv reads the labels from their column and the
// covariates from the rest, with N and P from the table and no JSON data,
// and -jsonl y,x=data.jsonl the same from one object per line: each fit is
// the one of the same data as JSON.
func TestRunReadsCSVTables(t *testing.T) {
	golden.SlowTier(t)
	if testing.Short() {
		t.Skip("builds a model (-short)")
	}
	t.Setenv("VIGEN_CACHE", t.TempDir())
	raw, err := os.ReadFile("../../examples/logreg/data.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		P int         `json:"P"`
		X [][]float64 `json:"x"`
		Y []int       `json:"y"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("y")
	for j := range d.P {
		fmt.Fprintf(&b, ",x%d", j+1)
	}
	b.WriteString("\n")
	for n, row := range d.X {
		fmt.Fprintf(&b, "%d", d.Y[n])
		for _, v := range row {
			b.WriteString("," + strconv.FormatFloat(v, 'g', -1, 64))
		}
		b.WriteString("\n")
	}
	table := filepath.Join(t.TempDir(), "table.csv")
	os.WriteFile(table, []byte(b.String()), 0o644)
	code, fromCSV, stderr := runCLI("run", "../../examples/logreg/logreg.vi", "-csv", "y,x="+table)
	if code != exitConverged || !strings.Contains(stderr, "N = 500 from "+table) || !strings.Contains(stderr, "P = 4 from "+table) {
		t.Fatalf("-csv: exit %d:\n%s", code, stderr)
	}
	_, fromJSON, _ := runCLI("run", "../../examples/logreg/logreg.vi", "-data", "../../examples/logreg/data.json", "-q")
	type res struct {
		Latent json.RawMessage `json:"latent"`
		ELBO   []float64       `json:"elbo"`
	}
	var a, c res
	json.Unmarshal([]byte(fromCSV), &a)
	json.Unmarshal([]byte(fromJSON), &c)
	if string(a.Latent) != string(c.Latent) || fmt.Sprint(a.ELBO) != fmt.Sprint(c.ELBO) || len(a.ELBO) == 0 {
		t.Errorf("the fit from the CSV table differs from the one from JSON")
	}
	if code, _, stderr := runCLI("run", "../../examples/logreg/logreg.vi", "-csv", "y,w="+table); code != exitError || !strings.Contains(stderr, `"w" is not a data variable of one or two dimensions`) {
		t.Errorf("-csv y,w: exit %d, %q", code, stderr)
	}
	// the same data as JSON lines, one observation per line
	var jl strings.Builder
	for n, row := range d.X {
		line, _ := json.Marshal(map[string]any{"y": d.Y[n], "x": row})
		jl.Write(append(line, '\n'))
	}
	lines := filepath.Join(t.TempDir(), "data.jsonl")
	os.WriteFile(lines, []byte(jl.String()), 0o644)
	code, fromLines, stderr := runCLI("run", "../../examples/logreg/logreg.vi", "-jsonl", "y,x="+lines, "-q")
	var e res
	json.Unmarshal([]byte(fromLines), &e)
	if code != exitConverged || string(e.Latent) != string(c.Latent) || fmt.Sprint(e.ELBO) != fmt.Sprint(c.ELBO) {
		t.Errorf("-jsonl: exit %d, the fit differs from the one from JSON:\n%s", code, stderr)
	}
	if code, _, stderr := runCLI("run", "../../examples/logreg/logreg.vi", "-csv", "y,x="+table, "-jsonl", "y="+lines); code != exitError || !strings.Contains(stderr, `data "y" is read from both`) {
		t.Errorf("y from two files: exit %d, %q", code, stderr)
	}
}

// vigen run saves checkpoints (-checkpoint, -every) and resumes from one
// (-resume) to the result the uninterrupted run gives; -fixparams holds the
// params; bad values are usage errors.
func TestRunCheckpointsAndOptions(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a model (-short)")
	}
	t.Setenv("VIGEN_CACHE", t.TempDir())
	model, data := "../../examples/pumps/pumps.vi", "../../examples/pumps/data.json"
	dir := t.TempDir()
	cp := filepath.Join(dir, "cp.json")
	if code, _, stderr := runCLI("run", model, "-data", data, "-maxiter", "12", "-checkpoint", cp, "-every", "5", "-q"); code != exitNotConverged {
		t.Fatalf("cut run: exit %d: %s", code, stderr)
	}
	code, resumed, stderr := runCLI("run", model, "-data", data, "-resume", cp, "-q")
	if code != exitConverged {
		t.Fatalf("resumed: exit %d: %s", code, stderr)
	}
	_, full, _ := runCLI("run", model, "-data", data, "-q")
	type res struct {
		Iterations int             `json:"iterations"`
		ELBO       []float64       `json:"elbo"`
		Latent     json.RawMessage `json:"latent"`
	}
	var a, b res
	json.Unmarshal([]byte(resumed), &a)
	json.Unmarshal([]byte(full), &b)
	if a.Iterations != b.Iterations || fmt.Sprint(a.ELBO) != fmt.Sprint(b.ELBO) || string(a.Latent) != string(b.Latent) {
		t.Errorf("resumed run: %d iterations, full: %d; results differ", a.Iterations, b.Iterations)
	}
	for _, bad := range [][]string{{"-every", "-1"}, {"-every", "3"}, {"-shrinkage", "2"}, {"-smoothing", "-1"}} {
		code, _, stderr := runCLI(append([]string{"run", model, "-data", data}, bad...)...)
		if code != 2 || !strings.Contains(stderr, bad[0]) {
			t.Errorf("%v: exit %d, %q", bad, code, stderr)
		}
	}
}
