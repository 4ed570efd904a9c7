package derive

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/vigen-go/vigen/golden"
	"github.com/vigen-go/vigen/spec"
)

// The families and functions of issue 18 (priors on scales, GLM forms,
// ordered outcomes, the Dirichlet-multinomial, the probit link): their log
// densities against gonum where it has the family, else against
// normalization (the probabilities of a discrete family sum to one, a
// density integrates to one) and moments computed by summing; their
// derivatives against finite differences.

// logDensityAt evaluates family name's log density at x with scalar
// arguments.
func logDensityAt(t *testing.T, name string, x float64, args ...float64) float64 {
	t.Helper()
	d := Dists[name]
	if d == nil {
		t.Fatalf("%s is not in the table", name)
	}
	lp, err := d.LogDensity(testBuilder(), scalar(N(x)), nums(args...))
	if err != nil {
		t.Fatal(err)
	}
	return Eval(lp, &Env{Index: map[string]int{}, Sizes: map[string]int{}})
}

func TestNewScalarFamiliesAgainstGonum(t *testing.T) {
	logistic := func(a float64) float64 { return 1 / (1 + math.Exp(-a)) }
	src := rand.NewPCG(5, 6)
	cases := []struct {
		name string
		args []float64
		// want is gonum's log density at x
		want func(x float64) float64
		draw func() float64
	}{
		{"HalfNormal", []float64{1.7}, func(x float64) float64 { return distuv.Chi{K: 1}.LogProb(x/1.7) - math.Log(1.7) },
			func() float64 { return math.Abs(distuv.Normal{Mu: 0, Sigma: 1.7, Src: src}.Rand()) }},
		{"HalfCauchy", []float64{2.5}, func(x float64) float64 { return math.Ln2 + distuv.StudentsT{Nu: 1, Mu: 0, Sigma: 2.5}.LogProb(x) },
			func() float64 { return math.Abs(distuv.StudentsT{Nu: 1, Mu: 0, Sigma: 2.5, Src: src}.Rand()) }},
		{"HalfStudentT", []float64{3, 0.8}, func(x float64) float64 { return math.Ln2 + distuv.StudentsT{Nu: 3, Mu: 0, Sigma: 0.8}.LogProb(x) },
			func() float64 { return math.Abs(distuv.StudentsT{Nu: 3, Mu: 0, Sigma: 0.8, Src: src}.Rand()) }},
		{"Cauchy", []float64{-0.4, 1.3}, distuv.StudentsT{Nu: 1, Mu: -0.4, Sigma: 1.3}.LogProb,
			distuv.StudentsT{Nu: 1, Mu: -0.4, Sigma: 1.3, Src: src}.Rand},
		{"Uniform", []float64{-1, 2.5}, distuv.Uniform{Min: -1, Max: 2.5}.LogProb, distuv.Uniform{Min: -1, Max: 2.5, Src: src}.Rand},
		{"Weibull", []float64{1.8, 2.2}, distuv.Weibull{K: 1.8, Lambda: 2.2}.LogProb, distuv.Weibull{K: 1.8, Lambda: 2.2, Src: src}.Rand},
		{"Weibull", []float64{0.6, 0.9}, distuv.Weibull{K: 0.6, Lambda: 0.9}.LogProb, distuv.Weibull{K: 0.6, Lambda: 0.9, Src: src}.Rand},
		{"BernoulliLogit", []float64{-0.8}, distuv.Bernoulli{P: logistic(-0.8)}.LogProb, distuv.Bernoulli{P: logistic(-0.8), Src: src}.Rand},
		{"PoissonLog", []float64{1.1}, distuv.Poisson{Lambda: math.Exp(1.1)}.LogProb, distuv.Poisson{Lambda: math.Exp(1.1), Src: src}.Rand},
		{"BinomialLogit", []float64{9, 0.7}, distuv.Binomial{N: 9, P: logistic(0.7)}.LogProb, distuv.Binomial{N: 9, P: logistic(0.7), Src: src}.Rand},
		{"Bernoulli(Phi)", []float64{0.6}, distuv.Bernoulli{P: distuv.UnitNormal.CDF(0.6)}.LogProb, distuv.Bernoulli{P: distuv.UnitNormal.CDF(0.6), Src: src}.Rand},
	}
	for _, c := range cases {
		name, args := c.name, nums(c.args...)
		if name == "Bernoulli(Phi)" {
			name, args = "Bernoulli", []Val{scalar(Call1("Phi", N(c.args[0])))}
		}
		d := Dists[name]
		if d == nil {
			t.Fatalf("%s is not in the table", name)
		}
		for i := 0; i < 30; i++ {
			x := c.draw()
			lp, err := d.LogDensity(testBuilder(), scalar(N(x)), args)
			if err != nil {
				t.Fatal(err)
			}
			got := Eval(lp, &Env{Index: map[string]int{}, Sizes: map[string]int{}})
			if want := c.want(x); !closeTo(got, want, 1e-10) {
				t.Errorf("%s%v: log p(%g) = %.15g, gonum %.15g", c.name, c.args, x, got, want)
			}
		}
	}
}

