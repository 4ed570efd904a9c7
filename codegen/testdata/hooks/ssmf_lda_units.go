// ssmf_lda_units exposes SetMoments, UpdateUnit and GibbsUnit of the
// generated LDA.
package PKG

import (
	"math"
	"math/rand/v2"

	"github.com/vigen-go/vigen/runtime"
)

// HookPoint sets q(beta) to the point mass at the topics exp(logBeta)
// (SetMoments), fits unit d (UpdateUnit) and returns its factors, then
// restores q(beta) (SetNatural) and reports how far E_q[log beta] and its
// exponential are from where they started.
func HookPoint(m *Model, logBeta []float64, d int) map[string]any {
	opts := Options{Seed: 3, LocalTol: 1e-13, LocalMaxIter: 100000}
	q, err := m.newState(opts)
	if err != nil {
		panic(err)
	}
	a, w := &caModel{m: m, opts: opts}, &scratch{trouble: runtime.Trouble{}}
	elog, elogExp := append([]float64(nil), q.betaElog...), append([]float64(nil), q.betaElogExp...)
	eta := make([]float64, len(q.betaParam))
	a.Natural(q, 0, eta)
	a.SetMoments(q, 0, logBeta)
	settled := a.UpdateUnit(q, w, d)
	out := map[string]any{
		"settled": settled,
		"theta":   append([]float64(nil), q.thetaParam[d*m.k:(d+1)*m.k]...),
		"z":       append([]float64(nil), q.zProb[m.wOff[d]*m.k:m.wOff[d+1]*m.k]...),
		"shape":   a.Stochastic(),
	}
	a.SetNatural(q, 0, eta)
	diff := 0.0
	for i := range elog {
		diff = math.Max(diff, math.Max(math.Abs(q.betaElog[i]-elog[i]), math.Abs(q.betaElogExp[i]-elogExp[i])))
	}
	out["restored"] = diff
	return out
}

// HookGibbs sets q(beta) to the point mass at exp(logBeta) and runs
// GibbsUnit on unit d chains times, each chain from where the last one
// ended with its own stream, returning unit d's q(z) and q(theta) after
// each.
func HookGibbs(m *Model, logBeta []float64, d, chains, burnIn, samples int) map[string]any {
	opts := Options{Seed: 3}
	q, err := m.newState(opts)
	if err != nil {
		panic(err)
	}
	a, w := &caModel{m: m, opts: opts}, &scratch{trouble: runtime.Trouble{}}
	a.SetMoments(q, 0, logBeta)
	var zs, thetas [][]float64
	for c := range chains {
		a.GibbsUnit(q, w, d, rand.New(rand.NewPCG(7, uint64(c))), burnIn, samples)
		zs = append(zs, append([]float64(nil), q.zProb[m.wOff[d]*m.k:m.wOff[d+1]*m.k]...))
		thetas = append(thetas, append([]float64(nil), q.thetaParam[d*m.k:(d+1)*m.k]...))
	}
	return map[string]any{"z": zs, "theta": thetas}
}
