package derive

import (
	"maps"
	"math"
	"slices"

	"github.com/vigen-go/vigen/runtime"
	"github.com/vigen-go/vigen/spec/ir"
)

// Dist is one entry of the distribution table: everything the compiler
// knows about a family. Its signature (an *ir.Family of ir.Families: the
// value's and the parameters' shapes, classes, ranges and domains) is what
// the checker unifies a `~` statement against; the rest is the mathematics, built in index
// notation from the family's value x and arguments, so the same entry
// serves as a likelihood, as a prior, and as a variational family q.
// Adding a family is adding one entry to table (and its tests).
type Dist struct {
	*ir.Family
	Latex string
	// Gaussian marks a family whose value is Gaussian: expectations of
	// polynomials of degree ≤ 2 and of exp of a linear form are exact.
	Gaussian bool
	// LogDensity is log p(x | args), normalizing constants included (they
	// matter for the ELBO and drop out of derivatives by themselves). For
	// elementwise families x and args are scalars; the caller sums over
	// array targets.
	LogDensity func(b *Builder, x Val, args []Val) (Expr, error)
	// ExpFam is the exponential-family form
	// log p(x) = log h(x) + Σ_k ⟨η_k(args), t_k(x)⟩ − a(args), or nil.
	ExpFam *ExpFam
	// Expect gives E[stat] when the family is a variational factor with
	// parameters args: the statistic named by the key, at element sel.
	// Keys: "x", "x^2", "var" (the variance; scalars), "xx" (outer product, sel = i, j),
	// "log x", "log(1-x)", "1/x", "x log-moments" and so on, as listed.
	Expect map[string]func(b *Builder, args []Val, sel []Expr) Expr
	// Entropy of the family with parameters args, or nil when it has no
	// closed form.
	Entropy func(b *Builder, args []Val) Expr
	// TemperedLogNorm is log ∫ p(x | args)^s dx for the inverse temperature
	// s (an expression), in terms of args (their expectation is taken
	// later), or nil when the family has none in closed form: what local
	// variational tempering needs of a statement (temper.go).
	TemperedLogNorm func(b *Builder, x Val, args []Val, s Expr) Expr
	// Mean is E[x | args] of a scalar family, in terms of its scalar
	// arguments, for the predictive means of observations (pointwise.go);
	// nil where the mean is not always finite (Cauchy, Student's t) or
	// the family is not scalar.
	Mean func(a []Expr) Expr
	// Conj is how a latent with this prior, declared conjugate, is updated
	// in closed form (Eq. 18) with q in the same family; nil if it cannot be.
	Conj *Conjugacy
}

// Conjugacy is the closed-form update of a conjugate family.
type Conjugacy struct {
	// Family, if set, names the conjugate family this one is a special
	// case of (Exponential(r) is Gamma(1, r)): q of a latent with this
	// prior is in that family, and the other fields, filled in from its
	// entry when the table is built, are that family's. The prior's own
	// log density gives its part of η, and must be linear in that
	// family's statistics (the update checks it).
	Family string
	// Params names q's parameter tensors (v.<name>), in the family's
	// argument order.
	Params []string
	// FromNatural maps the natural parameters (one per sufficient
	// statistic, in ExpFam order) to q's new parameters. It is nil for
	// Categorical, whose update normalizes its log-probabilities instead.
	// With ExpFam's Eta (the other direction) it is also what SVI steps
	// between, printed into the generated package.
	FromNatural func(eta []Expr) []Expr
	// Normalize marks a family over categories (Categorical): its update
	// normalizes log-probabilities over the last index and expectations
	// sum over the categories.
	Normalize bool
	// Quadratic, if set, names the statistic g(x) (x for the Normal, log x
	// for the LogNormal) in which the log joint must be a polynomial of
	// degree ≤ 2, its statistics being g(x) and g(x)²: η₁ and η₂ are read
	// off its first and second derivatives in g(x).
	Quadratic string
	// Joint marks a family over vectors whose statistics are x and xxᵀ
	// (MvNormal): q is one Gaussian N(μ, Σ) over the whole vector, the
	// factor the nonconjugate latents get (GaussianQ), and the latent's
	// objective f (Eq. 12, the expected log joint) must be quadratic in it,
	// which the update checks (∇²f must not depend on the latent). Its
	// natural parameters are then read off f's derivatives, η₁ = ∇f(0) and
	// η₂ = ½∇²f, so Σ = −(∇²f)⁻¹ and μ = Ση₁: in generated code, one exact
	// Newton step (closedGaussian in conjugate.go).
	Joint bool
	// Moments computes, numerically, the marginal mean and standard
	// deviation of every element of a factor from its parameters (p in
	// Params order, flattened row-major; k is the last dimension, used by
	// the vector families). An undefined moment is NaN. It and Quantile
	// are the family's entry of runtime.Marginals, set when the table is
	// built.
	Moments func(p [][]float64, k int, mean, sd []float64)
	// Quantile computes the prob-quantile of every element's marginal
	// (p and k as for Moments); nil where a quantile means nothing (a
	// categorical's indicators).
	Quantile func(p [][]float64, k int, prob float64, out []float64)
}

