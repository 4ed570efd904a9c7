package runtime

import (
	"fmt"
	"math"
	"sync"

	"gonum.org/v1/gonum/stat/distuv"
)

// A constrained latent (real<lower=a>[P], real<lower=a, upper=b>[P]) is
// fitted on the unconstrained scale u, with x = T(u) (derive/transform.go
// states the maps and their log-Jacobians). Its Result keeps the Gaussian
// q(u) = N(Mean, Cov) and adds Constrained: the mean, sd and quantiles of
// each coordinate's x under q, with the method that computed them named.

// Transform is a constrained latent's map x = T(u), as generated code
// states it: Kind is "lower" (x = Lo + exp(u)), "upper" (x = Hi − exp(u))
// or "lower-upper" (x = Lo + (Hi − Lo)·logistic(u)).
type Transform struct {
	Kind   string
	Lo, Hi float64
}

// Constrained summarizes x = T(u) coordinate by coordinate under the
// Gaussian q(u) it belongs to. The quantiles are exact (T is monotone:
// they are the Gaussian's quantiles mapped through T); Method says how the
// means and sds were computed.
type Constrained struct {
	// Transform is the map: "lower", "upper" or "lower-upper".
	Transform string `json:"transform"`
	// Lower and Upper are the bounds (absent when unbounded).
	Lower *float64 `json:"lower,omitempty"`
	Upper *float64 `json:"upper,omitempty"`
	// Method names how Mean and SD were computed, and the quantiles.
	Method string    `json:"method"`
	Mean   []float64 `json:"mean"`
	SD     []float64 `json:"sd"`
	Q05    []float64 `json:"q05"`
	Q50    []float64 `json:"q50"`
	Q95    []float64 `json:"q95"`
}

// GaussHermiteNodes is the number of nodes of the Gauss–Hermite rule that
// computes the moments of x = T(u) where no closed form is used.
const GaussHermiteNodes = 64

// Constrain sets g.Constrained to the summary of x = T(u) under g, and
// returns g. It panics on an unknown Kind (generated code names only
// those above).
func (g *Gaussian) Constrain(t Transform) *Gaussian {
	n := len(g.Mean)
	c := &Constrained{Transform: t.Kind, Mean: make([]float64, n), SD: make([]float64, n),
		Q05: make([]float64, n), Q50: make([]float64, n), Q95: make([]float64, n)}
	lo, hi := t.Lo, t.Hi
	var x func(u float64) float64
	switch t.Kind {
	case "lower":
		c.Lower = &lo
		x = func(u float64) float64 { return lo + math.Exp(u) }
		c.Method = "mean and sd: closed form (log-normal moments); quantiles: exact (Gaussian quantiles of u mapped through x = lower + exp(u))"
	case "upper":
		c.Upper = &hi
		x = func(u float64) float64 { return hi - math.Exp(u) }
		c.Method = "mean and sd: closed form (log-normal moments); quantiles: exact (Gaussian quantiles of u mapped through x = upper − exp(u))"
	case "lower-upper":
		c.Lower, c.Upper = &lo, &hi
		x = func(u float64) float64 { return lo + (hi-lo)*Logistic(u) }
		c.Method = fmt.Sprintf("mean and sd: Gauss–Hermite quadrature (%d nodes); quantiles: exact (Gaussian quantiles of u mapped through x = lower + (upper − lower)·logistic(u))", GaussHermiteNodes)
	default:
		panic(fmt.Sprintf("runtime: unknown transform %q", t.Kind))
	}
	z95 := distuv.UnitNormal.Quantile(0.95)
	for i := 0; i < n; i++ {
		mu, sd := g.Mean[i], math.Sqrt(g.Cov[i][i])
		a, b, m := x(mu-z95*sd), x(mu+z95*sd), x(mu)
		if b < a { // a decreasing map
			a, b = b, a
		}
		c.Q05[i], c.Q50[i], c.Q95[i] = a, m, b
		switch t.Kind {
		case "lower", "upper":
			// exp(u) is log-normal: mean exp(μ + σ²/2), variance
			// (exp(σ²) − 1) exp(2μ + σ²)
			s2 := sd * sd
			e := math.Exp(mu + s2/2)
			c.SD[i] = math.Sqrt(math.Expm1(s2)) * e
			if t.Kind == "lower" {
				c.Mean[i] = lo + e
			} else {
				c.Mean[i] = hi - e
			}
		default:
			c.Mean[i], c.SD[i] = GaussHermiteMoments(x, mu, sd)
		}
	}
	g.Constrained = c
	return g
}

