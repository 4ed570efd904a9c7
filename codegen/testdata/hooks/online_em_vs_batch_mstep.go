// online_em_vs_batch_mstep runs a few EM iterations to get a state away
// from the start, then takes the batch M-step with one copy of the params
// and online EM's with all units' statistics with another (it reaches the
// unexported adapter).
package PKG

import (
	"context"

	"github.com/vigen-go/vigen/runtime"
)

// OEMResult is what ExactOnlineEM reports.
type OEMResult struct {
	Batch, Online         Params
	BatchELBO, OnlineELBO float64
	Stats                 int
}

// ExactOnlineEM compares the batch M-step with online EM on all units.
func ExactOnlineEM(d *Data, opts Options, iters int) (*OEMResult, error) {
	o := opts
	o.MaxIter = iters
	r, err := Fit(context.Background(), d, o)
	if err != nil {
		return nil, err
	}
	// q from the fit, the params from their starting values, so that the
	// M-step changes them (and the values derived from them)
	start := *r
	start.Params = Params{}
	opts.Start = &start
	m, err := NewModel(d)
	if err != nil {
		return nil, err
	}
	m1, err := m.withOwnParams(opts)
	if err != nil {
		return nil, err
	}
	m2, err := m.withOwnParams(opts)
	if err != nil {
		return nil, err
	}
	q, err := m1.newState(opts)
	if err != nil {
		return nil, err
	}
	a1, a2 := &caModel{m: m1, opts: opts}, &caModel{m: m2, opts: opts}
	if _, err := a1.MStep(q); err != nil {
		return nil, err
	}
	stats := make([]float64, a2.Stochastic().ParamStats)
	w := a2.NewWorker(runtime.Trouble{})
	units := a2.Shape(q).Units
	for u := 0; u < units; u++ {
		a2.UnitParamStats(q, w, u, stats)
	}
	if _, err := a2.ParamStep(q, stats); err != nil {
		return nil, err
	}
	per := make([]float64, units)
	return &OEMResult{Batch: a1.Params(), Online: a2.Params(), BatchELBO: a1.ELBO(q, 1, per), OnlineELBO: a2.ELBO(q, 1, per), Stats: len(stats)}, nil
}
