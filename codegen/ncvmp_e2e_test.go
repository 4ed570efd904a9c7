package codegen

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/runtime"
)

// A latent declared `nonconjugate ncvmp` is fitted by non-conjugate
// variational message passing (Knowles & Minka 2011) over the same
// full-covariance Gaussian as Laplace and delta, which stay selectable.
// These tests compare the generated fits with runtime.NCVMPVector run
// on hand-written factors (LogisticProjections, PoissonProjections: the
// log factors and the prior written out here, not derived), whose fixed
// point runtime's tests check against a direct maximizer of the ELBO.

const logregNCVMP = `model lrncvmp
size N, P
data x : real[N, P]
data y : int[N] in 0..1
const mu0 : real[P] = 0.5
const Sigma0 : cov[P] = 2 * eye(P)
latent theta : real[P] nonconjugate ncvmp
theta ~ MvNormal(mu0, Sigma0)
for n in 1:N {
  y[n] ~ Bernoulli(logistic(dot(x[n], theta)))
}
`

// poissonNCVMP has an elementwise prior and an exposure inside the link.
const poissonNCVMP = `model poisncvmp
size N, P
data x : real[N, P]
data t : real[N]
data y : int[N]
latent beta : real[P] nonconjugate ncvmp
beta ~ Normal(0.1, 1.5)
for n in 1:N {
  y[n] ~ Poisson(t[n] * exp(dot(x[n], beta)))
}
`

// ncvmpDriver fits with NCVMP first, then Laplace and delta.
var ncvmpDriver = strings.Replace(driver, `[]string{"laplace", "delta"}`, `[]string{"ncvmp", "laplace", "delta"}`, 1)

func TestNCVMPLogisticMatchesRuntime(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 19))
	const N, P = 60, 3
	x := make([]float64, N*P)
	y := make([]float64, N)
	rows := make([][]float64, N)
	ys := make([]int, N)
	for n := 0; n < N; n++ {
		var u float64
		for p := 0; p < P; p++ {
			x[n*P+p] = rng.NormFloat64()
			u += x[n*P+p] * []float64{1.5, -1, 0.5}[p]
		}
		if rng.Float64() < 1/(1+math.Exp(-u)) {
			y[n], ys[n] = 1, 1
		}
		rows[n] = x[n*P : (n+1)*P]
	}
	data, _ := json.Marshal(map[string]any{"x": rows, "y": ys})
	out := buildAndRunDriver(t, "lrncvmp", logregNCVMP, data, strings.ReplaceAll(ncvmpDriver, " OPTS", ""))
	var fits []resultJSON
	if err := json.Unmarshal(out, &fits); err != nil {
		t.Fatal(err)
	}
	want, err := runtime.NCVMPVector{
		Factors: runtime.LogisticProjections{X: x, Y: y, P: P},
		Mu0:     []float64{0.5, 0.5, 0.5},
		Sigma0:  []float64{2, 0, 0, 0, 2, 0, 0, 0, 2},
	}.Run()
	if err != nil || want.Status != runtime.StatusConverged {
		t.Fatalf("reference: %v %v", err, want.Status)
	}
	checkNCVMPFit(t, fits, "theta", want)
}

func TestNCVMPPoissonMatchesRuntime(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const N, P = 50, 2
	x := make([]float64, N*P)
	y := make([]float64, N)
	o := make([]float64, N)
	rows := make([][]float64, N)
	ts := make([]float64, N)
	ys := make([]int, N)
	for n := 0; n < N; n++ {
		ts[n] = 0.5 + rng.Float64()
		o[n] = math.Log(ts[n])
		u := o[n]
		for p := 0; p < P; p++ {
			x[n*P+p] = rng.NormFloat64()
			u += x[n*P+p] * []float64{0.7, -0.4}[p]
		}
		// a Poisson draw by inversion
		lam, k, c := math.Exp(u), 0, rng.Float64()
		pk := math.Exp(-lam)
		for cum := pk; c > cum; cum += pk {
			k++
			pk *= lam / float64(k)
		}
		y[n], ys[n] = float64(k), k
		rows[n] = x[n*P : (n+1)*P]
	}
	data, _ := json.Marshal(map[string]any{"x": rows, "y": ys, "t": ts})
	out := buildAndRunDriver(t, "poisncvmp", poissonNCVMP, data, strings.ReplaceAll(ncvmpDriver, " OPTS", ""))
	var fits []resultJSON
	if err := json.Unmarshal(out, &fits); err != nil {
		t.Fatal(err)
	}
	want, err := runtime.NCVMPVector{
		Factors: runtime.PoissonProjections{X: x, Y: y, O: o, P: P},
		Mu0:     []float64{0.1, 0.1},
		Sigma0:  []float64{1.5 * 1.5, 0, 0, 1.5 * 1.5},
	}.Run()
	if err != nil || want.Status != runtime.StatusConverged {
		t.Fatalf("reference: %v %v", err, want.Status)
	}
	checkNCVMPFit(t, fits, "beta", want)
}

// checkNCVMPFit compares the driver's ncvmp fit of latent name with want,
// and checks that Laplace, also fitted, is a different approximation.
func checkNCVMPFit(t *testing.T, fits []resultJSON, name string, want runtime.NCVMPVectorResult) {
	t.Helper()
	if len(fits) != 3 || fits[0].Method != "ncvmp" {
		t.Fatalf("driver returned %d fits, the first %q; want ncvmp, laplace, delta", len(fits), fits[0].Method)
	}
	g := fits[0].Latent[name]
	p := len(want.Mu)
	var lapDiff float64
	for i := 0; i < p; i++ {
		if d := math.Abs(g.Mean[i] - want.Mu[i]); d > 1e-6 {
			t.Errorf("ncvmp mean[%d] = %.10g, reference %.10g", i, g.Mean[i], want.Mu[i])
		}
		for j := 0; j < p; j++ {
			if d := math.Abs(g.Cov[i][j] - want.Sigma[i*p+j]); d > 1e-6 {
				t.Errorf("ncvmp cov[%d][%d] = %.10g, reference %.10g", i, j, g.Cov[i][j], want.Sigma[i*p+j])
			}
		}
		lapDiff = math.Max(lapDiff, math.Abs(fits[1].Latent[name].Mean[i]-g.Mean[i]))
	}
	if !fits[0].Converged {
		t.Errorf("ncvmp fit not converged: %s", fits[0].Status)
	}
	if lapDiff < 1e-4 {
		t.Errorf("Laplace's mean is within %.2g of NCVMP's: the method option did not switch the update", lapDiff)
	}
	t.Logf("ncvmp mean %.6g; laplace %.6g; delta %.6g", g.Mean, fits[1].Latent[name].Mean, fits[2].Latent[name].Mean)
}
