package codegen

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/golden"
	"github.com/vigen-go/vigen/runtime"
)

// psisGaussVI has a per-unit and a global nonconjugate Gaussian latent
// whose coordinate-optimal factors are exactly Gaussian: with q(b) fixed,
// f(θ_d) is quadratic in θ_d, and the other way round. Laplace is then
// exact, and the diagnostic's importance ratios are constant.
const psisGaussVI = `model gauss
size D, N, K
data x : real[N, K]
data y : real[D, N]
const m0 : real[K] = 0
const S0 : cov[K] = eye(K)
latent theta : real[D, K] nonconjugate laplace
latent b : real[K] nonconjugate laplace
b ~ MvNormal(m0, S0)
for d in 1:D {
  theta[d] ~ MvNormal(m0, S0)
  for n in 1:N {
    y[d, n] ~ Normal(dot(x[n], theta[d]) + dot(x[n], b), 1)
  }
}
`

// psisLogitVI is a logistic regression with a flat-ish prior, whose
// posterior is skewed when the data are nearly separable.
const psisLogitVI = `model logit
size N, P
data x : real[N, P]
data y : int[N] in 0..1
const mu0 : real[P] = 0
const Sigma0 : cov[P] = 100 * eye(P)
latent theta : real[P] nonconjugate laplace
theta ~ MvNormal(mu0, Sigma0)
for n in 1:N {
  y[n] ~ Bernoulli(logistic(dot(x[n], theta)))
}
`

type psisOut [][]runtime.Diagnostic

// psisCase registers the case of test that fits src by Laplace and by
// delta and prints each result's diagnostics, for runPSIS.
func psisCase(test e2eTest, name, src string) *e2eCase {
	return test.driver(name, src, "fit_psis_diagnostics.go")
}

func runPSIS(t *testing.T, c *e2eCase, data any) psisOut {
	t.Helper()
	b, _ := json.Marshal(data)
	raw := c.run(t, b)
	var out psisOut
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("driver output: %v\n%s", err, raw)
	}
	if len(out) != 2 {
		t.Fatalf("%d results, want 2", len(out))
	}
	return out
}

var psisGaussCase = psisCase(fastTest("TestPSISExactGaussianFactors"), "gauss", psisGaussVI)

// Where the Gaussian factors are exact (Laplace and the delta method agree
// with q*), every unit's k̂ and the global factor's are 0: the importance
// ratios do not vary. This fails if a draw, the log density of q or the
// target were off by anything but a constant.
func TestPSISExactGaussianFactors(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	const D, N, K = 6, 12, 2
	x := make([][]float64, N)
	for n := range x {
		x[n] = []float64{rng.NormFloat64(), rng.NormFloat64()}
	}
	y := make([][]float64, D)
	for d := range y {
		y[d] = make([]float64, N)
		for n := range y[d] {
			y[d][n] = x[n][0]*float64(d-2) + 0.5*x[n][1] + rng.NormFloat64()
		}
	}
	out := runPSIS(t, psisGaussCase, map[string]any{"D": D, "N": N, "K": K, "x": x, "y": y})
	for m, ds := range out {
		if len(ds) != 2 {
			t.Fatalf("method %d: %d diagnostics, want theta and b", m, len(ds))
		}
		for _, d := range ds {
			t.Logf("%s: %v", d.Method, d)
			if d.Latent == "theta" {
				if len(d.UnitKHat) != D || d.MaxKHat != 0 || d.Bad != 0 || d.Unestimated != 0 || d.Draws != 1000 {
					t.Errorf("%s theta: %d units, max k̂ %v, %d bad, %d unestimated, %d draws; want %d units all 0 over 1000 draws",
						d.Method, len(d.UnitKHat), d.MaxKHat, d.Bad, d.Unestimated, d.Draws, D)
				}
				continue
			}
			if d.KHat == nil || *d.KHat != 0 || len(d.CorrectedMean) != K {
				t.Errorf("%s b: k̂ %v, corrected mean %v; want 0 and a mean", d.Method, d.KHat, d.CorrectedMean)
			}
		}
	}
}

var psisLogitCase = psisCase(slowTest("TestPSISFlagsNearlySeparableLogit"), "logit", psisLogitVI)

// A nearly separable logistic regression with a vague prior: the posterior
// is far from Gaussian, and the diagnostic says so for both methods (log
// importance ratios with sd above LargeSD, and a warning), while on
// well-conditioned data (a small slope, many points) Laplace gives
// k̂ < 0.5 and neither method a warning.
func TestPSISFlagsNearlySeparableLogit(t *testing.T) {
	golden.SlowTier(t)
	gen := func(n int, slope float64, seed uint64) map[string]any {
		rng := rand.New(rand.NewPCG(seed, 1))
		x := make([][]float64, n)
		y := make([]int, n)
		for i := range x {
			z := rng.NormFloat64()
			x[i] = []float64{1, z}
			if rng.Float64() < 1/(1+math.Exp(-(0.5+slope*z))) {
				y[i] = 1
			}
		}
		return map[string]any{"N": n, "P": 2, "x": x, "y": y}
	}
	sep := runPSIS(t, psisLogitCase, gen(40, 6, 5))
	well := runPSIS(t, psisLogitCase, gen(2000, 0.7, 4))
	for m, method := range []string{"laplace", "delta"} {
		s, w := sep[m][0], well[m][0]
		t.Logf("%s: nearly separable %v, sd %.3g; well-conditioned %v, sd %.3g", method, s, s.SDLogRatio, w, w.SDLogRatio)
		if w.KHat == nil || w.Warning() != "" || method == "laplace" && *w.KHat >= runtime.KHatGood {
			t.Errorf("%s, well-conditioned: k̂ %v, warning %q; want no warning (and k̂ below %v for laplace)", method, w.KHat, w.Warning(), runtime.KHatGood)
		}
		// k̂ here is 0.63 (Laplace) and 0.27 (delta): the Gaussian is too
		// wide across the ridge as well as too narrow along it, so the
		// weights' tail is not heavy, but they span e^±7 and more
		if s.KHat == nil || s.SDLogRatio <= runtime.LargeSD || !strings.Contains(s.Warning(), "is not to be trusted") {
			t.Errorf("%s, nearly separable: k̂ %v, sd %v, warning %q; want the log ratios' sd above %v and a warning", method, s.KHat, s.SDLogRatio, s.Warning(), runtime.LargeSD)
		}
	}
}
