package codegen

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vigen-go/vigen/golden"
)

// L independent logistic regressions as one latent with a unit per label.
const multiLogregVI = `model mlogreg
size N, P, L
data x : real[N, P]
data y : int[N, L] in 0..1
const mu0 : real[P] = 0
const Sigma0 : cov[P] = 4 * eye(P)
latent theta : real[L, P] nonconjugate laplace
for l in 1:L {
  theta[l] ~ MvNormal(mu0, Sigma0)
  for n in 1:N {
    y[n, l] ~ Bernoulli(logistic(dot(x[n], theta[l])))
  }
}
`

// The same for one label.
const oneLogregVI = `model ologreg
size N, P
data x : real[N, P]
data y : int[N] in 0..1
const mu0 : real[P] = 0
const Sigma0 : cov[P] = 4 * eye(P)
latent theta : real[P] nonconjugate laplace
theta ~ MvNormal(mu0, Sigma0)
for n in 1:N {
  y[n] ~ Bernoulli(logistic(dot(x[n], theta)))
}
`

// The cases fit each data set and then once more from its result.
// Tight tolerances, so that the comparison is of fixed points (the
// single-label fit ends on its mean alone: Tol 1 always holds).
var (
	perUnitDelta    = slowTest("TestEndToEndDeltaPerUnitLatentReachesItsFixedPoint")
	multiLogregCase = perUnitDelta.driver("mlogreg", multiLogregVI, "fit_each_then_refit.go",
		" /* OPTS */", ", LocalTol: 1e-13, LocalMaxIter: 1000", " /* AGAIN */", ", MaxIter: 1, LocalMaxIter: 1, LocalTol: 1e-300")
	oneLogregCase = perUnitDelta.driver("ologreg", oneLogregVI, "fit_each_then_refit.go",
		" /* OPTS */", ", Tol: 1, MeanTol: 1e-13", " /* AGAIN */", ", MaxIter: 1")
)

// The delta method's fit of a latent with one Gaussian per unit (L
// logistic regressions in one model) equals, label by label, the delta fit
// of the single-label model run to convergence, and one more update changes
// nothing. A single local factor is at its optimum after one Laplace update,
// but the delta objective depends on Σ, which is set after μ: before, the
// per-unit loop stopped after one update and the fit said "converged"
// (issue 15, item 3).
func TestEndToEndDeltaPerUnitLatentReachesItsFixedPoint(t *testing.T) {
	golden.SlowTier(t)
	rng := rand.New(rand.NewPCG(5, 6))
	const n, p, labels = 80, 3, 3
	x := make([][]float64, n)
	for i := range x {
		x[i] = []float64{1, rng.NormFloat64(), rng.NormFloat64()}
	}
	y := make([][]int, n)
	ys := make([][]int, labels)
	for l := 0; l < labels; l++ {
		w := []float64{rng.NormFloat64(), 2 * rng.NormFloat64(), rng.NormFloat64()}
		for i := range x {
			eta := w[0]*x[i][0] + w[1]*x[i][1] + w[2]*x[i][2]
			v := 0
			if rng.Float64() < 1/(1+math.Exp(-eta)) {
				v = 1
			}
			y[i] = append(y[i], v)
			ys[l] = append(ys[l], v)
		}
	}
	multi, _ := json.Marshal([]any{map[string]any{"x": x, "y": y}})
	var singles []any
	for l := range ys {
		singles = append(singles, map[string]any{"x": x, "y": ys[l]})
	}
	single, _ := json.Marshal(singles)

	type res struct {
		Converged bool   `json:"converged"`
		Status    string `json:"status"`
		Latent    struct {
			Theta json.RawMessage `json:"theta"`
		} `json:"latent"`
	}
	var multiRes, singleRes []res
	out := multiLogregCase.run(t, multi)
	if err := json.Unmarshal(out, &multiRes); err != nil {
		t.Fatal(err)
	}
	out = oneLogregCase.run(t, single)
	if err := json.Unmarshal(out, &singleRes); err != nil {
		t.Fatal(err)
	}
	if !multiRes[0].Converged {
		t.Fatalf("L-label delta fit: %s", multiRes[0].Status)
	}
	var units []gaussianJSON
	if err := json.Unmarshal(multiRes[0].Latent.Theta, &units); err != nil {
		t.Fatal(err)
	}
	var again []gaussianJSON
	if err := json.Unmarshal(multiRes[1].Latent.Theta, &again); err != nil {
		t.Fatal(err)
	}
	for l := 0; l < labels; l++ {
		var one gaussianJSON
		if err := json.Unmarshal(singleRes[l].Latent.Theta, &one); err != nil {
			t.Fatal(err)
		}
		if !singleRes[l].Converged {
			t.Fatalf("label %d single-label fit: %s", l+1, singleRes[l].Status)
		}
		for k := 0; k < p; k++ {
			if d := math.Abs(units[l].Mean[k] - one.Mean[k]); d > 1e-8 {
				t.Errorf("label %d: E[θ_%d] = %.12g in the L-label fit, %.12g in the single-label fit (differ by %.2g)", l+1, k+1, units[l].Mean[k], one.Mean[k], d)
			}
			if d := math.Abs(again[l].Mean[k] - units[l].Mean[k]); d > 1e-10 {
				t.Errorf("label %d: one more update moves E[θ_%d] by %.2g: not a fixed point", l+1, k+1, d)
			}
			for j := 0; j < p; j++ {
				if d := math.Abs(units[l].Cov[k][j] - one.Cov[k][j]); d > 1e-8 {
					t.Errorf("label %d: Σ[%d][%d] differs by %.2g from the single-label fit", l+1, k+1, j+1, d)
				}
			}
		}
	}
}
