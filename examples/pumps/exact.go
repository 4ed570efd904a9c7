package main

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// The priors of pumps.vi.
const (
	AlphaPriorRate                = 1.0      // alpha ~ Exponential(1)
	BetaPriorShape, BetaPriorRate = 0.1, 1.0 // beta ~ Gamma(0.1, 1)
)

// The grid of Exact over (a, b) = (log alpha, log beta): steps of GridStep
// over [aLo, aHi] × [bLo, bHi]. The posterior density in (a, b) is smooth
// (its sd is about 0.4 in a and 0.6 in b) and negligible at every edge, so
// the trapezoid rule on this grid is exact to far more digits than are
// printed (TestExactGrid halves the step).
const (
	aLo, aHi, bLo, bHi = -8.0, 4.0, -10.0, 5.0
	GridStep           = 0.05
)

// Exact returns the exact posterior of the pumps model for failures y and
// times t. With the rates integrated out each y[i] is negative binomial
// given (alpha, beta):
//
//	p(y_i | α, β) = Γ(α + y_i) / (Γ(α) y_i!) · (β/(β + t_i))^α · (t_i/(β + t_i))^(y_i)
//
// so the posterior of (log alpha, log beta) is known up to a constant and
// is integrated on a grid; given (alpha, beta), theta_i ~ Gamma(α + y_i,
// β + t_i). Quantiles of alpha and beta are those of the grid's marginals;
// those of theta_i of the mixture of Gammas (by bisection).
func Exact(y []int, t []float64) (*Posterior, error) { return exactOn(y, t, GridStep) }

// exactOn is Exact on the grid of step gridStep.
func exactOn(y []int, t []float64, gridStep float64) (*Posterior, error) {
	if len(y) != len(t) || len(y) == 0 {
		return nil, fmt.Errorf("exact posterior: %d counts and %d times", len(y), len(t))
	}
	na := int(math.Round((aHi-aLo)/gridStep)) + 1
	nb := int(math.Round((bHi-bLo)/gridStep)) + 1
	logw := make([]float64, na*nb)
	best := math.Inf(-1)
	for i := range na {
		a := aLo + float64(i)*gridStep
		alpha := math.Exp(a)
		lga, _ := math.Lgamma(alpha)
		for j := range nb {
			b := bLo + float64(j)*gridStep
			beta := math.Exp(b)
			// priors with the Jacobians of alpha = e^a, beta = e^b
			lp := -AlphaPriorRate*alpha + a + BetaPriorShape*b - BetaPriorRate*beta
			for k, yk := range y {
				n := float64(yk)
				lg, _ := math.Lgamma(alpha + n)
				lp += lg - lga + alpha*(b-math.Log(beta+t[k])) + n*(math.Log(t[k])-math.Log(beta+t[k]))
			}
			logw[i*nb+j] = lp
			best = math.Max(best, lp)
		}
	}
	w := make([]float64, na*nb)
	total := 0.0
	for i := range na {
		for j := range nb {
			v := math.Exp(logw[i*nb+j] - best)
			if i == 0 || i == na-1 {
				v /= 2
			}
			if j == 0 || j == nb-1 {
				v /= 2
			}
			w[i*nb+j] = v
			total += v
		}
	}
	if !(total > 0) || math.IsInf(total, 0) {
		return nil, fmt.Errorf("exact posterior: the integral over (alpha, beta) is %v", total)
	}
	wa, wb := make([]float64, na), make([]float64, nb)
	for i := range na {
		for j := range nb {
			w[i*nb+j] /= total
			wa[i] += w[i*nb+j]
			wb[j] += w[i*nb+j]
		}
	}
	as, bs := make([]float64, na), make([]float64, nb)
	for i := range as {
		as[i] = aLo + float64(i)*gridStep
	}
	for j := range bs {
		bs[j] = bLo + float64(j)*gridStep
	}
	p := &Posterior{Alpha: logGridSummary(wa, as), Beta: logGridSummary(wb, bs)}
	// theta_i: a mixture of Gamma(α + y_i, β + t_i) over the grid; the
	// points of weight below 1e-12 are left out of the quantiles (they
	// move a quantile by less than that).
	for k, yk := range y {
		var e1, e2 float64
		var comp []distuv.Gamma
		var cw []float64
		for i := range na {
			alpha := math.Exp(as[i])
			for j := range nb {
				v := w[i*nb+j]
				if v == 0 {
					continue
				}
				shape, rate := alpha+float64(yk), math.Exp(bs[j])+t[k]
				e1 += v * shape / rate
				e2 += v * shape * (shape + 1) / (rate * rate)
				if v > 1e-12 {
					comp = append(comp, distuv.Gamma{Alpha: shape, Beta: rate})
					cw = append(cw, v)
				}
			}
		}
		s := Summary{Mean: e1, SD: math.Sqrt(e2 - e1*e1)}
		cdf := func(x float64) float64 {
			c := 0.0
			for n, g := range comp {
				c += cw[n] * g.CDF(x)
			}
			return c
		}
		pdf := func(x float64) float64 {
			d := 0.0
			for n, g := range comp {
				d += cw[n] * g.Prob(x)
			}
			return d
		}
		// Newton on the mixture's CDF from the mean, kept inside a
		// bracket [lo, hi] that bisection shrinks when a step leaves it.
		q := func(pr float64) float64 {
			lo, hi := 0.0, e1+30*s.SD
			x := e1
			for range 100 {
				c := cdf(x)
				if c < pr {
					lo = x
				} else {
					hi = x
				}
				next := x - (c-pr)/pdf(x)
				if !(next > lo && next < hi) {
					next = (lo + hi) / 2
				}
				if math.Abs(next-x) < 1e-12*x {
					return next
				}
				x = next
			}
			return x
		}
		s.Q05, s.Q50, s.Q95 = q(0.05), q(0.5), q(0.95)
		p.Theta = append(p.Theta, s)
	}
	return p, nil
}

// logGridSummary summarizes x = e^u for u with weights w on the grid us.
func logGridSummary(w, us []float64) Summary {
	var e1, e2 float64
	for k, u := range us {
		e1 += w[k] * math.Exp(u)
		e2 += w[k] * math.Exp(2*u)
	}
	return Summary{Mean: e1, SD: math.Sqrt(e2 - e1*e1),
		Q05: math.Exp(gridQuantile(w, us, 0.05)), Q50: math.Exp(gridQuantile(w, us, 0.5)), Q95: math.Exp(gridQuantile(w, us, 0.95))}
}

// gridQuantile is the p-quantile of the distribution with weights w on the
// equally spaced points x: each weight is spread evenly over the cell of
// width h around its point, so the quantile is second-order accurate in h.
func gridQuantile(w, x []float64, p float64) float64 {
	h := x[1] - x[0]
	c := 0.0
	for k := range w {
		if c+w[k] >= p {
			return x[k] - h/2 + (p-c)/w[k]*h
		}
		c += w[k]
	}
	return x[len(x)-1]
}
