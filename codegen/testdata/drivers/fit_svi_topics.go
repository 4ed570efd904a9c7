// fit_svi_topics fits by Laplace and by delta: one iteration of
// coordinate ascent, one full-batch SVI pass, and SVI with batches of two
// with one worker and with four.
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
	for _, method := range []string{"laplace", "delta"} {
		for _, o := range []model.Options{
			{MaxIter: 1},
			{Algorithm: "svi", LocalTol: runtime.DefaultLocalTol, SVI: runtime.SVISettings{BatchSize: d.D, Tau0: 1, Kappa: 1, Passes: 1}},
			{Algorithm: "svi", SVI: runtime.SVISettings{BatchSize: 2, Passes: 3}, Workers: 1},
			{Algorithm: "svi", SVI: runtime.SVISettings{BatchSize: 2, Passes: 3}, Workers: 4},
		} {
			o.Method, o.Seed = method, 5
			r, err := model.Fit(context.Background(), d, o)
			if err != nil {
				panic(err)
			}
			r.Seconds = 0
			out = append(out, r)
		}
	}
	json.NewEncoder(os.Stdout).Encode(out)
}
