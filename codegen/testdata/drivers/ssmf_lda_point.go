// ssmf_lda_point fits one document's local factors given the topics
// (HookPoint of hooks/ssmf_lda_units.go) and, if asked, runs Gibbs chains
// on it (HookGibbs).
package main

import (
	"encoding/json"
	"os"
	"strings"

	model "tmpe2e/PKG"
)

func main() {
	var in struct {
		Data                    json.RawMessage
		LogBeta                 []float64
		D                       int
		Chains, BurnIn, Samples int
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
	out := map[string]any{"point": model.HookPoint(m, in.LogBeta, in.D)}
	if in.Chains > 0 {
		out["gibbs"] = model.HookGibbs(m, in.LogBeta, in.D, in.Chains, in.BurnIn, in.Samples)
	}
	json.NewEncoder(os.Stdout).Encode(out)
}
