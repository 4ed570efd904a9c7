package codegen

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/golden"
)

// A two-component normal mixture written as in Stan, with literal
// dimensions (ordered[2], real<lower=0>[2], real[2]), must fit exactly as
// the same model written with a size K: given in the data, or taken from
// its default `size K = 2`; the data may override the default; an array of
// another length for a literal dimension is an error naming it and the
// length.

const mixLiteralVI = `model mixlit
size N
data y : real[N]
const m0 : real[2] = 0
latent mu : ordered[2] nonconjugate laplace
latent sigma : real<lower=0>[2] nonconjugate laplace
latent w : real<lower=0, upper=1> nonconjugate laplace
mu ~ Normal(m0, 10)
sigma ~ HalfNormal(5)
w ~ Beta(2, 2)
for n in 1:N {
  y[n] ~ Mixture(w, Normal(mu[1], sigma[1]), Normal(mu[2], sigma[2]))
}
`

// mixSizedVI is mixLiteralVI with the size K, whose default is 2.
var mixSizedVI = strings.NewReplacer("model mixlit", "model mixsized", "size N", "size N, K = 2",
	"real[2]", "real[K]", "ordered[2]", "ordered[K]", "real<lower=0>[2]", "real<lower=0>[K]").Replace(mixLiteralVI)

type literalRun struct {
	Data  any `json:",omitempty"`
	Start any `json:",omitempty"`
}

// literalCase registers the case of test that fits each run's data by
// Laplace from its start and reports the error LoadData gives each bad
// data set, for runLiteral.
func literalCase(test e2eTest, name, src string) *e2eCase {
	return test.driver(name, src, "fit_runs_laplace_and_load_errors.go")
}

// runLiteral runs c (literalCase) on runs and bad.
func runLiteral(t *testing.T, c *e2eCase, runs []literalRun, bad []any) ([]map[string]any, []string) {
	t.Helper()
	in, err := json.Marshal(map[string]any{"Runs": runs, "Bad": bad})
	if err != nil {
		t.Fatal(err)
	}
	out := c.run(t, in)
	var res struct {
		Results []map[string]any
		BadErrs []string
	}
	if err := json.Unmarshal(out, &res); err != nil || len(res.Results) != len(runs) || len(res.BadErrs) != len(bad) {
		t.Fatalf("driver output: %v\n%s", err, out)
	}
	for k, r := range res.Results {
		if r["status"] != "converged" {
			elbo, _ := r["elbo"].([]any)
			if len(elbo) > 5 {
				elbo = elbo[len(elbo)-5:]
			}
			t.Errorf("%s run %d: %v after %v iterations (last ELBOs %v); latent %v", c.name, k+1, r["status"], r["iterations"], elbo, r["latent"])
		}
	}
	return res.Results, res.BadErrs
}

var (
	literalDimensions = slowTest("TestEndToEndLiteralDimensions")
	mixLiteralCase    = literalCase(literalDimensions, "mixlit", mixLiteralVI).around(literalDimensionsSetup)
	mixSizedCase      = literalCase(literalDimensions, "mixsized", mixSizedVI).around(literalDimensionsSetup)
)

// literalDimensionsSetup generates the mixtures: mixsized's statements,
// over a size K, are index-notation trees (not point terms, as mixlit's
// are: derive/point.go), whose delta kernels with their full Hessians take
// Go's compiler minutes (and gigabytes); ∇²f stands in for them, as
// TestDeltaCurvatureStandIn checks it may (the fits here are Laplace's);
// and its kernels are larger than vigen writes for a user
// (maxKernelLines): this test builds them anyway, in the slow tier.
func literalDimensionsSetup() (restore func()) {
	curvature, lines := maxDeltaCurvature, maxKernelLines
	maxDeltaCurvature, maxKernelLines = 0, 1<<20
	return func() { maxDeltaCurvature, maxKernelLines = curvature, lines }
}

