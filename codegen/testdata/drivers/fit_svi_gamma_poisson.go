// fit_svi_gamma_poisson fits by SVI from a fixed start: full batches for
// the number of passes the test fills in, then batches of 3 with one
// worker and with three.
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
	start := &model.Result{Latent: model.Latent{
		B:   runtime.NewFactor("Gamma", nil, "shape", []float64{3}, "rate", []float64{0.5}),
		Lam: runtime.NewFactor("Gamma", []int{d.D}, "shape", make([]float64, d.D), "rate", make([]float64, d.D)),
	}}
	for i := range d.D {
		start.Latent.Lam.Params["shape"][i], start.Latent.Lam.Params["rate"][i] = 1, 1
	}
	var out []*model.Result
	for _, o := range []model.Options{
		{Start: start, Algorithm: "svi", SVI: runtime.SVISettings{BatchSize: d.D, Tau0: 1, Kappa: 0.7, Passes: PASSES}},
		{Start: start, Algorithm: "svi", SVI: runtime.SVISettings{BatchSize: 3, Passes: 4}, Workers: 1},
		{Start: start, Algorithm: "svi", SVI: runtime.SVISettings{BatchSize: 3, Passes: 4}, Workers: 3},
	} {
		r, err := model.Fit(context.Background(), d, o)
		if err != nil {
			panic(err)
		}
		r.Seconds = 0
		out = append(out, r)
	}
	json.NewEncoder(os.Stdout).Encode(out)
}