// ExpFam is a family's exponential-family decomposition.
type ExpFam struct {
	Stats   []Stat
	LogNorm func(b *Builder, args []Val) Expr        // a, as a function of the ordinary parameters
	LogBase func(b *Builder, x Val, args []Val) Expr // log h(x); args for families like Binomial whose h depends on n
}

// Stat is one sufficient statistic t_k with its natural parameter η_k. Both
// are values of the same shape; ⟨η, t⟩ sums over their elements.
type Stat struct {
	Name string
	// Moment names the tensor v.<Moment> holding E_q[t_k] of a conjugate
	// factor ("" for a statistic whose expectation the generated code
	// does not keep).
	Moment string
	T      func(b *Builder, x Val) Val
	Eta    func(b *Builder, args []Val) Val
}

// dist is q's table entry.
func (q *QFactor) dist() *Dist { return Dists[q.Family] }

// IsGaussianVector reports whether q is the Gaussian factor N(μ, Σ) of a
// nonconjugate latent (updated by Laplace or delta), one per unit for a
// per-unit latent.
func (q *QFactor) IsGaussianVector() bool { return q.dist().Gaussian && q.dist().Value.Shape != "" }

// IsCategorical reports whether q is a Categorical factor, whose closed-form
// update normalizes log-probabilities and whose expectations sum over the
// categories.
func (q *QFactor) IsCategorical() bool { c := q.dist().Conj; return c != nil && c.Normalize }

// IsSimplex reports whether q's value is a point on the simplex (a
// Dirichlet): a vector over the last of q.Dims, the leading ones selecting
// the vector.
func (q *QFactor) IsSimplex() bool { return q.dist().Value.Class == ir.Simplex }

// table is the distribution table, one literal entry per family.
var table = []*Dist{
	normalDist, gammaDist, inverseGammaDist, betaDist, bernoulliDist, binomialDist,
	poissonDist, exponentialDist, logNormalDist, studentTDist,
	halfNormalDist, halfCauchyDist, halfStudentTDist, cauchyDist, uniformDist, weibullDist,
	negBinomialDist, negBinomialLogDist, bernoulliLogitDist, poissonLogDist, binomialLogitDist,
	orderedDist(ir.OrderedLogistic, false), orderedDist(ir.OrderedProbit, true), dirichletMultinomialDist(),
	mvNormalDist(ir.MvNormal, false), mvNormalDist(ir.MvNormalPrec, true),
	dirichletDist(), categoricalDist(), multinomialDist(), wishartDist(), mixtureDist,
}

// Dists is the distribution table, keyed by family name.
var Dists = func() map[string]*Dist {
	m := map[string]*Dist{}
	for _, d := range table {
		m[d.Name] = d
	}
	for _, d := range table {
		if mg := runtime.Marginals[d.Name]; mg != nil && d.Conj != nil {
			// the numbers: each element's moments and quantiles
			d.Conj.Moments, d.Conj.Quantile = mg.Moments, mg.Quantile
		}
	}
	for _, d := range table {
		if c := d.Conj; c != nil && c.Family != "" {
			f := c.Family
			*c = *m[f].Conj // q is that family's, parameters and all
			c.Family = f
		}
	}
	return m
}()

// DistNames lists the table's families, sorted.
func DistNames() []string { return slices.Sorted(maps.Keys(Dists)) }

var log2Pi = math.Log(2 * math.Pi)

// eulerGamma is the Euler–Mascheroni constant γ = −ψ(1).
const eulerGamma = 0.57721566490153286060651209008240243

// scalar wraps an expression as a rank-0 value.
func scalar(e Expr) Val { return Val{At: func([]Expr) Expr { return e }} }

// vector builds a rank-1 value of length dim from its element function.
func vector(dim string, f func(i Expr) Expr) Val {
	return Val{Dims: []string{dim}, At: func(sel []Expr) Expr { return f(sel[0]) }}
}

// matrix builds a rank-2 value.
func matrix(dim string, f func(i, j Expr) Expr) Val {
	return Val{Dims: []string{dim, dim}, At: func(sel []Expr) Expr { return f(sel[0], sel[1]) }}
}

func lg(e Expr) Expr   { return Call1("lgamma", e) }
func psi(e Expr) Expr  { return Call1("digamma", e) }
func logE(e Expr) Expr { return Call1("log", e) }

// sumOver returns Σ_i f(i) over a fresh index of size dim.
func (b *Builder) sumOver(dim string, f func(i Expr) Expr) Expr {
	i := b.freshFor(dim)
	return Sum([]Index{i}, f(IxE(i)))
}

// slogp is the log density of a scalar family.
func slogp(logp func(x Expr, a []Expr) Expr) func(*Builder, Val, []Val) (Expr, error) {
	return func(b *Builder, x Val, args []Val) (Expr, error) {
		return logp(x.Scalar(), scalars(args)), nil
	}
}

