package derive

import (
	"math"

	"github.com/vigen-go/vigen/spec/ir"
)

// The families over vectors and matrices. Their values and parameters are
// Vals seen through symbolic indices; inner products and normalizers are
// Sums, which codegen turns into loops.

// tensorOf returns the name of the whole tensor v reads, or an error at
// v's position: inverses and log-determinants are computed from declared
// (or variational) matrices, not from arbitrary expressions.
func tensorOf(v Val, what string) (string, error) {
	if v.Tensor != "" {
		return v.Tensor, nil
	}
	var pos ir.Pos
	if v.Src != nil {
		pos = v.Src.Position()
	}
	return "", ir.Errorf(pos, "the %s must be a declared matrix variable, not an expression: its inverse and log-determinant are computed once, when the data are loaded", what).Hintf("declare it as a `cov` const (its default may be a constant expression, as in `const Sigma0 : cov[P] = 2 * eye(P)`) or param, and pass its name")
}

func mvNormalDist(fam *ir.Family, isPrec bool) *Dist {
	name := fam.Name
	// prec returns the precision Λ's element function and log|Σ|.
	prec := func(b *Builder, cov Val) (func(i, j Expr) Expr, Expr, error) {
		what := "covariance of " + name
		if isPrec {
			what = "precision of " + name
		}
		t, err := tensorOf(cov, what)
		if err != nil {
			return nil, nil, err
		}
		k := cov.Dims[0]
		if isPrec {
			return func(i, j Expr) Expr { return TSym(t, i, j) }, Neg(T(b.aux("logdet", t, k))), nil
		}
		inv := b.aux("inv", t, k)
		return func(i, j Expr) Expr { return TSym(inv, i, j) }, T(b.aux("logdet", t, k)), nil
	}
	d := &Dist{Family: fam, Latex: `\mathcal{N}`, Gaussian: true}
	// log p = −(K/2)log 2π − ½log|Σ| − ½ Σ_ij (x_i−m_i) Λ_ij (x_j−m_j)
	d.LogDensity = func(b *Builder, x Val, a []Val) (Expr, error) {
		lam, logdet, err := prec(b, a[1])
		if err != nil {
			return nil, err
		}
		k := x.Dims[0]
		i, j := b.freshFor(k), b.freshFor(k)
		ri := Sub(x.At([]Expr{IxE(i)}), a[0].At([]Expr{IxE(i)}))
		rj := Sub(x.At([]Expr{IxE(j)}), a[0].At([]Expr{IxE(j)}))
		quad := Sum([]Index{i, j}, Mul(ri, lam(IxE(i), IxE(j)), rj))
		return Add(Mul(N(-0.5*log2Pi), SizeE(k)), Mul(N(-0.5), logdet), Mul(N(-0.5), quad)), nil
	}
	// t = (x, xxᵀ), η = (Λm, −½Λ), a = ½mᵀΛm + ½log|Σ|, log h = −(K/2)log 2π
	d.ExpFam = &ExpFam{
		Stats: []Stat{
			{Name: "x", T: func(b *Builder, x Val) Val { return x },
				Eta: func(b *Builder, a []Val) Val {
					lam, _, _ := prec(b, a[1])
					k := a[0].Dims[0]
					return vector(k, func(i Expr) Expr {
						return b.sumOver(k, func(j Expr) Expr { return Mul(lam(i, j), a[0].At([]Expr{j})) })
					})
				}},
			{Name: "xx", T: func(b *Builder, x Val) Val {
				return matrix(x.Dims[0], func(i, j Expr) Expr { return Mul(x.At([]Expr{i}), x.At([]Expr{j})) })
			},
				Eta: func(b *Builder, a []Val) Val {
					lam, _, _ := prec(b, a[1])
					return matrix(a[0].Dims[0], func(i, j Expr) Expr { return Mul(N(-0.5), lam(i, j)) })
				}},
		},
		LogNorm: func(b *Builder, a []Val) Expr {
			lam, logdet, _ := prec(b, a[1])
			k := a[0].Dims[0]
			i, j := b.freshFor(k), b.freshFor(k)
			quad := Sum([]Index{i, j}, Mul(a[0].At([]Expr{IxE(i)}), lam(IxE(i), IxE(j)), a[0].At([]Expr{IxE(j)})))
			return Add(Mul(N(0.5), quad), Mul(N(0.5), logdet))
		},
		LogBase: func(b *Builder, x Val, _ []Val) Expr { return Mul(N(-0.5*log2Pi), SizeE(x.Dims[0])) },
	}
	d.Expect = map[string]func(*Builder, []Val, []Expr) Expr{
		"x": func(b *Builder, a []Val, sel []Expr) Expr { return a[0].At(sel[:1]) },
	}
	if !isPrec {
		// E[x_i x_j] = Σ_ij + m_i m_j
		d.Expect["xx"] = func(b *Builder, a []Val, sel []Expr) Expr {
			return Add(a[1].At(sel), Mul(a[0].At(sel[:1]), a[0].At(sel[1:])))
		}
	}
	// A conjugate latent with this prior gets the Gaussian factor of the
	// nonconjugate latents, updated in closed form (Conjugacy.Joint);
	// MvNormalPrec is MvNormal with Σ = Λ⁻¹.
	if isPrec {
		d.Conj = &Conjugacy{Family: "MvNormal"}
	} else {
		d.Conj = &Conjugacy{Params: []string{"mean", "cov"}, Joint: true}
	}
	// H = ½log|Σ| + (K/2)(1 + log 2π)
	d.Entropy = func(b *Builder, a []Val) Expr {
		_, logdet, err := prec(b, a[1])
		if err != nil {
			return nil
		}
		return Add(Mul(N(0.5), logdet), Mul(N(0.5*(1+log2Pi)), SizeE(a[0].Dims[0])))
	}
	return d
}

