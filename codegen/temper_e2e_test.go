package codegen

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/golden"
	"github.com/vigen-go/vigen/runtime"
)

// LDA, as a user writes it, for the tempering tests.
const temperLDA = `model lda
size D, K, V
data w : bag[D] of 1..V
const alpha : real = 0.3
const eta : real = 0.05
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

// ldaCorpus draws D documents of about n tokens from an LDA with K topics
// over V terms, as the (term, count) bags the data file takes.
func ldaCorpus(rng *rand.Rand, D, K, V, n int) [][][2]int {
	topics := make([][]float64, K)
	for k := range topics {
		topics[k] = make([]float64, V)
		for v := range topics[k] {
			topics[k][v] = 0.05
		}
		for v := k * V / K; v < (k+1)*V/K; v++ {
			topics[k][v] += 1
		}
	}
	docs := make([][][2]int, D)
	for d := range docs {
		counts := make([]int, V)
		mix := []float64{rng.Float64(), rng.Float64(), rng.Float64()}
		for range n {
			k := pick(rng, mix[:K])
			counts[pick(rng, topics[k])]++
		}
		for v, c := range counts {
			if c > 0 {
				docs[d] = append(docs[d], [2]int{v + 1, c})
			}
		}
	}
	return docs
}

func pick(rng *rand.Rand, w []float64) int {
	s := 0.0
	for _, x := range w {
		s += x
	}
	u := rng.Float64() * s
	for i, x := range w {
		if u -= x; u < 0 {
			return i
		}
	}
	return len(w) - 1
}

type temperResult struct {
	resultJSON
	Temperature  []float64 `json:"temperature"`
	TemperedELBO []float64 `json:"tempered_elbo"`
	Tempering    string    `json:"tempering"`
}

// temperedLDACase's hook takes which of z's per-token factors to keep (nil:
// all).
var temperedLDACase = fastTest("TestEndToEndTemperedLDA").driver("lda", temperLDA, "fit_tempered_lda.go").
	hook("hook.go", "temper_start_and_units.go", "q.latent(m)", "q.latent(m, nil)")

// The tempered updates of generated LDA, checked against Mandt et al.'s
// updates written out by hand (Eq. 2 tempers every statement inside the
// document loop, θ_d's prior included; §3.2 divides the local natural
// parameters and the documents' sufficient statistics by T):
//
//	γ_d   = 1 + (α − 1 + Σ_n c_n φ_n)/T
//	φ_nk  ∝ exp((ψ(γ_dk) − ψ(Σγ_d) + ψ(λ_k,w_n) − ψ(Σ_v λ_kv))/T)
//	λ_kv  = η + Σ_d Σ_n c_n φ_nk [w_n = v]/T
//
// and that once the schedule has ended a tempered fit is the untempered
// one bit for bit.
func TestEndToEndTemperedLDA(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	const D, K, V = 12, 3, 15
	docs := ldaCorpus(rng, D, K, V, 30)
	data, _ := json.Marshal(map[string]any{"D": D, "K": K, "V": V, "w": docs})
	out := temperedLDACase.run(t, data)
	var res struct {
		Start     map[string]gaussianJSON `json:"start"`
		One       temperResult            `json:"one"`
		OneLJ     []float64               `json:"one_lj"`
		Annealed  temperResult            `json:"annealed"`
		Annealed1 temperResult            `json:"annealed_w1"`
		Head      temperResult            `json:"head"`
		Tail      temperResult            `json:"tail"`
		VT        temperResult            `json:"vt"`
		VTLJ      []float64               `json:"vt_lj"`
		SVIVT     temperResult            `json:"svi_vt"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("driver output: %v\n%s", err, out)
	}
	const alpha, eta = 0.3, 0.05

	// One iteration at T = 4 from the start, by hand.
	invT := 1 / 4.0
	lam := append([]float64(nil), res.Start["beta"].Params["param"]...)
	gam := append([]float64(nil), res.Start["theta"].Params["param"]...)
	phi := append([]float64(nil), res.Start["z"].Params["prob"]...)
	elogBeta := func(lam []float64) []float64 {
		out := make([]float64, K*V)
		for k := range K {
			s := 0.0
			for v := range V {
				s += lam[k*V+v]
			}
			for v := range V {
				out[k*V+v] = runtime.Digamma(lam[k*V+v]) - runtime.Digamma(s)
			}
		}
		return out
	}
	eb := elogBeta(lam)
	entry := 0
	for d, doc := range docs {
		g := gam[d*K : (d+1)*K]
		ph := phi[entry*K : (entry+len(doc))*K]
		for sweep := 0; sweep < 20000; sweep++ {
			change := 0.0
			prev := append([]float64(nil), g...)
			for k := range K {
				// θ_d's prior is left untempered (Mandt et al. App. B.2)
				s := 0.0
				for n, tc := range doc {
					s += float64(tc[1]) * ph[n*K+k]
				}
				g[k] = alpha + invT*s
			}
			change = math.Max(change, runtime.L2Change(g, prev))
			sg := 0.0
			for _, x := range g {
				sg += x
			}
			prevPh := append([]float64(nil), ph...)
			for n, tc := range doc {
				row := ph[n*K : (n+1)*K]
				for k := range K {
					row[k] = invT * (runtime.Digamma(g[k]) - runtime.Digamma(sg) + eb[k*V+tc[0]-1])
				}
				runtime.SoftmaxRows(row, K)
			}
			change = math.Max(change, runtime.L2Change(ph, prevPh))
			if change < 1e-13 {
				break
			}
		}
		entry += len(doc)
	}
	for i := range lam {
		lam[i] = eta
	}
	entry = 0
	for _, doc := range docs {
		for n, tc := range doc {
			for k := range K {
				lam[k*V+tc[0]-1] += invT * float64(tc[1]) * phi[(entry+n)*K+k]
			}
		}
		entry += len(doc)
	}
	closeTo := func(what string, got, want []float64, tol float64) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
		}
		worst := 0.0
		for i := range got {
			worst = math.Max(worst, math.Abs(got[i]-want[i])/math.Max(1, math.Abs(want[i])))
		}
		if worst > tol {
			t.Errorf("%s: largest relative difference from the hand-written tempered update %.3g > %.1g", what, worst, tol)
		}
	}
	closeTo("λ after one iteration at T = 4", res.One.Latent["beta"].Params["param"], lam, 1e-9)
	closeTo("γ after one iteration at T = 4", res.One.Latent["theta"].Params["param"], gam, 1e-9)
	if len(res.One.Temperature) != 1 || res.One.Temperature[0] != 4 {
		t.Errorf("temperature trace %v, want [4]", res.One.Temperature)
	}
	if res.One.Tempering != "anneal linear:4:10" {
		t.Errorf("tempering %q, want %q", res.One.Tempering, "anneal linear:4:10")
	}
	if res.One.Converged || !strings.Contains(res.One.Status, "tempered") {
		t.Errorf("a fit stopped at T = 4 has status %q (converged %v), which should say it is still tempered", res.One.Status, res.One.Converged)
	}

	// E_q[log p(x_d, z_d | β)] by hand at the fitted q, and the tempered
	// ELBO of Eq. 4 from it.
	lj := handLDALogJoint(docs, K, V, alpha, res.One.Latent["beta"].Params["param"], res.One.Latent["theta"].Params["param"], res.One.Latent["z"].Params["prob"])
	closeTo("UnitLogJoint", res.OneLJ, lj, 1e-10)
	sum := 0.0
	for _, x := range lj {
		sum += x
	}
	want := res.One.ELBO[0] - (1-invT)*sum
	if got := res.One.TemperedELBO[0]; math.Abs(got-want) > 1e-9*math.Abs(want) {
		t.Errorf("tempered ELBO %.12g, want ELBO − (1 − 1/T)·Σ_d E[log p(x_d, z_d | β)] = %.12g", got, want)
	}

	// After the schedule (iterations 1–3 tempered), the fit is the
	// untempered one started where the schedule left it, bit for bit.
	if got := res.Annealed.Temperature; len(got) != 10 || got[0] != 5 || got[2] <= 1 || got[3] != 1 {
		t.Errorf("annealed temperature trace %v: want 5, …, > 1 at iteration 3, then 1", got)
	}
	for _, name := range []string{"beta", "theta", "z"} {
		a, b := res.Annealed.Latent[name], res.Tail.Latent[name]
		for p, v := range a.Params {
			for i := range v {
				if v[i] != b.Params[p][i] {
					t.Fatalf("%s %s[%d]: annealed fit %v, untempered fit from the schedule's end %v: not bit for bit", name, p, i, v[i], b.Params[p][i])
				}
			}
		}
	}
	// and the same whatever the number of workers
	for i, e := range res.Annealed.TemperedELBO {
		if e != res.Annealed1.TemperedELBO[i] {
			t.Fatalf("tempered ELBO of iteration %d: %v with 3 workers, %v with 1", i+1, e, res.Annealed1.TemperedELBO[i])
		}
	}
	for p, v := range res.Annealed.Latent["beta"].Params {
		for i := range v {
			if v[i] != res.Annealed1.Latent["beta"].Params[p][i] {
				t.Fatalf("beta %s[%d]: %v with 3 workers, %v with 1", p, i, v[i], res.Annealed1.Latent["beta"].Params[p][i])
			}
		}
	}
	for i, e := range res.Tail.ELBO {
		if e != res.Annealed.ELBO[3+i] {
			t.Fatalf("ELBO of iteration %d: annealed %v, untempered %v", 4+i, res.Annealed.ELBO[3+i], e)
		}
	}

	// VT: q(y) after one iteration is Eq. 9's at the fitted q, and the
	// reported temperature its mean.
	grid, logC := []float64{1, 2, 4}, []float64{0, -40, -90}
	ljv := handLDALogJoint(docs, K, V, alpha, res.VT.Latent["beta"].Params["param"], res.VT.Latent["theta"].Params["param"], res.VT.Latent["z"].Params["prob"])
	closeTo("UnitLogJoint under VT", res.VTLJ, ljv, 1e-10)
	s := 0.0
	for _, x := range ljv {
		s += x
	}
	r := make([]float64, len(grid))
	for m, T := range grid {
		r[m] = s/T + math.Log(1.0/3) - logC[m]
	}
	runtime.SoftmaxRows(r, len(r))
	meanT, invMean := 0.0, 0.0
	for m, T := range grid {
		meanT += r[m] * T
		invMean += r[m] / T
	}
	if got := res.VT.Temperature[0]; math.Abs(got-meanT) > 1e-9*meanT {
		t.Errorf("VT: E_q[T] = %.12g, Eq. 9 by hand gives %.12g (r = %v)", got, meanT, r)
	}
	if tr := res.SVIVT.Temperature; len(tr) != 3 || len(res.SVIVT.TemperedELBO) != 3 || tr[0] < 1 || tr[0] > 4 {
		t.Errorf("VT under SVI: temperature trace %v (want 3 passes, E_q[T] in [1, 4]), tempered ELBO %v", tr, res.SVIVT.TemperedELBO)
	}
	hy := 0.0
	for m := range r {
		if r[m] > 0 {
			hy += r[m] * (math.Log(1.0/3) - logC[m] - math.Log(r[m]))
		}
	}
	wantT := res.VT.ELBO[0] - (1-invMean)*s + hy
	if got := res.VT.TemperedELBO[0]; math.Abs(got-wantT) > 1e-9*math.Abs(wantT) {
		t.Errorf("VT: T-ELBO %.12g, by hand %.12g", got, wantT)
	}
}