// TestPositiveFamiliesIntegrateToOne integrates the densities over (0, ∞)
// numerically (x = e^s, Simpson's rule in s), so a wrong constant (the
// log 2 of a half family) shows.
func TestPositiveFamiliesIntegrateToOne(t *testing.T) {
	for _, c := range []struct {
		name string
		args []float64
	}{
		{"HalfNormal", []float64{1.7}}, {"HalfCauchy", []float64{2.5}}, {"HalfStudentT", []float64{3, 0.8}},
		{"Weibull", []float64{1.8, 2.2}}, {"Weibull", []float64{0.6, 0.9}},
	} {
		const lo, hi, n = -40.0, 40.0, 40000 // s range: the Cauchy tail beyond e^40 is < 1e-17
		h := (hi - lo) / n
		total := 0.0
		for i := 0; i <= n; i++ {
			s := lo + float64(i)*h
			w := 2.0
			if i == 0 || i == n {
				w = 1
			} else if i%2 == 1 {
				w = 4
			}
			total += w * math.Exp(logDensityAt(t, c.name, math.Exp(s), c.args...)+s)
		}
		total *= h / 3
		if math.Abs(total-1) > 1e-8 {
			t.Errorf("%s%v integrates to %.12g", c.name, c.args, total)
		}
	}
}

// TestNegativeBinomialSumsAndMoments sums the probabilities of
// NegativeBinomial(mu, phi): they must add up to one, with mean mu and
// variance mu + mu²/phi (Stan's neg_binomial_2); NegativeBinomialLog at
// log mu must agree, also where exp(eta) overflows a naive form.
func TestNegativeBinomialSumsAndMoments(t *testing.T) {
	for _, c := range [][2]float64{{3.5, 2}, {0.4, 0.7}, {12, 30}} {
		mu, phi := c[0], c[1]
		var s, m, m2 float64
		for y := 0; y < 5000; y++ {
			lp := logDensityAt(t, "NegativeBinomial", float64(y), mu, phi)
			if l2 := logDensityAt(t, "NegativeBinomialLog", float64(y), math.Log(mu), phi); !closeTo(l2, lp, 1e-11) {
				t.Errorf("NegativeBinomialLog(log %g, %g) at %d = %.15g, NegativeBinomial %.15g", mu, phi, y, l2, lp)
			}
			p := math.Exp(lp)
			s += p
			m += p * float64(y)
			m2 += p * float64(y) * float64(y)
		}
		v := m2 - m*m
		if !closeTo(s, 1, 1e-10) || !closeTo(m, mu, 1e-9) || !closeTo(v, mu+mu*mu/phi, 1e-8) {
			t.Errorf("NegativeBinomial(%g, %g): total %.12g, mean %.12g, variance %.12g (want 1, %g, %g)", mu, phi, s, m, v, mu, mu+mu*mu/phi)
		}
	}
	// η = 800: exp(η) overflows, the log form does not: for y = 3, φ = 2,
	// log p = log Γ(5) − log Γ(4) − log Γ(2) + 3(η − log 2) − 5 softplus(η − log 2)
	// ≈ log 4 − 2η + 2 log 2 (softplus(z) = z there)
	eta := 800.0
	got := logDensityAt(t, "NegativeBinomialLog", 3, eta, 2)
	want := math.Log(4) - 2*eta + 2*math.Ln2
	if !closeTo(got, want, 1e-13) {
		t.Errorf("NegativeBinomialLog(800, 2) at 3 = %.15g, want %.15g", got, want)
	}
}

