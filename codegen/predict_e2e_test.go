package codegen

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vigen-go/vigen/runtime"
)

// predictVI has observations over two loops (y[n, k]) and an elementwise
// vector target per row (c[n] ~ PoissonLog(...), one observation per
// element), read through a vector latent, a scalar and a constrained
// scale.
const predictVI = `model pred
size N, K
data x : real[N]
data y : real[N, K]
data c : int[N, K]
latent m : real[K] nonconjugate laplace
latent b : real nonconjugate laplace
latent s : real<lower=0> nonconjugate laplace
m ~ Normal(0, 5)
b ~ Normal(0, 5)
s ~ HalfNormal(2)
for n in 1:N {
  for k in 1:K {
    y[n, k] ~ Normal(m[k] + b * x[n], s)
  }
  c[n] ~ PoissonLog(m + b * x[n])
}
`

var predictCase = fastTest("TestPredictTwoLoopsAndVectorTargets").driver("pred", predictVI, "fit_and_predict.go")

// The generated Predict's plug-in log densities and means, row-major over
// y[n, k] and over c[n]'s elements, equal the formulas written out here at
// q's means (s = exp of its unconstrained mean); the Monte Carlo run and
// the rows without observations work, the latter with K from the fit.
func TestPredictTwoLoopsAndVectorTargets(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	const n, k = 30, 3
	x := make([]float64, n)
	y := make([][]float64, n)
	c := make([][]int, n)
	for i := range x {
		x[i] = rng.NormFloat64()
		y[i] = make([]float64, k)
		c[i] = make([]int, k)
		for j := range k {
			y[i][j] = float64(j) + 0.5*x[i] + 0.3*rng.NormFloat64()
			c[i][j] = rng.IntN(4 + j)
		}
	}
	data, _ := json.Marshal(map[string]any{"x": x, "y": y, "c": c})
	raw := predictCase.run(t, data)
	var out []json.RawMessage
	if err := json.Unmarshal(raw, &out); err != nil || len(out) != 4 {
		t.Fatalf("driver output: %v\n%s", err, raw)
	}
	var res struct {
		Latent struct {
			M    runtime.Gaussian `json:"m"`
			B, S runtime.Normal
		} `json:"latent"`
	}
	var plug, mc, bare runtime.Prediction
	for i, v := range []any{&res, &plug, &mc, &bare} {
		if err := json.Unmarshal(out[i], v); err != nil {
			t.Fatal(err)
		}
	}
	m, b, s := res.Latent.M.Mean, res.Latent.B.Mean, math.Exp(res.Latent.S.Mean)
	if len(plug.Vars) != 2 || plug.Score.Observations != 2*n*k {
		t.Fatalf("predictions %+v", plug)
	}
	yv, cv := plug.Vars[0], plug.Vars[1]
	for i := range n {
		for j := range k {
			mu := m[j] + b*x[i]
			lp := -0.5*math.Pow((y[i][j]-mu)/s, 2) - math.Log(s) - 0.5*math.Log(2*math.Pi)
			if d := yv.PlugInLogDensity[i*k+j] - lp; math.Abs(d) > 1e-10 || math.Abs(yv.PlugInMean[i*k+j]-mu) > 1e-12 {
				t.Errorf("y[%d, %d]: %v and %v, by hand %v and %v", i+1, j+1, yv.PlugInLogDensity[i*k+j], yv.PlugInMean[i*k+j], lp, mu)
			}
			lg, _ := math.Lgamma(float64(c[i][j]) + 1)
			lpc := float64(c[i][j])*mu - math.Exp(mu) - lg
			if d := cv.PlugInLogDensity[i*k+j] - lpc; math.Abs(d) > 1e-10 || math.Abs(cv.PlugInMean[i*k+j]-math.Exp(mu)) > 1e-10 {
				t.Errorf("c[%d, %d]: %v and %v, by hand %v and %v", i+1, j+1, cv.PlugInLogDensity[i*k+j], cv.PlugInMean[i*k+j], lpc, math.Exp(mu))
			}
		}
	}
	if mc.Score == nil || mc.Score.LPPD == nil || len(mc.Vars[1].LogPredictive) != n*k || mc.Draws != 50 {
		t.Errorf("Monte Carlo predictions %+v", mc)
	}
	if bare.Score != nil || len(bare.Vars[0].PlugInMean) != 2*k || bare.Vars[0].Observed || bare.Vars[1].Observed ||
		math.Abs(bare.Vars[0].PlugInMean[k+2]-yv.PlugInMean[k+2]) > 1e-12 {
		t.Errorf("rows without observations: %+v", bare.Vars)
	}
}

const predictShortVI = `model rg
size T
data y : real[T]
data x : real[T]
latent mu : real nonconjugate laplace
mu ~ Normal(0, 10)
for t in 1:T-1 {
  y[t] ~ Normal(mu + 0.5 * x[t], 1)
}
`

var predictShortCase = fastTest("TestPredictLoopShortOfItsSize").driver("rg", predictShortVI, "fit_and_predict_means.go")

// A loop stopping before the end of its size (for t in 1:T-1) predicts
// y[1..T−1] only: T − 1 observations, the last y not among them.
func TestPredictLoopShortOfItsSize(t *testing.T) {
	y, x := make([]float64, 20), make([]float64, 20)
	for i := range y {
		x[i] = float64(i%5) - 2
		y[i] = 1 + 0.5*x[i] + 0.1*float64(i%3)
	}
	data, _ := json.Marshal(map[string]any{"y": y, "x": x})
	var out []json.RawMessage
	if err := json.Unmarshal(predictShortCase.run(t, data), &out); err != nil || len(out) != 2 {
		t.Fatalf("driver output: %v", err)
	}
	var l struct {
		Mu runtime.Normal `json:"mu"`
	}
	var p runtime.Prediction
	if json.Unmarshal(out[0], &l) != nil || json.Unmarshal(out[1], &p) != nil {
		t.Fatal("driver output")
	}
	v := p.Vars[0]
	if p.Score.Observations != 19 || v.First[0] != 1 || v.Shape[0] != 19 || len(v.PlugInLogDensity) != 19 {
		t.Fatalf("%d observations from %v, shape %v", p.Score.Observations, v.First, v.Shape)
	}
	for i, lp := range v.PlugInLogDensity {
		m := l.Mu.Mean + 0.5*x[i]
		if want := -0.5*(y[i]-m)*(y[i]-m) - 0.5*math.Log(2*math.Pi); math.Abs(lp-want) > 1e-12 {
			t.Errorf("y[%d]: %v, by hand %v", i+1, lp, want)
		}
	}
}
