// ca_polish runs coordinate ascent from a result: the fixed point of the
// basin the result is in, and its ELBO.
package PKG

import "github.com/vigen-go/vigen/runtime"

// HookPolish starts from r's factors and sweeps coordinate ascent (every
// unit, then the globals) sweeps times, returning the ELBO it ends at.
func HookPolish(m *Model, r *Result, sweeps int) float64 {
	opts := Options{Seed: 1}
	q, err := m.newState(opts)
	if err != nil {
		panic(err)
	}
	if err := q.start(m, r); err != nil {
		panic(err)
	}
	a, w := &caModel{m: m, opts: opts}, &scratch{trouble: runtime.Trouble{}}
	units := a.Shape(q).Units
	for range sweeps {
		a.UpdateGlobals(q, w)
		for d := 0; d < units; d++ {
			a.UpdateUnit(q, w, d)
		}
	}
	return a.ELBO(q, 1, make([]float64, units))
}
