// fit_joint_diagnostics fits the data on stdin with the joint diagnostic's
// 8000 draws and prints the result's diagnostics.
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
	r, err := model.Fit(context.Background(), d, model.Options{Diagnose: runtime.DiagnoseSettings{Draws: 8000}})
	if err != nil {
		panic(err)
	}
	json.NewEncoder(os.Stdout).Encode(r.Diagnostics)
}
