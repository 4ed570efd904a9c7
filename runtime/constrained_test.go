package runtime

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The quadrature reproduces the closed-form log-normal moments, and the
// summaries of each transform match the closed form or Monte Carlo.
func TestGaussHermiteLogNormal(t *testing.T) {
	for _, c := range []struct{ mu, sd float64 }{{0, 1}, {1.5, 0.3}, {-2, 0.05}, {0.2, 1.5}} {
		m, s := GaussHermiteMoments(math.Exp, c.mu, c.sd)
		wm := math.Exp(c.mu + c.sd*c.sd/2)
		ws := math.Sqrt(math.Expm1(c.sd*c.sd)) * wm
		if math.Abs(m-wm) > 1e-10*wm || math.Abs(s-ws) > 1e-8*ws {
			t.Errorf("N(%g, %g²): GH mean %g sd %g, want %g %g", c.mu, c.sd, m, s, wm, ws)
		}
	}
}

func TestConstrainSummaries(t *testing.T) {
	g := NewGaussian("MvNormal", []float64{0.3, -1.2}, []float64{0.25, 0.05, 0.05, 0.64})
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tr := range []Transform{{Kind: "lower", Lo: 2}, {Kind: "upper", Hi: -1}, {Kind: "lower-upper", Lo: -1, Hi: 3}} {
		c := g.Constrain(tr).Constrained
		var x func(float64) float64
		switch tr.Kind {
		case "lower":
			x = func(u float64) float64 { return tr.Lo + math.Exp(u) }
		case "upper":
			x = func(u float64) float64 { return tr.Hi - math.Exp(u) }
		default:
			x = func(u float64) float64 { return tr.Lo + (tr.Hi-tr.Lo)/(1+math.Exp(-u)) }
		}
		for i := range g.Mean {
			const n = 400000
			var s1, s2 float64
			sd := math.Sqrt(g.Cov[i][i])
			for k := 0; k < n; k++ {
				v := x(g.Mean[i] + sd*rng.NormFloat64())
				s1 += v
				s2 += v * v
			}
			m := s1 / n
			v := s2/n - m*m
			se := math.Sqrt(v / n)
			if math.Abs(c.Mean[i]-m) > 5*se {
				t.Errorf("%s [%d]: mean %g, Monte Carlo %g ± %g", tr.Kind, i, c.Mean[i], m, se)
			}
			if math.Abs(c.SD[i]-math.Sqrt(v)) > 0.01*math.Sqrt(v) {
				t.Errorf("%s [%d]: sd %g, Monte Carlo %g", tr.Kind, i, c.SD[i], math.Sqrt(v))
			}
			if q := x(g.Mean[i]); c.Q50[i] != q {
				t.Errorf("%s [%d]: median %g, want %g", tr.Kind, i, c.Q50[i], q)
			}
			if !(c.Q05[i] < c.Q50[i] && c.Q50[i] < c.Q95[i]) {
				t.Errorf("%s [%d]: quantiles %g %g %g not increasing", tr.Kind, i, c.Q05[i], c.Q50[i], c.Q95[i])
			}
		}
		if c.Method == "" {
			t.Errorf("%s: no method named", tr.Kind)
		}
	}
}
