package codegen

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"testing"

	"gonum.org/v1/gonum/mathext"
)

// Models the checker accepts whose generated code once failed to compile
// or failed inside vigen (issue 15, item 5). Each must generate code that
// type-checks; FuzzGenerate starts from them too.
var compileModels = map[string]string{
	// 5(a): a categorical assignment inside a sum over the plate (the
	// simplifier writes −½·Σ_n (y[n] − mu[z[n]])²·…) was summed over
	// outside that sum: `undefined: n`.
	"mixscale": mixScaleVI,
	"mixsigma": `model mixsigma
size N, K
data y : real[N]
const alpha : real[K] = 1
latent w : simplex[K] conjugate
latent z : int[N] in 1..K conjugate
latent mu : real[K] nonconjugate laplace
latent sigma : real[K] nonconjugate laplace
w ~ Dirichlet(alpha)
mu ~ Normal(0, 10)
sigma ~ Normal(0, 1)
for n in 1:N {
  z[n] ~ Categorical(w)
  y[n] ~ Normal(mu[z[n]], exp(sigma[z[n]]))
}
`,
	"mixprec": mixPrecVI,
	// A collapsed unit whose delta correction depends on q(z): no
	// CollapsesDelta is set, and what is emitted must still compile.
	"unitmix": `model unitmix
size D, N, K
data y : real[D, N]
const p : simplex[K]
latent theta : real[D, K] nonconjugate laplace
latent z : int[D, N] in 1..K conjugate
for d in 1:D {
  theta[d] ~ Normal(0, 3)
  for n in 1:N {
    z[d, n] ~ Categorical(p)
    y[d, n] ~ Normal(theta[d, z[d, n]], 1)
  }
}
`,
	// 5(c): theta and Theta made the same methods (updateTheta).
	"cases": casesVI,
	// 5(d): param into made the field Params.Into next to the method Into.
	"into": intoVI,
	// Every kind of name the generator uses itself: its methods (elbo,
	// mstep, numUnits, updateUnit through a latent unit), methods made
	// from another name (updateTheta, gaussianUnit), names differing in
	// case, and a name starting with _.
	"names": `model names
size N, numUnits, K, k
data elbo : real[N]
data updateTheta : real[N]
data fingerprint : real[N]
data gaussianUnit : real[N]
data _x : real[N, K]
data mstep : real[N, k]
const Into : real = 1
param into : real[k]
latent theta : real conjugate
latent Theta : real conjugate
latent unit : real[K] nonconjugate laplace
latent Unit : real[k] nonconjugate delta
theta ~ Normal(0, 1)
Theta ~ Normal(0, Into)
unit ~ Normal(0, 1)
Unit ~ Normal(0, 1)
for n in 1:N {
  elbo[n] ~ Normal(theta + Theta + sum(into), 1)
  updateTheta[n] ~ Normal(dot(_x[n], unit) + dot(mstep[n], Unit), 1)
  fingerprint[n] ~ Normal(theta, 1)
  gaussianUnit[n] ~ Normal(Theta, 1)
}
`,
	// Names the generated methods use for their locals and parameters
	// (grad, hess, rng, q, f, sizes d, p, err, sz, off).
	"locals": `model locals
size d, p, err, sz, off, K
data y : real[d]
data x : real[d, p]
const w : real[K] = 1
latent grad : real[p] nonconjugate laplace
latent hess : real[p] nonconjugate delta
latent q : simplex[K] conjugate
latent rng : real conjugate
latent f : real[off, sz] nonconjugate laplace
data u : real[off, sz]
grad ~ Normal(0, 1)
hess ~ Normal(0, 1)
q ~ Dirichlet(w)
rng ~ Gamma(1, 1)
for o in 1:off {
  f[o] ~ Normal(0, 1)
  u[o] ~ Normal(f[o], 1)
}
for n in 1:d {
  y[n] ~ Normal(dot(x[n], grad) + dot(x[n], hess), 1 / sqrt(rng))
}
`,
	// No data at all (found by FuzzGenerate: raw and sz were unused).
	"nodata": `model nodata
latent x : real conjugate
x ~ Normal(0, 1)
`,
	// 5(f): a grouped read of a matrix latent: `unknown size`.
	"groupsum": groupSumVI,
}