// handLDALogJoint is E_q[Σ_n c_n (log p(z_dn | θ_d) + log p(w_dn | β,
// z_dn))] of each document, written out: the statements a temperature
// divides (θ_d's prior p(θ_d | α) is not among them).
func handLDALogJoint(docs [][][2]int, K, V int, alpha float64, lam, gam, phi []float64) []float64 {
	eb := make([]float64, K*V)
	for k := range K {
		s := 0.0
		for v := range V {
			s += lam[k*V+v]
		}
		for v := range V {
			eb[k*V+v] = runtime.Digamma(lam[k*V+v]) - runtime.Digamma(s)
		}
	}
	out := make([]float64, len(docs))
	entry := 0
	for d, doc := range docs {
		g := gam[d*K : (d+1)*K]
		sg := 0.0
		for _, x := range g {
			sg += x
		}
		et := make([]float64, K)
		for k := range K {
			et[k] = runtime.Digamma(g[k]) - runtime.Digamma(sg)
		}
		v := 0.0
		for n, tc := range doc {
			for k := range K {
				v += float64(tc[1]) * phi[(entry+n)*K+k] * (et[k] + eb[k*V+tc[0]-1])
			}
		}
		out[d] = v
		entry += len(doc)
	}
	return out
}

var temperCollapseCase = fastTest("TestEndToEndTemperCollapseWarning").driver("gmm", gmmVI, "fit_annealed_or_not.go")