func TestEndToEndLiteralDimensions(t *testing.T) {
	golden.SlowTier(t)
	y := twoNormalsData(400, 13)
	start := func(model string, k int) map[string]any {
		vec := func(first, rest float64) map[string]any {
			mean := make([]float64, k)
			cov := make([][]float64, k)
			for i := range k {
				mean[i] = rest
				if i == 0 {
					mean[i] = first
				}
				cov[i] = make([]float64, k)
				cov[i][i] = 1
			}
			return map[string]any{"family": "MvNormal", "mean": mean, "cov": cov}
		}
		return startJSON(model, map[string]any{"mu": vec(-1.5, math.Log(4)), "sigma": vec(0, 0), "w": map[string]any{"family": "Normal", "mean": 0, "sd": 1}})
	}
	lit, badErrs := runLiteral(t, mixLiteralCase,
		[]literalRun{{Data: map[string]any{"y": y}, Start: start("mixlit", 2)}},
		[]any{
			map[string]any{"y": y, "m0": []float64{0, 0, 0}},
			map[string]any{"y": y, "2": 3}, // not a key: a literal dimension cannot be given
		})
	sized, _ := runLiteral(t, mixSizedCase, []literalRun{
		{Data: map[string]any{"y": y, "K": 2}, Start: start("mixsized", 2)},
		{Data: map[string]any{"y": y}, Start: start("mixsized", 2)},
		{Data: map[string]any{"y": y, "K": 3}, Start: start("mixsized", 3)},
		{Data: map[string]any{"y": y, "m0": []float64{0, 0, 0, 0}}, Start: start("mixsized", 4)},
	}, nil)

	// Identical fits: K given as 2, and K by its default.
	for k, r := range sized[:2] {
		if n := compareJSONNumbers(t, "latent", lit[0]["latent"], r["latent"], 1e-12); n < 20 {
			t.Errorf("run %d: compared %d numbers of the latents, want the means, covariances and constrained summaries", k+1, n)
		}
		compareJSONNumbers(t, "elbo", lit[0]["elbo"], r["elbo"], 1e-12)
		if lit[0]["iterations"] != r["iterations"] {
			t.Errorf("run %d: %v iterations, literal dimensions %v", k+1, r["iterations"], lit[0]["iterations"])
		}
	}

	// Near the simulated truth 0.35·N(−2, 0.7²) + 0.65·N(3, 1.2²), on the
	// unconstrained scale: mu = (u1, u1 + exp(u2)), sigma = exp(u).
	var mu, sigma gaussianJSON
	for name, g := range map[string]*gaussianJSON{"mu": &mu, "sigma": &sigma} {
		b, _ := json.Marshal(lit[0]["latent"].(map[string]any)[name])
		if err := json.Unmarshal(b, g); err != nil || len(g.Mean) != 2 {
			t.Fatalf("%s: %s (%v)", name, b, err)
		}
	}
	for _, c := range []struct {
		name            string
		mean, sd, truth float64
	}{
		{"mu[1]", mu.Mean[0], math.Sqrt(mu.Cov[0][0]), -2},
		{"log(mu[2] - mu[1])", mu.Mean[1], math.Sqrt(mu.Cov[1][1]), math.Log(5)},
		{"log sigma[1]", sigma.Mean[0], math.Sqrt(sigma.Cov[0][0]), math.Log(0.7)},
		{"log sigma[2]", sigma.Mean[1], math.Sqrt(sigma.Cov[1][1]), math.Log(1.2)},
	} {
		t.Logf("%s: q mean %.4f sd %.4f (simulated %.4f)", c.name, c.mean, c.sd, c.truth)
		if math.Abs(c.mean-c.truth) > 4*c.sd || c.sd <= 0 || c.sd > 0.5 {
			t.Errorf("%s: q mean %.4f sd %.4f, simulated %.4f", c.name, c.mean, c.sd, c.truth)
		}
	}

	// The data override the default: with "K": 3, or an m0 of length 4,
	// mu has that many elements.
	for k, want := range []int{3, 4} {
		b, _ := json.Marshal(sized[2+k]["latent"].(map[string]any)["mu"])
		var g gaussianJSON
		if err := json.Unmarshal(b, &g); err != nil || len(g.Mean) != want {
			t.Errorf("K overridden to %d: mu is %s (%v)", want, b, err)
		}
	}

	// An array of another length for a literal dimension names the array
	// and the length; a data key "2" is not a size.
	if want := `"m0" has 3 entries, but its type fixes that length at 2`; !strings.Contains(badErrs[0], want) {
		t.Errorf("m0 of length 3 for real[2]: error %q, want one containing %q", badErrs[0], want)
	}
	if badErrs[1] != "" {
		t.Errorf(`data with a key "2": error %q, want none (the key is ignored)`, badErrs[1])
	}
}

// litCategoryVI is the mixture with the literal count, litSizedVI with K.
const litCategoryVI = `model lit
size D, V
data w : bag[D] of 1..V
const alpha : real[2] = 1
param beta : simplex[2, V]
latent pi : simplex[2] conjugate
latent z : int[D] in 1..2 conjugate
pi ~ Dirichlet(alpha)
for d in 1:D {
  z[d] ~ Categorical(pi)
  for n in w[d] {
    w[d, n] ~ Categorical(beta[z[d]])
  }
}
`

