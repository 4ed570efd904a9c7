// mstep_after_one_iteration fits one iteration with the params fixed, then
// takes one M-step from that result and prints mu's mean and the new
// params a and b.
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
	m, err := model.NewModel(d)
	if err != nil {
		panic(err)
	}
	r, err := m.Fit(context.Background(), model.Options{MaxIter: 1, FixParams: true})
	if err != nil {
		panic(err)
	}
	p, err := m.MStep(r, model.Options{})
	if err != nil {
		panic(err)
	}
	json.NewEncoder(os.Stdout).Encode(map[string]any{"mu": r.Latent.Mu.Mean, "a": p.A, "b": p.B})
}
