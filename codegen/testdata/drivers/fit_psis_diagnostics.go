// fit_psis_diagnostics fits by Laplace and by delta and prints each
// result's diagnostics.
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
	var out [][]runtime.Diagnostic
	for _, method := range []string{"laplace", "delta"} {
		r, err := model.Fit(context.Background(), d, model.Options{Method: method, Workers: 2})
		if err != nil {
			panic(err)
		}
		out = append(out, r.Diagnostics)
	}
	json.NewEncoder(os.Stdout).Encode(out)
}