func scalars(args []Val) []Expr {
	out := make([]Expr, len(args))
	for k, a := range args {
		out[k] = a.Scalar()
	}
	return out
}

// sstat is a scalar statistic whose expectation is kept in v.<moment>.
func sstat(name, moment string, t func(x Expr) Expr, eta func(a []Expr) Expr) Stat {
	return Stat{Name: name, Moment: moment,
		T:   func(b *Builder, x Val) Val { return scalar(t(x.Scalar())) },
		Eta: func(b *Builder, args []Val) Val { return scalar(eta(scalars(args))) }}
}

func sexpect(m map[string]func(a []Expr) Expr) map[string]func(*Builder, []Val, []Expr) Expr {
	out := map[string]func(*Builder, []Val, []Expr) Expr{}
	for k, f := range m {
		f := f
		out[k] = func(b *Builder, args []Val, sel []Expr) Expr { return f(scalars(args)) }
	}
	return out
}

// sfunc adapts a function of scalar arguments (an entropy or a log
// normalizer).
func sfunc(f func(a []Expr) Expr) func(*Builder, []Val) Expr {
	return func(b *Builder, args []Val) Expr { return f(scalars(args)) }
}

func slogBase(f func(x Expr) Expr) func(*Builder, Val, []Val) Expr {
	return func(b *Builder, x Val, _ []Val) Expr { return f(x.Scalar()) }
}

// Normal(x; m, s) = −½log 2π − log s − ½((x−m)/s)²
var normalDist = &Dist{
	Family: ir.Normal,
	Mean:   func(a []Expr) Expr { return a[0] },
	Latex:  `\mathcal{N}`, Gaussian: true,
	LogDensity: slogp(func(x Expr, a []Expr) Expr {
		m, s := a[0], a[1]
		return Add(N(-0.5*log2Pi), Neg(logE(s)), Mul(N(-0.5), Pow(Sub(x, m), N(2)), Pow(s, N(-2))))
	}),
	ExpFam: &ExpFam{
		Stats: []Stat{
			sstat("x", "mean", func(x Expr) Expr { return x }, func(a []Expr) Expr { return Mul(a[0], Pow(a[1], N(-2))) }),
			sstat("x^2", "esq", func(x Expr) Expr { return Pow(x, N(2)) }, func(a []Expr) Expr { return Mul(N(-0.5), Pow(a[1], N(-2))) }),
		},
		LogNorm: sfunc(func(a []Expr) Expr { return Add(Mul(N(0.5), Pow(a[0], N(2)), Pow(a[1], N(-2))), logE(a[1])) }),
		LogBase: slogBase(func(Expr) Expr { return N(-0.5 * log2Pi) }),
	},
	Expect: sexpect(map[string]func(a []Expr) Expr{
		"x":   func(a []Expr) Expr { return a[0] },
		"x^2": func(a []Expr) Expr { return Add(Pow(a[0], N(2)), Pow(a[1], N(2))) },
		"var": func(a []Expr) Expr { return Pow(a[1], N(2)) },
	}),
	Entropy: sfunc(func(a []Expr) Expr { return Add(N(0.5*(1+log2Pi)), logE(a[1])) }),
	// ∫ N(x; m, σ)^s dx = (2πσ²)^((1−s)/2) s^(−1/2), whatever m
	TemperedLogNorm: stempered(func(a []Expr, s Expr) Expr {
		return Sub(Mul(Sub(N(1), s), Add(N(0.5*log2Pi), logE(a[1]))), Mul(N(0.5), logE(s)))
	}),
	// t = (x, x²), η = (m/s², −1/(2s²)): s² = −1/(2η₂), m = η₁s²
	Conj: &Conjugacy{Params: []string{"mean", "sd"}, Quadratic: "x", FromNatural: normalFromNatural},
}

// normalFromNatural is (m, s) from η = (m/s², −1/(2s²)), shared by the
// Normal and the LogNormal (a Normal in log x).
func normalFromNatural(eta []Expr) []Expr {
	v := Neg(Pow(Mul(N(2), eta[1]), N(-1)))
	return []Expr{Mul(eta[0], v), Call1("sqrt", v)}
}

