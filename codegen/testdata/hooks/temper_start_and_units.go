// temper_start_and_units exposes the start and the units' expected log
// joints of the generated package to the driver.
package PKG

// HookStart is the starting q of a fit with opts.
func HookStart(m *Model, opts Options) Latent {
	q, err := m.newState(opts)
	if err != nil {
		panic(err)
	}
	return q.latent(m)
}

// HookLogJoint is UnitLogJoint of every unit at the q of r.
func HookLogJoint(m *Model, r *Result) []float64 {
	opts := Options{Start: r}
	q, err := m.newState(opts)
	if err != nil {
		panic(err)
	}
	a := &caModel{m: m, opts: opts}
	out := make([]float64, m.d)
	for d := range out {
		out[d] = a.UnitLogJoint(q, d)
	}
	return out
}