var (
	litSizedVI = strings.NewReplacer("model lit", "model sized", "size D, V", "size D, V, K = 2", "real[2]", "real[K]",
		"simplex[2, V]", "simplex[K, V]", "simplex[2]", "simplex[K]", "in 1..2", "in 1..K").Replace(litCategoryVI)
	literalCategory      = slowTest("TestLiteralCategoryCount")
	literalCategoryCases = map[string]*e2eCase{
		"lit":   literalCategory.fits("lit", litCategoryVI, ", Keep: []string{\"all\"}"),
		"sized": literalCategory.fits("sized", litSizedVI, ", Keep: []string{\"all\"}"),
	}
)

// A mixture of documents over topics with the number of topics written as
// a literal (int[D] in 1..2 beside simplex[2] and simplex[2, V]) is
// accepted, as Stan's users write it, and fits exactly as the same model
// with a size K = 2. Before, the range 1..2 and the dimension 2 were not
// taken as the same size: a false model error.
func TestLiteralCategoryCount(t *testing.T) {
	golden.SlowTier(t)
	data := []byte(`{"D": 5, "V": 3, "w": [[[1,2],[2,1]],[[3,1]],[[1,1],[3,2]],[[2,4]],[[1,3],[2,1],[3,1]]]}`)
	fit := func(name string) []map[string]any {
		var out []map[string]any
		raw := literalCategoryCases[name].run(t, data)
		if err := json.Unmarshal(raw, &out); err != nil || len(out) != 2 {
			t.Fatalf("%s: %v\n%s", name, err, raw)
		}
		return out
	}
	a, b := fit("lit"), fit("sized")
	for i := range a {
		for _, k := range []string{"latent", "params", "elbo", "status"} {
			ja, _ := json.Marshal(a[i][k])
			jb, _ := json.Marshal(b[i][k])
			if string(ja) != string(jb) {
				t.Errorf("%v: %s differs between the literal model and the sized one:\n%s\n%s", a[i]["method"], k, ja, jb)
			}
		}
		if z, _ := a[i]["latent"].(map[string]any)["z"]; z == nil {
			t.Errorf("no q(z)")
		}
	}
}

const catLiteralVI = `model catlit
size N, D
data x : real[N, D]
data y : int[N] in 1..3
latent w : real[D] nonconjugate laplace
w ~ Normal(0, 1)
for n in 1:N {
  y[n] ~ Categorical(softmax([0, dot(x[n], w), 1]))
}
`

var (
	catSizedVI         = strings.NewReplacer("model catlit", "model catsized", "size N, D", "size N, D, K = 3", "in 1..3", "in 1..K").Replace(catLiteralVI)
	cat2VI             = strings.NewReplacer("model catlit", "model cat2", "in 1..3", "in 1..2", "[0, dot(x[n], w), 1]", "[0, dot(x[n], w)]").Replace(catLiteralVI)
	literalCategorical = slowTest("TestEndToEndLiteralCategoricalRange")
	catLiteralCase     = literalCase(literalCategorical, "catlit", catLiteralVI)
	catSizedCase       = literalCase(literalCategorical, "catsized", catSizedVI)
	cat2Case           = literalCase(literalCategorical, "cat2", cat2VI)
)