// ConstrainedScalar is Constrained for a scalar latent: the summaries of
// x = T(u) under q(u) = N(Mean, SD²).
type ConstrainedScalar struct {
	Transform string   `json:"transform"`
	Lower     *float64 `json:"lower,omitempty"`
	Upper     *float64 `json:"upper,omitempty"`
	Method    string   `json:"method"`
	Mean      float64  `json:"mean"`
	SD        float64  `json:"sd"`
	Q05       float64  `json:"q05"`
	Q50       float64  `json:"q50"`
	Q95       float64  `json:"q95"`
}

// Constrain sets g.Constrained to the summary of x = T(u) under g, as
// Gaussian.Constrain does for each coordinate of a vector, and returns g.
func (g *Normal) Constrain(t Transform) *Normal {
	c := (&Gaussian{Mean: []float64{g.Mean}, Cov: [][]float64{{g.SD * g.SD}}}).Constrain(t).Constrained
	g.Constrained = &ConstrainedScalar{Transform: c.Transform, Lower: c.Lower, Upper: c.Upper, Method: c.Method,
		Mean: c.Mean[0], SD: c.SD[0], Q05: c.Q05[0], Q50: c.Q50[0], Q95: c.Q95[0]}
	return g
}

// GaussHermiteMoments returns the mean and sd of f(u) for u ~ N(mu, sd²)
// by the Gauss–Hermite rule of GaussHermiteNodes nodes.
func GaussHermiteMoments(f func(float64) float64, mu, sd float64) (mean, stdev float64) {
	nodes, weights := gaussHermite()
	var m1 float64
	for k, z := range nodes {
		m1 += weights[k] / math.SqrtPi * f(mu+math.Sqrt2*sd*z)
	}
	// the variance about the mean, computed as a second pass for accuracy
	var s float64
	for k, z := range nodes {
		d := f(mu+math.Sqrt2*sd*z) - m1
		s += weights[k] / math.SqrtPi * d * d
	}
	return m1, math.Sqrt(s)
}

var (
	ghOnce             sync.Once
	ghNodes, ghWeights []float64
)

// gaussHermite returns the nodes and weights of the physicists'
// Gauss–Hermite rule of GaussHermiteNodes nodes (∫ e^{−z²} f(z) dz ≈
// Σ w_k f(z_k)), computed once by Newton's method on the orthonormal
// Hermite recurrence (Numerical Recipes, gauher).
func gaussHermite() ([]float64, []float64) {
	ghOnce.Do(func() {
		n := GaussHermiteNodes
		x, w := make([]float64, n), make([]float64, n)
		const pim4 = 0.7511255444649425 // π^(−1/4)
		m := (n + 1) / 2
		var z float64
		for i := 0; i < m; i++ {
			switch i {
			case 0:
				z = math.Sqrt(float64(2*n+1)) - 1.85575*math.Pow(float64(2*n+1), -0.16667)
			case 1:
				z -= 1.14 * math.Pow(float64(n), 0.426) / z
			case 2:
				z = 1.86*z - 0.86*x[0]
			case 3:
				z = 1.91*z - 0.91*x[1]
			default:
				z = 2*z - x[i-2]
			}
			var pp float64
			for it := 0; it < 100; it++ {
				p1, p2 := pim4, 0.0
				for j := 1; j <= n; j++ {
					p3 := p2
					p2 = p1
					p1 = z*math.Sqrt(2/float64(j))*p2 - math.Sqrt(float64(j-1)/float64(j))*p3
				}
				pp = math.Sqrt(2*float64(n)) * p2
				z1 := z
				z = z1 - p1/pp
				if math.Abs(z-z1) <= 1e-15*math.Max(1, math.Abs(z)) {
					break
				}
			}
			x[i], x[n-1-i] = z, -z
			w[i] = 2 / (pp * pp)
			w[n-1-i] = w[i]
		}
		ghNodes, ghWeights = x, w
	})
	return ghNodes, ghWeights
}