func dirichletDist() *Dist {
	d := &Dist{Family: ir.Dirichlet, Latex: `\operatorname{Dir}`}
	alpha0 := func(b *Builder, a Val) Expr {
		return b.sumOver(a.Dims[0], func(i Expr) Expr { return a.At([]Expr{i}) })
	}
	// log p = log Γ(α₀) − Σ log Γ(α_k) + Σ (α_k−1) log x_k
	d.LogDensity = func(b *Builder, x Val, a []Val) (Expr, error) {
		k := x.Dims[0]
		al := a[0]
		if len(al.Dims) == 0 {
			// a scalar concentration is the same for every component
			s := al
			al = Val{Dims: x.Dims, Src: s.Src, At: func([]Expr) Expr { return s.Scalar() }}
		}
		return Add(lg(alpha0(b, al)), Neg(b.sumOver(k, func(i Expr) Expr { return lg(al.At([]Expr{i})) })),
			b.sumOver(k, func(i Expr) Expr { return Mul(Sub(al.At([]Expr{i}), N(1)), logE(x.At([]Expr{i}))) })), nil
	}
	d.ExpFam = &ExpFam{
		Stats: []Stat{{Name: "log x", Moment: "elog",
			T: func(b *Builder, x Val) Val {
				return vector(x.Dims[0], func(i Expr) Expr { return logE(x.At([]Expr{i})) })
			},
			Eta: func(b *Builder, a []Val) Val {
				return vector(a[0].Dims[0], func(i Expr) Expr { return Sub(a[0].At([]Expr{i}), N(1)) })
			}}},
		LogNorm: func(b *Builder, a []Val) Expr {
			return Sub(b.sumOver(a[0].Dims[0], func(i Expr) Expr { return lg(a[0].At([]Expr{i})) }), lg(alpha0(b, a[0])))
		},
		LogBase: func(*Builder, Val, []Val) Expr { return N(0) },
	}
	d.Expect = map[string]func(*Builder, []Val, []Expr) Expr{
		// E[log x_k] = ψ(α_k) − ψ(α₀)
		"log x": func(b *Builder, a []Val, sel []Expr) Expr { return Sub(psi(a[0].At(sel)), psi(alpha0(b, a[0]))) },
		"x":     func(b *Builder, a []Val, sel []Expr) Expr { return Div(a[0].At(sel), alpha0(b, a[0])) },
	}
	// H = Σ log Γ(α_k) − log Γ(α₀) + (α₀−K)ψ(α₀) − Σ (α_k−1)ψ(α_k)
	d.Entropy = func(b *Builder, a []Val) Expr {
		k := a[0].Dims[0]
		a0 := alpha0(b, a[0])
		return Add(b.sumOver(k, func(i Expr) Expr { return lg(a[0].At([]Expr{i})) }), Neg(lg(a0)),
			Mul(Sub(a0, SizeE(k)), psi(a0)),
			Neg(b.sumOver(k, func(i Expr) Expr { return Mul(Sub(a[0].At([]Expr{i}), N(1)), psi(a[0].At([]Expr{i}))) })))
	}
	// ∫ Dir(x; α)^s dx = B(s(α − 1) + 1) / B(α)^s, B(a) = Π Γ(a_k) / Γ(Σ a_k)
	d.TemperedLogNorm = func(b *Builder, x Val, a []Val, s Expr) Expr {
		k := x.Dims[0]
		al := a[0]
		if len(al.Dims) == 0 {
			c := al
			al = Val{Dims: x.Dims, Src: c.Src, At: func([]Expr) Expr { return c.Scalar() }}
		}
		tempered := Val{Dims: al.Dims, At: func(sel []Expr) Expr { return Add(Mul(s, Sub(al.At(sel), N(1))), N(1)) }}
		logB := func(v Val) Expr {
			return Sub(b.sumOver(k, func(i Expr) Expr { return lg(v.At([]Expr{i})) }), lg(alpha0(b, v)))
		}
		return Sub(logB(tempered), Mul(s, logB(al)))
	}
	// t = log x, η = α − 1 (the marginals: runtime.Marginals)
	d.Conj = &Conjugacy{Params: []string{"param"},
		FromNatural: func(eta []Expr) []Expr { return []Expr{Add(eta[0], N(1))} }}
	return d
}