// 5(a) as reported: a mixture with assignments and a latent scale.
const mixScaleVI = `model mixscale
size N, K, One
data y : real[N]
const alpha : real[K] = 1
latent w : simplex[K] conjugate
latent z : int[N] in 1..K conjugate
latent mu : real[K] nonconjugate laplace
latent lsig : real[One] nonconjugate laplace
w ~ Dirichlet(alpha)
mu ~ Normal(0, 10)
lsig ~ Normal(0, 1)
for n in 1:N {
  z[n] ~ Categorical(w)
  y[n] ~ Normal(mu[z[n]], exp(sum(lsig)))
}
`

// 5(a) with a conjugate Gamma precision.
const mixPrecVI = `model mixprec
size N, K
data y : real[N]
const alpha : real[K] = 1
latent w : simplex[K] conjugate
latent z : int[N] in 1..K conjugate
latent mu : real[K] nonconjugate laplace
latent tau : real conjugate
w ~ Dirichlet(alpha)
mu ~ Normal(0, 10)
tau ~ Gamma(1, 1)
for n in 1:N {
  z[n] ~ Categorical(w)
  y[n] ~ Normal(mu[z[n]], 1 / sqrt(tau))
}
`

const casesVI = `model cases
size N
data y : real[N]
latent theta : real conjugate
latent Theta : real conjugate
theta ~ Normal(0, 1)
Theta ~ Normal(0, 1)
for n in 1:N {
  y[n] ~ Normal(theta + Theta, 1)
}
`

const intoVI = `model into
size N, One
data y : real[N]
param into : real[One]
latent theta : real conjugate
theta ~ Normal(0, 1)
for n in 1:N {
  y[n] ~ Normal(theta + sum(into), 1)
}
`

const scaledMeanVI = `model scaledmean
size M, P
data y : real[M, P]
param mu0 : real[P]
const L0 : cov[P] = eye(P)
latent theta : real[M, P] nonconjugate laplace
for m in 1:M {
  theta[m] ~ MvNormal(2 * mu0, L0)
  y[m] ~ Normal(theta[m], 1)
}
`

const groupSumVI = `model groupsum
size N, J, One
data group : int[N] in 1..J
data y : int[N]
latent b : real[J, One] nonconjugate laplace
for j in 1:J {
  b[j] ~ Normal(0, 1)
}
for n in 1:N {
  y[n] ~ Poisson(exp(sum(b[group[n]])))
}
`

func TestAcceptedModelsCompile(t *testing.T) {
	names := make([]string, 0, len(compileModels))
	for name := range compileModels {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) { generateChecked(t, name, compileModels[name]) })
	}
}

// mixtureData draws n points from an equal mixture of N(means[k], sd²).
func mixtureData(rng *rand.Rand, n int, means []float64, sd float64) []float64 {
	y := make([]float64, n)
	for i := range y {
		y[i] = means[i%len(means)] + sd*rng.NormFloat64()
	}
	return y
}

