// fit_ssmf_seeds fits the data by coordinate ascent, then by SSMF for
// every seed and batch size, in one process; for each SSMF fit it reports
// the status, the last ELBO, the ELBO of coordinate ascent started from
// the fit (Polish, of hooks/ca_polish.go), and the component means.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"

	"github.com/vigen-go/vigen/runtime"
	model "tmpe2e/PKG"
)

func main() {
	var in struct {
		Data  json.RawMessage
		Seeds []uint64
		Runs  []struct{ Batch, Passes int }
	}
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		panic(err)
	}
	data, err := model.LoadData(bytes.NewReader(in.Data))
	if err != nil {
		panic(err)
	}
	m, err := model.NewModel(data)
	if err != nil {
		panic(err)
	}
	type fit struct {
		Seed     uint64
		Batch    int
		Status   string
		ELBO     float64
		Polished float64
		Means    []float64
	}
	var out struct {
		CA   float64
		Fits []fit
	}
	ca, err := m.Fit(context.Background(), model.Options{Seed: 1})
	if err != nil {
		panic(err)
	}
	out.CA = ca.ELBO[len(ca.ELBO)-1]
	for _, run := range in.Runs {
		b := run.Batch
		for _, seed := range in.Seeds {
			opts := model.Options{Seed: seed, Algorithm: "ssmf", SVI: runtime.SVISettings{BatchSize: b, Passes: run.Passes}}
			r, err := m.Fit(context.Background(), opts)
			if err != nil {
				panic(err)
			}
			f := fit{Seed: seed, Batch: b, Status: r.Status, Means: r.Latent.Mu.Params["mean"]}
			if len(r.ELBO) > 0 {
				f.ELBO = r.ELBO[len(r.ELBO)-1]
				f.Polished = model.HookPolish(m, r, 500)
			}
			out.Fits = append(out.Fits, f)
		}
	}
	json.NewEncoder(os.Stdout).Encode(out)
}
