package derive

import (
	"math"
	"sort"
)

// Dist is one entry of the distribution table: the mathematics of a family
// whose signature is ir.Families[Name]. Every expression is built in index
// notation from the family's value x and arguments, so the same entry
// serves as a likelihood, as a prior, and as a variational family q.
type Dist struct {
	Name  string
	Latex string
	// Support and Constraints document the value's domain and the
	// parameters' (shown by vigen check and in the language reference).
	Support, Constraints string
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
	// Conj is how a latent with this prior, declared conjugate, is updated
	// in closed form (Eq. 18) with q in the same family; nil if it cannot be.
	Conj *Conjugacy
}

// Conjugacy is the closed-form update of a conjugate family.
type Conjugacy struct {
	// Params names q's parameter tensors (v.<name>), in the family's
	// argument order.
	Params []string
	// FromNatural maps the natural parameters (one per sufficient
	// statistic, in ExpFam order) to q's new parameters. It is nil for
	// Categorical, whose update normalizes its log-probabilities instead.
	FromNatural func(eta []Expr) []Expr
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
	T    func(b *Builder, x Val) Val
	Eta  func(b *Builder, args []Val) Val
}

// Dists is the distribution table, keyed by family name.
var Dists = map[string]*Dist{}

// DistNames lists the table's families, sorted.
func DistNames() []string {
	var out []string
	for n := range Dists {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

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

func scalarDist(name, latex, support, constraints string, logp func(x Expr, a []Expr) Expr) *Dist {
	return &Dist{Name: name, Latex: latex, Support: support, Constraints: constraints,
		LogDensity: func(b *Builder, x Val, args []Val) (Expr, error) {
			return logp(x.Scalar(), scalars(args)), nil
		}}
}

func scalars(args []Val) []Expr {
	out := make([]Expr, len(args))
	for k, a := range args {
		out[k] = a.Scalar()
	}
	return out
}

// sstat is a scalar statistic.
func sstat(name string, t func(x Expr) Expr, eta func(a []Expr) Expr) Stat {
	return Stat{Name: name,
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

func sentropy(f func(a []Expr) Expr) func(*Builder, []Val) Expr {
	return func(b *Builder, args []Val) Expr { return f(scalars(args)) }
}

func slogNorm(f func(a []Expr) Expr) func(*Builder, []Val) Expr {
	return func(b *Builder, args []Val) Expr { return f(scalars(args)) }
}

func slogBase(f func(x Expr) Expr) func(*Builder, Val, []Val) Expr {
	return func(b *Builder, x Val, _ []Val) Expr { return f(x.Scalar()) }
}

func init() {
	// Normal(x; m, s) = −½log 2π − log s − ½((x−m)/s)²
	d := scalarDist("Normal", `\mathcal{N}`, "x ∈ ℝ", "sd > 0", func(x Expr, a []Expr) Expr {
		m, s := a[0], a[1]
		return Add(N(-0.5*log2Pi), Neg(logE(s)), Mul(N(-0.5), Pow(Sub(x, m), N(2)), Pow(s, N(-2))))
	})
	d.ExpFam = &ExpFam{
		Stats: []Stat{
			sstat("x", func(x Expr) Expr { return x }, func(a []Expr) Expr { return Mul(a[0], Pow(a[1], N(-2))) }),
			sstat("x^2", func(x Expr) Expr { return Pow(x, N(2)) }, func(a []Expr) Expr { return Mul(N(-0.5), Pow(a[1], N(-2))) }),
		},
		LogNorm: slogNorm(func(a []Expr) Expr { return Add(Mul(N(0.5), Pow(a[0], N(2)), Pow(a[1], N(-2))), logE(a[1])) }),
		LogBase: slogBase(func(Expr) Expr { return N(-0.5 * log2Pi) }),
	}
	d.Expect = sexpect(map[string]func(a []Expr) Expr{
		"x":   func(a []Expr) Expr { return a[0] },
		"x^2": func(a []Expr) Expr { return Add(Pow(a[0], N(2)), Pow(a[1], N(2))) },
		"var": func(a []Expr) Expr { return Pow(a[1], N(2)) },
	})
	d.Entropy = sentropy(func(a []Expr) Expr { return Add(N(0.5*(1+log2Pi)), logE(a[1])) })
	// t = (x, x²), η = (m/s², −1/(2s²)): s² = −1/(2η₂), m = η₁s²
	d.Conj = &Conjugacy{Params: []string{"mean", "sd"}, FromNatural: func(eta []Expr) []Expr {
		v := Neg(Pow(Mul(N(2), eta[1]), N(-1)))
		return []Expr{Mul(eta[0], v), Call1("sqrt", v)}
	}}
	Dists[d.Name] = d

	// Gamma(x; α, β) = α log β − log Γ(α) + (α−1) log x − βx   (β a rate)
	d = scalarDist("Gamma", `\operatorname{Gamma}`, "x > 0", "shape > 0, rate > 0", func(x Expr, a []Expr) Expr {
		al, be := a[0], a[1]
		return Add(Mul(al, logE(be)), Neg(lg(al)), Mul(Sub(al, N(1)), logE(x)), Neg(Mul(be, x)))
	})
	d.ExpFam = &ExpFam{
		Stats: []Stat{
			sstat("log x", func(x Expr) Expr { return logE(x) }, func(a []Expr) Expr { return Sub(a[0], N(1)) }),
			sstat("x", func(x Expr) Expr { return x }, func(a []Expr) Expr { return Neg(a[1]) }),
		},
		LogNorm: slogNorm(func(a []Expr) Expr { return Sub(lg(a[0]), Mul(a[0], logE(a[1]))) }),
		LogBase: slogBase(func(Expr) Expr { return N(0) }),
	}
	d.Expect = sexpect(map[string]func(a []Expr) Expr{
		"x":     func(a []Expr) Expr { return Div(a[0], a[1]) },
		"log x": func(a []Expr) Expr { return Sub(psi(a[0]), logE(a[1])) },
		"x^2":   func(a []Expr) Expr { return Mul(a[0], Add(a[0], N(1)), Pow(a[1], N(-2))) },
		"var":   func(a []Expr) Expr { return Mul(a[0], Pow(a[1], N(-2))) },
	})
	// H = α − log β + log Γ(α) + (1−α)ψ(α)
	d.Entropy = sentropy(func(a []Expr) Expr {
		return Add(a[0], Neg(logE(a[1])), lg(a[0]), Mul(Sub(N(1), a[0]), psi(a[0])))
	})
	// t = (log x, x), η = (α − 1, −β)
	d.Conj = &Conjugacy{Params: []string{"shape", "rate"}, FromNatural: func(eta []Expr) []Expr { return []Expr{Add(eta[0], N(1)), Neg(eta[1])} }}
	Dists[d.Name] = d

	// InverseGamma(x; α, β) = α log β − log Γ(α) − (α+1) log x − β/x   (β a scale)
	d = scalarDist("InverseGamma", `\operatorname{InvGamma}`, "x > 0", "shape > 0, scale > 0", func(x Expr, a []Expr) Expr {
		al, be := a[0], a[1]
		return Add(Mul(al, logE(be)), Neg(lg(al)), Neg(Mul(Add(al, N(1)), logE(x))), Neg(Div(be, x)))
	})
	d.ExpFam = &ExpFam{
		Stats: []Stat{
			sstat("log x", func(x Expr) Expr { return logE(x) }, func(a []Expr) Expr { return Neg(Add(a[0], N(1))) }),
			sstat("1/x", func(x Expr) Expr { return Pow(x, N(-1)) }, func(a []Expr) Expr { return Neg(a[1]) }),
		},
		LogNorm: slogNorm(func(a []Expr) Expr { return Sub(lg(a[0]), Mul(a[0], logE(a[1]))) }),
		LogBase: slogBase(func(Expr) Expr { return N(0) }),
	}
	d.Expect = sexpect(map[string]func(a []Expr) Expr{
		"1/x":   func(a []Expr) Expr { return Div(a[0], a[1]) },
		"log x": func(a []Expr) Expr { return Sub(logE(a[1]), psi(a[0])) },
		"x":     func(a []Expr) Expr { return Div(a[1], Sub(a[0], N(1))) }, // α > 1
		// no "var": it needs α > 2, which nothing guarantees of q's shape
	})
	// H = α + log β + log Γ(α) − (1+α)ψ(α)
	d.Entropy = sentropy(func(a []Expr) Expr {
		return Add(a[0], logE(a[1]), lg(a[0]), Neg(Mul(Add(N(1), a[0]), psi(a[0]))))
	})
	// t = (log x, 1/x), η = (−α − 1, −β)
	d.Conj = &Conjugacy{Params: []string{"shape", "scale"}, FromNatural: func(eta []Expr) []Expr { return []Expr{Neg(Add(eta[0], N(1))), Neg(eta[1])} }}
	Dists[d.Name] = d

	// Beta(x; a, b) = log Γ(a+b) − log Γ(a) − log Γ(b) + (a−1) log x + (b−1) log(1−x)
	d = scalarDist("Beta", `\operatorname{Beta}`, "0 < x < 1", "a > 0, b > 0", func(x Expr, a []Expr) Expr {
		return Add(lg(Add(a[0], a[1])), Neg(lg(a[0])), Neg(lg(a[1])),
			Mul(Sub(a[0], N(1)), logE(x)), Mul(Sub(a[1], N(1)), Call1("log1p", Neg(x))))
	})
	d.ExpFam = &ExpFam{
		Stats: []Stat{
			sstat("log x", func(x Expr) Expr { return logE(x) }, func(a []Expr) Expr { return Sub(a[0], N(1)) }),
			sstat("log(1-x)", func(x Expr) Expr { return Call1("log1p", Neg(x)) }, func(a []Expr) Expr { return Sub(a[1], N(1)) }),
		},
		LogNorm: slogNorm(func(a []Expr) Expr { return Add(lg(a[0]), lg(a[1]), Neg(lg(Add(a[0], a[1])))) }),
		LogBase: slogBase(func(Expr) Expr { return N(0) }),
	}
	d.Expect = sexpect(map[string]func(a []Expr) Expr{
		"x": func(a []Expr) Expr { return Div(a[0], Add(a[0], a[1])) },
		"var": func(a []Expr) Expr {
			ab := Add(a[0], a[1])
			return Mul(a[0], a[1], Pow(ab, N(-2)), Pow(Add(ab, N(1)), N(-1)))
		},
		"log x":    func(a []Expr) Expr { return Sub(psi(a[0]), psi(Add(a[0], a[1]))) },
		"log(1-x)": func(a []Expr) Expr { return Sub(psi(a[1]), psi(Add(a[0], a[1]))) },
	})
	// H = log B(a,b) − (a−1)ψ(a) − (b−1)ψ(b) + (a+b−2)ψ(a+b)
	d.Entropy = sentropy(func(a []Expr) Expr {
		ab := Add(a[0], a[1])
		return Add(lg(a[0]), lg(a[1]), Neg(lg(ab)), Neg(Mul(Sub(a[0], N(1)), psi(a[0]))),
			Neg(Mul(Sub(a[1], N(1)), psi(a[1]))), Mul(Sub(ab, N(2)), psi(ab)))
	})
	// t = (log x, log(1−x)), η = (a − 1, b − 1)
	d.Conj = &Conjugacy{Params: []string{"a", "b"}, FromNatural: func(eta []Expr) []Expr { return []Expr{Add(eta[0], N(1)), Add(eta[1], N(1))} }}
	Dists[d.Name] = d

	// Bernoulli(y; p) = y·logit(p) − softplus(logit(p)): natural parameter
	// logit(p); with p = logistic(u) the simplifier reduces it to y·u − softplus(u).
	d = scalarDist("Bernoulli", `\operatorname{Bernoulli}`, "y ∈ {0, 1}", "0 < p < 1", func(y Expr, a []Expr) Expr {
		eta := Call1("logit", a[0])
		return Sub(Mul(y, eta), Call1("softplus", eta))
	})
	d.ExpFam = &ExpFam{
		Stats:   []Stat{sstat("x", func(y Expr) Expr { return y }, func(a []Expr) Expr { return Call1("logit", a[0]) })},
		LogNorm: slogNorm(func(a []Expr) Expr { return Call1("softplus", Call1("logit", a[0])) }),
		LogBase: slogBase(func(Expr) Expr { return N(0) }),
	}
	d.Expect = sexpect(map[string]func(a []Expr) Expr{"x": func(a []Expr) Expr { return a[0] }})
	d.Entropy = sentropy(func(a []Expr) Expr {
		p := a[0]
		return Neg(Add(Mul(p, logE(p)), Mul(Sub(N(1), p), Call1("log1p", Neg(p)))))
	})
	Dists[d.Name] = d

	// Binomial(k; n, p) = log C(n, k) + k·logit(p) − n·softplus(logit(p))
	d = scalarDist("Binomial", `\operatorname{Binomial}`, "k ∈ {0, …, n}", "n ≥ 0, 0 < p < 1", func(k Expr, a []Expr) Expr {
		n, eta := a[0], Call1("logit", a[1])
		return Add(binomLogCoef(n, k), Mul(k, eta), Neg(Mul(n, Call1("softplus", eta))))
	})
	d.ExpFam = &ExpFam{
		Stats:   []Stat{sstat("x", func(k Expr) Expr { return k }, func(a []Expr) Expr { return Call1("logit", a[1]) })},
		LogNorm: slogNorm(func(a []Expr) Expr { return Mul(a[0], Call1("softplus", Call1("logit", a[1]))) }),
		LogBase: func(b *Builder, k Val, a []Val) Expr { return binomLogCoef(a[0].Scalar(), k.Scalar()) },
	}
	d.Expect = sexpect(map[string]func(a []Expr) Expr{"x": func(a []Expr) Expr { return Mul(a[0], a[1]) }})
	Dists[d.Name] = d

	// Poisson(k; λ) = k log λ − λ − log Γ(k+1)
	d = scalarDist("Poisson", `\operatorname{Poisson}`, "k ∈ {0, 1, …}", "rate > 0", func(k Expr, a []Expr) Expr {
		return Add(Mul(k, logE(a[0])), Neg(a[0]), Neg(lg(Add(k, N(1)))))
	})
	d.ExpFam = &ExpFam{
		Stats:   []Stat{sstat("x", func(k Expr) Expr { return k }, func(a []Expr) Expr { return logE(a[0]) })},
		LogNorm: slogNorm(func(a []Expr) Expr { return a[0] }),
		LogBase: slogBase(func(k Expr) Expr { return Neg(lg(Add(k, N(1)))) }),
	}
	d.Expect = sexpect(map[string]func(a []Expr) Expr{"x": func(a []Expr) Expr { return a[0] }})
	Dists[d.Name] = d

	// Exponential(x; λ) = log λ − λx
	d = scalarDist("Exponential", `\operatorname{Exp}`, "x > 0", "rate > 0", func(x Expr, a []Expr) Expr {
		return Sub(logE(a[0]), Mul(a[0], x))
	})
	d.ExpFam = &ExpFam{
		Stats:   []Stat{sstat("x", func(x Expr) Expr { return x }, func(a []Expr) Expr { return Neg(a[0]) })},
		LogNorm: slogNorm(func(a []Expr) Expr { return Neg(logE(a[0])) }),
		LogBase: slogBase(func(Expr) Expr { return N(0) }),
	}
	d.Expect = sexpect(map[string]func(a []Expr) Expr{
		"x":     func(a []Expr) Expr { return Pow(a[0], N(-1)) },
		"log x": func(a []Expr) Expr { return Sub(N(-eulerGamma), logE(a[0])) },
	})
	d.Entropy = sentropy(func(a []Expr) Expr { return Sub(N(1), logE(a[0])) })
	Dists[d.Name] = d

	// LogNormal(x; m, s) = −log x − log s − ½log 2π − (log x − m)²/(2s²)
	d = scalarDist("LogNormal", `\operatorname{LogNormal}`, "x > 0", "sdlog > 0", func(x Expr, a []Expr) Expr {
		lx := logE(x)
		return Add(Neg(lx), Neg(logE(a[1])), N(-0.5*log2Pi), Mul(N(-0.5), Pow(Sub(lx, a[0]), N(2)), Pow(a[1], N(-2))))
	})
	d.ExpFam = &ExpFam{
		Stats: []Stat{
			sstat("log x", func(x Expr) Expr { return logE(x) }, func(a []Expr) Expr { return Mul(a[0], Pow(a[1], N(-2))) }),
			sstat("(log x)^2", func(x Expr) Expr { return Pow(logE(x), N(2)) }, func(a []Expr) Expr { return Mul(N(-0.5), Pow(a[1], N(-2))) }),
		},
		LogNorm: slogNorm(func(a []Expr) Expr { return Add(Mul(N(0.5), Pow(a[0], N(2)), Pow(a[1], N(-2))), logE(a[1])) }),
		LogBase: slogBase(func(x Expr) Expr { return Sub(N(-0.5*log2Pi), logE(x)) }),
	}
	d.Expect = sexpect(map[string]func(a []Expr) Expr{
		"log x":     func(a []Expr) Expr { return a[0] },
		"(log x)^2": func(a []Expr) Expr { return Add(Pow(a[0], N(2)), Pow(a[1], N(2))) },
		"x":         func(a []Expr) Expr { return Call1("exp", Add(a[0], Mul(N(0.5), Pow(a[1], N(2))))) },
	})
	d.Entropy = sentropy(func(a []Expr) Expr { return Add(a[0], N(0.5*(1+log2Pi)), logE(a[1])) })
	Dists[d.Name] = d

	// StudentT(x; ν, μ, σ) = log Γ((ν+1)/2) − log Γ(ν/2) − ½log(νπ) − log σ
	//                        − (ν+1)/2 · log(1 + ((x−μ)/σ)²/ν)
	d = scalarDist("StudentT", `t`, "x ∈ ℝ", "dof > 0, scale > 0", func(x Expr, a []Expr) Expr {
		nu, mu, sg := a[0], a[1], a[2]
		z2 := Mul(Pow(Sub(x, mu), N(2)), Pow(sg, N(-2)), Pow(nu, N(-1)))
		return Add(lg(Mul(N(0.5), Add(nu, N(1)))), Neg(lg(Mul(N(0.5), nu))), Mul(N(-0.5), logE(Mul(N(math.Pi), nu))),
			Neg(logE(sg)), Mul(N(-0.5), Add(nu, N(1)), Call1("log1p", z2)))
	})
	d.Expect = sexpect(map[string]func(a []Expr) Expr{"x": func(a []Expr) Expr { return a[1] }}) // ν > 1
	// H = (ν+1)/2 [ψ((ν+1)/2) − ψ(ν/2)] + ½log ν + log B(ν/2, ½) + log σ
	d.Entropy = sentropy(func(a []Expr) Expr {
		nu, sg := a[0], a[2]
		h1, h2 := Mul(N(0.5), Add(nu, N(1))), Mul(N(0.5), nu)
		return Add(Mul(h1, Sub(psi(h1), psi(h2))), Mul(N(0.5), logE(nu)),
			lg(h2), N(math.Log(math.Sqrt(math.Pi))), Neg(lg(h1)), logE(sg))
	})
	Dists[d.Name] = d

	Dists["MvNormal"] = mvNormalDist("MvNormal", false)
	Dists["MvNormalPrec"] = mvNormalDist("MvNormalPrec", true)
	Dists["Dirichlet"] = dirichletDist()
	Dists["Categorical"] = categoricalDist()
	Dists["Multinomial"] = multinomialDist()
	Dists["Wishart"] = wishartDist()
}

// binomLogCoef is log C(n, k) = log Γ(n+1) − log Γ(k+1) − log Γ(n−k+1).
func binomLogCoef(n, k Expr) Expr {
	return Add(lg(Add(n, N(1))), Neg(lg(Add(k, N(1)))), Neg(lg(Add(Sub(n, k), N(1)))))
}
