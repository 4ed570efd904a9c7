package codegen

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vigen-go/vigen/runtime"
)

// A Gaussian mixture with unknown means and precisions, written as a
// statistician would with one conjugate factor per component: mu and tau
// are arrays whose elements each get their own Normal and Gamma factor
// (Bishop §10.2 with independent priors). The fit must be a fixed point of
// the mean-field updates written out by hand:
//
//	r[n,k]  ∝ exp(E log π_k + ½E log τ_k − ½E τ_k · E(y_n − μ_k)²)
//	q(π)    = Dir(α + Σ_n r[n,·])
//	q(μ_k)  = N(m_k, 1/λ_k), λ_k = 1/s0² + E τ_k Σ_n r[n,k], m_k = E τ_k Σ_n r[n,k] y_n / λ_k
//	q(τ_k)  = Gamma(a0 + ½Σ_n r[n,k], b0 + ½Σ_n r[n,k] E(y_n − μ_k)²)
const gmmVI = `model gmm
size N, K
data y : real[N]
const alpha : real = 1
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
}
`

var gmmCase = fastTest("TestEndToEndMixtureElementwiseConjugate").fits("gmm", gmmVI, ", Tol: 1e-14, MeanTol: 1e-12, MaxIter: 100000")

func TestEndToEndMixtureElementwiseConjugate(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	var y []float64
	for n := range 80 {
		if n%3 == 0 {
			y = append(y, 4+0.5*rng.NormFloat64())
		} else {
			y = append(y, -1+1.5*rng.NormFloat64())
		}
	}
	const K, alpha, s0, a0, b0 = 2, 1.0, 10.0, 2.0, 1.0
	data, _ := json.Marshal(map[string]any{"y": y, "K": K})
	res := gmmCase.results(t, data)
	for _, r := range res {
		if !r.Converged {
			t.Errorf("%s: not converged: %s", r.Method, r.Status)
		}
		piA := r.Latent["pi"].Params["param"]
		mm, msd := r.Latent["mu"].Params["mean"], r.Latent["mu"].Params["sd"]
		ta, tb := r.Latent["tau"].Params["shape"], r.Latent["tau"].Params["rate"]
		prob := r.Latent["z"].Params["prob"]
		if len(piA) != K || len(mm) != K || len(ta) != K || len(prob) != K*len(y) {
			t.Fatalf("%s: result shapes: pi %d, mu %d, tau %d, z %d", r.Method, len(piA), len(mm), len(ta), len(prob))
		}
		if math.Abs(mm[0]-mm[1]) < 1 {
			t.Errorf("%s: components not separated: means %v", r.Method, mm)
		}
		check := func(what string, got, want float64) {
			t.Helper()
			if math.Abs(got-want) > 1e-7*math.Max(1, math.Abs(want)) {
				t.Errorf("%s: %s = %.12g, the hand-written update gives %.12g", r.Method, what, got, want)
			}
		}
		sumA := piA[0] + piA[1]
		sq := func(n, k int) float64 { d := y[n] - mm[k]; return d*d + msd[k]*msd[k] }
		for n := range y {
			var lr [K]float64
			for k := range K {
				lr[k] = runtime.Digamma(piA[k]) - runtime.Digamma(sumA) + 0.5*(runtime.Digamma(ta[k])-math.Log(tb[k])) - 0.5*ta[k]/tb[k]*sq(n, k)
			}
			m := math.Max(lr[0], lr[1])
			z := math.Exp(lr[0]-m) + math.Exp(lr[1]-m)
			for k := range K {
				check("z prob", prob[n*K+k], math.Exp(lr[k]-m)/z)
			}
		}
		for k := range K {
			nk, ny, nsq := 0.0, 0.0, 0.0
			for n := range y {
				nk += prob[n*K+k]
				ny += prob[n*K+k] * y[n]
				nsq += prob[n*K+k] * sq(n, k)
			}
			et := ta[k] / tb[k]
			lam := 1/(s0*s0) + et*nk
			check("pi", piA[k], alpha+nk)
			check("mu mean", mm[k], et*ny/lam)
			check("mu sd", msd[k], 1/math.Sqrt(lam))
			check("tau shape", ta[k], a0+nk/2)
			check("tau rate", tb[k], b0+nsq/2)
		}
	}
}

// An array of Normal means read one element at a time has one
// independent conjugate factor per element, here the exact posterior:
// mu[p] ~ N(0, 10²), y[n, p] ~ N(mu[p], 1) gives precision 1/100 + N and
// mean Σ_n y[n, p] / (1/100 + N).
const normalVectorVI = `model normvec
size N, P
data y : real[N, P]
latent mu : real[P] conjugate
mu ~ Normal(0, 10)
for n in 1:N {
  y[n] ~ Normal(mu, 1)
}
`

var normalVectorCase = fastTest("TestEndToEndNormalVectorConjugateExact").fits("normvec", normalVectorVI, "")

func TestEndToEndNormalVectorConjugateExact(t *testing.T) {
	y := [][]float64{{1.2, -0.4, 3}, {0.8, 0.1, 2.2}, {1.9, -1.3, 2.7}, {1.1, 0.2, 3.4}}
	data, _ := json.Marshal(map[string]any{"y": y})
	for _, r := range normalVectorCase.results(t, data) {
		check := againstCAVI(t, r.Method)
		lam := 1/100.0 + float64(len(y))
		for p := range y[0] {
			s := 0.0
			for n := range y {
				s += y[n][p]
			}
			check("mean", r.Latent["mu"].Params["mean"][p], s/lam)
			check("sd", r.Latent["mu"].Params["sd"][p], 1/math.Sqrt(lam))
		}
	}
}