// Annealing a mixture with unknown precisions from T = 10 merges its
// components into identical copies, a fixed point coordinate ascent never
// leaves: the result says so, and the untempered fit, which separates
// them, does not.
func TestEndToEndTemperCollapseWarning(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	means := []float64{-10, -4, 0, 3, 8}
	var y []float64
	for n := range 400 {
		y = append(y, means[n%5]+rng.NormFloat64())
	}
	data, _ := json.Marshal(map[string]any{"y": y, "K": 5})
	out := temperCollapseCase.run(t, data)
	var res []struct {
		ELBO    []float64 `json:"elbo"`
		Warning string    `json:"warning"`
		Latent  map[string]gaussianJSON
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("driver output: %v\n%s", err, out)
	}
	plain, annealed := res[0], res[1]
	if plain.Warning != "" {
		t.Errorf("untempered fit warns: %s", plain.Warning)
	}
	mu := annealed.Latent["mu"].Params["mean"]
	for _, m := range mu {
		if m != mu[0] {
			t.Fatalf("the annealed fit did not merge the components (means %v); the test needs a case that does", mu)
		}
	}
	if !strings.Contains(annealed.Warning, "components of mu, tau are identical") {
		t.Errorf("annealed fit with merged components warns %q", annealed.Warning)
	}
}

