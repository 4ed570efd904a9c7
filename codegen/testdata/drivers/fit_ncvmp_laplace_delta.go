// fit_ncvmp_laplace_delta fits the data on stdin by NCVMP, then by Laplace
// and then by delta, with the fields of Options the test adds in place of the comment in the
// call, and prints the three results as JSON.
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
	for _, method := range []string{"ncvmp", "laplace", "delta"} {
		r, err := model.Fit(context.Background(), d, model.Options{Method: method /* OPTS */})
		if err != nil {
			panic(err)
		}
		out = append(out, r)
	}
	json.NewEncoder(os.Stdout).Encode(out)
}
