package codegen

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/golden"
)

// A Gamma–Poisson hierarchy with a conjugate global rate b (two natural
// parameter blocks) and conjugate local rates lam[d].
const gammaPoissonVI = `model gp
size D
data y : int[D]
const a : real = 2
latent b : real conjugate
latent lam : real[D] conjugate
b ~ Gamma(1, 1)
for d in 1:D {
  lam[d] ~ Gamma(a, b)
  y[d] ~ Poisson(lam[d])
}
`

// sviGammaPoissonPasses is the number of full-batch passes.
const sviGammaPoissonPasses = 6

var sviGammaPoissonCase = fastTest("TestEndToEndSVIGammaPoisson").driver("gp", gammaPoissonVI, "fit_svi_gamma_poisson.go", "PASSES", fmt.Sprint(sviGammaPoissonPasses))

// SVI with the whole data as its minibatch is the damped coordinate
// ascent λ ← (1 − ρ_t)λ + ρ_t λ̂; here it is written out by hand from the
// model's conjugate updates and compared with the generated fit, pass by
// pass. Minibatch runs must not depend on the number of workers.
func TestEndToEndSVIGammaPoisson(t *testing.T) {
	y := []float64{3, 0, 7, 2, 2, 5, 1, 9, 4, 0, 3}
	const a, passes = 2.0, sviGammaPoissonPasses
	data, _ := json.Marshal(map[string]any{"D": len(y), "y": y})
	out := sviGammaPoissonCase.run(t, data)
	var res []struct {
		Status     string    `json:"status"`
		Iterations int       `json:"iterations"`
		ELBO       []float64 `json:"elbo"`
		Latent     struct {
			B struct {
				Params map[string][]float64 `json:"params"`
			} `json:"b"`
		} `json:"latent"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// by hand: q(b) = Gamma(shape, rate), η = (shape − 1, −rate)
	shape, rate := 3.0, 0.5
	for step := 0; step < passes; step++ {
		eb := shape / rate
		eta1, eta2 := 0.0, -1.0 // the prior Gamma(1, 1)
		for _, yd := range y {
			// q(lam_d) = Gamma(a + y_d, E[b] + 1)
			eta1 += a
			eta2 -= (a + yd) / (eb + 1)
		}
		rho := math.Pow(1+float64(step), -0.7)
		n1 := (1-rho)*(shape-1) + rho*eta1
		n2 := (1-rho)*(-rate) + rho*eta2
		shape, rate = n1+1, -n2
	}
	r := res[0]
	if r.Status != "passes_completed" || r.Iterations != passes || len(r.ELBO) != passes {
		t.Errorf("status %q, %d iterations, %d ELBO values; want passes_completed and %d", r.Status, r.Iterations, len(r.ELBO), passes)
	}
	got := r.Latent.B.Params
	if math.Abs(got["shape"][0]-shape) > 1e-12*shape || math.Abs(got["rate"][0]-rate) > 1e-12*rate {
		t.Errorf("q(b) = Gamma(%v, %v) after %d full-batch SVI steps, want Gamma(%v, %v) by hand", got["shape"][0], got["rate"][0], passes, shape, rate)
	}
	b1, b3 := res[1].Latent.B.Params, res[2].Latent.B.Params
	if b1["shape"][0] != b3["shape"][0] || b1["rate"][0] != b3["rate"][0] {
		t.Errorf("minibatch SVI gave q(b) = Gamma(%v, %v) with 1 worker and Gamma(%v, %v) with 3", b1["shape"][0], b1["rate"][0], b3["shape"][0], b3["rate"][0])
	}
}

// A correlated topic model whose topics are a conjugate Dirichlet latent:
// SVI's global step with nonconjugate (Laplace or delta) locals.
const ctmTopicsVI = `model ctmb
size D, K, V
data w : bag[D] of 1..V
data mu0 : real[K]
data Sigma0 : cov[K]
const eta : real = 0.01
latent beta : simplex[K, V] conjugate
latent theta : real[D, K] nonconjugate laplace
latent z : int[D, w] in 1..K conjugate
for k in 1:K {
  beta[k] ~ Dirichlet(eta)
}
for d in 1:D {
  theta[d] ~ MvNormal(mu0, Sigma0)
  for n in w[d] {
    z[d, n] ~ Categorical(softmax(theta[d]))
    w[d, n] ~ Categorical(beta[z[d, n]])
  }
}
`

// sviTopicsCases are the model with a fixed prior and, since with the
// logistic-normal prior's mean and covariance as params each step is also
// an online-EM step, with them as params: SVIGlobals and SVIParams
// together.
var sviTopicsCases = [2]*e2eCase{
	slowTest("TestEndToEndSVITopicsWithGaussianLocals").driver("ctmb", ctmTopicsVI, "fit_svi_topics.go"),
	slowTest("TestEndToEndSVITopicsWithGaussianLocals").driver("ctmb", strings.NewReplacer("data mu0 : real[K]", "param mu0 : real[K]", "data Sigma0 : cov[K]", "param Sigma0 : cov[K]").Replace(ctmTopicsVI), "fit_svi_topics.go"),
}

// With the corpus as its one minibatch and ρ_0 = 1, SVI's step is one
// coordinate-ascent iteration: the same local fits (Laplace or delta for θ,
// closed form for z) against the same start, and λ̂ = η + Σ_d unit d's
// counts (NaturalPrior, NaturalUnit) equal to BetaNatural's λ.
func TestEndToEndSVITopicsWithGaussianLocals(t *testing.T) {
	golden.SlowTier(t)
	t.Run("fixed prior", func(t *testing.T) { sviTopics(t, sviTopicsCases[0]) })
	t.Run("params", func(t *testing.T) { sviTopics(t, sviTopicsCases[1]) })
}

func sviTopics(t *testing.T, c *e2eCase) {
	docs := [][][2]int{{{1, 3}, {2, 1}, {5, 2}}, {{3, 4}, {4, 1}}, {{1, 1}, {3, 2}, {4, 2}}, {{2, 5}, {5, 1}}, {{1, 2}, {4, 3}}, {{3, 1}, {5, 4}}}
	data, _ := json.Marshal(map[string]any{"D": len(docs), "K": 2, "V": 5, "w": docs,
		"mu0": []float64{0, 0}, "Sigma0": [][]float64{{1, 0.3}, {0.3, 1}}})
	out := c.run(t, data)
	var res []struct {
		Status string    `json:"status"`
		ELBO   []float64 `json:"elbo"`
		Latent struct {
			Beta struct {
				Params map[string][]float64 `json:"params"`
			} `json:"beta"`
			Theta []struct {
				Mean []float64 `json:"mean"`
			} `json:"theta"`
		} `json:"latent"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for m, method := range []string{"laplace", "delta"} {
		ca, svi, w1, w4 := res[4*m], res[4*m+1], res[4*m+2], res[4*m+3]
		a, b := ca.Latent.Beta.Params["param"], svi.Latent.Beta.Params["param"]
		for i := range a {
			if math.Abs(a[i]-b[i]) > 1e-12*math.Max(1, a[i]) {
				t.Errorf("%s: λ[%d] = %v after the full-batch SVI step, %v after one CA iteration", method, i, b[i], a[i])
			}
		}
		for d := range ca.Latent.Theta {
			for k, x := range ca.Latent.Theta[d].Mean {
				if y := svi.Latent.Theta[d].Mean[k]; math.Abs(x-y) > 1e-12*math.Max(1, math.Abs(x)) {
					t.Errorf("%s: E[θ_%d,%d] = %v under SVI, %v under CA", method, d, k, y, x)
				}
			}
		}
		if math.Abs(ca.ELBO[0]-svi.ELBO[0]) > 1e-10*math.Abs(ca.ELBO[0]) {
			t.Errorf("%s: ELBO %v after the SVI step, %v after one iteration", method, svi.ELBO[0], ca.ELBO[0])
		}
		if fmt.Sprint(w1.Latent.Beta.Params) != fmt.Sprint(w4.Latent.Beta.Params) || fmt.Sprint(w1.ELBO) != fmt.Sprint(w4.ELBO) {
			t.Errorf("%s: minibatch SVI differs between 1 and 4 workers", method)
		}
		if w1.Status != "passes_completed" || len(w1.ELBO) != 3 {
			t.Errorf("%s: status %q with %d ELBO values", method, w1.Status, len(w1.ELBO))
		}
	}
}
