package main

import (
	"context"
	"math"
	"testing"

	"github.com/vigen-go/vigen/examples/ncvmp/ncvmp"
	"github.com/vigen-go/vigen/runtime"
)

// TestGeneratedMatchesSynth: on each data set of §6.2, the package vigen
// generates from ncvmp.vi fits w by NCVMP (its declared treatment),
// Laplace and delta (Options.Method). They equal the table's columns
// "quad full" (runtime.NCVMPVector on hand-written logistic factors),
// "Laplace" and "delta" (hand-written kernels, logisticJoint), so the
// table is what a user of the model file gets.
func TestGeneratedMatchesSynth(t *testing.T) {
	for s := uint64(0); s < synthSets; s++ {
		seed := 100 + s
		f, _ := synthData(seed, synthN, synthP)
		p := synthP
		d := &ncvmp.Data{N: synthN, P: p, X: make([][]float64, synthN), Y: make([]int, synthN)}
		for n := 0; n < synthN; n++ {
			d.X[n] = f.X[n*p : (n+1)*p]
			d.Y[n] = int(f.Y[n])
		}
		eye := make([]float64, p*p)
		runtime.Identity(eye, p)
		ref, err := runtime.NCVMPVector{Factors: f, Mu0: make([]float64, p), Sigma0: eye}.Run()
		if err != nil {
			t.Fatal(err)
		}
		lj := logisticJoint{X: f.X, Y: f.Y, P: p, M0: make([]float64, p), V0: 1}
		for _, c := range []struct {
			method string
			delta  bool
		}{{"", false}, {"laplace", false}, {"delta", true}} {
			r, err := ncvmp.Fit(context.Background(), d, ncvmp.Options{Method: c.method})
			if err != nil {
				t.Fatal(err)
			}
			if !r.Converged {
				t.Errorf("seed %d, %q: not converged (%s)", seed, c.method, r.Status)
			}
			mean, cov, err := r.Latent.W.Flat("w", p)
			if err != nil {
				t.Fatal(err)
			}
			wantMean, wantCov := ref.Mu, ref.Sigma
			if c.method != "" {
				q, err := fitGaussianVI(lj.F, lj.DeltaF, p, c.delta)
				if err != nil {
					t.Fatal(err)
				}
				wantMean, wantCov = q.Mean, q.Cov
			} else if r.Method != "ncvmp" {
				t.Errorf("the declared method is %q, want ncvmp", r.Method)
			}
			var dm, dc float64
			for i := range mean {
				dm = math.Max(dm, math.Abs(mean[i]-wantMean[i]))
			}
			for i := range cov {
				dc = math.Max(dc, math.Abs(cov[i]-wantCov[i]))
			}
			if dm > 1e-6 || dc > 1e-6 {
				t.Errorf("seed %d, method %q: generated fit differs from the reference by %.2g (means), %.2g (covariances)", seed, c.method, dm, dc)
			}
		}
	}
}
