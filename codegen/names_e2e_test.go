package codegen

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/golden"
)

// generatorNamesVI is the model, named NAME, whose data AA and BB are
// renamed.
const generatorNamesVI = "model NAME\nsize N, P\ndata x : real[N, P]\ndata y : int[N] in 0..1\ndata AA : real\ndata BB : real\n" +
	"latent w : real[P] nonconjugate ncvmp\nw ~ Normal(AA * BB, 1)\nfor n in 1:N {\n  y[n] ~ Bernoulli(logistic(dot(x[n], w)))\n}\n"

// generatorNamesCase is the case of the model named name with data a and
// b.
func generatorNamesCase(name, a, b string) *e2eCase {
	model := strings.NewReplacer("NAME", name, "AA", a, "BB", b).Replace(generatorNamesVI)
	return slowTest("TestEndToEndGeneratorNamesInTheModel").fits(name, model, ", MaxIter: 500")
}

var generatorNamesCases = map[string]*e2eCase{
	"clash": generatorNamesCase("clash", "ncvmpW", "leftOut"),
	"plain": generatorNamesCase("plain", "c", "d"),
}

// TestEndToEndGeneratorNamesInTheModel: data named as the generator's own
// names (leftOut, Data's method LeftOut; ncvmpW, the NCVMP method of the
// latent w) once made code that did not compile. Generated, built and run,
// the model fits exactly as the same model with other names does: the
// names are all that differ.
func TestEndToEndGeneratorNamesInTheModel(t *testing.T) {
	golden.SlowTier(t)
	var x [][]float64
	var y []int
	for n := range 30 {
		a, b := math.Sin(float64(n)), math.Cos(1.7*float64(n))
		x = append(x, []float64{a, b})
		if a-0.5*b+0.3*math.Sin(5*float64(n)) > 0 {
			y = append(y, 1)
		} else {
			y = append(y, 0)
		}
	}
	fit := func(name, a, b string) resultJSON {
		data, _ := json.Marshal(map[string]any{"x": x, "y": y, a: 0.5, b: 0.4})
		r := generatorNamesCases[name].results(t, data)[0]
		if !r.Converged {
			t.Errorf("%s: not converged: %s", name, r.Status)
		}
		return r
	}
	clash, plain := fit("clash", "ncvmpW", "leftOut"), fit("plain", "c", "d")
	if len(plain.Latent["w"].Mean) != 2 || !reflect.DeepEqual(clash.Latent["w"], plain.Latent["w"]) || !reflect.DeepEqual(clash.ELBO, plain.ELBO) {
		t.Errorf("q(w) with the generator's names %+v, ELBO %v; with others %+v, ELBO %v", clash.Latent["w"], clash.ELBO, plain.Latent["w"], plain.ELBO)
	}
}
