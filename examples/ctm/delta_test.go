package main

import (
	"context"
	"math"
	"testing"

	"github.com/vigen-go/vigen/examples/ctm/ctm"
)

// Per-document inference by the delta method settles every document, at a
// fixed point of the plain sweeps of Fig. 1: on 300 documents drawn from
// the bundled AP parameters (the sweeps alone, from the Laplace point,
// left 89 unsettled after 100 sweeps, and variational EM on AP never
// converged; issue 15, item 4). One more plain sweep (θ update with Σ
// fixed, Σ = −∇²f⁻¹, then φ) from the result must leave every mean where
// it is.
func TestDeltaPerDocumentInferenceSettles(t *testing.T) {
	p, err := loadBundledParams()
	if err != nil {
		t.Fatal(err)
	}
	docs, _, err := Synthetic(p, 1, 300)
	if err != nil {
		t.Fatal(err)
	}
	data := &ctm.Data{K: p.K, V: p.V, W: docs, Beta: p.Beta, Mu0: p.Mu0, Sigma0: p.Sigma0}
	res, err := ctm.Fit(context.Background(), data, ctm.Options{Method: "delta", MaxIter: 1, FixParams: true})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Converged || len(res.Unsettled) > 0 {
		t.Fatalf("status %q, %d unsettled documents, want every document settled", res.Status, len(res.Unsettled))
	}
	again, err := ctm.Fit(context.Background(), data, ctm.Options{Method: "delta", MaxIter: 1, FixParams: true, Start: res,
		PlainSweeps: true, LocalMaxIter: 1, LocalTol: 1e-300})
	if err != nil {
		t.Fatal(err)
	}
	worst, at := 0.0, 0
	for d := range docs {
		a, b := res.Latent.Theta[d].Mean, again.Latent.Theta[d].Mean
		for k := range a {
			if diff := math.Abs(a[k]-b[k]) / math.Max(1, math.Abs(a[k])); diff > worst {
				worst, at = diff, d
			}
		}
	}
	t.Logf("one more sweep moves E[θ] by at most %.2g (document %d)", worst, at+1)
	if worst > 1e-5 {
		t.Errorf("document %d is not at a fixed point of the delta sweeps: one more sweep moves E[θ] by %.2g", at+1, worst)
	}
}
