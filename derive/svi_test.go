package derive

import (
	"math"
	"testing"

	"github.com/vigen-go/vigen/runtime"
)

// The runtime's natural parameters of each conjugate family (what SVI
// steps) must be those Eq. 18's closed forms read: runtime.FromNatural
// agrees with the table's Conjugacy.FromNatural, and runtime.ToNatural inverts both.
func TestRuntimeNaturalParametersMatchConjugateFamilies(t *testing.T) {
	params := map[string][]float64{
		"Dirichlet": {2.5}, "Gamma": {3.2, 0.7}, "Beta": {1.7, 4.1}, "InverseGamma": {2.9, 1.3}, "Normal": {-0.8, 0.6},
	}
	for _, fam := range ConjugateFamilies() {
		if fam == "Categorical" {
			continue // its updates normalize; SVI does not step it
		}
		if !runtime.NaturalFamily(fam) {
			t.Errorf("%s: the runtime has no natural parameters for it", fam)
			continue
		}
		p := params[fam]
		if p == nil {
			t.Errorf("%s: no test values", fam)
			continue
		}
		slices := make([][]float64, len(p))
		for k := range p {
			slices[k] = []float64{p[k]}
		}
		stats := len(Dists[fam].ExpFam.Stats)
		eta := make([]float64, stats)
		runtime.ToNatural(fam, eta, slices...)
		env := &Env{Tensors: map[string]*Value{}}
		var sym []Expr
		for k := range eta {
			name := "eta" + string(rune('0'+k))
			env.Tensors[name] = &Value{Data: []float64{eta[k]}}
			sym = append(sym, T(name))
		}
		got := Dists[fam].Conj.FromNatural(sym)
		if len(got) != len(p) {
			t.Fatalf("%s: %d closed-form parameters for %d", fam, len(got), len(p))
		}
		for k := range got {
			if v := Eval(got[k], env); math.Abs(v-p[k]) > 1e-12*math.Max(1, math.Abs(p[k])) {
				t.Errorf("%s: parameter %d from ToNatural's η = %v is %v, want %v", fam, k, eta, v, p[k])
			}
		}
		back := make([][]float64, len(p))
		for k := range back {
			back[k] = make([]float64, 1)
		}
		runtime.FromNatural(fam, eta, back...)
		for k := range back {
			if math.Abs(back[k][0]-p[k]) > 1e-12*math.Max(1, math.Abs(p[k])) {
				t.Errorf("%s: FromNatural(ToNatural(p))[%d] = %v, want %v", fam, k, back[k][0], p[k])
			}
		}
	}
}
