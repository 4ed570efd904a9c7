// lvt_unit_log_normalizers exposes the generated UnitLogNormalizers and
// the q they read.
package PKG

// HookNorm is the units' tempered log normalizers on grid at the q of r,
// with that q's parameters.
func HookNorm(m *Model, r *Result, grid []float64) map[string]any {
	opts := Options{Start: r}
	q, err := m.newState(opts)
	if err != nil {
		panic(err)
	}
	a := &caModel{m: m, opts: opts}
	unit := a.UnitLogNormalizers(q, grid)
	norm := make([][]float64, m.n)
	for d := range norm {
		norm[d] = make([]float64, len(grid))
		unit(d, norm[d])
	}
	return map[string]any{"norm": norm, "pi": q.piParam, "shape": q.tauShape, "rate": q.tauRate, "z": q.zProb}
}
