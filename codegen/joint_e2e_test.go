package codegen

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vigen-go/vigen/golden"
	"github.com/vigen-go/vigen/runtime"
)

// jointVI is a linear regression with an intercept and a slope, each its
// own latent with a Gaussian factor: the posterior is Gaussian with
// precision Λ = I/100 + Σ_n [1 x_n][1 x_n]ᵀ, and mean field's q(a)q(b)
// (exact coordinate ascent here) has the posterior means and variances
// 1/Λ_aa, 1/Λ_bb. Under that q the log ratio log p − log q is
// −Λ_ab (a − m_a)(b − m_b) + const, a product of independent normals
// scaled by |Λ_ab|/√(Λ_aa Λ_bb): its sd.
const jointVI = `model joint
size N
data x : real[N]
data y : real[N]
latent a : real nonconjugate laplace
latent b : real nonconjugate laplace
a ~ Normal(0, 10)
b ~ Normal(0, 10)
for n in 1:N {
  y[n] ~ Normal(a + b * x[n], 1)
}
`

var jointCase = slowTest("TestJointDiagnosticOfMeanField").driver("joint", jointVI, "fit_joint_diagnostics.go")

// The joint diagnostic's log ratios have the sd computed above: 0 when the
// covariate is centred (the posterior factorizes, mean field is exact and
// the ratios are constant), and near 1 when it is far from 0 (a and b
// strongly dependent), with a warning then and none before. The factors'
// own diagnostics see nothing wrong in either case: each is exact given
// the other.
func TestJointDiagnosticOfMeanField(t *testing.T) {
	golden.SlowTier(t)
	for _, shift := range []float64{0, 4} {
		rng := rand.New(rand.NewPCG(2, 2))
		const n = 50
		x, y := make([]float64, n), make([]float64, n)
		var sx, sxx float64
		for i := range x {
			x[i] = rng.NormFloat64()
			sx += x[i]
		}
		mean := sx / n
		sx = 0
		for i := range x {
			x[i] += shift - mean // exactly centred for shift 0
			y[i] = 1 + 0.5*x[i] + rng.NormFloat64()
			sx += x[i]
			sxx += x[i] * x[i]
		}
		laa, lbb, lab := 0.01+n, 0.01+sxx, sx
		want := math.Abs(lab) / math.Sqrt(laa*lbb)
		data, _ := json.Marshal(map[string]any{"x": x, "y": y})
		var diags []runtime.Diagnostic
		if err := json.Unmarshal(jointCase.run(t, data), &diags); err != nil {
			t.Fatal(err)
		}
		if len(diags) != 3 || diags[2].Latent != runtime.JointLatent || len(diags[2].Joint) != 2 {
			t.Fatalf("shift %v: diagnostics %+v", shift, diags)
		}
		j := diags[2]
		t.Logf("shift %v: %v, sd %.4g (exact %.4g)", shift, j, j.SDLogRatio, want)
		for _, d := range diags[:2] {
			if d.Warning() != "" {
				t.Errorf("shift %v: %s", shift, d.Warning())
			}
		}
		// the sd of 8,000 draws of a product of normals is within 3% of
		// its value with overwhelming probability
		if math.Abs(j.SDLogRatio-want) > 0.03*want+1e-6 {
			t.Errorf("shift %v: joint log ratios' sd %v, exact %v", shift, j.SDLogRatio, want)
		}
		if (shift > 0) != (j.Warning() != "") {
			t.Errorf("shift %v: warning %q", shift, j.Warning())
		}
	}
}