// A softmax regression over three outcomes whose count is written only as
// the literal range of its data (y : int[N] in 1..3, the probabilities a
// vector literal [0, x·w, 1]) generates, compiles and fits exactly as the
// same model with `size K = 3` and `in 1..K`; as does the two-outcome
// model with [0, x·w]. Before, code generation failed with "unknown size
// 3" (issue 38): the range's 3 was not a size. The Laplace fit is checked
// against the hand formulas of the MAP and the curvature there.
func TestEndToEndLiteralCategoricalRange(t *testing.T) {
	golden.SlowTier(t)
	x, y3, y2 := softmaxRegressionData(150, []float64{1, -2}, 7)
	lit, _ := runLiteral(t, catLiteralCase, []literalRun{{Data: map[string]any{"x": x, "y": y3}}}, nil)
	sized, _ := runLiteral(t, catSizedCase, []literalRun{{Data: map[string]any{"x": x, "y": y3}}}, nil)
	two, _ := runLiteral(t, cat2Case, []literalRun{{Data: map[string]any{"x": x, "y": y2}}}, nil)
	if n := compareJSONNumbers(t, "latent", lit[0]["latent"], sized[0]["latent"], 1e-12); n < 6 {
		t.Errorf("compared %d numbers of the latents, want w's mean and covariance", n)
	}
	compareJSONNumbers(t, "elbo", lit[0]["elbo"], sized[0]["elbo"], 1e-12)

	for _, c := range []struct {
		name  string
		res   map[string]any
		y     []int
		fixed []float64 // the constant entries of the linear predictor, after 0 and x·w
	}{
		{"in 1..3", lit[0], y3, []float64{1}},
		{"in 1..2", two[0], y2, nil},
	} {
		b, _ := json.Marshal(c.res["latent"].(map[string]any)["w"])
		var g gaussianJSON
		if err := json.Unmarshal(b, &g); err != nil || len(g.Mean) != 2 || len(g.Cov) != 2 {
			t.Fatalf("%s: q(w) = %s (%v)", c.name, b, err)
		}
		grad, cov := softmaxRegressionLaplace(x, c.y, c.fixed, g.Mean)
		t.Logf("%s: w mean %.6f, gradient of the log joint there %.2g", c.name, g.Mean, grad)
		for i := range grad {
			if math.Abs(grad[i]) > 1e-6 {
				t.Errorf("%s: the log joint's gradient at q's mean %v is %v, want 0 (the MAP)", c.name, g.Mean, grad)
			}
			for j := range cov[i] {
				if math.Abs(g.Cov[i][j]-cov[i][j]) > 1e-6*math.Abs(cov[i][i]) {
					t.Errorf("%s: cov[%d][%d] = %.10g, want %.10g (minus the inverse Hessian at the MAP)", c.name, i, j, g.Cov[i][j], cov[i][j])
				}
			}
		}
	}
}

// softmaxRegressionData simulates n rows x ~ N(0, I) of len(w) columns and
// outcomes y3 ~ Categorical(softmax(0, x·w, 1)), y2 ~ Categorical(softmax(0, x·w)).
func softmaxRegressionData(n int, w []float64, seed uint64) (x [][]float64, y3, y2 []int) {
	rng := rand.New(rand.NewPCG(seed, 3))
	draw := func(eta []float64) int {
		p := softmaxOf(eta)
		u := rng.Float64()
		for k := range p[:len(p)-1] {
			if u < p[k] {
				return k + 1
			}
			u -= p[k]
		}
		return len(p)
	}
	for range n {
		row := make([]float64, len(w))
		xw := 0.0
		for j := range row {
			row[j] = rng.NormFloat64()
			xw += row[j] * w[j]
		}
		x = append(x, row)
		y3 = append(y3, draw([]float64{0, xw, 1}))
		y2 = append(y2, draw([]float64{0, xw}))
	}
	return x, y3, y2
}

func softmaxOf(eta []float64) []float64 {
	m := math.Inf(-1)
	for _, e := range eta {
		m = max(m, e)
	}
	p := make([]float64, len(eta))
	s := 0.0
	for k, e := range eta {
		p[k] = math.Exp(e - m)
		s += p[k]
	}
	for k := range p {
		p[k] /= s
	}
	return p
}

// softmaxRegressionLaplace is the gradient at w of the log joint of a
// softmax regression with linear predictors (0, x·w, fixed...) and a
// N(0, I) prior on the two weights w, Σₙ (1[yₙ = 2] − p₂ₙ) xₙ − w, and
// minus the inverse of its Hessian −Σₙ p₂ₙ(1 − p₂ₙ) xₙxₙᵀ − I.
func softmaxRegressionLaplace(x [][]float64, y []int, fixed, w []float64) (grad []float64, cov [][]float64) {
	grad = []float64{-w[0], -w[1]}
	prec := [2][2]float64{{1, 0}, {0, 1}}
	for n, row := range x {
		p := softmaxOf(append([]float64{0, row[0]*w[0] + row[1]*w[1]}, fixed...))[1]
		hit := 0.0
		if y[n] == 2 {
			hit = 1
		}
		for i := range 2 {
			grad[i] += (hit - p) * row[i]
			for j := range 2 {
				prec[i][j] += p * (1 - p) * row[i] * row[j]
			}
		}
	}
	det := prec[0][0]*prec[1][1] - prec[0][1]*prec[1][0]
	cov = [][]float64{{prec[1][1] / det, -prec[0][1] / det}, {-prec[1][0] / det, prec[0][0] / det}}
	return grad, cov
}
