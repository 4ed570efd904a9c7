package runtime

import (
	"context"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

// normalModel is y_i ~ Normal(θ + c_i, 1) with q(θ) = N(mu, v): the
// predictive of y_i is N(mu + c_i, 1 + v) exactly.
func normalModel(mu, v float64, y, c []float64, observed bool) PredictModel {
	point := []float64{0}
	return PredictModel{Model: "normal",
		Factors: []PointFactor{{Latent: "theta", Units: 1, Dim: 1, Mean: []float64{mu}, Cov: []float64{v}, Point: point}},
		Stmts: []PredictStmt{{Var: "y", Statement: "normal.vi:3:3: y[n] ~ Normal(theta + c[n], 1)", Family: "Normal",
			Dims: []int{len(y)}, From: []int{0}, To: []int{len(y)}, Observed: observed, HasMean: true,
			Eval: func(lp, mean []float64) {
				for i := range y {
					m := point[0] + c[i]
					lp[i] = -0.5*(y[i]-m)*(y[i]-m) - 0.5*math.Log(2*math.Pi)
					mean[i] = m
				}
			}}}}
}

func logNormalDensity(y, m, v float64) float64 {
	return -0.5*(y-m)*(y-m)/v - 0.5*math.Log(2*math.Pi*v)
}

// The plug-in log density is log N(y; μ + c, 1); the Monte Carlo log
// predictive density converges to log N(y; μ + c, 1 + v), within a few
// Monte Carlo standard errors (computed from the exact moments of
// p(y | θ) under q).
func TestPredictNormalAgainstExact(t *testing.T) {
	mu, v := 0.3, 0.49
	y := []float64{-1, 0.2, 0.5, 2.5}
	c := []float64{0, 0.1, -0.4, 1}
	const draws = 40000
	p, err := Predict(normalModel(mu, v, y, c, true), PredictSettings{Draws: draws, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	pv := p.Vars[0]
	sumPlug, sumExact := 0.0, 0.0
	for i := range y {
		m := mu + c[i]
		if d := pv.PlugInLogDensity[i] - logNormalDensity(y[i], m, 1); math.Abs(d) > 1e-12 {
			t.Errorf("plug-in log density %d off by %g", i, d)
		}
		if pv.PlugInMean[i] != m {
			t.Errorf("plug-in mean %d = %v, want %v", i, pv.PlugInMean[i], m)
		}
		exact := logNormalDensity(y[i], m, 1+v)
		// p(y | θ) = N(y; θ + c, 1) has E = N(y; m, 1 + v) and
		// E[p²] = N(y; m, ½ + v)/(2√π); the Monte Carlo mean of p has sd
		// √((E[p²] − E[p]²)/S), which log turns into that over E[p].
		ep := math.Exp(exact)
		ep2 := math.Exp(logNormalDensity(y[i], m, 0.5+v)) / (2 * math.Sqrt(math.Pi))
		se := math.Sqrt((ep2-ep*ep)/draws) / ep
		if d := pv.LogPredictive[i] - exact; math.Abs(d) > 5*se {
			t.Errorf("log predictive density %d = %v, exact %v: %.2g off, %.1f standard errors", i, pv.LogPredictive[i], exact, d, d/se)
		}
		if d := pv.Mean[i] - m; math.Abs(d) > 5*math.Sqrt(v/draws) {
			t.Errorf("Monte Carlo mean %d = %v, want %v", i, pv.Mean[i], m)
		}
		sumPlug += pv.PlugInLogDensity[i]
		sumExact += pv.LogPredictive[i]
	}
	s := p.Score
	if s == nil || s.Observations != len(y) || math.Abs(s.PlugIn-sumPlug) > 1e-12 || math.Abs(*s.LPPD-sumExact) > 1e-12 ||
		math.Abs(s.MeanPlugIn-sumPlug/4) > 1e-12 || math.Abs(*s.MeanLPPD-sumExact/4) > 1e-12 {
		t.Errorf("score %+v does not sum the observations (plug-in %v, lppd %v)", s, sumPlug, sumExact)
	}
	if !strings.Contains(p.String(), "4 observations") {
		t.Errorf("String() = %q", p.String())
	}
	again, err := Predict(normalModel(mu, v, y, c, true), PredictSettings{Draws: draws, Seed: 7})
	if err != nil || !reflect.DeepEqual(again, p) {
		t.Errorf("the same seed gave another prediction (%v)", err)
	}
}

// Without observed values there are means and no scores; with no draws,
// the plug-in alone.
func TestPredictUnobservedAndPlugInOnly(t *testing.T) {
	y := []float64{0, 0}
	p, err := Predict(normalModel(1, 1, y, []float64{0, 1}, false), PredictSettings{Draws: 10})
	if err != nil {
		t.Fatal(err)
	}
	if p.Score != nil || p.Vars[0].PlugInLogDensity != nil || p.Vars[0].LogPredictive != nil || len(p.Vars[0].Mean) != 2 || p.Vars[0].Observed {
		t.Errorf("unobserved: %+v, score %+v", p.Vars[0], p.Score)
	}
	p, err = Predict(normalModel(1, 1, y, []float64{0, 1}, true), PredictSettings{Draws: -1})
	if err != nil {
		t.Fatal(err)
	}
	if p.Draws != 0 || p.Vars[0].Mean != nil || p.Vars[0].LogPredictive != nil || p.Score.LPPD != nil || len(p.Vars[0].PlugInLogDensity) != 2 {
		t.Errorf("plug-in only: %+v, score %+v", p.Vars[0], p.Score)
	}
}

// A statement over part of its size (for t in 3:T, for t in 1:T-1) and
// over two dimensions reports the block of observations, 1-based,
// row-major.
func TestPredictBlocks(t *testing.T) {
	p, err := Predict(PredictModel{Stmts: []PredictStmt{
		{Var: "y", Dims: []int{5}, From: []int{2}, To: []int{5}, Observed: true, HasMean: true, Eval: func(lp, mean []float64) {
			for i := range lp {
				lp[i], mean[i] = -float64(i), float64(i)
			}
		}},
		{Var: "z", Dims: []int{2, 3}, From: []int{0, 0}, To: []int{2, 3}, Observed: true, Eval: func(lp, _ []float64) {
			for i := range lp {
				lp[i] = -float64(10 + i)
			}
		}},
		{Var: "w", Dims: []int{4}, From: []int{0}, To: []int{3}, Observed: true, Eval: func(lp, _ []float64) {
			for i := range lp {
				lp[i] = -float64(20 + i)
			}
		}},
	}}, PredictSettings{Draws: 3})
	if err != nil {
		t.Fatal(err)
	}
	y, z := p.Vars[0], p.Vars[1]
	if !reflect.DeepEqual(y.First, []int{3}) || !reflect.DeepEqual(y.Shape, []int{3}) || !reflect.DeepEqual(y.PlugInMean, []float64{2, 3, 4}) ||
		!reflect.DeepEqual(y.PlugInLogDensity, []float64{-2, -3, -4}) || y.LogPredictive != nil || !p.Exact {
		t.Errorf("ranged statement: %+v", y)
	}
	if !reflect.DeepEqual(z.First, []int{1, 1}) || !reflect.DeepEqual(z.Shape, []int{2, 3}) ||
		!reflect.DeepEqual(z.PlugInLogDensity, []float64{-10, -11, -12, -13, -14, -15}) || z.PlugInMean != nil {
		t.Errorf("two-dimensional statement: %+v", z)
	}
	if w := p.Vars[2]; !reflect.DeepEqual(w.First, []int{1}) || !reflect.DeepEqual(w.Shape, []int{3}) || !reflect.DeepEqual(w.PlugInLogDensity, []float64{-20, -21, -22}) {
		t.Errorf("statement stopping before the end (for t in 1:T-1): %+v", w)
	}
	if p.Score.Observations != 12 {
		t.Errorf("%d observations, want 12", p.Score.Observations)
	}
}

// A covariance that is not positive definite and a log density that is
// NaN are errors that say where.
func TestPredictErrors(t *testing.T) {
	m := normalModel(0, -1, []float64{1}, []float64{0}, true)
	if _, err := Predict(m, PredictSettings{}); err == nil || !strings.Contains(err.Error(), "q(theta)") {
		t.Errorf("negative variance: %v", err)
	}
	m = normalModel(0, 1, []float64{math.NaN()}, []float64{0}, true)
	if _, err := Predict(m, PredictSettings{}); err == nil || !strings.Contains(err.Error(), "y[1]") || !strings.Contains(err.Error(), "q's means") {
		t.Errorf("NaN log density: %v", err)
	}
}

// No observations (a series shorter than its lags) is no score, and said
// so; observations that read no latent are exact, with no draws.
func TestPredictEmptyAndExact(t *testing.T) {
	st := PredictStmt{Var: "y", Dims: []int{2}, From: []int{2}, To: []int{2}, Observed: true, Eval: func(lp, _ []float64) {}}
	p, err := Predict(PredictModel{Stmts: []PredictStmt{st}}, PredictSettings{})
	if err != nil || p.Score != nil || !strings.Contains(p.String(), "no observations to score") {
		t.Errorf("empty: %+v, %q (%v)", p, p.String(), err)
	}
	st.From = []int{0}
	p, err = Predict(PredictModel{Stmts: []PredictStmt{st}}, PredictSettings{})
	if err != nil || !p.Exact || p.Draws != 0 || p.Score.Observations != 2 || !strings.Contains(p.String(), "exact") {
		t.Errorf("no latent: %+v, %q (%v)", p, p.String(), err)
	}
}

// Predict stops at the first draw after Cancel is closed, with an error
// wrapping context.Canceled (the command's interrupt); more draws than
// MaxDraws are refused before any.
func TestPredictCanceledAndBounded(t *testing.T) {
	m := normalModel(0, 1, []float64{0.5}, []float64{0}, true)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	evals := 0
	eval := m.Stmts[0].Eval
	m.Stmts[0].Eval = func(lp, mean []float64) {
		evals++
		if evals == 2 { // the plug-in, then the first draw
			cancel()
		}
		eval(lp, mean)
	}
	_, err := Predict(m, PredictSettings{Draws: MaxDraws, Seed: 1, Cancel: ctx.Done()})
	if !errors.Is(err, context.Canceled) || evals != 2 {
		t.Errorf("canceled at the first draw: %v after %d evaluations; want context.Canceled after 2", err, evals)
	}
	if _, err := Predict(m, PredictSettings{Draws: 2e9}); err == nil || !strings.Contains(err.Error(), "at most 10000000 draws") {
		t.Errorf("2e9 draws: %v, want a refusal naming the bound", err)
	}
}
