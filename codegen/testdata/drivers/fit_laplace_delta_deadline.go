// fit_laplace_delta_deadline is fit_laplace_delta with the fits canceled
// after a minute: it fits the data on stdin by Laplace and then by delta,
// with the fields of Options the test adds in place of the comment in the
// call, and prints both results as JSON.
package main

import (
	"context"
	"encoding/json"
	"os"
	"time"

	model "tmpe2e/PKG"
)

func main() {
	d, err := model.LoadData(os.Stdin)
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out []*model.Result
	for _, method := range []string{"laplace", "delta"} {
		r, err := model.Fit(ctx, d, model.Options{Method: method /* OPTS */})
		if err != nil {
			panic(err)
		}
		out = append(out, r)
	}
	json.NewEncoder(os.Stdout).Encode(out)
}