// Gamma(x; α, β) = α log β − log Γ(α) + (α−1) log x − βx   (β a rate)
var gammaDist = &Dist{
	Family: ir.Gamma,
	Mean:   func(a []Expr) Expr { return Div(a[0], a[1]) },
	Latex:  `\operatorname{Gamma}`,
	LogDensity: slogp(func(x Expr, a []Expr) Expr {
		al, be := a[0], a[1]
		return Add(Mul(al, logE(be)), Neg(lg(al)), Mul(Sub(al, N(1)), logE(x)), Neg(Mul(be, x)))
	}),
	ExpFam: &ExpFam{
		Stats: []Stat{
			sstat("log x", "elog", func(x Expr) Expr { return logE(x) }, func(a []Expr) Expr { return Sub(a[0], N(1)) }),
			sstat("x", "mean", func(x Expr) Expr { return x }, func(a []Expr) Expr { return Neg(a[1]) }),
		},
		LogNorm: sfunc(func(a []Expr) Expr { return Sub(lg(a[0]), Mul(a[0], logE(a[1]))) }),
		LogBase: slogBase(func(Expr) Expr { return N(0) }),
	},
	Expect: sexpect(map[string]func(a []Expr) Expr{
		"x":     func(a []Expr) Expr { return Div(a[0], a[1]) },
		"log x": func(a []Expr) Expr { return Sub(psi(a[0]), logE(a[1])) },
		"x^2":   func(a []Expr) Expr { return Mul(a[0], Add(a[0], N(1)), Pow(a[1], N(-2))) },
		"var":   func(a []Expr) Expr { return Mul(a[0], Pow(a[1], N(-2))) },
	}),
	// H = α − log β + log Γ(α) + (1−α)ψ(α)
	Entropy: sfunc(func(a []Expr) Expr {
		return Add(a[0], Neg(logE(a[1])), lg(a[0]), Mul(Sub(N(1), a[0]), psi(a[0])))
	}),
	// t = (log x, x), η = (α − 1, −β); mean a/b, sd √a/b
	Conj: &Conjugacy{Params: []string{"shape", "rate"},
		FromNatural: func(eta []Expr) []Expr { return []Expr{Add(eta[0], N(1)), Neg(eta[1])} }},
}

// InverseGamma(x; α, β) = α log β − log Γ(α) − (α+1) log x − β/x   (β a scale)
var inverseGammaDist = &Dist{
	Family: ir.InverseGamma,
	Latex:  `\operatorname{InvGamma}`,
	LogDensity: slogp(func(x Expr, a []Expr) Expr {
		al, be := a[0], a[1]
		return Add(Mul(al, logE(be)), Neg(lg(al)), Neg(Mul(Add(al, N(1)), logE(x))), Neg(Div(be, x)))
	}),
	ExpFam: &ExpFam{
		Stats: []Stat{
			sstat("log x", "elog", func(x Expr) Expr { return logE(x) }, func(a []Expr) Expr { return Neg(Add(a[0], N(1))) }),
			sstat("1/x", "einv", func(x Expr) Expr { return Pow(x, N(-1)) }, func(a []Expr) Expr { return Neg(a[1]) }),
		},
		LogNorm: sfunc(func(a []Expr) Expr { return Sub(lg(a[0]), Mul(a[0], logE(a[1]))) }),
		LogBase: slogBase(func(Expr) Expr { return N(0) }),
	},
	Expect: sexpect(map[string]func(a []Expr) Expr{
		"1/x":   func(a []Expr) Expr { return Div(a[0], a[1]) },
		"log x": func(a []Expr) Expr { return Sub(logE(a[1]), psi(a[0])) },
		"x":     func(a []Expr) Expr { return Div(a[1], Sub(a[0], N(1))) }, // α > 1
		// no "var": it needs α > 2, which nothing guarantees of q's shape
	}),
	// H = α + log β + log Γ(α) − (1+α)ψ(α)
	Entropy: sfunc(func(a []Expr) Expr {
		return Add(a[0], logE(a[1]), lg(a[0]), Neg(Mul(Add(N(1), a[0]), psi(a[0]))))
	}),
	// t = (log x, 1/x), η = (−α − 1, −β); mean b/(a−1) for a > 1, sd
	// b/((a−1)√(a−2)) for a > 2
	Conj: &Conjugacy{Params: []string{"shape", "scale"},
		FromNatural: func(eta []Expr) []Expr { return []Expr{Neg(Add(eta[0], N(1))), Neg(eta[1])} }},
}

