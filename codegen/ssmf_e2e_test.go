package codegen

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mathext"
)

// Latent Dirichlet allocation as in examples/lda, with α = 0.5, for the
// local steps of structured stochastic mean field (SSMF) given a draw of
// the topics.
const ssmfLDA = `model lda
size D, K, V
data w : bag[D] of 1..V
const alpha : real = 0.5
const eta : real = 0.01
latent beta : simplex[K, V] conjugate
latent theta : simplex[D, K] conjugate
latent z : int[D, w] in 1..K conjugate
for k in 1:K {
  beta[k] ~ Dirichlet(eta)
}
for d in 1:D {
  theta[d] ~ Dirichlet(alpha)
  for n in w[d] {
    z[d, n] ~ Categorical(theta[d])
    w[d, n] ~ Categorical(beta[z[d, n]])
  }
}
`

type ssmfLDAOut struct {
	Point struct {
		Settled  bool
		Theta, Z []float64
		Restored float64
		Shape    struct {
			Natural  []int
			Names    []string
			Families []string
			Rows     []int
		}
	}
	Gibbs struct {
		Z, Theta [][]float64
	}
}

// ssmfLDACase registers the case of test that runs the LDA hooks, for
// runSSMFLDA.
func ssmfLDACase(test e2eTest) *e2eCase {
	return test.driver("lda", ssmfLDA, "ssmf_lda_point.go").hook("hook.go", "ssmf_lda_units.go")
}

// runSSMFLDA runs the LDA hooks of c (ssmfLDACase) on docs (entries (term,
// count), terms from 1) with K topics over V terms and the point topics
// beta (K rows of V).
func runSSMFLDA(t *testing.T, c *e2eCase, docs [][][2]int, beta [][]float64, d, chains, burnIn, samples int) ssmfLDAOut {
	t.Helper()
	var logBeta []float64
	for _, row := range beta {
		for _, b := range row {
			logBeta = append(logBeta, math.Log(b))
		}
	}
	data, _ := json.Marshal(map[string]any{"D": len(docs), "K": len(beta), "V": len(beta[0]), "w": docs})
	in, _ := json.Marshal(map[string]any{"Data": json.RawMessage(data), "LogBeta": logBeta, "D": d, "Chains": chains, "BurnIn": burnIn, "Samples": samples})
	out := c.run(t, in)
	var res ssmfLDAOut
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("driver output: %v\n%s", err, out)
	}
	return res
}

var ssmfSetMomentsLDACase = ssmfLDACase(fastTest("TestEndToEndSSMFSetMomentsLDA"))

// With q(β) a point mass at β̃ (SetMoments), UpdateUnit's fit of a
// document is the mean-field fixed point given β̃, written by hand:
//
//	φ_nk ∝ β̃_{k,w_n} exp(ψ(γ_k) − ψ(Σ_j γ_j)),   γ_k = α + Σ_n c_n φ_nk,
//
// and SetNatural gives q(β)'s expectations back.
func TestEndToEndSSMFSetMomentsLDA(t *testing.T) {
	const alpha = 0.5
	docs := [][][2]int{{{1, 2}, {3, 1}}, {{1, 1}, {2, 3}, {4, 2}, {5, 1}}, {{2, 1}}}
	beta := [][]float64{{0.4, 0.1, 0.2, 0.25, 0.05}, {0.05, 0.5, 0.1, 0.05, 0.3}, {0.2, 0.2, 0.2, 0.2, 0.2}}
	const K, d = 3, 1
	res := runSSMFLDA(t, ssmfSetMomentsLDACase, docs, beta, d, 0, 0, 0).Point
	sh := res.Shape
	if strings.Join(sh.Families, ",") != "Dirichlet" || len(sh.Rows) != 1 || sh.Rows[0] != 5 || len(sh.Natural) != 1 || sh.Natural[0] != K*5 {
		t.Errorf("Stochastic() = %+v, want the Dirichlet beta with rows of 5 and 15 natural parameters", sh)
	}
	if !res.Settled {
		t.Errorf("UpdateUnit did not settle")
	}
	doc := docs[d]
	if len(res.Z) != len(doc)*K || len(res.Theta) != K {
		t.Fatalf("unit %d: %d z probabilities and %d theta parameters, want %d and %d", d, len(res.Z), len(res.Theta), len(doc)*K, K)
	}
	var sum float64
	for _, g := range res.Theta {
		sum += g
	}
	for n, e := range doc {
		var norm float64
		want := make([]float64, K)
		for k := range K {
			want[k] = beta[k][e[0]-1] * math.Exp(mathext.Digamma(res.Theta[k])-mathext.Digamma(sum))
			norm += want[k]
		}
		for k := range K {
			scalarClose(t, "SSMF", "z given the point beta", res.Z[n*K+k], want[k]/norm, 1e-10) // runtime.Digamma and gonum's differ by ~1e-12
		}
	}
	for k := range K {
		want := alpha
		for n, e := range doc {
			want += float64(e[1]) * res.Z[n*K+k]
		}
		scalarClose(t, "SSMF", "theta given z", res.Theta[k], want, 1e-9)
	}
	if res.Restored > 1e-12 { // η = λ − 1 and back may round
		t.Errorf("SetNatural after SetMoments left E_q[log beta] (or its exponential) %g from where it was", res.Restored)
	}
}

