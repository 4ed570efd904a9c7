// fit_tempered_lda fits the LDA tempered in several ways and prints the
// start, the fits and their units' expected log joints (HookStart and
// HookLogJoint of hooks/temper_start_and_units.go).
package main

import (
	"context"
	"encoding/json"
	"os"

	"github.com/vigen-go/vigen/runtime"
	model "tmpe2e/PKG"
)

func main() {
	d, err := model.LoadData(os.Stdin)
	if err != nil {
		panic(err)
	}
	m, err := model.NewModel(d)
	if err != nil {
		panic(err)
	}
	fit := func(o model.Options) *model.Result {
		o.Seed = 3
		o.LocalTol, o.LocalMaxIter = 1e-13, 20000
		o.Keep = []string{"all"} // the checks read every token's q(z)
		r, err := m.Fit(context.Background(), o)
		if err != nil {
			panic(err)
		}
		return r
	}
	out := map[string]any{}
	out["start"] = model.HookStart(m, model.Options{Seed: 3})
	one := fit(model.Options{MaxIter: 1, Temper: runtime.TemperSettings{Anneal: runtime.Anneal{T0: 4, Length: 10}}})
	out["one"] = one
	out["one_lj"] = model.HookLogJoint(m, one)
	sched := runtime.TemperSettings{Anneal: runtime.Anneal{T0: 5, Length: 3}}
	out["annealed"] = fit(model.Options{MaxIter: 10, Tol: 1e-300, MeanTol: 1e-300, Temper: sched, Workers: 3})
	out["annealed_w1"] = fit(model.Options{MaxIter: 10, Tol: 1e-300, MeanTol: 1e-300, Temper: sched, Workers: 1})
	head := fit(model.Options{MaxIter: 3, Temper: sched})
	out["head"] = head
	out["tail"] = fit(model.Options{MaxIter: 7, Tol: 1e-300, MeanTol: 1e-300, Start: head})
	vt := runtime.TemperSettings{Mode: "global", Grid: []float64{1, 2, 4}, LogC: []float64{0, -40, -90}}
	v := fit(model.Options{MaxIter: 1, Temper: vt})
	out["vt"] = v
	out["vt_lj"] = model.HookLogJoint(m, v)
	out["svi_vt"] = fit(model.Options{Algorithm: "svi", SVI: runtime.SVISettings{BatchSize: 4, Passes: 3}, Temper: vt})
	json.NewEncoder(os.Stdout).Encode(out)
}
