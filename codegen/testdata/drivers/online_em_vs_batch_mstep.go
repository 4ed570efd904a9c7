// online_em_vs_batch_mstep prints ExactOnlineEM's comparison (of
// hooks/online_em_vs_batch_mstep.go) with the Options the test fills
// in.
package main

import (
	"encoding/json"
	"os"

	model "tmpe2e/PKG"
)

func main() {
	d, err := model.LoadData(os.Stdin)
	if err != nil {
		panic(err)
	}
	r, err := model.ExactOnlineEM(d, model.Options{OPTS}, 3)
	if err != nil {
		panic(err)
	}
	json.NewEncoder(os.Stdout).Encode(r)
}