// orderedLogDensity evaluates an ordered family at outcome y with
// predictor eta and cutpoints c.
func orderedLogDensity(t *testing.T, name string, y int, eta float64, c []float64) float64 {
	t.Helper()
	b := testBuilder()
	lp, err := Dists[name].LogDensity(b, scalar(N(float64(y))), []Val{scalar(N(eta)), tensorVal("c", false, "C")})
	if err != nil {
		t.Fatal(err)
	}
	return Eval(lp, &Env{Index: map[string]int{}, Sizes: map[string]int{"C": len(c)},
		Tensors: map[string]*Value{"c": {Dims: []int{len(c)}, Data: c}}})
}

func TestOrderedFamilies(t *testing.T) {
	logistic := func(a float64) float64 { return 1 / (1 + math.Exp(-a)) }
	cdfs := map[string]func(float64) float64{"OrderedLogistic": logistic, "OrderedProbit": distuv.UnitNormal.CDF}
	for name, cdf := range cdfs {
		for _, c := range [][]float64{{0.3}, {-1, 0.2, 1.5}, {-2, -1.9, 0, 3}} {
			for _, eta := range []float64{-1.3, 0, 0.8, 2.5} {
				total := 0.0
				for y := 1; y <= len(c)+1; y++ {
					hi, lo := 1.0, 0.0
					if y <= len(c) {
						hi = cdf(c[y-1] - eta)
					}
					if y > 1 {
						lo = cdf(c[y-2] - eta)
					}
					got := orderedLogDensity(t, name, y, eta, c)
					if want := math.Log(hi - lo); !closeTo(got, want, 1e-9) {
						t.Errorf("%s(%g, %v) at %d = %.15g, want %.15g", name, eta, c, y, got, want)
					}
					total += math.Exp(got)
				}
				if !closeTo(total, 1, 1e-12) {
					t.Errorf("%s(%g, %v): probabilities sum to %.15g", name, eta, c, total)
				}
			}
		}
	}
	// far in the tails the probabilities underflow, their logarithms do not:
	// P(y = 1) = Φ(c₁ − η) at c₁ − η = −40 is e^−804.6; the middle interval
	// y = 3 at η = 45 with cutpoints 0.2, 1.5 is Φ(−43.5) − Φ(−44.8),
	// which is Φ(−43.5) to 1e-25.
	c := []float64{-1, 0.2, 1.5}
	if got, want := orderedLogDensity(t, "OrderedProbit", 1, 39, c), normalLogCDFTail(-40); !closeTo(got, want, 1e-12) {
		t.Errorf("OrderedProbit at y = 1, η = 39: %.15g, want %.15g", got, want)
	}
	if got, want := orderedLogDensity(t, "OrderedProbit", 3, 45, c), normalLogCDFTail(-43.5); !closeTo(got, want, 1e-10) {
		t.Errorf("OrderedProbit at y = 3, η = 45: %.15g, want %.15g", got, want)
	}
	// logistic: P(y = 4 | η = −60) = 1 − σ(1.5 + 60) = σ(−61.5) ≈ e^−61.5
	if got := orderedLogDensity(t, "OrderedLogistic", 4, -60, c); !closeTo(got, -61.5, 1e-12) {
		t.Errorf("OrderedLogistic at y = 4, η = −60: %.15g, want ≈ −61.5", got)
	}
}

// normalLogCDFTail is log Φ(x) for x ≪ 0 from the asymptotic series
// Φ(x) = φ(x)/|x| · (1 − 1/x² + 3/x⁴ − 15/x⁶ + 105/x⁸ − …), independently of
// runtime.LogPhi.
func normalLogCDFTail(x float64) float64 {
	z := 1 / (x * x)
	series := 1 - z + 3*z*z - 15*z*z*z + 105*z*z*z*z - 945*z*z*z*z*z
	return -0.5*x*x - 0.5*math.Log(2*math.Pi) - math.Log(-x) + math.Log(series)
}

