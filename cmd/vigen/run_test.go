package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vigen-go/vigen/codegen"
	"github.com/vigen-go/vigen/examples/logreg/logreg"
	"github.com/vigen-go/vigen/golden"
	"github.com/vigen-go/vigen/runtime"
	"github.com/vigen-go/vigen/spec"
)

// TestRunEveryExample runs `vigen run` as the README shows on every example
// model with its bundled data, from a directory outside the repository and
// with an empty cache: it must build, print progress, and write a valid
// result and plots; the second run must reuse the build.
func TestRunEveryExample(t *testing.T) {
	golden.SlowTier(t)
	if testing.Short() {
		t.Skip("builds every example (-short)")
	}
	t.Setenv("VIGEN_CACHE", t.TempDir())
	for _, model := range exampleModels(t) {
		model, _ := filepath.Abs(model)
		name := strings.TrimSuffix(filepath.Base(model), ".vi")
		data := filepath.Join(filepath.Dir(model), "data.json")
		t.Run(name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			code, stdout, stderr := runCLI("run", model, "-data", data, "-out", "result.json", "-plot", "plots")
			checkRunExit(t, code, stderr)
			if stdout != "" {
				t.Errorf("stdout not empty with -out: %.200q", stdout)
			}
			for _, want := range []string{"vigen: building " + name, "iter   1  elbo ", name + ": "} {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
			b, err := os.ReadFile("result.json")
			if err != nil {
				t.Fatal(err)
			}
			checkResultJSON(t, name, b)
			// Every bundled example converges under the default tolerances.
			var st struct {
				Converged bool   `json:"converged"`
				Status    string `json:"status"`
			}
			if json.Unmarshal(b, &st); !st.Converged || st.Status != "converged" {
				t.Errorf("did not converge with the default tolerances: %s", st.Status)
			}
			latents, _ := filepath.Glob(filepath.Join("plots", "latent-*.svg"))
			if len(latents) == 0 {
				t.Errorf("no latent plots in %s", "plots")
			}
			for _, f := range append([]string{"elbo.svg"}, latents...) {
				f = filepath.Base(f)
				svg, err := os.ReadFile(filepath.Join("plots", f))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Contains(svg, []byte("<svg")) || !bytes.Contains(svg, []byte(plotMark)) {
					t.Errorf("%s is not an SVG vigen wrote: %.200q", f, svg)
				}
			}
			bin := cachedBinaryIn(t, stderr)
			before, err := os.Stat(bin)
			if err != nil {
				t.Fatal(err)
			}

			// Again, to stdout: the cached build runs, unchanged; -q
			// silences all but a verdict of no convergence.
			code, stdout, stderr = runCLI("run", model, "-data", data, "-q")
			checkRunExit(t, code, stderr)
			for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
				if code == 0 && l != "" && !strings.Contains(l, name+": warning: ") {
					t.Errorf("-q still printed something other than warnings:\n%s", stderr)
				}
			}
			if jointWarned[name] != strings.Contains(stderr, "jointly is not to be trusted") {
				t.Errorf("joint diagnostic's warning: want %v:\n%s", jointWarned[name], stderr)
			}
			if builds, _ := filepath.Glob(filepath.Join(filepath.Dir(filepath.Dir(bin)), name+"-*")); len(builds) != 1 {
				t.Errorf("second run did not reuse the build: the cache holds %v", builds)
			}
			after, err := os.Stat(bin)
			if err != nil || !after.ModTime().Equal(before.ModTime()) {
				t.Errorf("cached binary changed (%v)", err)
			}
			checkResultJSON(t, name, []byte(stdout))
		})
	}
}

// jointWarned are the bundled examples whose mean-field q the joint
// diagnostic rejects, rightly: their exact posteriors (examples/ar2 and
// examples/eightschools print them) have sds up to twice mean field's, the
// latents being dependent (an AR(2)'s coefficients; the eight schools'
// scale and effects); schoolreg's is the same hierarchy as eight schools'.
var jointWarned = map[string]bool{"ar2": true, "centred": true, "eightschools": true, "schoolreg": true}

// checkRunExit requires a converged fit: exit status 0 (every bundled
// example converges under the default tolerances and -maxiter).
func checkRunExit(t *testing.T, code int, stderr string) {
	t.Helper()
	if code != 0 {
		t.Fatalf("exit %d, want 0 (converged):\n%s", code, stderr)
	}
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(l[max(0, len(l)-n):], "\n")
}

// checkResultJSON checks the schema every generated package's Result has.
func checkResultJSON(t *testing.T, model string, b []byte) {
	t.Helper()
	var r struct {
		Model      string                     `json:"model"`
		Method     string                     `json:"method"`
		Status     string                     `json:"status"`
		Converged  *bool                      `json:"converged"`
		Iterations int                        `json:"iterations"`
		ELBO       []float64                  `json:"elbo"`
		Latent     map[string]json.RawMessage `json:"latent"`
		Params     map[string]json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("result is not JSON: %v\n%.300s", err, b)
	}
	if r.Model != model || r.Status == "" || r.Converged == nil || r.Iterations < 1 || len(r.ELBO) != r.Iterations || len(r.Latent) == 0 || r.Params == nil {
		t.Errorf("result: model %q status %q converged %v iterations %d, %d ELBO values, %d latents, params %v",
			r.Model, r.Status, r.Converged, r.Iterations, len(r.ELBO), len(r.Latent), r.Params != nil)
	}
	if !*r.Converged && !strings.HasPrefix(r.Status, "max_iterations") {
		t.Errorf("status %q", r.Status)
	}
}

