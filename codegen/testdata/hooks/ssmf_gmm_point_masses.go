// ssmf_gmm_point_masses sets the Gaussian mixture's globals to point masses
// and fits a point's assignment given them.
package PKG

import (
	"math"

	"github.com/vigen-go/vigen/runtime"
)

// HookPoint sets q(pi), q(mu) and q(tau) to point masses at pi, mu and tau
// (SetMoments, from the points' sufficient statistics), fits unit n
// (UpdateUnit) and returns its q(z), and its parts of the natural
// parameters of q(mu) and q(tau) given the points (UnitNatural).
func HookPoint(m *Model, pi, mu, tau []float64, n int) map[string]any {
	opts := Options{Seed: 3}
	q, err := m.newState(opts)
	if err != nil {
		panic(err)
	}
	a, w := &caModel{m: m, opts: opts}, &scratch{trouble: runtime.Trouble{}}
	var logPi, muStats, tauStats []float64
	for k := range pi {
		logPi = append(logPi, math.Log(pi[k]))
	}
	muStats = append(muStats, mu...)
	for _, x := range mu {
		muStats = append(muStats, x*x)
	}
	for _, x := range tau {
		tauStats = append(tauStats, math.Log(x))
	}
	tauStats = append(tauStats, tau...)
	a.SetMoments(q, 0, logPi)
	a.SetMoments(q, 1, muStats)
	a.SetMoments(q, 2, tauStats)
	a.UpdateUnit(q, w, n)
	etaMu, etaTau := make([]float64, 2*m.k), make([]float64, 2*m.k)
	a.UnitNatural(q, w, 1, n, 1, etaMu)
	a.UnitNatural(q, w, 2, n, 1, etaTau)
	return map[string]any{"z": q.zProb[n*m.k : (n+1)*m.k], "mu": etaMu, "tau": etaTau, "shape": a.Stochastic()}
}
