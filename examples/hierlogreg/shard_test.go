package main

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/examples/hierlogreg/hierlogreg"
	"github.com/vigen-go/vigen/runtime"
)

// groupsOf is d's groups lo+1..hi with their rows, renumbered from 1:
// the data of one shard.
func groupsOf(d *hierlogreg.Data, lo, hi int) *hierlogreg.Data {
	s := &hierlogreg.Data{M: hi - lo, P: d.P, X: [][]float64{}, Y: []int{}, Group: []int{}}
	for n, g := range d.Group {
		if g > lo && g <= hi {
			s.X, s.Y, s.Group = append(s.X, d.X[n]), append(s.Y, d.Y[n]), append(s.Group, g-lo)
		}
	}
	s.N = len(s.Y)
	return s
}

// TestShardedEMIsTheFit: the hierarchical logistic regression's
// variational EM over groups split into 1, 3 and 7 shards (each shard's
// Laplace updates, then the M-step of mu0 and Lambda0 from their
// statistics combined exactly) is the single-process fit: same
// iterations, ELBO trace, params and per-group Gaussians, to 1e-12 of
// their largest values.
func TestShardedEMIsTheFit(t *testing.T) {
	d, _ := Synthetic(11, 14, 3)
	opts := hierlogreg.Options{Seed: 2}
	single, err := hierlogreg.Fit(context.Background(), d, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !single.Converged || single.Iterations < 5 {
		t.Fatalf("the single-process fit: %s after %d iterations", single.Status, single.Iterations)
	}
	flat := func(r *hierlogreg.Result) map[string][]float64 {
		out := map[string][]float64{"ELBO": r.ELBO, "mu0": r.Params.Mu0}
		for _, row := range r.Params.Lambda0 {
			out["Lambda0"] = append(out["Lambda0"], row...)
		}
		for _, g := range r.Latent.Theta {
			out["theta"] = append(out["theta"], g.Mean...)
			for _, row := range g.Cov {
				out["theta"] = append(out["theta"], row...)
			}
		}
		return out
	}
	want := flat(single)
	model := func(d *hierlogreg.Data) *hierlogreg.Model {
		m, err := hierlogreg.NewModel(d)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	for _, shards := range []int{1, 3, 7} {
		t.Run(fmt.Sprint(shards), func(t *testing.T) {
			// the driver's data: no groups (a size of 0 is given in JSON;
			// in a Data literal, 0 asks to infer it)
			none, err := hierlogreg.LoadData(strings.NewReader(fmt.Sprintf(`{"M": 0, "N": 0, "P": %d, "x": [], "y": [], "group": []}`, d.P)))
			if err != nil {
				t.Fatal(err)
			}
			driver, err := model(none).Shard(opts, 0, d.M)
			if err != nil {
				t.Fatal(err)
			}
			runner := &runtime.InProcessShards{}
			for s := 0; s < shards; s++ {
				lo, hi := s*d.M/shards, (s+1)*d.M/shards
				sh, err := model(groupsOf(d, lo, hi)).Shard(opts, lo, d.M)
				if err != nil {
					t.Fatal(err)
				}
				runner.Shards = append(runner.Shards, sh)
			}
			fit, err := runtime.FitShards(context.Background(), driver, runner, opts.Sharded())
			if err != nil {
				t.Fatal(err)
			}
			all, err := model(d).Shard(opts, 0, d.M)
			if err != nil {
				t.Fatal(err)
			}
			locals, err := runner.Locals(fit.LocalsOf)
			if err != nil {
				t.Fatal(err)
			}
			out, err := runtime.WholeResult(context.Background(), all, fit, locals)
			if err != nil {
				t.Fatal(err)
			}
			r := out.(*hierlogreg.Result)
			if r.Iterations != single.Iterations || r.Status != single.Status {
				t.Fatalf("%d iterations (%s), the single-process fit %d (%s)", r.Iterations, r.Status, single.Iterations, single.Status)
			}
			// completed as Fit completes its result
			if len(r.Summary) != len(single.Summary) || len(r.Diagnostics) != len(single.Diagnostics) || len(r.Summary) == 0 || len(r.Diagnostics) == 0 {
				t.Fatalf("%d summary rows and %d diagnostics; the single-process fit has %d and %d", len(r.Summary), len(r.Diagnostics), len(single.Summary), len(single.Diagnostics))
			}
			for i, row := range r.Summary {
				if w := single.Summary[i]; row.Name != w.Name || math.Abs(row.Mean-w.Mean) > 1e-12*math.Max(1, math.Abs(w.Mean)) {
					t.Errorf("summary row %d: %s %v, the single-process fit's %s %v", i, row.Name, row.Mean, w.Name, w.Mean)
				}
			}
			if a, b := r.Diagnostics[0].MaxKHat, single.Diagnostics[0].MaxKHat; math.Abs(a-b) > 1e-6 {
				t.Errorf("largest k̂ %v, the single-process fit's %v", a, b)
			}
			got := flat(r)
			for _, name := range []string{"ELBO", "mu0", "Lambda0", "theta"} {
				diff, scale := 0.0, 0.0
				for i, w := range want[name] {
					diff, scale = math.Max(diff, math.Abs(got[name][i]-w)), math.Max(scale, math.Abs(w))
				}
				t.Logf("%s: largest difference over largest value %.2g", name, diff/scale)
				if len(got[name]) != len(want[name]) || diff > 1e-12*scale {
					t.Errorf("%s differs from the single-process fit by %.3g of its largest value", name, diff/scale)
				}
			}
		})
	}
}