// Beta(x; a, b) = log Γ(a+b) − log Γ(a) − log Γ(b) + (a−1) log x + (b−1) log(1−x)
var betaDist = &Dist{
	Family: ir.Beta,
	Mean:   func(a []Expr) Expr { return Div(a[0], Add(a[0], a[1])) },
	Latex:  `\operatorname{Beta}`,
	LogDensity: slogp(func(x Expr, a []Expr) Expr {
		return Add(lg(Add(a[0], a[1])), Neg(lg(a[0])), Neg(lg(a[1])),
			Mul(Sub(a[0], N(1)), logE(x)), Mul(Sub(a[1], N(1)), Call1("log1p", Neg(x))))
	}),
	ExpFam: &ExpFam{
		Stats: []Stat{
			sstat("log x", "elog", func(x Expr) Expr { return logE(x) }, func(a []Expr) Expr { return Sub(a[0], N(1)) }),
			sstat("log(1-x)", "elog1m", func(x Expr) Expr { return Call1("log1p", Neg(x)) }, func(a []Expr) Expr { return Sub(a[1], N(1)) }),
		},
		LogNorm: sfunc(func(a []Expr) Expr { return Add(lg(a[0]), lg(a[1]), Neg(lg(Add(a[0], a[1])))) }),
		LogBase: slogBase(func(Expr) Expr { return N(0) }),
	},
	Expect: sexpect(map[string]func(a []Expr) Expr{
		"x": func(a []Expr) Expr { return Div(a[0], Add(a[0], a[1])) },
		"var": func(a []Expr) Expr {
			ab := Add(a[0], a[1])
			return Mul(a[0], a[1], Pow(ab, N(-2)), Pow(Add(ab, N(1)), N(-1)))
		},
		"log x":    func(a []Expr) Expr { return Sub(psi(a[0]), psi(Add(a[0], a[1]))) },
		"log(1-x)": func(a []Expr) Expr { return Sub(psi(a[1]), psi(Add(a[0], a[1]))) },
	}),
	// H = log B(a,b) − (a−1)ψ(a) − (b−1)ψ(b) + (a+b−2)ψ(a+b)
	Entropy: sfunc(func(a []Expr) Expr {
		ab := Add(a[0], a[1])
		return Add(lg(a[0]), lg(a[1]), Neg(lg(ab)), Neg(Mul(Sub(a[0], N(1)), psi(a[0]))),
			Neg(Mul(Sub(a[1], N(1)), psi(a[1]))), Mul(Sub(ab, N(2)), psi(ab)))
	}),
	// t = (log x, log(1−x)), η = (a − 1, b − 1); mean a/(a+b), variance
	// ab/((a+b)²(a+b+1))
	Conj: &Conjugacy{Params: []string{"a", "b"},
		FromNatural: func(eta []Expr) []Expr { return []Expr{Add(eta[0], N(1)), Add(eta[1], N(1))} }},
}

// Bernoulli(y; p) = y·logit(p) − softplus(logit(p)): natural parameter
// logit(p); with p = logistic(u) the simplifier reduces it to y·u − softplus(u).
var bernoulliDist = &Dist{
	Family: ir.Bernoulli,
	Mean:   func(a []Expr) Expr { return a[0] },
	Latex:  `\operatorname{Bernoulli}`,
	LogDensity: slogp(func(y Expr, a []Expr) Expr {
		if lp, lq, ok := probitLogs(a[0]); ok {
			return Add(Mul(y, lp), Mul(Sub(N(1), y), lq))
		}
		eta := Call1("logit", a[0])
		return Sub(Mul(y, eta), Call1("softplus", eta))
	}),
	ExpFam: &ExpFam{
		Stats:   []Stat{sstat("x", "", func(y Expr) Expr { return y }, func(a []Expr) Expr { return Call1("logit", a[0]) })},
		LogNorm: sfunc(func(a []Expr) Expr { return Call1("softplus", Call1("logit", a[0])) }),
		LogBase: slogBase(func(Expr) Expr { return N(0) }),
	},
	Expect: sexpect(map[string]func(a []Expr) Expr{"x": func(a []Expr) Expr { return a[0] }}),
	Entropy: sfunc(func(a []Expr) Expr {
		p := a[0]
		return Neg(Add(Mul(p, logE(p)), Mul(Sub(N(1), p), Call1("log1p", Neg(p)))))
	}),
	// Σ_y (p^y (1−p)^(1−y))^s = p^s + (1−p)^s
	TemperedLogNorm: stempered(func(a []Expr, s Expr) Expr {
		return logE(Add(Pow(a[0], s), Pow(Sub(N(1), a[0]), s)))
	}),
}

// Binomial(k; n, p) = log C(n, k) + k·logit(p) − n·softplus(logit(p))
var binomialDist = &Dist{
	Family: ir.Binomial,
	Mean:   func(a []Expr) Expr { return Mul(a[0], a[1]) },
	Latex:  `\operatorname{Binomial}`,
	LogDensity: slogp(func(k Expr, a []Expr) Expr {
		n := a[0]
		if lp, lq, ok := probitLogs(a[1]); ok {
			return Add(binomLogCoef(n, k), Mul(k, lp), Mul(Sub(n, k), lq))
		}
		eta := Call1("logit", a[1])
		return Add(binomLogCoef(n, k), Mul(k, eta), Neg(Mul(n, Call1("softplus", eta))))
	}),
	ExpFam: &ExpFam{
		Stats:   []Stat{sstat("x", "", func(k Expr) Expr { return k }, func(a []Expr) Expr { return Call1("logit", a[1]) })},
		LogNorm: sfunc(func(a []Expr) Expr { return Mul(a[0], Call1("softplus", Call1("logit", a[1]))) }),
		LogBase: func(b *Builder, k Val, a []Val) Expr { return binomLogCoef(a[0].Scalar(), k.Scalar()) },
	},
	Expect: sexpect(map[string]func(a []Expr) Expr{"x": func(a []Expr) Expr { return Mul(a[0], a[1]) }}),
}

