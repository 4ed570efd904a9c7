// fit_each_then_refit fits every data set of the JSON array on stdin by
// delta with the Options the test fills in for the first comment, then
// fits each once more from its result with those it fills in for the
// second: it prints the results, then the refits.
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
	var out, again []*model.Result
	for _, raw := range sets {
		d, err := model.LoadData(bytes.NewReader(raw))
		if err != nil {
			panic(err)
		}
		r, err := model.Fit(context.Background(), d, model.Options{Method: "delta" /* OPTS */})
		if err != nil {
			panic(err)
		}
		out = append(out, r)
		r2, err := model.Fit(context.Background(), d, model.Options{Method: "delta", Start: r /* AGAIN */})
		if err != nil {
			panic(err)
		}
		again = append(again, r2)
	}
	json.NewEncoder(os.Stdout).Encode(append(out, again...))
}
