package main

import (
	"github.com/vigen-go/vigen/runtime"

	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestLatentRows reads each shape a latent takes in a Result: the rows'
// means and sds, their number of units, and a family without moments.
func TestLatentRows(t *testing.T) {
	for _, c := range []struct {
		raw         string
		mean, sd    []float64
		units       int
		errContains string
	}{
		{`{"family":"MvNormal","mean":[1,-2],"cov":[[4,1],[1,9]]}`, []float64{1, -2}, []float64{2, 3}, 0, ""},
		{`[{"family":"MvNormal","mean":[1],"cov":[[0.25]]},{"family":"MvNormal","mean":[5],"cov":[[16]]}]`, []float64{1, 5}, []float64{0.5, 4}, 2, ""},
		{`{"family":"Gamma","shape":[1],"params":{"shape":[4],"rate":[2]}}`, []float64{2}, []float64{1}, 0, ""},
		{`{"family":"Dirichlet","shape":[2,2],"params":{"param":[1,3,2,2]}}`, []float64{0.25, 0.75, 0.5, 0.5},
			[]float64{math.Sqrt(3.0 / 80), math.Sqrt(3.0 / 80), math.Sqrt(1.0 / 20), math.Sqrt(1.0 / 20)}, 2, ""},
		{`{"family":"Wishart","shape":[1],"params":{"x":[1]}}`, nil, nil, 0, "no moments for a Wishart"},
	} {
		rows, err := runtime.LatentRows("v", json.RawMessage(c.raw), 0)
		if c.errContains != "" {
			if err == nil || !strings.Contains(err.Error(), c.errContains) {
				t.Errorf("%s: error %v, want %q", c.raw, err, c.errContains)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.raw, err)
		}
		if units := latentUnits(json.RawMessage(c.raw)); units != c.units || len(rows) != len(c.mean) {
			t.Fatalf("%s: %d units, %d rows; want %d, %d", c.raw, units, len(rows), c.units, len(c.mean))
		}
		for i, r := range rows {
			if math.Abs(r.Mean-c.mean[i]) > 1e-15 || math.Abs(r.SD-c.sd[i]) > 1e-15 || !r.HasQuantiles || !(r.Q05 < r.Q50 && r.Q50 < r.Q95) {
				t.Errorf("%s: element %d: %+v, want %v ± %v and ordered quantiles", c.raw, i, r, c.mean[i], c.sd[i])
			}
		}
	}
}

// TestWritePlots: one SVG for the ELBO and one per latent, a legend per
// component for a per-unit vector, a note of what was left out for a long
// one, and the same bytes every time.
func TestWritePlots(t *testing.T) {
	long := make([]float64, 300)
	for i := range long {
		long[i] = 1
	}
	theta, _ := json.Marshal(map[string]any{"family": "Gamma", "shape": []int{300}, "params": map[string]any{"shape": long, "rate": long}})
	result := []byte(`{"model":"m","status":"converged","elbo":[-10,-5,-4.5],"latent":{
		"b":[{"family":"MvNormal","mean":[1,2],"cov":[[1,0],[0,1]]},{"family":"MvNormal","mean":[3,4],"cov":[[1,0],[0,1]]}],
		"theta":` + string(theta) + `}}`)
	dir := t.TempDir()
	files, err := writePlots(dir, result, defaultPlotUnits)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"elbo.svg", "elbo-change.svg", "latent-b.svg", "latent-theta.svg"}
	if len(files) != len(want) {
		t.Fatalf("wrote %v, want %v", files, want)
	}
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for name, texts := range map[string][]string{
		"elbo.svg":         {"m: ELBO per iteration (converged)", ">iteration<"},
		"latent-b.svg":     {"q(b), mean and 90% interval", "b[·,1]", "b[·,2]", "unit (all 2)"},
		"elbo-change.svg":  {"relative change of the ELBO"},
		"latent-theta.svg": {"q(theta)", "first 200 of 300"},
	} {
		svg := read(name)
		for _, s := range texts {
			if !strings.Contains(svg, s) {
				t.Errorf("%s lacks %q", name, s)
			}
		}
	}
	first := read("latent-b.svg")
	if _, err := writePlots(dir, result, defaultPlotUnits); err != nil {
		t.Fatal(err)
	}
	if read("latent-b.svg") != first {
		t.Error("the same result gave different SVG bytes")
	}
	if _, err := writePlots(dir, []byte(`{"model":"m","elbo":[],"latent":{}}`), defaultPlotUnits); err == nil {
		t.Error("a result without an ELBO trace plotted")
	}
}

// A latent with nothing to draw (no elements, as a mixture's z over no
// data) is left out of the plots; the others are still written.
func TestWritePlotsSkipsEmptyLatents(t *testing.T) {
	result := []byte(`{"model":"m","status":"converged","elbo":[-3,-2],"latent":{
		"z":{"family":"Categorical","shape":[0,2],"params":{"prob":[]}},
		"mu":{"family":"MvNormal","mean":[1],"cov":[[1]]}}}`)
	dir := t.TempDir()
	files, err := writePlots(dir, result, defaultPlotUnits)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	if strings.Join(names, " ") != "elbo.svg elbo-change.svg latent-mu.svg" {
		t.Errorf("wrote %v", names)
	}
}