// Poisson(k; λ) = k log λ − λ − log Γ(k+1)
var poissonDist = &Dist{
	Family: ir.Poisson,
	Mean:   func(a []Expr) Expr { return a[0] },
	Latex:  `\operatorname{Poisson}`,
	LogDensity: slogp(func(k Expr, a []Expr) Expr {
		return Add(Mul(k, logE(a[0])), Neg(a[0]), Neg(lg(Add(k, N(1)))))
	}),
	ExpFam: &ExpFam{
		Stats:   []Stat{sstat("x", "", func(k Expr) Expr { return k }, func(a []Expr) Expr { return logE(a[0]) })},
		LogNorm: sfunc(func(a []Expr) Expr { return a[0] }),
		LogBase: slogBase(func(k Expr) Expr { return Neg(lg(Add(k, N(1)))) }),
	},
	Expect: sexpect(map[string]func(a []Expr) Expr{"x": func(a []Expr) Expr { return a[0] }}),
}

// Exponential(x; λ) = log λ − λx
var exponentialDist = &Dist{
	Family: ir.Exponential,
	Mean:   func(a []Expr) Expr { return Div(N(1), a[0]) },
	Latex:  `\operatorname{Exp}`,
	LogDensity: slogp(func(x Expr, a []Expr) Expr {
		return Sub(logE(a[0]), Mul(a[0], x))
	}),
	ExpFam: &ExpFam{
		Stats:   []Stat{sstat("x", "", func(x Expr) Expr { return x }, func(a []Expr) Expr { return Neg(a[0]) })},
		LogNorm: sfunc(func(a []Expr) Expr { return Neg(logE(a[0])) }),
		LogBase: slogBase(func(Expr) Expr { return N(0) }),
	},
	Expect: sexpect(map[string]func(a []Expr) Expr{
		"x":     func(a []Expr) Expr { return Pow(a[0], N(-1)) },
		"log x": func(a []Expr) Expr { return Sub(N(-eulerGamma), logE(a[0])) },
	}),
	Entropy: sfunc(func(a []Expr) Expr { return Sub(N(1), logE(a[0])) }),
	// Exponential(r) is Gamma(1, r): a conjugate latent's q is a Gamma
	Conj: &Conjugacy{Family: "Gamma"},
}

// LogNormal(x; m, s) = −log x − log s − ½log 2π − (log x − m)²/(2s²)
var logNormalDist = &Dist{
	Family: ir.LogNormal,
	Mean:   func(a []Expr) Expr { return Call1("exp", Add(a[0], Mul(N(0.5), Pow(a[1], N(2))))) },
	Latex:  `\operatorname{LogNormal}`,
	LogDensity: slogp(func(x Expr, a []Expr) Expr {
		lx := logE(x)
		return Add(Neg(lx), Neg(logE(a[1])), N(-0.5*log2Pi), Mul(N(-0.5), Pow(Sub(lx, a[0]), N(2)), Pow(a[1], N(-2))))
	}),
	ExpFam: &ExpFam{
		Stats: []Stat{
			sstat("log x", "elog", func(x Expr) Expr { return logE(x) }, func(a []Expr) Expr { return Mul(a[0], Pow(a[1], N(-2))) }),
			sstat("(log x)^2", "elogsq", func(x Expr) Expr { return Pow(logE(x), N(2)) }, func(a []Expr) Expr { return Mul(N(-0.5), Pow(a[1], N(-2))) }),
		},
		LogNorm: sfunc(func(a []Expr) Expr { return Add(Mul(N(0.5), Pow(a[0], N(2)), Pow(a[1], N(-2))), logE(a[1])) }),
		LogBase: slogBase(func(x Expr) Expr { return Sub(N(-0.5*log2Pi), logE(x)) }),
	},
	Expect: sexpect(map[string]func(a []Expr) Expr{
		"log x":     func(a []Expr) Expr { return a[0] },
		"(log x)^2": func(a []Expr) Expr { return Add(Pow(a[0], N(2)), Pow(a[1], N(2))) },
		"x":         func(a []Expr) Expr { return Call1("exp", Add(a[0], Mul(N(0.5), Pow(a[1], N(2))))) },
	}),
	Entropy: sfunc(func(a []Expr) Expr { return Add(a[0], N(0.5*(1+log2Pi)), logE(a[1])) }),
	// a Normal in log x: t = (log x, (log x)²), η = (m/s², −1/(2s²));
	// mean exp(m + s²/2), variance (exp(s²) − 1)·exp(2m + s²)
	Conj: &Conjugacy{Params: []string{"meanlog", "sdlog"}, Quadratic: "log x", FromNatural: normalFromNatural},
}