const temperRefusedVI = `model hier
size N
data y : real[N]
latent mu : real conjugate
latent s : real<lower=0> nonconjugate laplace
latent x : real[N] conjugate
mu ~ Normal(0, 10)
s ~ Gamma(2, 1)
for n in 1:N {
  x[n] ~ Normal(mu, s)
  y[n] ~ Normal(x[n], 1)
}
`

var temperRefusedCase = fastTest("TestEndToEndTemperRefused").driver("hier", temperRefusedVI, "fit_annealed_or_error.go")

// A model with a nonconjugate latent cannot be tempered: Fit says why.
func TestEndToEndTemperRefused(t *testing.T) {
	data, _ := json.Marshal(map[string]any{"y": []float64{1, 2, 0.5, 3}})
	out := string(temperRefusedCase.run(t, data))
	for _, want := range []string{"tempering", "does not apply", "s (hier.vi:5:8) has a Gaussian factor"} {
		if !strings.Contains(out, want) {
			t.Errorf("Fit's error %q does not say %q", out, want)
		}
	}
}

const invTMixVI = `model mix
size N, K
data y : real[N]
const sigma : real = 2
latent pi : simplex[K] conjugate
latent mu : real[K] conjugate
latent z : int[N] in 1..K conjugate
pi ~ Dirichlet(1)
mu ~ Normal(0, 10)
for n in 1:N {
  z[n] ~ Categorical(pi)
  y[n] ~ Normal(mu[z[n]], sigma)
}
`

var (
	variableNamedInvT = slowTest("TestEndToEndVariableNamedInvT")
	invTMixCase       = variableNamedInvT.driver("mix", invTMixVI, "fit_svi_annealed_or_not.go")
	// invTRenamedCase has the constant sigma named invT.
	invTRenamedCase = variableNamedInvT.driver("mix", strings.ReplaceAll(invTMixVI, "sigma", "invT"), "fit_svi_annealed_or_not.go")
)

