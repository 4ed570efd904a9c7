package runtime

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// A constrained latent (real<lower=a>[P], real<lower=a, upper=b>[P]) is
// fitted on the unconstrained scale u, with x = T(u) (derive/transform.go
// states the maps and their log-Jacobians). Its Result keeps the Gaussian
// q(u) = N(Mean, Cov) and adds Constrained: the mean, sd and quantiles of
// each coordinate's x under q, with the method that computed them named.

// Transform is a constrained latent's map x = T(u), as generated code
// states it: Kind is "lower" (x = Lo + exp(u)), "upper" (x = Hi − exp(u)),
// "lower-upper" (x = Lo + (Hi − Lo)·logistic(u)), "ordered" (x_1 = u_1,
// x_k = x_{k−1} + exp(u_k)) or "positive_ordered" (x_1 = exp(u_1),
// x_k = x_{k−1} + exp(u_k)).
type Transform struct {
	Kind   string
	Lo, Hi float64
}

// CheckBounds checks the bounds of a constrained latent that read consts
// or sizes, whose values the data give, when the data are loaded: each
// bound of t's Kind must be finite, and a lower bound below an upper one
// (the checker refuses literal bounds that are not; a const from the data
// can make `<lower=a, upper=b>` empty, and the fit would then divide by
// Hi − Lo = 0 or map u outside the bounds). name is the latent's, text its
// bounds as declared and at its position (file:line:col), for the message.
func CheckBounds(name, text, at string, t Transform) error {
	lower, upper := t.Kind == "lower" || t.Kind == "lower-upper", t.Kind == "upper" || t.Kind == "lower-upper"
	for _, b := range []struct {
		given bool
		which string
		v     float64
	}{{lower, "lower", t.Lo}, {upper, "upper", t.Hi}} {
		if b.given && (math.IsInf(b.v, 0) || math.IsNaN(b.v)) {
			return fmt.Errorf("latent %s (%s): its %s bound in %s is %v with the data's values; a bound must be a finite number", name, at, b.which, text, b.v)
		}
	}
	if lower && upper && !(t.Lo < t.Hi) {
		rel := "equal"
		if t.Lo > t.Hi {
			rel = "reversed"
		}
		return fmt.Errorf("latent %s (%s): its bounds %s are %s with the data's values, lower = %v and upper = %v: the lower bound must be below the upper bound", name, at, text, rel, t.Lo, t.Hi)
	}
	return nil
}