// mixtureStart is Options source starting a two-component mixture fit
// (w, z, mu, and a scale latent given as JSON) near the truth: Fit's own
// start (all means 0, uniform assignments) is symmetric, and from it
// coordinate ascent can settle in the local optimum with one empty
// component.
func mixtureStart(model string, n int, means []float64, scale string) string {
	prob := make([]float64, 0, 2*n)
	for i := range n {
		if i%2 == 0 {
			prob = append(prob, 0.9, 0.1)
		} else {
			prob = append(prob, 0.1, 0.9)
		}
	}
	half := float64(n)/2 + 1
	src := `{"model": "` + model + `", "latent": {
		"w": {"family": "Dirichlet", "shape": [2], "params": {"param": [` + strconv.FormatFloat(half, 'g', -1, 64) + `, ` + strconv.FormatFloat(half, 'g', -1, 64) + `]}},
		"z": {"family": "Categorical", "shape": [` + strconv.Itoa(n) + `], "params": {"prob": ` + mustJSON(prob) + `}},
		"mu": {"family": "MvNormal", "mean": ` + mustJSON(means) + `, "cov": [[1, 0], [0, 1]]},
		` + scale + `}}`
	return ", Start: func() *model.Result {\n\t\tvar r model.Result\n\t\tif err := json.Unmarshal([]byte(" + strconv.Quote(src) + "), &r); err != nil {\n\t\t\tpanic(err)\n\t\t}\n\t\treturn &r\n\t}()"
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// mixScaleCase starts near the truth: mixtureData(rng, 200, …) has 200
// points.
var mixScaleCase = fastTest("TestEndToEndMixtureWithLatentScale").fits("mixscale", mixScaleVI,
	", MaxIter: 1000"+mixtureStart("mixscale", 200, []float64{-1, 5}, `"lsig": {"family": "MvNormal", "mean": [0], "cov": [[1]]}`))

// 5(a): on a well-separated mixture the fitted means and scale are the
// true ones, within a few standard errors.
func TestEndToEndMixtureWithLatentScale(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	means := []float64{-2, 6}
	y := mixtureData(rng, 200, means, 0.5)
	data, _ := json.Marshal(map[string]any{"y": y, "K": 2, "One": 1})
	for _, r := range mixScaleCase.results(t, data) {
		if !r.Converged {
			t.Errorf("%s: not converged: %s", r.Method, r.Status)
		}
		mu := append([]float64(nil), r.Latent["mu"].Mean...)
		sort.Float64s(mu)
		for k, m := range means {
			if math.Abs(mu[k]-m) > 0.2 { // the standard error is 0.05
				t.Errorf("%s: mean %d = %g, true %g", r.Method, k+1, mu[k], m)
			}
		}
		if s := math.Exp(r.Latent["lsig"].Mean[0]); math.Abs(s-0.5) > 0.1 {
			t.Errorf("%s: exp(lsig) = %g, true 0.5", r.Method, s)
		}
	}
}

// mixPrecCase starts near the truth: mixtureData(rng, 120, …) has 120
// points.
var mixPrecCase = fastTest("TestEndToEndMixtureWithGammaPrecisionIsCAVI").fits("mixprec", mixPrecVI,
	", MaxIter: 5000, Tol: 1e-14"+mixtureStart("mixprec", 120, []float64{0, 9}, `"tau": {"family": "Gamma", "shape": [], "params": {"shape": [1], "rate": [1]}}`))

// 5(a) with a Gamma precision: the fit is the fixed point of coordinate
// ascent written out here (q(mu) is exactly Gaussian, since f is
// quadratic in mu, so Laplace is the CAVI update).
func TestEndToEndMixtureWithGammaPrecisionIsCAVI(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	y := mixtureData(rng, 120, []float64{1, 8}, 1)
	data, _ := json.Marshal(map[string]any{"y": y, "K": 2})
	const k = 2
	n := len(y)
	m, v := []float64{0, 9}, []float64{1, 1}
	alpha := []float64{1, 1}
	a, b := 1.0, 1.0
	phi := make([][k]float64, n)
	for it := 0; it < 100000; it++ {
		etau, elogtau := a/b, mathext.Digamma(a)-math.Log(b)
		var elogw [k]float64
		for j := range k {
			elogw[j] = mathext.Digamma(alpha[j]) - mathext.Digamma(alpha[0]+alpha[1])
		}
		for i := range y {
			var lp [k]float64
			mx := math.Inf(-1)
			for j := range k {
				lp[j] = elogw[j] + 0.5*elogtau - 0.5*etau*((y[i]-m[j])*(y[i]-m[j])+v[j])
				mx = math.Max(mx, lp[j])
			}
			s := 0.0
			for j := range k {
				phi[i][j] = math.Exp(lp[j] - mx)
				s += phi[i][j]
			}
			for j := range k {
				phi[i][j] /= s
			}
		}
		change := 0.0
		for j := range k {
			nk, sy := 0.0, 0.0
			for i := range y {
				nk += phi[i][j]
				sy += phi[i][j] * y[i]
			}
			alpha[j] = 1 + nk
			prec := 1/100.0 + etau*nk
			mj := etau * sy / prec
			change = math.Max(change, math.Abs(mj-m[j]))
			m[j], v[j] = mj, 1/prec
		}
		ss := 0.0
		for i := range y {
			for j := range k {
				ss += phi[i][j] * ((y[i]-m[j])*(y[i]-m[j]) + v[j])
			}
		}
		a, b = 1+float64(n)/2, 1+ss/2
		if change < 1e-14 && it > 10 {
			break
		}
	}
	for _, r := range mixPrecCase.results(t, data) {
		if !r.Converged {
			t.Errorf("%s: not converged: %s", r.Method, r.Status)
		}
		g := r.Latent["mu"]
		order := []int{0, 1}
		if g.Mean[0] > g.Mean[1] {
			order = []int{1, 0}
		}
		for j, o := range order {
			if math.Abs(g.Mean[o]-m[j]) > 1e-6 || math.Abs(g.Cov[o][o]-v[j]) > 1e-6 {
				t.Errorf("%s: q(mu[%d]) = N(%.9g, %.9g), CAVI N(%.9g, %.9g)", r.Method, j+1, g.Mean[o], g.Cov[o][o], m[j], v[j])
			}
		}
		tq := r.Latent["tau"].Params
		if math.Abs(tq["shape"][0]-a) > 1e-9*a || math.Abs(tq["rate"][0]-b) > 1e-6*b {
			t.Errorf("%s: q(tau) = Gamma(%.9g, %.9g), CAVI Gamma(%.9g, %.9g)", r.Method, tq["shape"][0], tq["rate"][0], a, b)
		}
	}
}

var casesCase = fastTest("TestEndToEndNamesDifferingInCase").fits("cases", casesVI, ", MaxIter: 5000, Tol: 1e-15, MeanTol: 1e-13")

// 5(c): latents theta and Theta are kept apart. Coordinate ascent on
// y ~ N(θ + Θ, 1) with N(0, 1) priors has the fixed point
// E[θ] = E[Θ] = Σy/(1 + 2N), sd 1/√(1 + N).
func TestEndToEndNamesDifferingInCase(t *testing.T) {
	y := []float64{0.3, 1.1, -0.4, 2.0, 0.9}
	s := 0.0
	for _, v := range y {
		s += v
	}
	n := float64(len(y))
	data, _ := json.Marshal(map[string]any{"y": y})
	r := casesCase.results(t, data)[0]
	if !r.Converged {
		t.Errorf("not converged: %s", r.Status)
	}
	for _, name := range []string{"theta", "Theta"} {
		q := r.Latent[name].Params
		if len(q["mean"]) != 1 || math.Abs(q["mean"][0]-s/(1+2*n)) > 1e-9 || math.Abs(q["sd"][0]-1/math.Sqrt(1+n)) > 1e-12 {
			t.Errorf("q(%s) = %v, want mean %.12g sd %.12g", name, q, s/(1+2*n), 1/math.Sqrt(1+n))
		}
	}
}

var groupSumCase = fastTest("TestEndToEndGroupedSum").fits("groupsum", groupSumVI, "")

// 5(f): b[group[n]] with b : real[J, One] summed over One. The grouped
// sum Σ over a unit's points of a term without the point was read as a
// size (`unknown size`). Each b[j] is fitted by Laplace exactly: the mode
// of Σ_{n in j} (y[n]·b − e^b) − b²/2 and −1/f″ there, found here by
// Newton's method; the groups have different numbers of points.
func TestEndToEndGroupedSum(t *testing.T) {
	group := []int{1, 1, 1, 2, 2, 3, 1, 3, 3, 3, 3}
	y := []int{4, 2, 5, 0, 1, 7, 3, 6, 9, 5, 8}
	data, _ := json.Marshal(map[string]any{"group": group, "y": y, "J": 3, "One": 1})
	r := groupSumCase.results(t, data)[0]
	if !r.Converged {
		t.Errorf("not converged: %s", r.Status)
	}
	g := r.Latent["b"]
	for j := 1; j <= 3; j++ {
		cnt, sy := 0.0, 0.0
		for n := range group {
			if group[n] == j {
				cnt++
				sy += float64(y[n])
			}
		}
		b, h := 0.0, 0.0
		for range 100 {
			grad := sy - cnt*math.Exp(b) - b
			h = -cnt*math.Exp(b) - 1
			b -= grad / h
		}
		h = -cnt*math.Exp(b) - 1
		if len(g.Units) != 3 {
			t.Fatalf("q(b): %v, want 3 units", g)
		}
		if u := g.Units[j-1]; math.Abs(u.Mean[0]-b) > 1e-9 || math.Abs(u.Cov[0][0]+1/h) > 1e-9 {
			t.Errorf("q(b[%d]) = N(%.12g, %.12g), want N(%.12g, %.12g)", j, u.Mean[0], u.Cov[0][0], b, -1/h)
		}
	}
}

var intoCase = fastTest("TestEndToEndParamNamedInto").fits("into", intoVI, ", MaxIter: 5000, Tol: 1e-15, MeanTol: 1e-13")

// 5(d): a param named into (the method Params.Into) is estimated: y[n] =
// θ + into + noise with θ ~ N(0, 1) has marginal likelihood maximal at
// into = mean(y).
func TestEndToEndParamNamedInto(t *testing.T) {
	y := []float64{1.5, 0.5, 2.5, 1.0}
	data, _ := json.Marshal(map[string]any{"y": y, "One": 1})
	r := intoCase.results(t, data)[0]
	if !r.Converged {
		t.Errorf("not converged: %s", r.Status)
	}
	if got := r.Params["into"]; len(got) != 1 || math.Abs(got[0]-1.375) > 1e-6 {
		t.Errorf("into = %v, want 1.375", got)
	}
}
