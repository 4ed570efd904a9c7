package codegen

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/vigen-go/vigen/golden"
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

// An AR(1) latent: x[t] ~ Normal(phi * x[t-1], q), phi known.
const ar1LatentVI = `model ar1latent
size T
data y : real[T]
const phi : real = 0.8
const q : real = 1
const r : real = 1
latent x : real[T] nonconjugate laplace
x[1] ~ Normal(0, 10)
for t in 2:T {
  x[t] ~ Normal(phi * x[t-1], q)
}
for t in 1:T {
  y[t] ~ Normal(x[t], r)
}
`

var (
	localLevelKalman = fastTest("TestEndToEndLocalLevelKalman")
	localLevelCase   = localLevelKalman.fits("locallevel", localLevelVI, ", Tol: 1e-14, MeanTol: 1e-12")
	ar1LatentCase    = localLevelKalman.fits("ar1latent", ar1LatentVI, ", Tol: 1e-14, MeanTol: 1e-12")
)

func TestEndToEndLocalLevelKalman(t *testing.T) {
	t.Run("random walk", func(t *testing.T) { testKalman(t, localLevelCase, 1) })
	t.Run("AR(1)", func(t *testing.T) { testKalman(t, ar1LatentCase, 0.8) })
}

func testKalman(t *testing.T, c *e2eCase, phi float64) {
	const T, q, r = 30, 0.7, 1.3
	y := localLevelData(11, T, q, r)
	mean, vr, lag := kalmanSmoother(y, phi, 0, 100, q, r)
	data, _ := json.Marshal(map[string]any{"y": y, "q": q, "r": r, "phi": phi})
	if phi == 1 {
		data, _ = json.Marshal(map[string]any{"y": y, "q": q, "r": r})
	}
	for _, res := range runScalar(t, c, data) {
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

// The local-level model with unknown noise scales, each under a
// HalfNormal(1) prior: vigen fits u = log q and w = log r with Gaussian
// factors (Laplace) and x with its own, mean field. The test runs the same
// coordinate ascent written out: q(x) Gaussian with the expected
// precisions E[exp(−2u)] = exp(−2m + 2v), q(u) by Newton on its own
// objective with closed-form expectations under q(x).
const localLevelScalesVI = `model llscales
size T
data y : real[T]
latent q : real<lower=0> nonconjugate laplace
latent r : real<lower=0> nonconjugate laplace
latent x : real[T] nonconjugate laplace
q ~ HalfNormal(1)
r ~ HalfNormal(1)
x[1] ~ Normal(0, 10)
for t in 2:T {
  x[t] ~ Normal(x[t-1], q)
}
for t in 1:T {
  y[t] ~ Normal(x[t], r)
}
`

// laplaceLogScale maximizes f(u) = log HalfNormal(e^u; 1) + u − n·u −
// e^{−2u}·R/2 (a scale e^u with n residuals of expected sum of squares R)
// by Newton from u0, and returns the mode and −1/f″ there.
func laplaceLogScale(t *testing.T, u0, n, R float64) (m, v float64) {
	t.Helper()
	d := func(u float64) (d1, d2 float64) {
		e2, em2 := math.Exp(2*u), math.Exp(-2*u)
		return -e2 + 1 - n + em2*R, -2*e2 - 2*em2*R
	}
	u := u0
	for range 200 {
		d1, d2 := d(u)
		step := d1 / d2
		u -= step
		if math.Abs(step) < 1e-15 {
			break
		}
	}
	_, d2 := d(u)
	return u, -1 / d2
}

var localLevelScalesCase = slowTest("TestEndToEndLocalLevelUnknownScales").fitsLaplace("llscales", localLevelScalesVI, ", Tol: 1e-15, MeanTol: 1e-13, MaxIter: 100000")

func TestEndToEndLocalLevelUnknownScales(t *testing.T) {
	golden.SlowTier(t)
	const T = 40
	y := localLevelData(17, T, 0.7, 1.3)
	// q(x) = N(mx, Sx); q(log q) = N(mq, vq); q(log r) = N(mr, vr)
	mq, vq, mr, vr := 0.0, 0.1, 0.0, 0.1
	var mx []float64
	var Sx mat.SymDense
	for iter := 0; ; iter++ {
		if iter == 100000 {
			t.Fatal("hand-written coordinate ascent did not converge")
		}
		wq, wr := math.Exp(-2*mq+2*vq), math.Exp(-2*mr+2*vr) // E[1/q²], E[1/r²]
		prec := mat.NewSymDense(T, nil)
		rhs := mat.NewVecDense(T, nil)
		for i := range T {
			prec.SetSym(i, i, prec.At(i, i)+wr)
			rhs.SetVec(i, wr*y[i])
			if i > 0 {
				prec.SetSym(i, i, prec.At(i, i)+wq)
				prec.SetSym(i-1, i-1, prec.At(i-1, i-1)+wq)
				prec.SetSym(i-1, i, prec.At(i-1, i)-wq)
			}
		}
		prec.SetSym(0, 0, prec.At(0, 0)+0.01)
		var ch mat.Cholesky
		if !ch.Factorize(prec) {
			t.Fatal("hand-written CAVI: precision not positive definite")
		}
		ch.InverseTo(&Sx)
		var mv mat.VecDense
		mv.MulVec(&Sx, rhs)
		mx = mv.RawVector().Data
		R, Q := 0.0, 0.0 // E[Σ (y_t − x_t)²], E[Σ (x_t − x_{t−1})²]
		for i := range T {
			R += (y[i]-mx[i])*(y[i]-mx[i]) + Sx.At(i, i)
			if i > 0 {
				d := mx[i] - mx[i-1]
				Q += d*d + Sx.At(i, i) + Sx.At(i-1, i-1) - 2*Sx.At(i, i-1)
			}
		}
		mq0, mr0 := mq, mr
		mq, vq = laplaceLogScale(t, mq, T-1, Q)
		mr, vr = laplaceLogScale(t, mr, T, R)
		if math.Abs(mq-mq0) < 1e-15 && math.Abs(mr-mr0) < 1e-15 {
			break
		}
	}
	data, _ := json.Marshal(map[string]any{"y": y})
	for _, res := range runScalarLaplace(t, localLevelScalesCase, data) {
		gm, gs := scalarOf(t, res, "q")
		scalarClose(t, res.Method, "mean of log q", gm, mq, 1e-7)
		scalarClose(t, res.Method, "sd of log q", gs, math.Sqrt(vq), 1e-7)
		gm, gs = scalarOf(t, res, "r")
		scalarClose(t, res.Method, "mean of log r", gm, mr, 1e-7)
		scalarClose(t, res.Method, "sd of log r", gs, math.Sqrt(vr), 1e-7)
		var x gaussianJSON
		if err := json.Unmarshal(res.Latent["x"], &x); err != nil {
			t.Fatal(err)
		}
		for i := range T {
			scalarClose(t, res.Method, "x mean", x.Mean[i], mx[i], 1e-7)
			scalarClose(t, res.Method, "x var", x.Cov[i][i], Sx.At(i, i), 1e-7)
		}
		var q, r struct {
			Constrained struct{ Mean, SD float64 } `json:"constrained"`
		}
		json.Unmarshal(res.Latent["q"], &q)
		json.Unmarshal(res.Latent["r"], &r)
		scalarClose(t, res.Method, "E[q]", q.Constrained.Mean, math.Exp(mq+vq/2), 1e-7)
		scalarClose(t, res.Method, "E[r]", r.Constrained.Mean, math.Exp(mr+vr/2), 1e-7)
		t.Logf("q: mean %.4f sd %.4f (hand-written %.4f, %.4f); r: mean %.4f sd %.4f (hand-written %.4f, %.4f); simulated with q = 0.7, r = 1.3",
			q.Constrained.Mean, q.Constrained.SD, math.Exp(mq+vq/2), math.Sqrt(math.Expm1(vq))*math.Exp(mq+vq/2),
			r.Constrained.Mean, r.Constrained.SD, math.Exp(mr+vr/2), math.Sqrt(math.Expm1(vr))*math.Exp(mr+vr/2))
	}
}
