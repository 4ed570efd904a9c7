// fit_runs_laplace_and_load_errors fits each run's data by Laplace from
// its start (random if none) and reports the error LoadData gives each of
// Bad.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"

	model "tmpe2e/PKG"
)

func main() {
	var in struct {
		Runs []struct{ Data, Start json.RawMessage }
		Bad  []json.RawMessage
	}
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		panic(err)
	}
	var out struct {
		Results []json.RawMessage
		BadErrs []string
	}
	for _, run := range in.Runs {
		d, err := model.LoadData(bytes.NewReader(run.Data))
		if err != nil {
			panic(err)
		}
		opts := model.Options{Method: "laplace", MaxIter: 10000}
		if len(run.Start) > 0 {
			if opts.Start, err = model.LoadResult(bytes.NewReader(run.Start)); err != nil {
				panic(err)
			}
		}
		r, err := model.Fit(context.Background(), d, opts)
		if err != nil {
			panic(err)
		}
		r.Seconds = 0
		b, _ := json.Marshal(r)
		out.Results = append(out.Results, b)
	}
	for _, bad := range in.Bad {
		msg := ""
		if _, err := model.LoadData(bytes.NewReader(bad)); err != nil {
			msg = err.Error()
		}
		out.BadErrs = append(out.BadErrs, msg)
	}
	json.NewEncoder(os.Stdout).Encode(out)
}
