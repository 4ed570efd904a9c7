// fit_svi_annealed_or_not fits by SVI (batches of 7, four passes) without
// tempering and annealed from T0 = 10.
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
	var out []*model.Result
	for _, t0 := range []float64{1, 10} {
		o := model.Options{Seed: 2, Algorithm: "svi", SVI: runtime.SVISettings{BatchSize: 7, Passes: 4}}
		if t0 > 1 {
			o.Temper = runtime.TemperSettings{Anneal: runtime.Anneal{T0: t0, Length: 50}}
		}
		r, err := model.Fit(context.Background(), d, o)
		if err != nil {
			panic(err)
		}
		out = append(out, r)
	}
	json.NewEncoder(os.Stdout).Encode(out)
}