// StudentT(x; ν, μ, σ) = log Γ((ν+1)/2) − log Γ(ν/2) − ½log(νπ) − log σ
//
//	− (ν+1)/2 · log(1 + ((x−μ)/σ)²/ν)
var studentTDist = &Dist{
	Family:     ir.StudentT,
	Latex:      `t`,
	LogDensity: slogp(func(x Expr, a []Expr) Expr { return studentTLogDensity(x, a[0], a[1], a[2]) }),
	Expect:     sexpect(map[string]func(a []Expr) Expr{"x": func(a []Expr) Expr { return a[1] }}), // ν > 1
	// H = (ν+1)/2 [ψ((ν+1)/2) − ψ(ν/2)] + ½log ν + log B(ν/2, ½) + log σ
	Entropy: sfunc(func(a []Expr) Expr {
		nu, sg := a[0], a[2]
		h1, h2 := Mul(N(0.5), Add(nu, N(1))), Mul(N(0.5), nu)
		return Add(Mul(h1, Sub(psi(h1), psi(h2))), Mul(N(0.5), logE(nu)),
			lg(h2), N(math.Log(math.Sqrt(math.Pi))), Neg(lg(h1)), logE(sg))
	}),
}

// binomLogCoef is log C(n, k) = log Γ(n+1) − log Γ(k+1) − log Γ(n−k+1).
func binomLogCoef(n, k Expr) Expr {
	return Add(lg(Add(n, N(1))), Neg(lg(Add(k, N(1)))), Neg(lg(Add(Sub(n, k), N(1)))))
}

// probitLogs returns log p and log(1 − p) of a probability p = Φ(u) written
// with the normal distribution function (a probit link), as log Φ(u) and
// log Φ(−u): accurate far in both tails, where Φ(u) rounds to 0 or 1 (the
// logit form log(Φ/(1−Φ)) would lose everything there).
func probitLogs(p Expr) (lp, lq Expr, ok bool) {
	c, ok := p.(*Call)
	if !ok || c.Prim.Name != "Phi" {
		return nil, nil, false
	}
	return Call1("logPhi", c.Args[0]), Call1("logPhi", Neg(c.Args[0])), true
}

// The families users write as priors on scales and as robust or count
// likelihoods, with Stan's parameterizations. None is conjugate: a latent
// with one of these priors is nonconjugate (a positive one is declared
// real<lower=0>, and its Gaussian lives on the log scale).

// log1pSq is log(1 + z²).
func log1pSq(z Expr) Expr { return Call1("log1p", Pow(z, N(2))) }

// HalfNormal(x; σ) = log 2 − ½log 2π − log σ − x²/(2σ²),  x ≥ 0
var halfNormalDist = &Dist{
	Family: ir.HalfNormal,
	Mean:   func(a []Expr) Expr { return Mul(N(math.Sqrt(2/math.Pi)), a[0]) },
	Latex:  `\mathcal{N}^{+}`,
	LogDensity: slogp(func(x Expr, a []Expr) Expr {
		return Add(N(math.Ln2-0.5*log2Pi), Neg(logE(a[0])), Mul(N(-0.5), Pow(x, N(2)), Pow(a[0], N(-2))))
	}),
}

// HalfCauchy(x; s) = log 2 − log π − log s − log(1 + (x/s)²),  x ≥ 0
var halfCauchyDist = &Dist{
	Family: ir.HalfCauchy,
	Latex:  `\operatorname{Cauchy}^{+}`,
	LogDensity: slogp(func(x Expr, a []Expr) Expr {
		return Add(N(math.Ln2-math.Log(math.Pi)), Neg(logE(a[0])), Neg(log1pSq(Div(x, a[0]))))
	}),
}

// studentTLogDensity is StudentT(x; ν, μ, σ), shared with HalfStudentT.
func studentTLogDensity(x, nu, mu, sg Expr) Expr {
	z2 := Mul(Pow(Sub(x, mu), N(2)), Pow(sg, N(-2)), Pow(nu, N(-1)))
	return Add(lg(Mul(N(0.5), Add(nu, N(1)))), Neg(lg(Mul(N(0.5), nu))), Mul(N(-0.5), logE(Mul(N(math.Pi), nu))),
		Neg(logE(sg)), Mul(N(-0.5), Add(nu, N(1)), Call1("log1p", z2)))
}

// HalfStudentT(x; ν, s) = log 2 + StudentT(x; ν, 0, s),  x ≥ 0
var halfStudentTDist = &Dist{
	Family: ir.HalfStudentT,
	Latex:  `t^{+}`,
	LogDensity: slogp(func(x Expr, a []Expr) Expr {
		return Add(N(math.Ln2), studentTLogDensity(x, a[0], N(0), a[1]))
	}),
}

// Cauchy(x; μ, s) = −log π − log s − log(1 + ((x−μ)/s)²)
var cauchyDist = &Dist{
	Family: ir.Cauchy,
	Latex:  `\operatorname{Cauchy}`,
	LogDensity: slogp(func(x Expr, a []Expr) Expr {
		return Add(N(-math.Log(math.Pi)), Neg(logE(a[1])), Neg(log1pSq(Div(Sub(x, a[0]), a[1]))))
	}),
}