// A model variable named invT is the model's, not the temperature the
// kernels of SVI and of tempered updates take: SVI fits the model the same
// whatever its constant is called.
func TestEndToEndVariableNamedInvT(t *testing.T) {
	golden.SlowTier(t)
	rng := rand.New(rand.NewPCG(3, 4))
	var y []float64
	for n := range 60 {
		y = append(y, float64(n%3)*5+rng.NormFloat64())
	}
	data, _ := json.Marshal(map[string]any{"y": y, "K": 3})
	type fit struct {
		ELBO         []float64       `json:"elbo"`
		TemperedELBO []float64       `json:"tempered_elbo"`
		Latent       json.RawMessage `json:"latent"`
	}
	var a, b []fit
	if err := json.Unmarshal(invTMixCase.run(t, data), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(invTRenamedCase.run(t, data), &b); err != nil {
		t.Fatal(err)
	}
	for i := range a { // untempered, then annealed
		if !slices.Equal(a[i].ELBO, b[i].ELBO) || !slices.Equal(a[i].TemperedELBO, b[i].TemperedELBO) || string(a[i].Latent) != string(b[i].Latent) {
			t.Errorf("fit %d: SVI with the constant named sigma and named invT differ: ELBO %v against %v", i+1, a[i].ELBO, b[i].ELBO)
		}
	}
}

const temperLocalPriorsVI = `model hier
size D
data y : real[D]
latent mu : real conjugate
latent x : real[D] conjugate
mu ~ Normal(0, 10)
for d in 1:D {
  x[d] ~ Normal(mu, 1)
  y[d] ~ Normal(x[d], 1)
}
`

var temperLocalPriorsCase = fastTest("TestEndToEndTemperKeepsLocalPriors").driver("hier", temperLocalPriorsVI, "fit_one_tempered_iteration.go", "OPTS", "Seed: 3").hook("hook.go", "temper_start_and_units.go")

// A hierarchical normal model: tempering divides the likelihood of y_d but
// leaves the prior of the continuous local latent x_d alone (Mandt et al.
// App. B.2; derive.Untempered), in x_d's update and in x_d's part of μ's.
// One iteration at T = 4 from the start, against the updates by hand.
func TestEndToEndTemperKeepsLocalPriors(t *testing.T) {
	y := []float64{1.5, -0.3, 2.2, 0.7, 3.1}
	data, _ := json.Marshal(map[string]any{"y": y})
	out := temperLocalPriorsCase.run(t, data)
	var res struct {
		Start map[string]gaussianJSON `json:"start"`
		One   temperResult            `json:"one"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("driver output: %v\n%s", err, out)
	}
	invT := 0.25
	mu0 := res.Start["mu"].Params["mean"][0]
	// x_d: prior N(μ̄, 1) kept, likelihood N(y_d; x_d, 1) divided by T
	var xs []float64
	for d, yd := range y {
		prec := 1 + invT
		mean := (mu0 + invT*yd) / prec
		xs = append(xs, mean)
		if got := res.One.Latent["x"].Params["mean"][d]; math.Abs(got-mean) > 1e-12 {
			t.Errorf("E_q[x_%d] = %.15g, by hand %.15g", d+1, got, mean)
		}
		if got, sd := res.One.Latent["x"].Params["sd"][d], 1/math.Sqrt(prec); math.Abs(got-sd) > 1e-12 {
			t.Errorf("sd of q(x_%d) = %.15g, by hand %.15g", d+1, got, sd)
		}
	}
	// μ: its prior and every x_d's prior, none of them tempered
	prec, lin := 1/100.0, 0.0
	for _, x := range xs {
		prec++
		lin += x
	}
	if got := res.One.Latent["mu"].Params["mean"][0]; math.Abs(got-lin/prec) > 1e-12 {
		t.Errorf("E_q[μ] = %.15g, by hand %.15g (tempering x's priors would give %.15g)", got, lin/prec, invT*lin/(1/100.0+invT*float64(len(y))))
	}
}

const temperPriorInCategoricalVI = `model hmix
size D, K, N
data y : real[D, N]
latent pi : simplex[K] conjugate
latent mu : real[K] conjugate
latent z : int[D] in 1..K conjugate
latent theta : real[D] conjugate
pi ~ Dirichlet(1)
mu ~ Normal(0, 10)
for d in 1:D {
  z[d] ~ Categorical(pi)
  theta[d] ~ Normal(mu[z[d]], 1)
  for n in 1:N {
    y[d, n] ~ Normal(theta[d], 1)
  }
}
`

var temperPriorInCategoricalCase = fastTest("TestEndToEndTemperKeepsPriorInCategorical").
	driver("hmix", temperPriorInCategoricalVI, "fit_one_tempered_iteration.go", "OPTS", "Seed: 4, LocalTol: 1e-14, LocalMaxIter: 100000").
	hook("hook.go", "temper_start_and_units.go")

// A mixture of per-unit means: z_d's update keeps the part of θ_d's prior
// N(μ_z, 1), which tempering leaves alone, and tempers the part of its own
// prior Categorical(π); θ_d keeps its prior and tempers its data. One
// iteration at T = 4 from the start, against the coordinate ascent written
// out by hand (the unit's two factors alternated to their fixed point).
func TestEndToEndTemperKeepsPriorInCategorical(t *testing.T) {
	y := [][]float64{{-3.1, -2.6, -3.4}, {0.2, 0.5, -0.1}, {2.9, 3.3, 3.0}, {-2.8, -3.0, -3.3}, {3.1, 2.7, 3.2}}
	const K, N = 2, 3
	data, _ := json.Marshal(map[string]any{"y": y, "K": K})
	out := temperPriorInCategoricalCase.run(t, data)
	var res struct {
		Start map[string]gaussianJSON `json:"start"`
		One   temperResult            `json:"one"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("driver output: %v\n%s", err, out)
	}
	s := 0.25
	piP := res.Start["pi"].Params["param"]
	muM, muS := res.Start["mu"].Params["mean"], res.Start["mu"].Params["sd"]
	phi := append([]float64(nil), res.Start["z"].Params["prob"]...)
	thM := append([]float64(nil), res.Start["theta"].Params["mean"]...)
	thS := append([]float64(nil), res.Start["theta"].Params["sd"]...)
	p0 := 0.0
	for _, a := range piP {
		p0 += a
	}
	for d := range y {
		for sweep := 0; sweep < 100000; sweep++ {
			prev := []float64{thM[d], thS[d], phi[d*K], phi[d*K+1]}
			// z: s·E log π_k (tempered) + E log N(θ_d; μ_k, 1) (kept)
			row := phi[d*K : (d+1)*K]
			for k := range K {
				eth2 := thM[d]*thM[d] + thS[d]*thS[d]
				emu2 := muM[k]*muM[k] + muS[k]*muS[k]
				row[k] = s*(runtime.Digamma(piP[k])-runtime.Digamma(p0)) - 0.5*(eth2-2*thM[d]*muM[k]+emu2)
			}
			runtime.SoftmaxRows(row, K)
			// θ: prior N(Σ_k φ_k μ̄_k, 1) kept, data divided by T
			prec, lin := 1+s*float64(N), 0.0
			for k := range K {
				lin += row[k] * muM[k]
			}
			for _, v := range y[d] {
				lin += s * v
			}
			thM[d], thS[d] = lin/prec, 1/math.Sqrt(prec)
			now := []float64{thM[d], thS[d], phi[d*K], phi[d*K+1]}
			if runtime.L2Change(now, prev) < 1e-14 {
				break
			}
		}
	}
	closeTo := func(what string, got, want []float64) {
		t.Helper()
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-9*math.Max(1, math.Abs(want[i])) {
				t.Errorf("%s[%d] = %.12g, by hand %.12g", what, i, got[i], want[i])
			}
		}
	}
	closeTo("φ", res.One.Latent["z"].Params["prob"], phi)
	closeTo("E_q[θ]", res.One.Latent["theta"].Params["mean"], thM)
	// globals: π's counts divided by T; μ from θ's priors, kept
	wantPi := make([]float64, K)
	for k := range K {
		wantPi[k] = 1
		for d := range y {
			wantPi[k] += s * phi[d*K+k]
		}
	}
	closeTo("π's parameter", res.One.Latent["pi"].Params["param"], wantPi)
	wantMu := make([]float64, K)
	for k := range K {
		prec, lin := 1/100.0, 0.0
		for d := range y {
			prec += phi[d*K+k]
			lin += phi[d*K+k] * thM[d]
		}
		wantMu[k] = lin / prec
	}
	closeTo("E_q[μ]", res.One.Latent["mu"].Params["mean"], wantMu)
}
