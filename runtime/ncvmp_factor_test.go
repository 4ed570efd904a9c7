package runtime

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestNCVMPFactorSplit: a GaussianFactor updated by NCVMP from the split a
// generated model supplies — the quadratic part (the prior N(μ0, Σ0) and
// the Σ_n y_n x_nᵀθ of the logistic likelihood) and projections with
// g(u) = −log(1 + e^u) — reaches the fixed point of NCVMPVector on the
// unsplit logistic factors, from a start that is not the prior.
func TestNCVMPFactorSplit(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 5))
	const N, P = 40, 3
	x := make([]float64, N*P)
	y := make([]float64, N)
	for n := 0; n < N; n++ {
		for p := 0; p < P; p++ {
			x[n*P+p] = rng.NormFloat64()
		}
		y[n] = float64(rng.IntN(2))
	}
	mu0 := []float64{0.2, -0.1, 0.3}
	sigma0 := []float64{2, 0.3, 0, 0.3, 1, 0.1, 0, 0.1, 1.5}
	prec0 := make([]float64, P*P)
	if !InvSPD(prec0, sigma0, P) {
		t.Fatal("Sigma0")
	}
	quad := func(th, grad, hess []float64) float64 {
		// −½(θ−μ0)ᵀΛ0(θ−μ0) + Σ_n y_n x_nᵀθ (constants dropped)
		var f float64
		for i := 0; i < P; i++ {
			grad[i] = 0
			for j := 0; j < P; j++ {
				f -= 0.5 * (th[i] - mu0[i]) * prec0[i*P+j] * (th[j] - mu0[j])
				grad[i] -= prec0[i*P+j] * (th[j] - mu0[j])
				hess[i*P+j] = -prec0[i*P+j]
			}
		}
		for n := 0; n < N; n++ {
			for i := 0; i < P; i++ {
				f += y[n] * x[n*P+i] * th[i]
				grad[i] += y[n] * x[n*P+i]
			}
		}
		return f
	}
	batch := &ProjectionBatch{N: N, P: P,
		Rows: func(rows []float64) { copy(rows, x) },
		LogFactors: func(u, g, dg, d2g []float64) {
			for n := range u {
				s := Logistic(u[n])
				g[n], dg[n], d2g[n] = -Softplus(u[n]), -s, -s*(1-s)
			}
		}}
	mean := []float64{1, 1, -1}
	cov := make([]float64, P*P)
	Identity(cov, P)
	var w GaussianWork
	st := w.Update(GaussianFactor{Mean: mean, Cov: cov, NCVMP: &NCVMPFactor{Quad: quad, Batch: batch}}, NewtonSettings{})
	if st != StatusConverged {
		t.Fatalf("status %s", st)
	}
	want, err := NCVMPVector{Factors: LogisticProjections{X: x, Y: y, P: P}, Mu0: mu0, Sigma0: sigma0}.Run()
	if err != nil || want.Status != StatusConverged {
		t.Fatalf("reference: %v %s", err, want.Status)
	}
	for i := 0; i < P; i++ {
		if math.Abs(mean[i]-want.Mu[i]) > 1e-8 {
			t.Errorf("mean[%d] = %.12g, reference %.12g", i, mean[i], want.Mu[i])
		}
		for j := 0; j < P; j++ {
			if math.Abs(cov[i*P+j]-want.Sigma[i*P+j]) > 1e-8 {
				t.Errorf("cov[%d][%d] = %.12g, reference %.12g", i, j, cov[i*P+j], want.Sigma[i*P+j])
			}
		}
	}
	// the ELBO differs only by the prior's normalizer, which quad drops
	ld, _ := LogDetSPD(sigma0, P)
	// quad(0) already holds −½μ0ᵀΛ0μ0; the rest is the normalizer
	got := w.NCVMPELBO - 0.5*(float64(P)*math.Log(2*math.Pi)+ld)
	if wl := want.ELBO[len(want.ELBO)-1]; math.Abs(got-wl) > 1e-8*math.Abs(wl) {
		t.Errorf("ELBO %.12g, reference %.12g", got, wl)
	}
}
