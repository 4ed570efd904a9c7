package main

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vigen-go/vigen/examples/logreg/logreg"
	"github.com/vigen-go/vigen/runtime"
	"gonum.org/v1/gonum/mat"
)

// The diagnostic's target is the log posterior: ThetaTarget differs from
// the hand-written logPost by a constant. And the k̂ and corrected mean the
// fit reports agree with the same quantities computed here from the
// result's q, with draws of the test's own, against logPost.
func TestDiagnosticTargetIsTheLogPosterior(t *testing.T) {
	d, _ := Synthetic(2, 300, 4)
	d.N, d.P = 300, 4
	m, err := logreg.NewModel(d)
	if err != nil {
		t.Fatal(err)
	}
	res, err := m.Fit(context.Background(), logreg.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	grad := make([]float64, d.P)
	base := make([]float64, d.P)
	c := m.ThetaTarget(base) - logPost(d.X, d.Y, base, grad)
	for range 20 {
		th := make([]float64, d.P)
		for i := range th {
			th[i] = 3 * rng.NormFloat64()
		}
		got := m.ThetaTarget(th) - logPost(d.X, d.Y, th, grad)
		if math.Abs(got-c) > 1e-9*math.Max(1, math.Abs(c)) {
			t.Fatalf("ThetaTarget − logPost = %v at %v, %v at 0: not a constant", got, th, c)
		}
	}
	if len(res.Diagnostics) != 1 {
		t.Fatalf("%d diagnostics, want 1", len(res.Diagnostics))
	}
	diag := res.Diagnostics[0]
	if diag.KHat == nil || diag.Draws != runtime.DefaultDiagnoseDraws || diag.Method != "laplace" {
		t.Fatalf("diagnostic %+v", diag)
	}
	// the reference: S draws of our own from N(μ, Σ)
	const S = 4000
	mu := res.Latent.Theta.Mean
	cov := mat.NewSymDense(d.P, nil)
	for i := range d.P {
		for j := range d.P {
			cov.SetSym(i, j, res.Latent.Theta.Cov[i][j])
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(cov) {
		t.Fatal("covariance not positive definite")
	}
	var l mat.TriDense
	ch.LTo(&l)
	logDet := ch.LogDet()
	r := make([]float64, S)
	draws := make([][]float64, S)
	for s := range S {
		z := make([]float64, d.P)
		for i := range z {
			z[i] = rng.NormFloat64()
		}
		var lz mat.VecDense
		lz.MulVec(&l, mat.NewVecDense(d.P, z))
		th := make([]float64, d.P)
		zz := 0.0
		for i := range th {
			th[i] = mu[i] + lz.AtVec(i)
			zz += z[i] * z[i]
		}
		logq := -0.5*zz - 0.5*logDet - 0.5*float64(d.P)*math.Log(2*math.Pi)
		r[s] = logPost(d.X, d.Y, th, grad) - logq
		draws[s] = th
	}
	kRef, ok := runtime.PSIS(r)
	if !ok {
		t.Fatal("reference: no k̂")
	}
	top := math.Inf(-1)
	for _, v := range r {
		top = max(top, v)
	}
	mean := make([]float64, d.P)
	total := 0.0
	for s, v := range r {
		w := math.Exp(v - top)
		total += w
		for i := range mean {
			mean[i] += w * draws[s][i]
		}
	}
	for i := range mean {
		mean[i] /= total
	}
	t.Logf("k̂ %.3f (reference %.3f over %d draws); corrected mean %v, reference %v", *diag.KHat, kRef, S, diag.CorrectedMean, mean)
	if math.Abs(*diag.KHat-kRef) > 0.2 {
		t.Errorf("k̂ %.3f, reference %.3f", *diag.KHat, kRef)
	}
	for i := range mean {
		sd := math.Sqrt(res.Latent.Theta.Cov[i][i])
		if dev := math.Abs(diag.CorrectedMean[i]-mean[i]) / sd; dev > 0.1 {
			t.Errorf("corrected mean[%d] = %v, reference %v (%.2f sd apart)", i, diag.CorrectedMean[i], mean[i], dev)
		}
	}
}
