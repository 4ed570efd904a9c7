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

// A Gaussian mixture with unknown precisions and a Bernoulli data
// statement of constant probability, for the units' tempered normalizers
// of local variational tempering.
const lvtGMM = `model gmm
size N, K
data y : real[N]
data b : int[N] in 0..1
const alpha : real = 1
const p0 : real = 0.3
latent pi : simplex[K] conjugate
latent mu : real[K] conjugate
latent tau : real[K] conjugate
latent z : int[N] in 1..K conjugate
pi ~ Dirichlet(alpha)
mu ~ Normal(0, 10)
tau ~ Gamma(2, 1)
for n in 1:N {
  z[n] ~ Categorical(pi)
  y[n] ~ Normal(mu[z[n]], 1 / sqrt(tau[z[n]]))
  b[n] ~ Bernoulli(p0)
}
`

var lvtCase = slowTest("TestEndToEndLocalTemperingNormalizers").driver("gmm", lvtGMM, "fit_local_tempering_normalizers.go").hook("hook.go", "lvt_unit_log_normalizers.go")

// The generated UnitLogNormalizers against an independent computation of
// Σ_statements E_q[log ∫ p^s]: Monte Carlo over q(π) of Σ_k π_k^s (the
// Jensen bound's log E), Monte Carlo over q(τ_k) of ∫ N(y; 0, τ^(−1/2))^s dy
// by the trapezoid rule, weighed by q(z_n), and the Bernoulli's
// p0^s + (1 − p0)^s summed by hand. Then LVT fits the model and an
// outlying point runs hottest.
func TestEndToEndLocalTemperingNormalizers(t *testing.T) {
	golden.SlowTier(t)
	rng := rand.New(rand.NewPCG(8, 9))
	var y []float64
	var bs []int
	for n := range 60 {
		y = append(y, float64(n%3)*4+0.7*rng.NormFloat64())
		bs = append(bs, rng.IntN(2))
	}
	y[17] = 60 // an outlier
	data, _ := json.Marshal(map[string]any{"y": y, "b": bs, "K": 3})
	out := lvtCase.run(t, data)
	var res struct {
		Norm            [][]float64
		Pi, Shape, Rate []float64
		Z               []float64
		LVT             struct {
			Status          string    `json:"status"`
			UnitTemperature []float64 `json:"unit_temperature"`
		}
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("driver output: %v\n%s", err, out)
	}
	grid := []float64{1, 1.7, 4}
	const K, draws = 3, 4000
	mc := rand.New(rand.NewPCG(1, 1))
	for m, T := range grid {
		s := 1 / T
		// log Σ_k E[π_k^s], π ~ Dirichlet(q)
		sum, sum2 := 0.0, 0.0
		for range draws {
			g := make([]float64, K)
			tot := 0.0
			for k := range g {
				g[k] = runtime.RandGamma(mc, res.Pi[k])
				tot += g[k]
			}
			x := 0.0
			for _, v := range g {
				x += math.Pow(v/tot, s)
			}
			sum += x
			sum2 += x * x
		}
		piMean := sum / draws
		piSE := math.Sqrt((sum2/draws - piMean*piMean) / draws)
		// E_τ[log ∫ N(y; 0, τ^(−1/2))^s dy] per component, by quadrature
		comp := make([]float64, K)
		compVar := make([]float64, K)
		for k := range comp {
			a, b := 0.0, 0.0
			for range 200 {
				tau := runtime.RandGamma(mc, res.Shape[k]) / res.Rate[k]
				sd := 1 / math.Sqrt(tau)
				h := 60 * sd / 4000
				integral := 0.0
				for i := -2000; i <= 2000; i++ {
					yv := float64(i) * h
					w := 1.0
					if i == -2000 || i == 2000 {
						w = 0.5
					}
					integral += w * math.Exp(s*(-0.5*math.Log(2*math.Pi)-math.Log(sd)-0.5*yv*yv/(sd*sd)))
				}
				v := math.Log(integral * h)
				a += v
				b += v * v
			}
			comp[k] = a / 200
			compVar[k] = (b/200 - comp[k]*comp[k]) / 200
		}
		bern := math.Log(math.Pow(0.3, s) + math.Pow(0.7, s))
		for n := range y {
			want := math.Log(piMean) + bern
			se2 := math.Pow(piSE/piMean, 2)
			for k := range K {
				want += res.Z[n*K+k] * comp[k]
				se2 += res.Z[n*K+k] * res.Z[n*K+k] * compVar[k]
			}
			got := res.Norm[n][m]
			if T == 1 {
				if math.Abs(got) > 1e-12 {
					t.Errorf("unit %d, T = 1: %v, want 0", n+1, got)
				}
				continue
			}
			if tol := 4*math.Sqrt(se2) + 1e-9; math.Abs(got-want) > tol {
				t.Errorf("unit %d, T = %g: generated %.6f, Monte Carlo %.6f (tolerance %.2g)", n+1, T, got, want, tol)
			}
		}
	}
	if !strings.HasPrefix(res.LVT.Status, "converged") {
		t.Errorf("LVT fit: status %q", res.LVT.Status)
	}
	ut := res.LVT.UnitTemperature
	if len(ut) != len(y) {
		t.Fatalf("%d unit temperatures for %d points", len(ut), len(y))
	}
	for n, T := range ut {
		if n != 17 && T >= ut[17] {
			t.Errorf("point %d (y = %.2f) runs at E_q[T] = %.3f, the outlier at %.3f", n+1, y[n], T, ut[17])
		}
	}
}

// A tempered model whose unit plate has a statement without a tempered
// normalizer in the table (Poisson's base measure 1/x! makes its integral
// a series) gets NoLocalTemper, naming it, and no UnitLogNormalizers;
// one with only table entries gets UnitLogNormalizers.
func TestLocalTemperReason(t *testing.T) {
	withPoisson := strings.Replace(lvtGMM, "data b : int[N] in 0..1", "data b : int[N]", 1)
	withPoisson = strings.Replace(withPoisson, "b[n] ~ Bernoulli(p0)", "b[n] ~ Poisson(p0)", 1)
	src := generatedSource(t, "gmm", withPoisson)
	if !strings.Contains(src, "func (a *caModel) Tempering()") {
		t.Fatal("the model with a Poisson statement is not tempered at all; the test needs one that is")
	}
	if strings.Contains(src, "UnitLogNormalizers") || !strings.Contains(src, `func (a *caModel) NoLocalTemper() string`) ||
		!strings.Contains(src, "the tempered normalizer ∫ p(x)^(1/T) dx of Poisson (gmm.vi:17:3) is not in vigen's table yet") {
		t.Errorf("NoLocalTemper missing or without the reason:\n%s", src[strings.Index(src, "Tempering()"):][:2000])
	}
	if src := generatedSource(t, "gmm", lvtGMM); !strings.Contains(src, "func (a *caModel) UnitLogNormalizers(") || strings.Contains(src, "NoLocalTemper") {
		t.Error("the mixture with table entries only has no UnitLogNormalizers")
	}
}