var gibbsUnitLDACase = ssmfLDACase(fastTest("TestEndToEndGibbsUnitLDA"))

// GibbsUnit with q(β) a point mass at β̃ samples p(z_d, θ_d | w_d, β̃); the
// average of its draws of z must match the exact marginals p(z_dn | w_d, β̃),
// computed here by enumerating the assignments of the document's tokens
// with θ_d integrated out:
//
//	p(z | w, β̃) ∝ Π_n β̃_{z_n, w_n} · Π_k Γ(α + n_k) / Γ(Kα + N).
//
// The document's second entry stands for two tokens of the same term
// (DrawCategoricalRows draws both), and it is the second document, so its
// rows are offset in the bag. The error of the average is estimated from
// independent chains.
func TestEndToEndGibbsUnitLDA(t *testing.T) {
	const alpha, K, d = 0.5, 2, 1
	docs := [][][2]int{{{1, 2}}, {{1, 1}, {2, 2}}}
	beta := [][]float64{{0.7, 0.3}, {0.2, 0.8}}
	const chains, burnIn, samples = 40, 50, 500
	res := runSSMFLDA(t, gibbsUnitLDACase, docs, beta, d, chains, burnIn, samples).Gibbs
	if len(res.Z) != chains {
		t.Fatalf("%d chains, want %d", len(res.Z), chains)
	}
	// The tokens are term 1 (entry 1) and term 2 twice (entry 2); tok[i][k]
	// is p(z_i = k | w, β̃), by summing over the 2³ assignments.
	terms := []int{0, 1, 1}
	tok := make([][K]float64, len(terms))
	var total float64
	for a := range 1 << len(terms) {
		p := 1.0
		var n [K]int
		for i, v := range terms {
			z := a >> i & 1
			p *= beta[z][v]
			n[z]++
		}
		for k := range K {
			lg, _ := math.Lgamma(alpha + float64(n[k]))
			p *= math.Exp(lg)
		}
		total += p
		for i := range terms {
			tok[i][a>>i&1] += p
		}
	}
	// an entry's row is the average of its tokens' indicators
	exact := make([]float64, len(docs[d])*K)
	for k := range K {
		exact[k] = tok[0][k] / total
		exact[K+k] = (tok[1][k] + tok[2][k]) / 2 / total
	}
	for i, want := range exact {
		var mean, sq float64
		for _, z := range res.Z {
			mean += z[i]
		}
		mean /= chains
		for _, z := range res.Z {
			sq += (z[i] - mean) * (z[i] - mean)
		}
		se := math.Sqrt(sq / (chains - 1) / chains)
		if math.Abs(mean-want) > 4*se || se > 0.01 {
			t.Errorf("entry %d, topic %d: the average of the Gibbs draws is %.4f ± %.4f, the exact marginal %.4f", i/K+1, i%K+1, mean, se, want)
		}
	}
	// q(θ_d) ends as its closed form given the average
	for c, z := range res.Z {
		for k := range K {
			want := alpha
			for n, e := range docs[d] {
				want += float64(e[1]) * z[n*K+k]
			}
			if math.Abs(res.Theta[c][k]-want) > 1e-12 {
				t.Errorf("chain %d: theta[%d] = %v after GibbsUnit, want α + Σ c z = %v", c, k+1, res.Theta[c][k], want)
			}
		}
	}
}