// cachedBinaryIn finds the build directory vigen named on stderr.
func cachedBinaryIn(t *testing.T, stderr string) string {
	t.Helper()
	for _, l := range strings.Split(stderr, "\n") {
		if rest, ok := strings.CutPrefix(l, "vigen: building "); ok {
			name, dir, _ := strings.Cut(rest, " into ")
			dir, _, _ = strings.Cut(dir, " (")
			return filepath.Join(dir, name)
		}
	}
	t.Fatalf("no build directory on stderr:\n%s", stderr)
	return ""
}

// TestRunMatchesFit: vigen run passes -method and -seed through, and fits
// exactly what the generated package's Fit does in-process.
func TestRunMatchesFit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a model (-short)")
	}
	t.Setenv("VIGEN_CACHE", t.TempDir())
	data := "../../examples/logreg/data.json"
	code, stdout, stderr := runCLI("run", "-method", "delta", "../../examples/logreg/logreg.vi", "-data", data, "-seed", "7", "-q")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	var got logreg.Result
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := logreg.LoadData(f)
	if err != nil {
		t.Fatal(err)
	}
	want, err := logreg.Fit(context.Background(), d, logreg.Options{Method: "delta", Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if got.Method != "delta" || got.Status != want.Status || !reflect.DeepEqual(got.ELBO, want.ELBO) ||
		!reflect.DeepEqual(got.Latent.Theta.Mean, want.Latent.Theta.Mean) || !reflect.DeepEqual(got.Latent.Theta.Cov, want.Latent.Theta.Cov) {
		t.Errorf("vigen run: %s %s ELBO %v mean %v\nFit: %s %s ELBO %v mean %v",
			got.Method, got.Status, got.ELBO, got.Latent.Theta.Mean, want.Method, want.Status, want.ELBO, want.Latent.Theta.Mean)
	}
}

// TestRunErrors: problems are reported before anything is built or
// written, and files vigen did not write are never replaced.
func TestRunErrors(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("VIGEN_CACHE", cache)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.vi")
	os.WriteFile(bad, []byte("model bad\nsize N\ndata y : real[N]\nfor n in 1:N {\n  y[n] ~ Normal(mu, 1)\n}\n"), 0o644)
	notResult := filepath.Join(dir, "notes.json")
	os.WriteFile(notResult, []byte(`{"my": "notes"}`), 0o644)
	logregVI := "../../examples/logreg/logreg.vi"
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"run"}, 2, "usage: vigen run"},
		{[]string{"run", logregVI}, 2, "usage: vigen run"},
		{[]string{"run", logregVI, logregVI, "-data", "x.json"}, 2, "one model file, not 2"},
		{[]string{"run", bad, "-data", "x.json"}, 1, "bad.vi:5:"},
		{[]string{"run", filepath.Join(dir, "missing.vi"), "-data", "x.json"}, 1, "missing.vi"},
		{[]string{"run", logregVI, "-data", "x.json", "-out", notResult}, 1, "refusing to overwrite " + notResult},
		{[]string{"run", logregVI, "-data", "x.json", "-algorithm", "sgd"}, 2, `-algorithm "sgd": want ca, svi, ssmf or ssmf-a`},
		{[]string{"run", logregVI, "-data", "x.json", "-passes", "3"}, 2, "tune -algorithm svi"},
		{[]string{"run", logregVI, "-data", "x.json", "-local", "gibbs"}, 2, "tune -algorithm svi, ssmf or ssmf-a"},
		{[]string{"run", logregVI, "-data", "x.json", "-algorithm", "ssmf", "-local", "cvb0"}, 2, "CVB0 local step (Asuncion et al. 2009) is not implemented"},
		{[]string{"run", logregVI, "-data", "x.json", "-algorithm", "ssmf", "-local", "gibs"}, 2, `unknown local step "gibs"`},
		{[]string{"run", logregVI, "-data", "x.json", "-algorithm", "ssmf-a", "-burnin", "-2"}, 2, "must not be negative"},
		{[]string{"run", logregVI, "-data", "x.json", "-algorithm", "svi", "-kappa", "-1"}, 2, "must not be negative"},
		{[]string{"run", logregVI, "-data", "x.json", "-anneal", "linear:10"}, 2, "want KIND:T0:LENGTH"},
		{[]string{"run", logregVI, "-data", "x.json", "-temper", "global"}, 2, "give -logc FILE"},
		{[]string{"run", logregVI, "-data", "x.json", "-temper", "hot"}, 2, "want global (variational tempering) or local"},
		{[]string{"run", logregVI, "-data", "x.json", "-temper", "local", "-logc", "../../examples/tempering/logc.json"}, 2, "gives only the grid of temperatures, their prior and cold"},
		{[]string{"run", logregVI, "-data", "x.json", "-logc", "x.json"}, 2, "add -temper global"},
		{[]string{"run", logregVI, "-data", "x.json", "-temper", "global", "-logc", filepath.Join(dir, "none.json")}, 2, "none.json"},
		// what a log C file must satisfy: log C(1) = 0, values a float64
		// resolves, a fingerprint of the model and data
		{[]string{"run", logregVI, "-data", "x.json", "-temper", "global", "-logc", logcFile(t, dir, "c1.json", `{"grid":[1,3],"log_c":[5,1]}`)}, 2, "c1.json: variational tempering: log C(T_1) = log C(1) must be 0"},
		{[]string{"run", logregVI, "-data", "x.json", "-temper", "global", "-logc", logcFile(t, dir, "big.json", `{"grid":[1,3],"log_c":[0,1e308]}`)}, 2, "big.json: variational tempering: log C(T_2) = 1e+308 is beyond"},
		{[]string{"run", logregVI, "-data", "x.json", "-temper", "global", "-logc", logcFile(t, dir, "nofp.json", `{"grid":[1,3],"log_c":[0,1]}`)}, 2, "nofp.json: no fingerprint of the model and data"},
		// the fingerprint names the model by its source's sha256, not its name
		{[]string{"run", logregVI, "-data", "x.json", "-temper", "global", "-logc", logcFile(t, dir, "name.json", `{"grid":[1,3],"log_c":[0,1],"fingerprint":{"model":"logreg","data":{"N":"ab"}}}`)}, 2,
			`name.json: the fingerprint's model "logreg" is not the sha256 of a model's source`},
	} {
		code, _, stderr := runCLI(c.args...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("vigen %s: exit %d, stderr %q; want exit %d and %q", strings.Join(c.args, " "), code, stderr, c.code, c.want)
		}
	}
	if entries, _ := os.ReadDir(cache); len(entries) != 0 {
		t.Errorf("a failed check built something in the cache: %v", entries)
	}
	if b, _ := os.ReadFile(notResult); string(b) != `{"my": "notes"}` {
		t.Errorf("%s was changed: %s", notResult, b)
	}

	if testing.Short() {
		return
	}
	// Data errors come from the model's command, naming the variable.
	badData := filepath.Join(dir, "data.json")
	os.WriteFile(badData, []byte(`{"x": [[1, 2], [3, 4]], "y": [0, 2]}`), 0o644)
	code, stdout, stderr := runCLI("run", logregVI, "-data", badData)
	if code != 1 || stdout != "" || !strings.Contains(stderr, `"y"[2]`) {
		t.Errorf("bad data: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	// SVI on a model it does not apply to says why.
	code, _, stderr = runCLI("run", logregVI, "-data", "../../examples/logreg/data.json", "-q", "-algorithm", "svi")
	if code != 1 || !strings.Contains(stderr, "stochastic variational inference does not apply: it has no unit plate") {
		t.Errorf("svi on logreg: exit %d, stderr %q", code, stderr)
	}
	// A plot file vigen did not write stays.
	plots := filepath.Join(dir, "plots")
	os.MkdirAll(plots, 0o755)
	mine := filepath.Join(plots, "elbo.svg")
	os.WriteFile(mine, []byte("<svg>my drawing</svg>"), 0o644)
	code, _, stderr = runCLI("run", logregVI, "-data", "../../examples/logreg/data.json", "-q", "-plot", plots)
	if code != 1 || !strings.Contains(stderr, "refusing to overwrite "+mine) {
		t.Errorf("plot over a user's file: exit %d, stderr %q", code, stderr)
	}
	if b, _ := os.ReadFile(mine); string(b) != "<svg>my drawing</svg>" {
		t.Errorf("%s was changed", mine)
	}
}

// TestRunLogCOfAnEditedModel: a -logc file names the model it was
// computed for by the sha256 of its source, as a result's fingerprint
// does, so the bundled logc.json of gmmsigma.vi is refused for gmmsigma.vi
// edited (the means' prior moved, which changes log C(T)) though the
// model's name and the data are the same; vigen run refuses it before
// the build, naming the file and saying that the model differs. The file
// named the model by its name, and vigen fitted the edited model with
// it, exit 0.
func TestRunLogCOfAnEditedModel(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("VIGEN_CACHE", cache)
	src, err := os.ReadFile("../../examples/tempering/gmmsigma.vi")
	if err != nil {
		t.Fatal(err)
	}
	edited := bytes.Replace(src, []byte("mu ~ Normal(0, s0)"), []byte("mu ~ Normal(1, s0)"), 1)
	if bytes.Equal(edited, src) {
		t.Fatal("gmmsigma.vi has no statement mu ~ Normal(0, s0) to edit")
	}
	vi := filepath.Join(t.TempDir(), "gmmsigma.vi")
	if err := os.WriteFile(vi, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	logc, data := "../../examples/tempering/logc.json", "../../examples/tempering/data.json"
	code, stdout, stderr := runCLI("run", vi, "-data", data, "-temper", "global", "-logc", logc, "-q")
	if want := "vigen run: -logc " + logc + ": log C(T) was computed for another model than gmmsigma: the fingerprint's model is the sha256 of another source (6a2efda3be59…, gmmsigma's is "; code != exitError || stdout != "" ||
		!strings.HasPrefix(stderr, want) || !strings.Contains(stderr, "an edited model is another model") || strings.Contains(stderr, "data") {
		t.Errorf("-logc of gmmsigma.vi for it edited: exit %d, stdout %.200q, stderr %q; want exit 1 and %q…, the model's difference alone", code, stdout, stderr, want)
	}
	if entries, _ := os.ReadDir(cache); len(entries) != 0 {
		t.Errorf("the refused fit built something in the cache: %v", entries)
	}
}

// TestBuildKey: the cache key changes with any generated file and is the
// same for the same files.
func TestBuildKey(t *testing.T) {
	files := []codegen.File{{Name: "main.go", Src: []byte("package main")}, {Name: "model/m.go", Src: []byte("package model")}}
	k := buildKey(files, "", "go1.26")
	if k != buildKey(files, "", "go1.26") {
		t.Error("same files, different keys")
	}
	other := []codegen.File{files[0], {Name: "model/m.go", Src: []byte("package model ")}}
	if k == buildKey(other, "", "go1.26") || k == buildKey(files, "", "go1.27") {
		t.Error("a change of a file or of the Go version keeps the key")
	}
	if len(k) != 16 {
		t.Errorf("key %q", k)
	}
}

// TestRunScalarMeanBroadcasts: a scalar where MvNormal expects a mean
// vector means that value in every component, so MvNormal(0, S) fits
// exactly what logreg.vi, with its zero prior-mean vector, does.
func TestRunScalarMeanBroadcasts(t *testing.T) {
	golden.SlowTier(t)
	if testing.Short() {
		t.Skip("builds models (-short)")
	}
	t.Setenv("VIGEN_CACHE", t.TempDir())
	model := filepath.Join(t.TempDir(), "zeromean.vi")
	src := `model zeromean
size N, P
data x : real[N, P]
data y : int[N] in 0..1
const S : cov[P] = eye(P)
latent theta : real[P] nonconjugate laplace

theta ~ MvNormal(0, S)
for n in 1:N {
  y[n] ~ Bernoulli(logistic(dot(x[n], theta)))
}
`
	if err := os.WriteFile(model, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	data := "../../examples/logreg/data.json"
	fit := func(model string) logreg.Result {
		code, stdout, stderr := runCLI("run", model, "-data", data, "-q")
		if code != 0 {
			t.Fatalf("%s: exit %d:\n%s", model, code, stderr)
		}
		var r logreg.Result
		if err := json.Unmarshal([]byte(stdout), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	got, want := fit(model), fit("../../examples/logreg/logreg.vi")
	if !reflect.DeepEqual(got.ELBO, want.ELBO) || !reflect.DeepEqual(got.Latent.Theta, want.Latent.Theta) {
		t.Errorf("MvNormal(0, S): ELBO %v, mean %v; logreg.vi: ELBO %v, mean %v", got.ELBO, got.Latent.Theta.Mean, want.ELBO, want.Latent.Theta.Mean)
	}
}

// TestRunRequiresConstWithoutDefault: a const declared without a default
// must come with the data; without it the fit stops with an error naming
// the const and its declaration, instead of reading zeros.
func TestRunRequiresConstWithoutDefault(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a model (-short)")
	}
	t.Setenv("VIGEN_CACHE", t.TempDir())
	dir := t.TempDir()
	model := filepath.Join(dir, "nodefault.vi")
	src := `model nodefault
size N, P
data x : real[N, P]
data y : int[N] in 0..1
const s : real
const S : cov[P]
latent theta : real[P] nonconjugate laplace

theta ~ MvNormal(0, S)
for n in 1:N {
  y[n] ~ Bernoulli(logistic(s * dot(x[n], theta)))
}
`
	os.WriteFile(model, []byte(src), 0o644)
	for _, c := range []struct{ data, want string }{
		{`{"x": [[1, 2]], "y": [1], "s": 1}`, `const "S" is missing: nodefault.vi:6:7 declares it without a default`},
		{`{"x": [[1, 2]], "y": [1], "S": [[1, 0], [0, 1]]}`, `const "s" is missing: nodefault.vi:5:7 declares it without a default`},
	} {
		data := filepath.Join(dir, "data.json")
		os.WriteFile(data, []byte(c.data), 0o644)
		code, stdout, stderr := runCLI("run", model, "-data", data, "-q")
		if code != 1 || stdout != "" || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 1 and %q", c.data, code, stdout, stderr, c.want)
		}
	}
	data := filepath.Join(dir, "data.json")
	os.WriteFile(data, []byte(`{"x": [[1, 2]], "y": [1], "s": 1, "S": [[1, 0], [0, 1]]}`), 0o644)
	if code, _, stderr := runCLI("run", model, "-data", data, "-q"); code != 0 {
		t.Errorf("with both consts: exit %d:\n%s", code, stderr)
	}
}

// TestRunChecksOutputsFirst: every output vigen run will write is checked
// before the build and the fit, and a refusal names the user's path. vigen
// once found a missing -out directory or a foreign -plot file only after
// the fit, naming its temporary file, and refused -out /dev/null (it read
// it and found no result).
func TestRunChecksOutputsFirst(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("VIGEN_CACHE", cache)
	logregVI, _ := filepath.Abs("../../examples/logreg/logreg.vi")
	data, _ := filepath.Abs("../../examples/logreg/data.json")
	t.Chdir(t.TempDir())
	os.Mkdir("plots", 0o755)
	os.WriteFile(filepath.Join("plots", "latent-theta.svg"), []byte("<svg>my drawing</svg>"), 0o644)
	os.WriteFile("afile", []byte("x"), 0o644)
	os.Mkdir("adir", 0o755)
	os.Mkdir("plots2", 0o755)
	os.WriteFile(filepath.Join("plots2", plotManifest), []byte("x"), 0o644)
	cases := []struct{ flag, value, want string }{
		{"-out", "nodir/r.json", "vigen: -out: cannot write nodir/r.json: the directory nodir does not exist"},
		{"-out", "adir", "vigen: -out: adir is a directory"},
		{"-out", "afile/r.json", "vigen: -out: cannot write afile/r.json: afile is not a directory"},
		{"-plot", "plots", "vigen: -plot: refusing to overwrite plots/latent-theta.svg: vigen did not write it"},
		{"-plot", "afile", "vigen: -plot: cannot write plots into afile: it is not a directory"},
		{"-plot", "plots2", "vigen: -plot: refusing to overwrite plots2/" + plotManifest + ": vigen did not write it"},
		{"-plot", "afile/sub/dir", "vigen: -plot: cannot write afile/sub/dir: afile is not a directory"},
		{"-data", "missing.json", "vigen: -data: stat missing.json: no such file or directory"},
	}
	// Every output flag is checked the same way: -predict-out and
	// -heldout-out once replaced the data, the model or an input file
	// with their JSON.
	cases = append(cases, []struct{ flag, value, want string }{
		{"-predict-out", data, "vigen: -predict-out: refusing to overwrite " + data + ": it is the -data file"},
		{"-predict-out", logregVI, "vigen: -predict-out: refusing to overwrite " + logregVI + ": it is the model file"},
		{"-predict-out", "afile", "vigen: -predict-out: refusing to overwrite afile: it is not a file of predictions vigen wrote"},
		{"-predict-out", "nodir/p.json", "vigen: -predict-out: cannot write nodir/p.json: the directory nodir does not exist"},
		{"-heldout-out", data, "vigen: -heldout-out: refusing to overwrite " + data + ": it is the -data file"},
		{"-heldout-out", "afile", "vigen: -heldout-out: refusing to overwrite afile: it is not a held-out score vigen wrote"},
		{"-checkpoint", "afile", "vigen: -checkpoint: refusing to overwrite afile: it is not a result vigen wrote"},
		{"-out", logregVI, "vigen: -out: refusing to overwrite " + logregVI + ": it is the model file"},
	}...)
	if os.Geteuid() != 0 { // root writes anywhere
		os.Mkdir("ro", 0o555)
		cases = append(cases, struct{ flag, value, want string }{"-out", "ro/r.json", "vigen: -out: cannot write ro/r.json: cannot create a file in ro: permission denied"})
	}
	for _, c := range cases {
		args := []string{"run", logregVI, "-data", data, c.flag, c.value}
		code, stdout, stderr := runCLI(args...)
		if code != 1 || stdout != "" || strings.TrimSpace(stderr) != c.want {
			t.Errorf("%s %s: exit %d, stderr %q; want exit 1 and %q", c.flag, c.value, code, stderr, c.want)
		}
	}
	// Two outputs into one file, and an input given as an output.
	os.WriteFile("held.dat", []byte("1 0:1\n"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-out", "r.json", "-predict-out", "r.json"}, "vigen: -predict-out: r.json is also the -out file: give each output its own file"},
		{[]string{"-checkpoint", "r.json", "-out", "./r.json"}, "vigen: -checkpoint: r.json is also the -out file: give each output its own file"},
		{[]string{"-heldout", "held.dat", "-heldout-out", "held.dat"}, "vigen: -heldout-out: refusing to overwrite held.dat: it is the -heldout file"},
		{[]string{"-test", "afile", "-predict-out", "afile"}, "vigen: -predict-out: refusing to overwrite afile: it is the -test file"},
	} {
		args := append([]string{"run", logregVI, "-data", data}, c.args...)
		code, stdout, stderr := runCLI(args...)
		if code != 1 || stdout != "" || strings.TrimSpace(stderr) != c.want {
			t.Errorf("%v: exit %d, stderr %q; want exit 1 and %q", c.args, code, stderr, c.want)
		}
	}
	if b, _ := os.ReadFile("held.dat"); string(b) != "1 0:1\n" {
		t.Error("the held-out input was changed")
	}
	if entries, _ := os.ReadDir(cache); len(entries) != 0 {
		t.Errorf("a refused output was found only after building: the cache holds %v", entries)
	}
	if b, _ := os.ReadFile(filepath.Join("plots", "latent-theta.svg")); string(b) != "<svg>my drawing</svg>" {
		t.Error("the user's plot was changed")
	}
	if tmp, _ := filepath.Glob(".vigen-*"); len(tmp) > 0 {
		t.Errorf("temporary files left: %v", tmp)
	}

	if testing.Short() {
		return
	}
	// A device is written directly, not read and not renamed over. Not as
	// root, where a regression would replace /dev/null with a regular file
	// (TestOutputToFIFO covers the same with a named pipe).
	if os.Geteuid() != 0 {
		code, stdout, stderr := runCLI("run", logregVI, "-data", data, "-q", "-out", os.DevNull)
		if code != 0 || stdout != "" || stderr != "" {
			t.Errorf("-out %s: exit %d, stdout %q, stderr %q", os.DevNull, code, stdout, stderr)
		}
		if fi, err := os.Stat(os.DevNull); err != nil || fi.Mode().IsRegular() {
			t.Errorf("%s is now a regular file (%v)", os.DevNull, err)
		}
	}
	// An empty file (a shell's > redirection made it) holds nothing to lose.
	os.WriteFile("empty.json", nil, 0o644)
	if code, _, stderr := runCLI("run", logregVI, "-data", data, "-q", "-out", "empty.json"); code != 0 {
		t.Errorf("-out empty.json: exit %d\n%s", code, stderr)
	}
	b, _ := os.ReadFile("empty.json")
	checkResultJSON(t, "logreg", b)
}

// TestRunExitStatus: vigen run exits 0 only for a converged fit: 3 when it
// stopped at -maxiter, 4 for not_finite (and canceled, see
// TestRunForwardsSignals); with both it still writes the result, and says
// on stderr why, also with -q, which silences everything else (the
// build-cache lines too). vigen once exited 0 for every status and printed
// nothing about max_iterations with -q, but the cache line.
func TestRunExitStatus(t *testing.T) {
	golden.SlowTier(t)
	if testing.Short() {
		t.Skip("builds models (-short)")
	}
	cache := t.TempDir()
	t.Setenv("VIGEN_CACHE", cache)
	// A build directory left by a vigen killed an hour ago is swept by the
	// next build; a recent one (a build in progress) is not.
	run := filepath.Join(cache, "run")
	old, recent := filepath.Join(run, ".build-old-1"), filepath.Join(run, ".build-recent-1")
	for _, d := range []string{old, recent} {
		if err := os.MkdirAll(filepath.Join(d, "model"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	long := time.Now().Add(-2 * time.Hour)
	os.Chtimes(old, long, long)
	huge := filepath.Join(t.TempDir(), "huge.json")
	os.WriteFile(huge, []byte(`{"x": [[1e200, 1], [-1e200, 2], [3, 1e200]], "y": [1, 0, 1]}`), 0o644)
	logreg, hier := "../../examples/logreg/logreg.vi", "../../examples/hierlogreg/hierlogreg.vi"
	gmm, gmmSigma, gmmData := "../../examples/tempering/gmm.vi", "../../examples/tempering/gmmsigma.vi", "../../examples/tempering/data.json"
	for _, c := range []struct {
		name   string
		args   []string
		code   int
		status string // prefix
		stderr string // all of it, with -q
	}{
		{"converged", []string{logreg, "-data", "../../examples/logreg/data.json"}, 0, "converged", ""},
		{"max_iterations", []string{hier, "-data", "../../examples/hierlogreg/data.json", "-maxiter", "2"}, 3, "max_iterations",
			"hierlogreg: warning: did not converge: stopped at the iteration limit after 2 iterations"},
		{"not_finite", []string{logreg, "-data", huge}, 4, "not_finite",
			"logreg: did not converge: not_finite: "},
		{"svi", []string{"../../examples/lda/lda.vi", "-data", "../../examples/lda/data.json", "-algorithm", "svi", "-passes", "2", "-batch", "2"}, 0, "passes_completed", ""},
		{"ssmf-a-gibbs", []string{"../../examples/lda/lda.vi", "-data", "../../examples/lda/data.json", "-algorithm", "ssmf-a", "-local", "gibbs", "-burnin", "2", "-samples", "3", "-passes", "2", "-batch", "2"}, 0, "passes_completed", ""},
		{"ssmf", []string{"../../examples/lda/lda.vi", "-data", "../../examples/lda/data.json", "-algorithm", "ssmf", "-passes", "2", "-batch", "2"}, 0, "passes_completed",
			"lda: warning: SSMF shortened 2 of the last pass's 150 steps of beta where the full step would leave its family"},
		{"svi-ramp", []string{"../../examples/lda/lda.vi", "-data", "../../examples/lda/data.json", "-algorithm", "svi", "-ramp", "-passes", "2", "-batch", "2"}, 0, "passes_completed", ""},
		{"anneal", []string{gmm, "-data", gmmData, "-anneal", "linear:2:20", "-meantol", "1e-7"}, 0, "converged", ""},
		{"vt", []string{gmmSigma, "-data", gmmData, "-temper", "global", "-logc", "../../examples/tempering/logc.json"}, 0, "converged", ""},
		{"lvt", []string{gmm, "-data", gmmData, "-temper", "local"}, 0, "converged", ""},
		{"collapsed", []string{gmm, "-data", gmmData, "-anneal", "linear:10:50", "-seed", "2"}, 0, "converged",
			"gmm: warning: the components of mu, tau are identical copies of one another"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, quiet := range []bool{false, true} {
				args := append([]string{"run"}, c.args...)
				if quiet {
					args = append(args, "-q")
				}
				code, stdout, stderr := runCLI(args...)
				var r struct{ Status string }
				json.Unmarshal([]byte(stdout), &r)
				if code != c.code || !strings.HasPrefix(r.Status, c.status) {
					t.Errorf("-q=%v: exit %d, status %q; want exit %d and status %s…\n%s", quiet, code, r.Status, c.code, c.status, stderr)
				}
				if !strings.Contains(stderr, c.stderr) {
					t.Errorf("-q=%v: stderr lacks %q:\n%s", quiet, c.stderr, stderr)
				}
				if quiet && (c.stderr == "" && stderr != "" || c.stderr != "" && !strings.HasPrefix(stderr, c.stderr)) {
					t.Errorf("-q printed more than the verdict:\n%s", stderr)
				}
			}
		})
	}
	// a log C file computed for other data is refused before the fit,
	// naming the file
	otherData := filepath.Join(t.TempDir(), "other.json")
	os.WriteFile(otherData, []byte(`{"K": 5, "y": [0.5, 1, 8, 2.5, -3, 4]}`), 0o644)
	logc, _ := filepath.Abs("../../examples/tempering/logc.json")
	if code, stdout, stderr := runCLI("run", gmmSigma, "-data", otherData, "-temper", "global", "-logc", logc, "-q"); code != 1 || stdout != "" ||
		!strings.Contains(stderr, "-logc "+logc+": log C(T) was computed for other data: the values of N differ") {
		t.Errorf("-logc for other data: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	// a log C file whose fingerprint is a result's, copied whole, is taken:
	// its model is the source's sha256, its options and params are not
	// checked
	code, stdout, stderr := runCLI("run", gmmSigma, "-data", gmmData, "-maxiter", "1", "-q")
	var one struct {
		Fingerprint json.RawMessage `json:"fingerprint"`
	}
	if code != exitNotConverged || json.Unmarshal([]byte(stdout), &one) != nil || !bytes.Contains(one.Fingerprint, []byte(`"options"`)) {
		t.Fatalf("gmmsigma -maxiter 1: exit %d, stderr %q, fingerprint %s", code, stderr, one.Fingerprint)
	}
	var vt map[string]json.RawMessage
	if b, err := os.ReadFile(logc); err != nil || json.Unmarshal(b, &vt) != nil {
		t.Fatalf("%s: %v", logc, err)
	}
	vt["fingerprint"] = one.Fingerprint
	b, _ := json.Marshal(vt)
	copied := logcFile(t, t.TempDir(), "copied.json", string(b))
	code, stdout, stderr = runCLI("run", gmmSigma, "-data", gmmData, "-temper", "global", "-logc", copied, "-q")
	var r struct{ Status string }
	if json.Unmarshal([]byte(stdout), &r); code != 0 || r.Status != "converged" {
		t.Errorf("-logc with a result's fingerprint: exit %d, status %q, stderr %q", code, r.Status, stderr)
	}
	// local tempering of a model it does not apply to says why
	if code, _, stderr := runCLI("run", logreg, "-data", "../../examples/logreg/data.json", "-temper", "local", "-q"); code != 1 ||
		!strings.Contains(stderr, "does not apply: it has no unit plate") {
		t.Errorf("-temper local on logreg: exit %d, stderr %q", code, stderr)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("the stale build directory %s was not swept (%v)", old, err)
	}
	if _, err := os.Stat(recent); err != nil {
		t.Errorf("a recent build directory was swept: %v", err)
	}
}

// TestRunDiverged: a stochastic fit whose ELBO falls far below its best
// and stays there exits 4, says "diverged: …" on stderr, also with -q,
// and writes its result with that status (runtime/diverge.go's guard). The
// fixture diverges on purpose: SSMF (Algorithm 1) with one-unit
// minibatches and the largest steps the flags allow (τ0 = 1, κ = 0.51) on
// the tempering example's data, fitted with twice as many components as
// it has (K = 10), the weights' concentration 0.1 and the means' prior sd
// 100: the noise of the Dirichlet and Gamma steps throws the ELBO between
// −2,400 and −2·10⁸ from pass to pass. Every seed 1–10 ends diverged
// (at passes 6 to 27 of 40), so the test does not rest on one seed's luck;
// seed 1 stops at pass 6. Without the guard the fit runs its 40 passes
// and exits 0 with the status passes_completed.
func TestRunDiverged(t *testing.T) {
	golden.SlowTier(t)
	if testing.Short() {
		t.Skip("builds a model (-short)")
	}
	t.Setenv("VIGEN_CACHE", t.TempDir())
	gmm, _ := filepath.Abs("../../examples/tempering/gmm.vi")
	b, err := os.ReadFile("../../examples/tempering/data.json")
	if err != nil {
		t.Fatal(err)
	}
	var data map[string]any
	if err := json.Unmarshal(b, &data); err != nil {
		t.Fatal(err)
	}
	data["K"], data["alpha"], data["s0"] = 10, 0.1, 100
	b, _ = json.Marshal(data)
	t.Chdir(t.TempDir())
	if err := os.WriteFile("data.json", b, 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"run", gmm, "-data", "data.json", "-seed", "1", "-algorithm", "ssmf", "-batch", "1", "-tau0", "1", "-kappa", "0.51", "-passes", "40"}
	for _, quiet := range []bool{false, true} {
		out := fmt.Sprintf("r%v.json", quiet)
		a := slices.Concat(args, []string{"-out", out})
		if quiet {
			a = append(a, "-q")
		}
		code, stdout, stderr := runCLI(a...)
		if code != exitFailed || stdout != "" || !strings.Contains(stderr, "gmm: did not converge: diverged: the ELBO fell from its best") {
			t.Errorf("-q=%v: exit %d, stdout %q, stderr:\n%s\nwant exit %d and the diverged status on stderr", quiet, code, stdout, lastLines(stderr, 5), exitFailed)
		}
		if quiet && !strings.HasPrefix(stderr, "gmm: did not converge: diverged: ") {
			t.Errorf("-q printed more than the verdict:\n%s", stderr)
		}
		rb, err := os.ReadFile(out)
		if err != nil {
			t.Fatalf("-q=%v: no result: %v", quiet, err)
		}
		var r struct {
			Status     string    `json:"status"`
			Converged  bool      `json:"converged"`
			Iterations int       `json:"iterations"`
			ELBO       []float64 `json:"elbo"`
		}
		if err := json.Unmarshal(rb, &r); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(r.Status, runtime.DivergedStatus+": ") || r.Converged || r.Iterations != len(r.ELBO) || r.Iterations == 0 {
			t.Errorf("-q=%v: result: status %q, converged %v, %d iterations, %d ELBO values; want diverged: …", quiet, r.Status, r.Converged, r.Iterations, len(r.ELBO))
			continue
		}
		// the last ELBO is more than max(|best|, units) below the best
		best, last := slices.Max(r.ELBO), r.ELBO[len(r.ELBO)-1]
		if !(last < 2*best) {
			t.Errorf("-q=%v: the last ELBO %g is not far below the best %g", quiet, last, best)
		}
	}
}

// logcFile writes a -logc file named name in dir holding text.
func logcFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRunOutputsAreChecked: every flag of vigen run whose usage says it
// writes or saves a file is in runFlags.outputs, the list checkOutputs
// checks before any work, so that a new output flag cannot go unchecked as
// -predict-out and -heldout-out once did.
func TestRunOutputsAreChecked(t *testing.T) {
	var f runFlags
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	f.register(fs)
	m, err := spec.Load("logreg.vi", []byte(logregSrc(t)))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, o := range f.outputs(m) {
		listed[o.flag] = true
	}
	n := 0
	fs.VisitAll(func(fl *flag.Flag) {
		if u := fl.Usage; strings.HasPrefix(u, "write ") || strings.HasPrefix(u, "save ") {
			n++
			if !listed["-"+fl.Name] {
				t.Errorf("-%s writes a file (%q) but is not in runFlags.outputs", fl.Name, u)
			}
		}
	})
	if n != len(listed) {
		t.Errorf("%d flags say they write a file, outputs lists %d: %v", n, len(listed), listed)
	}
}

func logregSrc(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../examples/logreg/logreg.vi")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRunWritesWhatItCan: an output that fails after the fit (-predict-out
// on a full disk) no longer discards the fit's result: -out is written and
// vigen exits 1 saying so. A write error of the result itself reaches the
// user (it once said "the fit ended without a result (signal: broken
// pipe)"), and a flag value the fitting command refuses is a bad command
// line, exit 2 (it was 1).
func TestRunWritesWhatItCan(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a model (-short)")
	}
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	t.Setenv("VIGEN_CACHE", t.TempDir())
	logregVI, _ := filepath.Abs("../../examples/logreg/logreg.vi")
	data, _ := filepath.Abs("../../examples/logreg/data.json")
	t.Chdir(t.TempDir())

	code, stdout, stderr := runCLI("run", logregVI, "-data", data, "-q", "-out", "r.json", "-test", data, "-predict-out", "/dev/full")
	if code != exitError || stdout != "" || !strings.Contains(stderr, "no space left on device") ||
		!strings.Contains(stderr, "vigen: the result is written to r.json; what followed it failed") {
		t.Errorf("-predict-out /dev/full: exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
	b, err := os.ReadFile("r.json")
	if err != nil {
		t.Fatalf("the fit's result was discarded: %v", err)
	}
	checkResultJSON(t, "logreg", b)

	code, stdout, stderr = runCLI("run", logregVI, "-data", data, "-q", "-out", "/dev/full")
	if want := "vigen: writing the result: write /dev/full: no space left on device"; code != exitError || stdout != "" || strings.TrimSpace(stderr) != want {
		t.Errorf("-out /dev/full: exit %d, stdout %q, stderr %q; want exit 1 and %q", code, stdout, stderr, want)
	}

	for _, args := range [][]string{
		{"-predict-out", "p.json"},                                        // refused by the fitting command
		{"-test", data, "-predict-out", "p.json", "-predict-draws", "-5"}, // likewise
		{"-psis-draws", "-3"}, {"-restarts", "-1"}, {"-method", "foo"},    // refused before the build
	} {
		code, stdout, stderr := runCLI(append([]string{"run", logregVI, "-data", data, "-q"}, args...)...)
		if code != exitUsage || stdout != "" || stderr == "" || strings.Contains(stderr, "no result") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and why", args, code, stdout, stderr)
		}
	}
	if _, err := os.Stat("p.json"); err == nil {
		t.Error("a refused command line wrote p.json")
	}

	// A -plot directory where an earlier fit drew more: the plots its
	// manifest lists that this fit does not draw are removed, other plots
	// of vigen's are named in a warning and left, the user's files are not
	// touched. They were all left, unmentioned.
	os.Mkdir("plots", 0o755)
	plot := func(name string) { os.WriteFile(filepath.Join("plots", name), markSVG([]byte("<svg/>")), 0o644) }
	plot("latent-old.svg")
	plot("latent-unlisted.svg")
	os.WriteFile(filepath.Join("plots", "mine.svg"), []byte("<svg>my drawing</svg>"), 0o644)
	list, _ := json.Marshal(plotList{Mark: plotListMark, Model: "other", Files: []string{"elbo.svg", "latent-old.svg", "mine.svg"}})
	os.WriteFile(filepath.Join("plots", plotManifest), list, 0o644)
	code, _, stderr = runCLI("run", logregVI, "-data", data, "-q", "-out", "r.json", "-plot", "plots")
	if code != 0 || !strings.Contains(stderr, "vigen: warning: latent-unlisted.svg in plots are plots of an earlier fit") {
		t.Errorf("-plot: exit %d, stderr:\n%s", code, stderr)
	}
	var got []string
	entries, _ := os.ReadDir("plots")
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if want := []string{plotManifest, "elbo.svg", "latent-theta.svg", "latent-unlisted.svg", "mine.svg", "psis.svg"}; !reflect.DeepEqual(got, want) {
		t.Errorf("the plot directory holds %v, want %v", got, want)
	}
	var now plotList
	if b, err := os.ReadFile(filepath.Join("plots", plotManifest)); err != nil || json.Unmarshal(b, &now) != nil ||
		now.Model != "logreg" || !reflect.DeepEqual(now.Files, []string{"elbo.svg", "psis.svg", "latent-theta.svg"}) {
		t.Errorf("the manifest reads %+v (%v)", now, err)
	}
}
