// fit_declared_methods fits the data on stdin once, each latent by the
// method it is declared with (Options.Method empty), and prints the result
// in a list as JSON.
package main

import (
	"context"
	"encoding/json"
	"os"

	model "tmpe2e/PKG"
)

func main() {
	d, err := model.LoadData(os.Stdin)
	if err != nil {
		panic(err)
	}
	var out []*model.Result
	for _, method := range []string{""} {
		r, err := model.Fit(context.Background(), d, model.Options{Method: method})
		if err != nil {
			panic(err)
		}
		out = append(out, r)
	}
	json.NewEncoder(os.Stdout).Encode(out)
}
