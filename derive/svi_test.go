package derive

import (
	"math"
	"testing"

	"github.com/vigen-go/vigen/runtime"
)

// The natural parameters of each conjugate family (what SVI steps, printed
// into generated packages from NaturalMaps) must be those Eq. 18's closed
// forms read: the table's Conjugacy.FromNatural inverts ExpFam's Eta, and
// runtime.ToNatural and FromNatural apply them element by element.
func TestNaturalMapsInvertEachOther(t *testing.T) {
	for _, fam := range ConjugateFamilies() {
		env := &Env{Tensors: map[string]*Value{}}
		read := func(prefix string) func(k int) Expr {
			return func(k int) Expr { return T(prefix + string(rune('0'+k))) }
		}
		toEta, toParams, ok := NaturalMaps(fam, read("p"), read("e"))
		if !ok {
			// neither does it step the Gaussian of a Joint family (a
			// conjugate MvNormal; codegen's sviReason says so)
			if !Dists[fam].Conj.Normalize && !Dists[fam].Conj.Joint {
				t.Errorf("%s: SVI cannot step it", fam)
			}
			continue // a categorical's updates normalize; SVI does not step it
		}
		// valid parameters for every family: positive, and for a vector
		// family one component
		p := []float64{1.7, 2.3, 0.9, 3.1}[:len(toParams)]
		for k, v := range p {
			env.Tensors["p"+string(rune('0'+k))] = &Value{Data: []float64{v}}
		}
		eta := make([]float64, len(toEta))
		for k, x := range toEta {
			eta[k] = Eval(x, env)
			env.Tensors["e"+string(rune('0'+k))] = &Value{Data: []float64{eta[k]}}
		}
		for k, x := range toParams {
			if v := Eval(x, env); math.Abs(v-p[k]) > 1e-12*math.Max(1, math.Abs(p[k])) {
				t.Errorf("%s: parameter %d from η = %v is %v, want %v", fam, k, eta, v, p[k])
			}
		}
		// the runtime's layout: one block of n per statistic
		params := make([][]float64, len(p))
		for k := range p {
			params[k] = []float64{p[k], p[k]}
		}
		blocks := make([]float64, 2*len(eta))
		runtime.ToNatural(blocks, func(e, q []float64) {
			if q[0] != p[0] {
				t.Errorf("%s: ToNatural passed parameters %v, want %v", fam, q, p)
			}
			copy(e, eta)
		}, params...)
		if blocks[0] != eta[0] || blocks[1] != eta[0] || blocks[2*len(eta)-1] != eta[len(eta)-1] {
			t.Errorf("%s: ToNatural's blocks %v, want each of %v twice", fam, blocks, eta)
		}
		back := make([][]float64, len(p))
		for k := range back {
			back[k] = make([]float64, 2)
		}
		runtime.FromNatural(blocks, func(q, e []float64) { copy(q, p) }, back...)
		if back[len(p)-1][1] != p[len(p)-1] {
			t.Errorf("%s: FromNatural wrote %v, want %v", fam, back, p)
		}
	}
}