var ssmfSetMomentsMixtureCase = fastTest("TestEndToEndSSMFSetMomentsMixture").driver("gmm", gmmVI, "ssmf_gmm_point.go").hook("hook.go", "ssmf_gmm_point_masses.go")

// With the Gaussian mixture's globals at point masses (π̃, μ̃, τ̃), a point's
// assignment is the exact conditional
//
//	r_k ∝ π̃_k τ̃_k^½ exp(−½ τ̃_k (y_n − μ̃_k)²),
//
// which needs q(μ)'s variance read by the update to be 0: the Normal's
// point mass is the Normal of sd 0. The unit's natural parameters of q(μ)
// and q(τ) are those given the points too.
func TestEndToEndSSMFSetMomentsMixture(t *testing.T) {
	y := []float64{-1.3, 0.4, 2.9, 5.1}
	pi, mu, tau := []float64{0.5, 0.3, 0.2}, []float64{-1, 1.5, 4}, []float64{2, 0.7, 1.3}
	const K, n = 3, 2
	data, _ := json.Marshal(map[string]any{"y": y, "K": K})
	in, _ := json.Marshal(map[string]any{"Data": json.RawMessage(data), "Pi": pi, "Mu": mu, "Tau": tau, "N": n})
	out := ssmfSetMomentsMixtureCase.run(t, in)
	var res struct {
		Z, Mu, Tau []float64
		Shape      struct {
			Families []string
			Rows     []int
		}
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("driver output: %v\n%s", err, out)
	}
	if strings.Join(res.Shape.Families, ",") != "Dirichlet,Normal,Gamma" || len(res.Shape.Rows) != 3 || res.Shape.Rows[0] != K || res.Shape.Rows[1] != 1 || res.Shape.Rows[2] != 1 {
		t.Errorf("Stochastic() = %+v, want the families Dirichlet, Normal, Gamma with rows K, 1, 1", res.Shape)
	}
	r := make([]float64, K)
	var norm float64
	for k := range K {
		r[k] = pi[k] * math.Sqrt(tau[k]) * math.Exp(-0.5*tau[k]*(y[n]-mu[k])*(y[n]-mu[k]))
		norm += r[k]
	}
	for k := range K {
		r[k] /= norm
		scalarClose(t, "SSMF", "z given the points", res.Z[k], r[k], 1e-12)
		// μ: t = (x, x²), η = (τ r y, −½ τ r); τ: t = (log x, x), η = (½ r, −½ r (y − μ)²)
		scalarClose(t, "SSMF", "η₁ of mu", res.Mu[k], tau[k]*r[k]*y[n], 1e-12)
		scalarClose(t, "SSMF", "η₂ of mu", res.Mu[K+k], -0.5*tau[k]*r[k], 1e-12)
		scalarClose(t, "SSMF", "η₁ of tau", res.Tau[k], 0.5*r[k], 1e-12)
		scalarClose(t, "SSMF", "η₂ of tau", res.Tau[K+k], -0.5*r[k]*(y[n]-mu[k])*(y[n]-mu[k]), 1e-12)
	}
}

// A global whose family SSMF cannot draw (InverseGamma); its unit
// statistics read a continuous local, so the Gibbs step does not apply
// either.
const ssmfInvGammaVI = `model ig
size D
data y : real[D]
latent s2 : real conjugate
latent m : real[D] conjugate
s2 ~ InverseGamma(2, 1)
for d in 1:D {
  m[d] ~ Normal(0, sqrt(s2))
  y[d] ~ Normal(m[d], 1)
}
`

// Two categorical locals read together by the global A's unit statistics
// (x_n y_n: a pair, as an HMM's transitions are).
const ssmfPairVI = `model pair
size N, K
data o : real[N]
const p : simplex[K]
const mu : real[K]
latent A : simplex[K, K] conjugate
latent x : int[N] in 1..K conjugate
latent y : int[N] in 1..K conjugate
for k in 1:K {
  A[k] ~ Dirichlet(1)
}
for n in 1:N {
  x[n] ~ Categorical(p)
  y[n] ~ Categorical(A[x[n]])
  o[n] ~ Normal(mu[y[n]], 1)
}
`

