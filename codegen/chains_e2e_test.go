package codegen

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// Time chains: a latent vector drawn element by element, x[1] at a literal
// index and x[t] for t in 2:T given x[t-1] (several `~` statements
// covering disjoint ranges, reads at an offset, loops over part of a size).

// The local-level state-space model with known noise scales: the posterior
// of x is exactly Gaussian, so Laplace (and the delta method, whose
// objective is quadratic) must give the Kalman smoother's mean and
// covariance.
const localLevelVI = `model locallevel
size T
data y : real[T]
const q : real = 1
const r : real = 1
latent x : real[T] nonconjugate laplace
x[1] ~ Normal(0, 10)
for t in 2:T {
  x[t] ~ Normal(x[t-1], q)
}
for t in 1:T {
  y[t] ~ Normal(x[t], r)
}
`

// kalmanSmoother runs the forward filter and the Rauch–Tung–Striebel
// backward smoother for x_1 ~ N(m0, p0), x_t = phi·x_{t−1} + N(0, q²),
// y_t = x_t + N(0, r²), and returns the smoothed means, variances and
// lag-one covariances Cov(x_t, x_{t+1} | y).
func kalmanSmoother(y []float64, phi, m0, p0, q, r float64) (mean, vr, lag []float64) {
	T := len(y)
	mf, pf := make([]float64, T), make([]float64, T) // filtered
	mp, pp := make([]float64, T), make([]float64, T) // predicted
	for t := range T {
		if t == 0 {
			mp[t], pp[t] = m0, p0
		} else {
			mp[t], pp[t] = phi*mf[t-1], phi*phi*pf[t-1]+q*q
		}
		k := pp[t] / (pp[t] + r*r)
		mf[t] = mp[t] + k*(y[t]-mp[t])
		pf[t] = (1 - k) * pp[t]
	}
	mean, vr, lag = make([]float64, T), make([]float64, T), make([]float64, T-1)
	mean[T-1], vr[T-1] = mf[T-1], pf[T-1]
	for t := T - 2; t >= 0; t-- {
		j := pf[t] * phi / pp[t+1]
		mean[t] = mf[t] + j*(mean[t+1]-mp[t+1])
		vr[t] = pf[t] + j*j*(vr[t+1]-pp[t+1])
		lag[t] = j * vr[t+1]
	}
	return mean, vr, lag
}

func localLevelData(seed uint64, T int, q, r float64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 3))
	y := make([]float64, T)
	x := 2.0
	for t := range y {
		if t > 0 {
			x += q * rng.NormFloat64()
		}
		y[t] = x + r*rng.NormFloat64()
	}
	return y
}

func TestEndToEndLocalLevelKalman(t *testing.T) {
	const T, q, r = 30, 0.7, 1.3
	y := localLevelData(11, T, q, r)
	mean, vr, lag := kalmanSmoother(y, 1, 0, 100, q, r)
	data, _ := json.Marshal(map[string]any{"y": y, "q": q, "r": r})
	for _, res := range runScalar(t, "locallevel", localLevelVI, data, ", Tol: 1e-14, MeanTol: 1e-12") {
		var x gaussianJSON
		if err := json.Unmarshal(res.Latent["x"], &x); err != nil {
			t.Fatal(err)
		}
		if len(x.Mean) != T {
			t.Fatalf("%s: x has %d means, want %d", res.Method, len(x.Mean), T)
		}
		for i := range T {
			scalarClose(t, res.Method, "x mean", x.Mean[i], mean[i], 1e-9)
			scalarClose(t, res.Method, "x var", x.Cov[i][i], vr[i], 1e-9)
			if i+1 < T {
				scalarClose(t, res.Method, "x lag-one cov", x.Cov[i][i+1], lag[i], 1e-9)
			}
		}
	}
}