func categoricalDist() *Dist {
	d := &Dist{Family: ir.Categorical, Latex: `\operatorname{Cat}`}
	// log p = log p_z (z is 1-based; as an index it selects element z−1)
	d.LogDensity = func(b *Builder, z Val, a []Val) (Expr, error) {
		return logE(a[0].At([]Expr{z.Scalar()})), nil
	}
	d.TemperedLogNorm = categoricalTemperedLogNorm
	// t = one-hot(z), η = log p, a = log Σ p (0 for normalized p)
	d.ExpFam = &ExpFam{
		Stats: []Stat{{Name: "onehot",
			T: func(b *Builder, z Val) Val {
				return Val{Dims: []string{"?"}, At: func(sel []Expr) Expr { return IDlt(z.Scalar(), sel[0]) }}
			},
			Eta: func(b *Builder, a []Val) Val {
				return vector(a[0].Dims[0], func(i Expr) Expr { return logE(a[0].At([]Expr{i})) })
			}}},
		LogNorm: func(b *Builder, a []Val) Expr {
			return logE(b.sumOver(a[0].Dims[0], func(i Expr) Expr { return a[0].At([]Expr{i}) }))
		},
		LogBase: func(*Builder, Val, []Val) Expr { return N(0) },
	}
	d.Expect = map[string]func(*Builder, []Val, []Expr) Expr{
		"onehot": func(b *Builder, a []Val, sel []Expr) Expr { return a[0].At(sel) },
	}
	d.Entropy = func(b *Builder, a []Val) Expr {
		return Neg(b.sumOver(a[0].Dims[0], func(i Expr) Expr {
			return Call1("xlogx", a[0].At([]Expr{i}))
		}))
	}
	// any function of a categorical is linear in its indicator; the update
	// normalizes the log-probabilities (as a one-hot vector, its
	// marginals: runtime.Marginals)
	d.Conj = &Conjugacy{Params: []string{"prob"}, Normalize: true}
	return d
}

