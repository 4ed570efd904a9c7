package derive

import (
	"fmt"
	"math"

	"github.com/vigen-go/vigen/spec/ir"
)

// Dist is one entry of the distribution table: the mathematics of a family
// whose signature is ir.Families[Name]. LogDensity builds log p(x | args) as
// an index-notation expression, normalizing constants included (they matter
// for the ELBO, and drop out of derivatives by themselves).
type Dist struct {
	Name string
	// LogDensity of one draw. For elementwise families x and args are
	// scalars (the caller sums over array targets); otherwise they have the
	// family's shapes.
	LogDensity func(b *Builder, x Val, args []Val) (Expr, error)
	// Latex is the family's name in mathematical notation.
	Latex string
}

// Dists is the distribution table, keyed by family name. Families of the
// language not listed here are checked by spec but not yet compiled.
var Dists = map[string]*Dist{}

var log2Pi = math.Log(2 * math.Pi)

func init() {
	// Normal(x; m, s) = −½log 2π − log s − ½((x−m)/s)²
	Dists["Normal"] = &Dist{Name: "Normal", Latex: `\mathcal{N}`,
		LogDensity: func(b *Builder, x Val, a []Val) (Expr, error) {
			m, s := a[0].Scalar(), a[1].Scalar()
			r := Sub(x.Scalar(), m)
			return Add(N(-0.5*log2Pi), Neg(Call1("log", s)), Mul(N(-0.5), Pow(r, N(2)), Pow(s, N(-2)))), nil
		}}
	// MvNormal(x; m, S) = −(P/2)log 2π − ½log|S| − ½ Σ_ij (x_i−m_i)(S⁻¹)_ij(x_j−m_j)
	Dists["MvNormal"] = &Dist{Name: "MvNormal", Latex: `\mathcal{N}`,
		LogDensity: func(b *Builder, x Val, a []Val) (Expr, error) {
			return mvNormal(b, x, a[0], a[1], false)
		}}
	// MvNormalPrec(x; m, Λ) = −(P/2)log 2π + ½log|Λ| − ½ Σ_ij (x_i−m_i)Λ_ij(x_j−m_j)
	Dists["MvNormalPrec"] = &Dist{Name: "MvNormalPrec", Latex: `\mathcal{N}`,
		LogDensity: func(b *Builder, x Val, a []Val) (Expr, error) {
			return mvNormal(b, x, a[0], a[1], true)
		}}
	// Bernoulli(y; p) = y·logit(p) − softplus(logit(p)), the exponential-family
	// form with natural parameter logit(p); with p = logistic(u) the
	// simplifier reduces it to y·u − softplus(u).
	Dists["Bernoulli"] = &Dist{Name: "Bernoulli", Latex: `\operatorname{Bernoulli}`,
		LogDensity: func(b *Builder, x Val, a []Val) (Expr, error) {
			eta := Call1("logit", a[0].Scalar())
			return Sub(Mul(x.Scalar(), eta), Call1("softplus", eta)), nil
		}}
}

func mvNormal(b *Builder, x, m, cov Val, isPrec bool) (Expr, error) {
	ref, ok := cov.Src.(*ir.Ref)
	if !ok || len(ref.Index) != 0 {
		return nil, fmt.Errorf("%s: the covariance of a MvNormal must be a declared cov variable (not an expression) for now", cov.Src.Position())
	}
	p := x.Dims[0]
	i, j := b.freshFor(p), b.freshFor(p)
	var prec func(i, j Expr) Expr
	var logdet Expr
	if isPrec {
		prec = func(i, j Expr) Expr { return TSym(ref.Var.Name, i, j) }
		logdet = Neg(T(b.aux("logdet", ref.Var.Name, p)))
	} else {
		inv := b.aux("inv", ref.Var.Name, p)
		prec = func(i, j Expr) Expr { return TSym(inv, i, j) }
		logdet = T(b.aux("logdet", ref.Var.Name, p))
	}
	ri := Sub(x.At([]Expr{IxE(i)}), m.At([]Expr{IxE(i)}))
	rj := Sub(x.At([]Expr{IxE(j)}), m.At([]Expr{IxE(j)}))
	quad := Sum([]Index{i, j}, Mul(ri, prec(IxE(i), IxE(j)), rj))
	return Add(Mul(N(-0.5*log2Pi), SizeE(p)), Mul(N(-0.5), logdet), Mul(N(-0.5), quad)), nil
}

// FactorLogDensity returns the log density of a `~` statement summed over its
// plates: Σ_plates log p(target | args).
func (b *Builder) FactorLogDensity(f *ir.Factor) (e Expr, err error) {
	d, ok := Dists[f.Dist]
	if !ok {
		return nil, fmt.Errorf("%s: the %s distribution is not supported by the code generator yet", f.Pos, f.Dist)
	}
	fam := ir.Families[f.Dist]
	defer func() {
		if r := recover(); r != nil {
			le, ok := r.(lowerError)
			if !ok {
				panic(r)
			}
			e, err = nil, le.err
		}
	}()
	var plates []Index
	for _, p := range f.Plates {
		if p.Bag != nil {
			return nil, fmt.Errorf("%s: bag-of-words plates are not supported by the code generator yet", p.Pos)
		}
		plates = append(plates, Index{Name: p.Index, Size: p.Size})
	}
	x := b.ValOf(f.Target)
	args := make([]Val, len(f.Args))
	for k, a := range f.Args {
		args[k] = b.ValOf(a)
	}
	var lp Expr
	if fam.Elementwise && len(x.Dims) > 0 {
		// Independent draws for each element of an array target.
		var el []Index
		var sel []Expr
		for _, d := range x.Dims {
			i := b.freshFor(d)
			el = append(el, i)
			sel = append(sel, IxE(i))
		}
		xs := Val{At: func([]Expr) Expr { return x.At(sel) }}
		as := make([]Val, len(args))
		for k, a := range args {
			a := a
			as[k] = Val{Src: a.Src, At: func([]Expr) Expr { return a.At(sel[len(sel)-len(a.Dims):]) }}
		}
		one, err := d.LogDensity(b, xs, as)
		if err != nil {
			return nil, err
		}
		lp = Sum(el, one)
	} else {
		lp, err = d.LogDensity(b, x, args)
		if err != nil {
			return nil, err
		}
	}
	return Sum(plates, lp), nil
}
