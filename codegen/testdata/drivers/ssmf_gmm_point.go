// ssmf_gmm_point fits point N's assignment given the mixture's globals as
// point masses (HookPoint of hooks/ssmf_gmm_point_masses.go).
package main

import (
	"encoding/json"
	"os"
	"strings"

	model "tmpe2e/PKG"
)

func main() {
	var in struct {
		Data        json.RawMessage
		Pi, Mu, Tau []float64
		N           int
	}
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		panic(err)
	}
	data, err := model.LoadData(strings.NewReader(string(in.Data)))
	if err != nil {
		panic(err)
	}
	m, err := model.NewModel(data)
	if err != nil {
		panic(err)
	}
	json.NewEncoder(os.Stdout).Encode(model.HookPoint(m, in.Pi, in.Mu, in.Tau, in.N))
}