func multinomialDist() *Dist {
	d := &Dist{Family: ir.Multinomial, Latex: `\operatorname{Mult}`}
	total := func(b *Builder, x Val) Expr {
		return b.sumOver(x.Dims[0], func(i Expr) Expr { return x.At([]Expr{i}) })
	}
	logBase := func(b *Builder, x Val, _ []Val) Expr {
		return Sub(lg(Add(total(b, x), N(1))), b.sumOver(x.Dims[0], func(i Expr) Expr { return lg(Add(x.At([]Expr{i}), N(1))) }))
	}
	// log p = log Γ(n+1) − Σ log Γ(x_k+1) + Σ x_k log p_k,  n = Σ x_k
	d.LogDensity = func(b *Builder, x Val, a []Val) (Expr, error) {
		return Add(logBase(b, x, nil), b.sumOver(x.Dims[0], func(i Expr) Expr { return Mul(x.At([]Expr{i}), logE(a[0].At([]Expr{i}))) })), nil
	}
	d.ExpFam = &ExpFam{
		Stats: []Stat{{Name: "x", T: func(b *Builder, x Val) Val { return x },
			Eta: func(b *Builder, a []Val) Val {
				return vector(a[0].Dims[0], func(i Expr) Expr { return logE(a[0].At([]Expr{i})) })
			}}},
		LogNorm: func(*Builder, []Val) Expr { return N(0) },
		LogBase: logBase,
	}
	return d
}

