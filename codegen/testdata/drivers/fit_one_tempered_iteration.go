// fit_one_tempered_iteration prints the start (HookStart of
// hooks/temper_start_and_units.go) and the fit after one iteration at
// T = 4, with the Options the test fills in.
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
	m, err := model.NewModel(d)
	if err != nil {
		panic(err)
	}
	out := map[string]any{"start": model.HookStart(m, model.Options{OPTS})}
	r, err := m.Fit(context.Background(), model.Options{OPTS, MaxIter: 1, Temper: runtime.TemperSettings{Anneal: runtime.Anneal{T0: 4, Length: 10}}})
	if err != nil {
		panic(err)
	}
	out["one"] = r
	json.NewEncoder(os.Stdout).Encode(out)
}
