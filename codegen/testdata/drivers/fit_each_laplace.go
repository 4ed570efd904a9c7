// fit_each_laplace fits each data set of a JSON array on stdin by Laplace
// and prints the results.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"

	model "tmpe2e/PKG"
)

func main() {
	var sets []json.RawMessage
	if err := json.NewDecoder(os.Stdin).Decode(&sets); err != nil {
		panic(err)
	}
	var out []*model.Result
	for _, s := range sets {
		d, err := model.LoadData(bytes.NewReader(s))
		if err != nil {
			panic(err)
		}
		r, err := model.Fit(context.Background(), d, model.Options{Workers: 1})
		if err != nil {
			panic(err)
		}
		out = append(out, r)
	}
	json.NewEncoder(os.Stdout).Encode(out)
}