// reasonOf returns the string the generated method name (NoSSMF, NoGibbs)
// returns, or "" if code has no such method.
func reasonOf(t *testing.T, code, method string) string {
	t.Helper()
	i := strings.Index(code, "func (a *caModel) "+method+"() string {")
	if i < 0 {
		return ""
	}
	rest := code[i:]
	j := strings.Index(rest, "return ")
	k := strings.Index(rest[j:], "\n")
	var s string
	if err := json.Unmarshal([]byte(rest[j+len("return "):j+k]), &s); err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	return s
}

// Models SSMF or the Gibbs local step does not apply to get NoSSMF or
// NoGibbs instead of SetMoments or GibbsUnit, naming the latent at fault
// and its position; the others get the methods.
func TestSSMFAndGibbsReasons(t *testing.T) {
	for _, c := range []struct {
		name, src      string
		noSSMF, noGibb []string // "" : the method is emitted
	}{
		{"lda", ssmfLDA, nil, nil},
		{"gmm", gmmVI, nil, nil},
		{"ctmb", ctmTopicsVI,
			[]string{"the local theta (ctmb.vi:8:8) is nonconjugate"},
			[]string{"the local theta (ctmb.vi:8:8) is nonconjugate"}},
		{"ig", ssmfInvGammaVI,
			[]string{"the global s2 (ig.vi:4:8) is InverseGamma, which SSMF cannot draw"},
			[]string{"a unit's statistics for the global s2 (ig.vi:4:8) read the local m (ig.vi:5:8)"}},
		{"pair", ssmfPairVI, nil,
			[]string{"a unit's statistics for the global A (pair.vi:6:8) are not linear in the draws of the categorical x (pair.vi:7:8) and y (pair.vi:8:8)"}},
		{"gp", gammaPoissonVI, nil,
			[]string{"a unit's statistics for the global b (gp.vi:5:8) read the local lam (gp.vi:6:8)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			files := generateChecked(t, c.name, c.src)
			var code strings.Builder
			for _, f := range files {
				code.Write(f.Src)
			}
			src := code.String()
			check := func(method, emitted string, want []string) {
				why := reasonOf(t, src, method)
				if len(want) == 0 {
					if why != "" || !strings.Contains(src, "func (a *caModel) "+emitted+"(") {
						t.Errorf("no %s; %s says %q", emitted, method, why)
					}
					return
				}
				if strings.Contains(src, "func (a *caModel) "+emitted+"(") {
					t.Errorf("%s is emitted although %s applies", emitted, method)
				}
				for _, w := range want {
					if !strings.Contains(why, w) {
						t.Errorf("%s says %q, which does not contain %q", method, why, w)
					}
				}
			}
			check("NoSSMF", "SetMoments", c.noSSMF)
			check("NoGibbs", "GibbsUnit", c.noGibb)
		})
	}
}

// The code generated for every example model type-checks with the SSMF
// and Gibbs methods (or their reasons).
// A model whose only local latent is continuous gets a GibbsUnit without
// categorical draws to average; it must compile too (it once declared an
// unused loop variable, which broke every fit of such a model).
const gibbsContinuousVI = `model loc
size D
data x : real[D]
data c : int[D]
latent mu : real conjugate
latent lam : real[D] conjugate
mu ~ Normal(0, 10)
for d in 1:D {
  x[d] ~ Normal(mu, 1)
  lam[d] ~ Gamma(2, 1)
  c[d] ~ Poisson(lam[d])
}
`

func TestSSMFExamplesCompile(t *testing.T) {
	t.Run("continuous locals", func(t *testing.T) {
		files := generateChecked(t, "loc", gibbsContinuousVI)
		if !strings.Contains(string(files[0].Src), "func (a *caModel) GibbsUnit(") {
			t.Errorf("no GibbsUnit for a model whose locals are all conjugate")
		}
	})
	vis, err := filepath.Glob("../examples/*/*.vi")
	if err != nil || len(vis) == 0 {
		t.Fatalf("no example models: %v", err)
	}
	for _, vi := range vis {
		name := strings.TrimSuffix(filepath.Base(vi), ".vi")
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(vi)
			if err != nil {
				t.Fatal(err)
			}
			generateChecked(t, name, string(src))
		})
	}
}
