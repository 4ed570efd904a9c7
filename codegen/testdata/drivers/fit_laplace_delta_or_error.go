// fit_laplace_delta_or_error fits by Laplace and then by delta and prints,
// for each, the status and beta's first mean or Fit's error.
package main

import (
	"context"
	"fmt"
	"os"

	model "tmpe2e/PKG"
)

func main() {
	d, err := model.LoadData(os.Stdin)
	if err != nil {
		panic(err)
	}
	for _, method := range []string{"laplace", "delta"} {
		r, err := model.Fit(context.Background(), d, model.Options{Method: method})
		if err != nil {
			fmt.Printf("%s: error: %v\n", method, err)
			continue
		}
		fmt.Printf("%s: %s %.12g\n", method, r.Status, r.Latent.Beta.Mean[0])
	}
}