func wishartDist() *Dist {
	d := &Dist{Family: ir.Wishart, Latex: `\mathcal{W}`}
	// log Γ_K(a) = K(K−1)/4 log π + Σ_{j<K} log Γ(a − j/2)
	logGammaK := func(b *Builder, k string, a Expr) Expr {
		kk := SizeE(k)
		return Add(Mul(N(0.25*math.Log(math.Pi)), kk, Sub(kk, N(1))),
			b.sumOver(k, func(j Expr) Expr { return lg(Sub(a, Mul(N(0.5), j))) }))
	}
	pieces := func(b *Builder, a []Val) (nu Expr, vinv func(i, j Expr) Expr, logdetV Expr, k string, err error) {
		t, err := tensorOf(a[1], "scale of Wishart")
		if err != nil {
			return nil, nil, nil, "", err
		}
		k = a[1].Dims[0]
		inv := b.aux("inv", t, k)
		return a[0].Scalar(), func(i, j Expr) Expr { return TSym(inv, i, j) }, T(b.aux("logdet", t, k)), k, nil
	}
	logNorm := func(b *Builder, a []Val) Expr {
		nu, _, ldV, k, err := pieces(b, a)
		if err != nil {
			return nil
		}
		kk := SizeE(k)
		return Add(Mul(N(0.5*math.Ln2), nu, kk), Mul(N(0.5), nu, ldV), logGammaK(b, k, Mul(N(0.5), nu)))
	}
	// log p = (ν−K−1)/2 log|W| − ½ tr(V⁻¹W) − νK/2 log 2 − ν/2 log|V| − log Γ_K(ν/2)
	d.LogDensity = func(b *Builder, w Val, a []Val) (Expr, error) {
		nu, vinv, _, k, err := pieces(b, a)
		if err != nil {
			return nil, err
		}
		wt, err := tensorOf(w, "Wishart variable")
		if err != nil {
			return nil, err
		}
		i, j := b.freshFor(k), b.freshFor(k)
		tr := Sum([]Index{i, j}, Mul(vinv(IxE(i), IxE(j)), w.At([]Expr{IxE(i), IxE(j)})))
		return Add(Mul(N(0.5), Sub(Sub(nu, SizeE(k)), N(1)), T(b.aux("logdet", wt, k))), Mul(N(-0.5), tr), Neg(logNorm(b, a))), nil
	}
	d.ExpFam = &ExpFam{
		Stats: []Stat{
			{Name: "log|W|", T: func(b *Builder, w Val) Val {
				t, _ := tensorOf(w, "Wishart variable")
				return scalar(T(b.aux("logdet", t, w.Dims[0])))
			}, Eta: func(b *Builder, a []Val) Val {
				return scalar(Mul(N(0.5), Sub(Sub(a[0].Scalar(), SizeE(a[1].Dims[0])), N(1))))
			}},
			{Name: "W", T: func(b *Builder, w Val) Val { return w },
				Eta: func(b *Builder, a []Val) Val {
					_, vinv, _, k, _ := pieces(b, a)
					return matrix(k, func(i, j Expr) Expr { return Mul(N(-0.5), vinv(i, j)) })
				}},
		},
		LogNorm: logNorm,
		LogBase: func(*Builder, Val, []Val) Expr { return N(0) },
	}
	d.Expect = map[string]func(*Builder, []Val, []Expr) Expr{
		// E[W] = νV
		"W": func(b *Builder, a []Val, sel []Expr) Expr { return Mul(a[0].Scalar(), a[1].At(sel)) },
		// E[log|W|] = Σ_{j<K} ψ((ν−j)/2) + K log 2 + log|V|
		"log|W|": func(b *Builder, a []Val, sel []Expr) Expr {
			_, _, ldV, k, err := pieces(b, a)
			if err != nil {
				return nil
			}
			return Add(b.sumOver(k, func(j Expr) Expr { return psi(Mul(N(0.5), Sub(a[0].Scalar(), j))) }),
				Mul(N(math.Ln2), SizeE(k)), ldV)
		},
	}
	// H = (K+1)/2 log|V| + K(K+1)/2 log 2 + log Γ_K(ν/2) − (ν−K−1)/2 Σ_j ψ((ν−j)/2) + νK/2
	d.Entropy = func(b *Builder, a []Val) Expr {
		nu, _, ldV, k, err := pieces(b, a)
		if err != nil {
			return nil
		}
		kk := SizeE(k)
		psiK := b.sumOver(k, func(j Expr) Expr { return psi(Mul(N(0.5), Sub(nu, j))) })
		return Add(Mul(N(0.5), Add(kk, N(1)), ldV), Mul(N(0.5*math.Ln2), kk, Add(kk, N(1))), logGammaK(b, k, Mul(N(0.5), nu)),
			Mul(N(-0.5), Sub(Sub(nu, kk), N(1)), psiK), Mul(N(0.5), nu, kk))
	}
	return d
}