// Constrained summarizes x = T(u) coordinate by coordinate under the
// Gaussian q(u) it belongs to. For the elementwise maps the quantiles are
// exact (T is monotone: they are the Gaussian's quantiles mapped through
// T); for the ordered maps they are Monte Carlo estimates from a fixed
// seed. Method says how each was computed.
type Constrained struct {
	// Transform is the map: "lower", "upper", "lower-upper", "ordered" or
	// "positive_ordered".
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

// Le is the step [a ≤ b] of two integer values (indices), which the
// ordered transforms' cumulative sums are written with.
func Le(a, b float64) float64 {
	if a <= b {
		return 1
	}
	return 0
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
	case "ordered", "positive_ordered":
		g.Constrained = constrainOrdered(g, t.Kind)
		return g
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
// by the Gauss–Hermite rule of GaussHermiteNodes nodes (Hermite).
func GaussHermiteMoments(f func(float64) float64, mu, sd float64) (mean, stdev float64) {
	r := Hermite(GaussHermiteNodes)
	var m1 float64
	for k, z := range r.X {
		m1 += r.W[k] * f(mu+math.Sqrt2*sd*z)
	}
	// the variance about the mean, computed as a second pass for accuracy
	var s float64
	for k, z := range r.X {
		d := f(mu+math.Sqrt2*sd*z) - m1
		s += r.W[k] * d * d
	}
	return m1, math.Sqrt(s)
}

// OrderedDraws is the number of draws from q(u), from a fixed seed, that
// estimate the quantiles of an ordered vector x = T(u).
const OrderedDraws = 40000

// constrainOrdered summarizes x = T(u) for the ordered transforms. With
// m_j = E[exp(u_j)] = exp(μ_j + Σ_jj/2), Cov(exp(u_i), exp(u_j)) =
// m_i m_j (exp(Σ_ij) − 1) and Cov(u_1, exp(u_j)) = Σ_1j m_j (Stein's
// lemma), the mean and variance of each x_k, a sum of u_1 (ordered) and
// log-normals, are exact; its quantiles are estimated from OrderedDraws
// draws of q(u) by a fixed seed, so the result is deterministic.
func constrainOrdered(g *Gaussian, kind string) *Constrained {
	n := len(g.Mean)
	c := &Constrained{Transform: kind, Mean: make([]float64, n), SD: make([]float64, n),
		Q05: make([]float64, n), Q50: make([]float64, n), Q95: make([]float64, n)}
	first := 0 // the first coordinate summed as exp(u_j)
	if kind == "ordered" {
		first = 1
	} else {
		zero := 0.0
		c.Lower = &zero
	}
	c.Method = fmt.Sprintf("mean and sd: closed form (moments of u_1 and log-normal sums); quantiles: Monte Carlo, %d draws of q(u) from a fixed seed mapped through x = %s", OrderedDraws, kind)
	m := make([]float64, n)
	for j := range m {
		m[j] = math.Exp(g.Mean[j] + g.Cov[j][j]/2)
	}
	for k := 0; k < n; k++ {
		var mean, v float64
		if first == 1 {
			mean, v = g.Mean[0], g.Cov[0][0]
			for j := 1; j <= k; j++ {
				v += 2 * g.Cov[0][j] * m[j]
			}
		}
		for i := first; i <= k; i++ {
			mean += m[i]
			for j := first; j <= k; j++ {
				v += m[i] * m[j] * math.Expm1(g.Cov[i][j])
			}
		}
		c.Mean[k], c.SD[k] = mean, math.Sqrt(math.Max(v, 0))
	}
	if n == 0 {
		return c
	}
	// draws u = μ + L z, L the Cholesky factor of Cov
	l := choleskyLower(g.Cov)
	rng := rand.New(rand.NewPCG(1, 2))
	draws := make([][]float64, n)
	for k := range draws {
		draws[k] = make([]float64, OrderedDraws)
	}
	z := make([]float64, n)
	for d := 0; d < OrderedDraws; d++ {
		for i := range z {
			z[i] = rng.NormFloat64()
		}
		x := 0.0
		for k := 0; k < n; k++ {
			u := g.Mean[k]
			for i := 0; i <= k; i++ {
				u += l[k][i] * z[i]
			}
			if k == 0 && first == 1 {
				x = u
			} else {
				x += math.Exp(u)
			}
			draws[k][d] = x
		}
	}
	for k := range draws {
		sort.Float64s(draws[k])
		c.Q05[k] = stat.Quantile(0.05, stat.LinInterp, draws[k], nil)
		c.Q50[k] = stat.Quantile(0.5, stat.LinInterp, draws[k], nil)
		c.Q95[k] = stat.Quantile(0.95, stat.LinInterp, draws[k], nil)
	}
	return c
}

// choleskyLower returns the lower Cholesky factor of the symmetric
// matrix a; a direction with no positive variance left (a singular or,
// by rounding, slightly indefinite a) gets a zero column.
func choleskyLower(a [][]float64) [][]float64 {
	n := len(a)
	l := make([][]float64, n)
	for i := range l {
		l[i] = make([]float64, n)
	}
	for j := 0; j < n; j++ {
		d := a[j][j]
		for k := 0; k < j; k++ {
			d -= l[j][k] * l[j][k]
		}
		if d <= 0 {
			continue
		}
		l[j][j] = math.Sqrt(d)
		for i := j + 1; i < n; i++ {
			s := a[i][j]
			for k := 0; k < j; k++ {
				s -= l[i][k] * l[j][k]
			}
			l[i][j] = s / l[j][j]
		}
	}
	return l
}
