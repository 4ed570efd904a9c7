package main

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/examples/ar2/ar2"
	"github.com/vigen-go/vigen/runtime"
)

// Predict on a new series: the observations are y[3..T] (the statement's
// loop runs over 3:T), each scored at q's means with σ = exp(E_q[log σ]),
// the transform of the mean of q on the unconstrained scale, as computed
// here by hand; the means are the one-step forecasts α + β₁y[t−1] + β₂y[t−2].
// y is read as its own lag, so it cannot be left out.
func TestPredictNewSeries(t *testing.T) {
	res, err := ar2.Fit(context.Background(), Synthetic(1, 200, DefaultTruth), ar2.Options{})
	if err != nil {
		t.Fatal(err)
	}
	test := Synthetic(2, 50, DefaultTruth)
	p, err := ar2.Predict(res, test, runtime.PredictSettings{Draws: 200, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	pv := p.Vars[0]
	if pv.First[0] != 3 || pv.Shape[0] != 48 || len(pv.PlugInLogDensity) != 48 || len(pv.LogPredictive) != 48 || p.Score.Observations != 48 {
		t.Fatalf("observations %v from %v, %d scored", pv.Shape, pv.First, p.Score.Observations)
	}
	a, b1, b2 := res.Latent.Alpha.Mean, res.Latent.Beta1.Mean, res.Latent.Beta2.Mean
	sigma := math.Exp(res.Latent.Sigma.Mean)
	for k := range 48 {
		tt := k + 2 // 0-based t
		m := a + b1*test.Y[tt-1] + b2*test.Y[tt-2]
		lp := -0.5*math.Pow((test.Y[tt]-m)/sigma, 2) - math.Log(sigma) - 0.5*math.Log(2*math.Pi)
		if d := pv.PlugInLogDensity[k] - lp; math.Abs(d) > 1e-12 {
			t.Errorf("y[%d]: plug-in log density %v, by hand %v", tt+1, pv.PlugInLogDensity[k], lp)
		}
		if d := pv.PlugInMean[k] - m; math.Abs(d) > 1e-12 {
			t.Errorf("y[%d]: plug-in mean %v, by hand %v", tt+1, pv.PlugInMean[k], m)
		}
	}
	if _, err := ar2.Predict(res, &ar2.Data{T: 10}, runtime.PredictSettings{}); err == nil || !strings.Contains(err.Error(), `"y" is missing`) {
		t.Errorf("a series without y: %v", err)
	}
}