func TestProbitLikelihoodInTheTails(t *testing.T) {
	// Bernoulli(Phi(u)) at y = 1, u = −40: log Φ(−40), not log 0; at y = 0,
	// u = 40: log(1 − Φ(40)) = log Φ(−40).
	// (u is a variable: Phi of a number folds to a number first)
	want := normalLogCDFTail(-40)
	env := func(u float64) *Env {
		return &Env{Index: map[string]int{}, Tensors: map[string]*Value{"u": {Data: []float64{u}}}}
	}
	u := T("u")
	for _, c := range []struct{ y, u float64 }{{1, -40}, {0, 40}} {
		lp, err := Dists["Bernoulli"].LogDensity(testBuilder(), scalar(N(c.y)), []Val{scalar(Call1("Phi", u))})
		if err != nil {
			t.Fatal(err)
		}
		if got := Eval(lp, env(c.u)); !closeTo(got, want, 1e-12) {
			t.Errorf("Bernoulli(Phi(%g)) at %g = %.15g, want %.15g", c.u, c.y, got, want)
		}
	}
	// log(Phi(u)) and log1p(-Phi(u)) written by the user simplify too
	for _, c := range []struct {
		e Expr
		u float64
	}{{Call1("log", Call1("Phi", u)), -40}, {Call1("log1p", Neg(Call1("Phi", u))), 40}} {
		if got := Eval(c.e, env(c.u)); !closeTo(got, want, 1e-12) {
			t.Errorf("%s at u = %g: %.15g, want %.15g", String(c.e), c.u, got, want)
		}
	}
}

func TestDirichletMultinomialSumsToOne(t *testing.T) {
	alpha := []float64{0.7, 2.5, 1.2}
	const n = 6
	total, mean := 0.0, make([]float64, 3)
	for a := 0; a <= n; a++ {
		for b := 0; a+b <= n; b++ {
			x := []float64{float64(a), float64(b), float64(n - a - b)}
			bld := testBuilder()
			lp, err := Dists["DirichletMultinomial"].LogDensity(bld, tensorVal("x", false, "K"), []Val{tensorVal("alpha", false, "K")})
			if err != nil {
				t.Fatal(err)
			}
			p := math.Exp(Eval(lp, &Env{Index: map[string]int{}, Sizes: map[string]int{"K": 3},
				Tensors: map[string]*Value{"x": {Dims: []int{3}, Data: x}, "alpha": {Dims: []int{3}, Data: alpha}}}))
			total += p
			for k := range mean {
				mean[k] += p * x[k]
			}
		}
	}
	if !closeTo(total, 1, 1e-12) {
		t.Errorf("DirichletMultinomial probabilities sum to %.15g", total)
	}
	a0 := alpha[0] + alpha[1] + alpha[2]
	for k := range mean {
		if want := n * alpha[k] / a0; !closeTo(mean[k], want, 1e-12) {
			t.Errorf("E[x_%d] = %.15g, want n α_k/α₀ = %.15g", k, mean[k], want)
		}
	}
}

// fdFamilies are regressions whose linear predictor reaches the new
// families: derive's gradient, Hessian and delta-method trace gradient are
// checked against finite differences of f.
var fdFamilies = []struct {
	decl, stmt string
	kind       string // the data y: "count", "binary", "ordinal", "positive", "real", "counts"
}{
	{"data y : int[N]", "y[n] ~ NegativeBinomial(exp(dot(x[n], theta)), 2.5)", "count"},
	{"data y : int[N]", "y[n] ~ NegativeBinomial(3, exp(dot(x[n], theta)))", "count"},
	{"data y : int[N]", "y[n] ~ NegativeBinomialLog(dot(x[n], theta), exp(0.5 * dot(x[n], theta)))", "count"},
	{"data y : int[N]", "y[n] ~ PoissonLog(dot(x[n], theta))", "count"},
	{"data y : int[N]", "y[n] ~ BinomialLogit(6, dot(x[n], theta))", "count"},
	{"data y : int[N] in 0..1", "y[n] ~ BernoulliLogit(dot(x[n], theta))", "binary"},
	{"data y : int[N] in 0..1", "y[n] ~ Bernoulli(Phi(dot(x[n], theta)))", "binary"},
	{"data y : int[N]", "y[n] ~ Binomial(6, Phi(dot(x[n], theta)))", "count"},
	{"data y : int[N]", "y[n] ~ OrderedLogistic(dot(x[n], theta), c)", "ordinal"},
	{"data y : int[N]", "y[n] ~ OrderedProbit(dot(x[n], theta), c)", "ordinal"},
	{"data y : real[N]", "y[n] ~ HalfNormal(exp(dot(x[n], theta)))", "positive"},
	{"data y : real[N]", "y[n] ~ HalfCauchy(exp(dot(x[n], theta)))", "positive"},
	{"data y : real[N]", "y[n] ~ HalfStudentT(3, exp(dot(x[n], theta)))", "positive"},
	{"data y : real[N]", "y[n] ~ Weibull(exp(0.5 * dot(x[n], theta)), exp(dot(x[n], theta)))", "positive"},
	{"data y : real[N]", "y[n] ~ Cauchy(dot(x[n], theta), 1.5)", "real"},
	{"data y : real[N]", "y[n] ~ Normal(inv_logit(dot(x[n], theta)) + log_inv_logit(dot(x[n], theta)), 1)", "real"},
	{"data y : int[N, P]", "y[n] ~ DirichletMultinomial(exp(theta + x[n]))", "counts"},
}

