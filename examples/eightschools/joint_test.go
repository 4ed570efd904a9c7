package main

import (
	"context"
	"math"
	"testing"

	"github.com/vigen-go/vigen/examples/eightschools/centred"
	"github.com/vigen-go/vigen/examples/eightschools/eightschools"
	"github.com/vigen-go/vigen/runtime"
)

// Mean field's product of factors is rejected by the joint diagnostic in
// either parameterization (the exact posterior's sds of mu and tau are up
// to three times the centred fit's; at the default 1,000 draws every
// factor passes its own diagnostic: vigen run warns of the joint alone),
// and its importance-corrected mean of mu (first of the joint's draws)
// moves toward the exact posterior mean, computed by quadrature. A wrong
// term of the generated log joint (a missing Jacobian of tau's log
// scale, say) would bias the corrected mean.
func TestJointDiagnosticSeesMeanFieldMiss(t *testing.T) {
	exact, err := Exact(RubinY, RubinSigma)
	if err != nil {
		t.Fatal(err)
	}
	diag := runtime.DiagnoseSettings{Draws: 20000}
	nc, err := eightschools.Fit(context.Background(), Schools(), eightschools.Options{Diagnose: diag})
	if err != nil {
		t.Fatal(err)
	}
	c, err := centred.Fit(context.Background(), &centred.Data{Y: RubinY, Sigma: RubinSigma}, centred.Options{Diagnose: diag})
	if err != nil {
		t.Fatal(err)
	}
	for _, fit := range []struct {
		name  string
		diags []runtime.Diagnostic
		mu    float64
	}{{"non-centred", nc.Diagnostics, nc.Latent.Mu.Mean}, {"centred", c.Diagnostics, c.Latent.Mu.Mean}} {
		j := fit.diags[len(fit.diags)-1]
		if j.Latent != runtime.JointLatent || j.Warning() == "" || j.KHat == nil {
			t.Fatalf("%s: joint diagnostic %v, warning %q", fit.name, j, j.Warning())
		}
		got := j.CorrectedMean[0]
		t.Logf("%s: %v; mu: q %.4f, corrected %.4f, exact %.4f", fit.name, j, fit.mu, got, exact.Mu.Mean)
		if math.Abs(got-exact.Mu.Mean) > math.Abs(fit.mu-exact.Mu.Mean) || math.Abs(got-exact.Mu.Mean) > 0.05 {
			t.Errorf("%s: corrected mean of mu %v is not nearer the exact %v than q's %v", fit.name, got, exact.Mu.Mean, fit.mu)
		}
	}
}
