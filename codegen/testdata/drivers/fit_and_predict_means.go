// fit_and_predict_means fits the data on stdin and predicts it at q's
// means: it prints the latents and the predictions.
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
	p, err := model.Predict(r, d, runtime.PredictSettings{Draws: -1})
	if err != nil {
		panic(err)
	}
	json.NewEncoder(os.Stdout).Encode([]any{r.Latent, p})
}
