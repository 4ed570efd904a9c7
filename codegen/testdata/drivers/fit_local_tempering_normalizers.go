// fit_local_tempering_normalizers fits four iterations, prints the unit log
// normalizers at three temperatures there (HookNorm, of
// hooks/lvt_unit_log_normalizers.go) and a fit with local tempering.
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
	r, err := m.Fit(context.Background(), model.Options{Seed: 5, MaxIter: 4})
	if err != nil {
		panic(err)
	}
	out := model.HookNorm(m, r, []float64{1, 1.7, 4})
	lvt, err := m.Fit(context.Background(), model.Options{Seed: 5, Workers: 2, Temper: runtime.TemperSettings{Mode: "local", Grid: []float64{1, 2, 4, 8}}})
	if err != nil {
		panic(err)
	}
	out["lvt"] = lvt
	json.NewEncoder(os.Stdout).Encode(out)
}
