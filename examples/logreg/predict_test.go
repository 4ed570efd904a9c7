package main

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/examples/logreg/logreg"
	"github.com/vigen-go/vigen/runtime"
)

// gaussExpect is E[f(u)] for u ~ N(m, s²), by the trapezoid rule over
// ±12 sd on 4001 points: exact to rounding for the smooth f here.
func gaussExpect(f func(u float64) float64, m, s float64) float64 {
	const n = 4000
	h := 24.0 / n
	total := 0.0
	for k := 0; k <= n; k++ {
		z := -12 + float64(k)*h
		w := h
		if k == 0 || k == n {
			w /= 2
		}
		total += w * f(m+s*z) * math.Exp(-z*z/2)
	}
	return total / math.Sqrt(2*math.Pi)
}

// The generated Predict of logreg.vi, on rows the fit has not seen: at q's
// means it gives p(y = 1) = σ(xᵀμ) and the log density of the label (as
// Evaluate computes them by hand); over draws from q(θ) = N(μ, Σ) its log
// predictive density of each label is log E[σ(±xᵀθ)], xᵀθ ~ N(xᵀμ, xᵀΣx),
// computed here by quadrature, within five Monte Carlo standard errors.
// Left without y, the rows get the same means and no scores.
func TestPredictAgainstQuadrature(t *testing.T) {
	d, _ := Synthetic(3, 400, 4)
	train := &logreg.Data{X: d.X[:300], Y: d.Y[:300]}
	test := &logreg.Data{X: d.X[300:], Y: d.Y[300:]}
	res, err := logreg.Fit(context.Background(), train, logreg.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const draws = 20000
	p, err := logreg.Predict(res, test, runtime.PredictSettings{Draws: draws, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	pv := p.Vars[0]
	if pv.Var != "y" || pv.Family != "Bernoulli" || !pv.Observed || len(pv.PlugInMean) != 100 || !strings.HasPrefix(pv.Statement, "logreg.vi:") {
		t.Fatalf("predictions of %+v", pv)
	}
	mu := res.Latent.Theta.Mean
	cov := res.Latent.Theta.Cov
	hand := Evaluate(mu, test)
	if d := p.Score.MeanPlugIn - hand.LogLik; math.Abs(d) > 1e-12 {
		t.Errorf("plug-in mean log density %v, Evaluate's %v", p.Score.MeanPlugIn, hand.LogLik)
	}
	worst := 0.0
	for i, row := range test.X {
		m, v := 0.0, 0.0
		for a := range row {
			m += row[a] * mu[a]
			for b := range row {
				v += row[a] * cov[a][b] * row[b]
			}
		}
		if d := pv.PlugInMean[i] - runtime.Logistic(m); math.Abs(d) > 1e-12 {
			t.Errorf("row %d: plug-in p(y = 1) %v, σ(xᵀμ) %v", i, pv.PlugInMean[i], runtime.Logistic(m))
		}
		sign := 1.0
		if test.Y[i] == 0 {
			sign = -1
		}
		lik := func(u float64) float64 { return runtime.Logistic(sign * u) }
		ep := gaussExpect(lik, m, math.Sqrt(v))
		ep2 := gaussExpect(func(u float64) float64 { return lik(u) * lik(u) }, m, math.Sqrt(v))
		se := math.Sqrt((ep2-ep*ep)/draws) / ep
		z := (pv.LogPredictive[i] - math.Log(ep)) / se
		worst = max(worst, math.Abs(z))
		if math.Abs(z) > 5 {
			t.Errorf("row %d: log predictive density %v, by quadrature %v (%.1f standard errors)", i, pv.LogPredictive[i], math.Log(ep), z)
		}
		e1 := gaussExpect(runtime.Logistic, m, math.Sqrt(v))
		if d := pv.Mean[i] - e1; math.Abs(d) > 5*math.Sqrt(e1*(1-e1)/draws) {
			t.Errorf("row %d: Monte Carlo p(y = 1) %v, by quadrature %v", i, pv.Mean[i], e1)
		}
	}
	t.Logf("worst row %.2f standard errors; mean log predictive density %.5f, plug-in %.5f", worst, *p.Score.MeanLPPD, p.Score.MeanPlugIn)

	unlabeled := &logreg.Data{X: test.X}
	u, err := logreg.Predict(res, unlabeled, runtime.PredictSettings{Draws: -1})
	if err != nil {
		t.Fatal(err)
	}
	if u.Score != nil || u.Vars[0].Observed || u.Vars[0].PlugInLogDensity != nil || len(u.Vars[0].PlugInMean) != 100 || u.Vars[0].PlugInMean[7] != pv.PlugInMean[7] {
		t.Errorf("without y: %+v", u.Vars[0])
	}
	if _, err := logreg.Predict(res, &logreg.Data{X: [][]float64{{1, 2, 3}}}, runtime.PredictSettings{}); err == nil || !strings.Contains(err.Error(), "P") {
		t.Errorf("rows of 3 columns for a fit of 4: %v", err)
	}
}
