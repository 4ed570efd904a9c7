// fit_and_predict fits the data on stdin, then predicts the same rows at
// q's means and over draws, and rows with the observations left out and K
// taken from the fit.
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
	r, err := model.Fit(context.Background(), d, model.Options{})
	if err != nil {
		panic(err)
	}
	plug, err := model.Predict(r, d, runtime.PredictSettings{Draws: -1})
	if err != nil {
		panic(err)
	}
	mc, err := model.Predict(r, d, runtime.PredictSettings{Draws: 50, Seed: 3})
	if err != nil {
		panic(err)
	}
	bare, err := model.Predict(r, &model.Data{X: d.X[:2]}, runtime.PredictSettings{Draws: -1})
	if err != nil {
		panic(err)
	}
	json.NewEncoder(os.Stdout).Encode([]any{r, plug, mc, bare})
}
