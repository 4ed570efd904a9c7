// fit_laplace_from_start fits the model by Laplace from a start given with
// the data and, if the input has Bad data, reports the error NewModel gives
// it.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"

	model "tmpe2e/PKG"
)

func main() {
	var in struct{ Data, Start, Bad json.RawMessage }
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		panic(err)
	}
	d, err := model.LoadData(bytes.NewReader(in.Data))
	if err != nil {
		panic(err)
	}
	start, err := model.LoadResult(bytes.NewReader(in.Start))
	if err != nil {
		panic(err)
	}
	var out struct {
		Results []*model.Result
		BadErr  string
	}
	r, err := model.Fit(context.Background(), d, model.Options{Method: "laplace", Start: start, Tol: 1e-15, MeanTol: 1e-13, MaxIter: 10000})
	if err != nil {
		panic(err)
	}
	out.Results = append(out.Results, r)
	if len(in.Bad) > 0 {
		bd, err := model.LoadData(bytes.NewReader(in.Bad))
		if err == nil {
			_, err = model.Fit(context.Background(), bd, model.Options{})
		}
		if err != nil {
			out.BadErr = err.Error()
		}
	}
	json.NewEncoder(os.Stdout).Encode(out)
}
