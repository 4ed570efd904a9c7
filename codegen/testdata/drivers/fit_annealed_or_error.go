// fit_annealed_or_error fits annealed from T0 = 10 and prints Fit's error
// if there is one.
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
	for _, t0 := range []float64{10} {
		o := model.Options{Seed: 2, MaxIter: 2000}
		if t0 > 1 {
			o.Temper = runtime.TemperSettings{Anneal: runtime.Anneal{T0: t0, Length: 50}}
		}
		r, err := model.Fit(context.Background(), d, o)
		if err != nil {
			os.Stdout.WriteString(err.Error())
			return
		}
		out = append(out, r)
	}
	json.NewEncoder(os.Stdout).Encode(out)
}