func TestNewFamiliesDerivativesMatchFiniteDifferences(t *testing.T) {
	golden.SlowTier(t)
	for k, c := range fdFamilies {
		t.Run(c.stmt, func(t *testing.T) {
			src := fmt.Sprintf("model fd\nsize N, P, C\ndata x : real[N, P]\n%s\nconst c : real[C]\n"+
				"latent theta : real[P] nonconjugate laplace\ntheta ~ Cauchy(0.2, 2)\nfor n in 1:N {\n  %s\n}\n", c.decl, c.stmt)
			if c.kind != "ordinal" {
				src = fmt.Sprintf("model fd\nsize N, P\ndata x : real[N, P]\n%s\n"+
					"latent theta : real<lower=0>[P] nonconjugate laplace\ntheta ~ HalfCauchy(2)\nfor n in 1:N {\n  %s\n}\n", c.decl, c.stmt)
			}
			m, err := spec.Load("fd.vi", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			d, err := Derive(m)
			if err != nil {
				t.Fatal(err)
			}
			o := d.Objectives[0]
			h4 := Diff(o.TraceGrad(), "theta", []Index{o.B})
			rng := rand.New(rand.NewPCG(7, uint64(k)))
			const n, p = 6, 3
			for trial := 0; trial < 2; trial++ {
				env := logregEnv(rng, n, p)
				for i := range env.Tensors["x"].Data {
					env.Tensors["x"].Data[i] *= 0.5
				}
				y := env.Tensors["y"].Data // binary already
				switch c.kind {
				case "count":
					for i := range y {
						y[i] = float64(rng.IntN(7))
					}
				case "ordinal":
					env.Sizes["C"] = 3
					env.Tensors["c"] = &Value{Dims: []int{3}, Data: []float64{-0.8, 0.1, 1.2}}
					for i := range y {
						y[i] = float64(1 + i%4) // every outcome, the ends included
					}
				case "positive":
					for i := range y {
						y[i] = 0.1 + rng.ExpFloat64()
					}
				case "real":
					for i := range y {
						y[i] = rng.NormFloat64()
					}
				case "counts":
					cnt := make([]float64, n*p)
					for i := range cnt {
						cnt[i] = float64(rng.IntN(5))
					}
					env.Tensors["y"] = &Value{Dims: []int{n, p}, Data: cnt}
				}
				fdCheck(t, "grad", o.F, o.Grad, o.A, "theta", env, 1e-6)
				for a := 0; a < p; a++ {
					env.Index[o.A.Name] = a
					fdCheck(t, "hess column", o.Grad, o.Hess, o.B, "theta", env, 1e-5)
					fdCheck(t, "delta hess column", o.TraceGrad(), h4, o.B, "theta", env, 1e-5)
				}
				delete(env.Index, o.A.Name)
				fdCheck(t, "trace grad", o.Trace(), o.TraceGrad(), o.A, "theta", env, 1e-5)
				if v := Eval(o.F, env); math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("f = %v at a test point", v)
				}
			}
		})
	}
}