// -plot-units chooses the units a per-unit latent's plot shows, by their
// own numbers; bad ranges are refused.
func TestPlotUnits(t *testing.T) {
	var gs []string
	for u := range 100 {
		gs = append(gs, fmt.Sprintf(`{"family":"MvNormal","mean":[%d],"cov":[[1]]}`, u))
	}
	result := []byte(`{"model":"m","status":"converged","elbo":[-3,-2],"latent":{"b":[` + strings.Join(gs, ",") + `]}}`)
	var sel unitRange
	if err := sel.Set("51:60"); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := writePlots(dir, result, sel); err != nil {
		t.Fatal(err)
	}
	svg, _ := os.ReadFile(filepath.Join(dir, "latent-b.svg"))
	if !strings.Contains(string(svg), "unit (51 to 60 of 100; -plot-units chooses)") || !strings.Contains(string(svg), ">55<") {
		t.Errorf("latent-b.svg does not show units 51 to 60")
	}
	for _, bad := range []string{"0:5", "5:4", "1-5", "1:500"} {
		if err := sel.Set(bad); err == nil {
			t.Errorf("-plot-units %s accepted", bad)
		}
	}
	sel = unitRange{101, 110}
	if _, err := writePlots(t.TempDir(), result, sel); err == nil || !strings.Contains(err.Error(), "b has 100 units") {
		t.Errorf("units past the end: %v", err)
	}
}

// The rows of a Dirichlet over a matrix (topics) are drawn as a heat map
// of their means; over many rows (one per document) element by element.
func TestSimplexHeatMap(t *testing.T) {
	topics := `{"family":"Dirichlet","shape":[2,3],"params":{"param":[1,2,7,5,4,1]}}`
	result := []byte(`{"model":"m","status":"converged","elbo":[-3,-2],"latent":{"beta":` + topics + `}}`)
	dir := t.TempDir()
	if _, err := writePlots(dir, result, defaultPlotUnits); err != nil {
		t.Fatal(err)
	}
	svg, _ := os.ReadFile(filepath.Join(dir, "latent-beta.svg"))
	if !strings.Contains(string(svg), "m: E_q[beta] by row (0.1 dark to 0.7 light)") {
		t.Errorf("latent-beta.svg is not the heat map of the rows' means (0.1 … 0.7)")
	}
	rows, _ := runtime.LatentRows("beta", json.RawMessage(topics), 0)
	if simplexHeatMap("m", "beta", json.RawMessage(strings.Replace(topics, "[2,3]", "[200,3]", 1)), rows) != nil {
		t.Errorf("200 rows drawn as a heat map")
	}
}

// Quantiles, a numerical inversion each, are computed only for the rows
// asked for, whole simplex rows at a time; means and sds for all.
func TestLatentRowsQuantilesOnDemand(t *testing.T) {
	raw := json.RawMessage(`{"family":"Dirichlet","shape":[3,2],"params":{"param":[1,3,2,2,5,1]}}`)
	all, _ := runtime.LatentRows("v", raw, 0)
	part, _ := runtime.LatentRows("v", raw, 1)
	if len(part) != 6 || len(all) != 6 {
		t.Fatalf("%d and %d rows, want 6", len(part), len(all))
	}
	for i := range part {
		if part[i].Mean != all[i].Mean || part[i].SD != all[i].SD || part[i].HasQuantiles != (i < 2) ||
			i < 2 && part[i].Q05 != all[i].Q05 {
			t.Errorf("element %d: %+v, want the first row's quantiles only (all: %+v)", i, part[i], all[i])
		}
	}
}

// TestDistinctTicksAreTrue: every ELBO tick label reads back as its tick's
// value (to a millionth of the spacing) and no two are alike. Labels were
// rounded to 3 significant digits unless that made two alike: a tick at
// −195.35 read −195.4, and a trace converged at −195.356 looked as if it
// were at −195.4 ± 0.05.
func TestDistinctTicksAreTrue(t *testing.T) {
	for _, r := range [][2]float64{
		{-195.36, -195.05}, {-195.4, -195.0}, {-195.3562, -195.3561}, {-195.356181, -195.35618},
		{-1850, -1790}, {-1.5, 1.5}, {-0.1, 0.1}, {1e-9, 3e-9}, {-1284.3, -1284.1}, {-14263, -1284},
	} {
		ticks := distinctTicks{}.Ticks(r[0], r[1])
		gap := r[1] - r[0] // the smallest between labelled ticks
		var prev *float64
		for _, tk := range ticks {
			if tk.Label != "" {
				if prev != nil && math.Abs(tk.Value-*prev) > 0 {
					gap = min(gap, math.Abs(tk.Value-*prev))
				}
				v := tk.Value
				prev = &v
			}
		}
		tol := 1e-6 * gap
		seen := map[string]bool{}
		labelled := 0
		for _, tk := range ticks {
			if tk.Label == "" {
				continue
			}
			labelled++
			v, err := strconv.ParseFloat(tk.Label, 64)
			if err != nil || math.Abs(v-tk.Value) > tol {
				t.Errorf("%v: the tick at %v is labelled %q", r, tk.Value, tk.Label)
			}
			if seen[tk.Label] {
				t.Errorf("%v: two ticks labelled %q", r, tk.Label)
			}
			seen[tk.Label] = true
		}
		if labelled < 2 {
			t.Errorf("%v: %d labelled ticks: %v", r, labelled, ticks)
		}
	}
}
