// fit_laplace fits the data on stdin by Laplace with the fields of Options
// the test adds in place of the comment in the call, and prints the result
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
	for _, method := range []string{"laplace"} {
		r, err := model.Fit(context.Background(), d, model.Options{Method: method /* OPTS */})
		if err != nil {
			panic(err)
		}
		out = append(out, r)
	}
	json.NewEncoder(os.Stdout).Encode(out)
}