// Uniform(x; lo, hi) = −log(hi − lo),  lo ≤ x ≤ hi. Its value must lie
// between the bounds: a latent with this prior is declared
// real<lower=lo, upper=hi>, whose transform keeps it there.
var uniformDist = &Dist{
	Family:     ir.Uniform,
	Mean:       func(a []Expr) Expr { return Mul(N(0.5), Add(a[0], a[1])) },
	Latex:      `\operatorname{U}`,
	LogDensity: slogp(func(x Expr, a []Expr) Expr { return Neg(logE(Sub(a[1], a[0]))) }),
}

// Weibull(x; k, λ) = log k − log λ + (k−1)(log x − log λ) − (x/λ)^k  (Stan's
// weibull(alpha = k, sigma = λ))
var weibullDist = &Dist{
	Family: ir.Weibull,
	Mean:   func(a []Expr) Expr { return Mul(a[1], Call1("exp", lg(Add(N(1), Div(N(1), a[0]))))) },
	Latex:  `\operatorname{Weibull}`,
	LogDensity: slogp(func(x Expr, a []Expr) Expr {
		k, lam := a[0], a[1]
		return Add(logE(k), Neg(logE(lam)), Mul(Sub(k, N(1)), Sub(logE(x), logE(lam))), Neg(Pow(Div(x, lam), k)))
	}),
}

// negBinomialBase is log Γ(y+φ) − log Γ(y+1) − log Γ(φ).
func negBinomialBase(y, phi Expr) Expr {
	return Add(lg(Add(y, phi)), Neg(lg(Add(y, N(1)))), Neg(lg(phi)))
}

// NegativeBinomial(y; μ, φ) = log Γ(y+φ) − log Γ(y+1) − log Γ(φ)
//
//   - φ(log φ − log(μ+φ)) + y(log μ − log(μ+φ))
//
// Stan's neg_binomial_2: mean μ, variance μ + μ²/φ.
var negBinomialDist = &Dist{
	Family: ir.NegativeBinomial,
	Mean:   func(a []Expr) Expr { return a[0] },
	Latex:  `\operatorname{NB}`,
	LogDensity: slogp(func(y Expr, a []Expr) Expr {
		mu, phi := a[0], a[1]
		lmp := logE(Add(mu, phi))
		return Add(negBinomialBase(y, phi), Mul(phi, Sub(logE(phi), lmp)), Mul(y, Sub(logE(mu), lmp)))
	}),
}

// NegativeBinomialLog(y; η, φ) is NegativeBinomial(y; exp(η), φ), computed
// without forming exp(η): log(exp(η) + φ) = log φ + softplus(η − log φ), so
//
//	log p = log Γ(y+φ) − log Γ(y+1) − log Γ(φ) + y(η − log φ) − (y+φ)·softplus(η − log φ)
var negBinomialLogDist = &Dist{
	Family: ir.NegativeBinomialLog,
	Mean:   func(a []Expr) Expr { return Call1("exp", a[0]) },
	Latex:  `\operatorname{NB}_{\log}`,
	LogDensity: slogp(func(y Expr, a []Expr) Expr {
		eta, phi := a[0], a[1]
		d := Sub(eta, logE(phi))
		return Add(negBinomialBase(y, phi), Mul(y, d), Neg(Mul(Add(y, phi), Call1("softplus", d))))
	}),
}

// BernoulliLogit(y; α) = yα − softplus(α): Bernoulli(logistic(α)).
var bernoulliLogitDist = &Dist{
	Family: ir.BernoulliLogit,
	Mean:   func(a []Expr) Expr { return Call1("logistic", a[0]) },
	Latex:  `\operatorname{Bernoulli}_{\operatorname{logit}}`,
	LogDensity: slogp(func(y Expr, a []Expr) Expr {
		return Sub(Mul(y, a[0]), Call1("softplus", a[0]))
	}),
}

// PoissonLog(y; α) = yα − exp(α) − log Γ(y+1): Poisson(exp(α)).
var poissonLogDist = &Dist{
	Family: ir.PoissonLog,
	Mean:   func(a []Expr) Expr { return Call1("exp", a[0]) },
	Latex:  `\operatorname{Poisson}_{\log}`,
	LogDensity: slogp(func(y Expr, a []Expr) Expr {
		return Add(Mul(y, a[0]), Neg(Call1("exp", a[0])), Neg(lg(Add(y, N(1)))))
	}),
}

// BinomialLogit(k; n, α) = log C(n, k) + kα − n·softplus(α): Binomial(n, logistic(α)).
var binomialLogitDist = &Dist{
	Family: ir.BinomialLogit,
	Mean:   func(a []Expr) Expr { return Mul(a[0], Call1("logistic", a[1])) },
	Latex:  `\operatorname{Binomial}_{\operatorname{logit}}`,
	LogDensity: slogp(func(k Expr, a []Expr) Expr {
		n, al := a[0], a[1]
		return Add(binomLogCoef(n, k), Mul(k, al), Neg(Mul(n, Call1("softplus", al))))
	}),
}