// orderedDist is ordered regression with a logistic or probit link:
// outcome y in 1..K with K = C + 1, linear predictor η and increasing
// cutpoints c_1 < … < c_C (Stan's ordered_logistic and ordered_probit).
// With F the link's distribution function,
//
//	P(y = 1) = F(c_1 − η),  P(y = k) = F(c_k − η) − F(c_{k−1} − η),  P(y = K) = 1 − F(c_C − η).
//
// The cutpoint count C is a size of its own: the outcome's range is not
// tied to it by the checker, but by the data check 1 ≤ y ≤ C + 1 (from the
// support below), which names the variable and index of a bad outcome.
// The cutpoints must be increasing (declared ordered once constrained
// types exist); unordered cutpoints make the log density NaN, which the fit
// reports.
func orderedDist(fam *ir.Family, probit bool) *Dist {
	latex := `\operatorname{OrdLogit}`
	if probit {
		latex = `\operatorname{OrdProbit}`
	}
	d := &Dist{Family: fam, Latex: latex}
	// log F(x), log(1 − F(x)) and log(F(u) − F(l)) for u > l
	logF := func(x Expr) Expr { return Neg(Call1("softplus", Neg(x))) }
	log1mF := func(x Expr) Expr { return Neg(Call1("softplus", x)) }
	// σ(u) − σ(l) = σ(u)σ(−l)(1 − e^{l−u})
	logDiff := func(u, l Expr) Expr {
		return Add(logF(u), log1mF(l), logE(Neg(Call1("expm1", Sub(l, u)))))
	}
	if probit {
		logF = func(x Expr) Expr { return Call1("logPhi", x) }
		log1mF = func(x Expr) Expr { return Call1("logPhi", Neg(x)) }
		logDiff = func(u, l Expr) Expr { return CallE(MustPrim("logdiffPhi"), u, l) }
	}
	d.LogDensity = func(b *Builder, y Val, a []Val) (Expr, error) {
		yv, eta, c := y.Scalar(), a[0].Scalar(), a[1]
		k := c.Dims[0]
		// cut(s) is the cutpoint numbered y − s (1-based), or 0 if there
		// is none: Σ_j [j + 1 + s = y] c_j. Indicator sums, not an
		// indirect read, so y = 1 and y = K read nothing out of range.
		cut := func(s float64) Expr {
			return b.sumOver(k, func(j Expr) Expr { return Mul(idltExprs(Add(j, N(1+s)), yv), c.At([]Expr{j})) })
		}
		u, l := Sub(cut(0), eta), Sub(cut(1), eta) // c_y − η, c_{y−1} − η
		first := idltExprs(yv, N(1))               // y = 1: no lower cutpoint
		last := idltExprs(yv, Add(SizeE(k), N(1))) // y = K: no upper cutpoint
		mid := Mul(Sub(N(1), first), Sub(N(1), last))
		// at the ends the interval term is multiplied by 0, and its
		// arguments are set to (1, 0) so that it stays finite
		inner := logDiff(Add(Mul(mid, u), Sub(N(1), mid)), Mul(mid, l))
		return Add(Mul(first, logF(u)), Mul(last, log1mF(l)), Mul(mid, inner)), nil
	}
	return d
}

// dirichletMultinomialDist is the Dirichlet-multinomial (Pólya) over count
// vectors: the Multinomial with its probabilities drawn from
// Dirichlet(alpha) and summed out. With n = Σ x_k and α₀ = Σ α_k,
//
//	log p = log Γ(n+1) − Σ log Γ(x_k+1) + log Γ(α₀) − log Γ(n+α₀) + Σ [log Γ(x_k+α_k) − log Γ(α_k)].
func dirichletMultinomialDist() *Dist {
	d := &Dist{Family: ir.DirichletMultinomial, Latex: `\operatorname{DirMult}`}
	d.LogDensity = func(b *Builder, x Val, a []Val) (Expr, error) {
		k := x.Dims[0]
		al := a[0]
		if len(al.Dims) == 0 {
			s := al // a scalar concentration is the same for every component
			al = Val{Dims: x.Dims, Src: s.Src, At: func([]Expr) Expr { return s.Scalar() }}
		}
		at := func(v Val, i Expr) Expr { return v.At([]Expr{i}) }
		n := b.sumOver(k, func(i Expr) Expr { return at(x, i) })
		a0 := b.sumOver(k, func(i Expr) Expr { return at(al, i) })
		return Add(lg(Add(n, N(1))), lg(a0), Neg(lg(Add(n, a0))),
			b.sumOver(k, func(i Expr) Expr {
				return Add(lg(Add(at(x, i), at(al, i))), Neg(lg(at(al, i))), Neg(lg(Add(at(x, i), N(1)))))
			})), nil
	}
	return d
}
