package derive

import (
	"github.com/vigen-go/vigen/spec/ir"
)

// FactorLogDensity returns the log density of a `~` statement summed over its
// plates: Σ_plates log p(target | args); of a `factor EXPR` statement, Σ_plates
// EXPR.
func (b *Builder) FactorLogDensity(f *ir.Factor) (e Expr, err error) {
	b.at = f.Pos // where a derivation past its node budget stops (tooLarge)
	if f.Dist == FlatDist {
		return b.logJacobian(f) // the constrained latent's improper flat prior
	}
	d, ok := Dists[f.Dist]
	if !ok && !f.IsTerm() {
		return nil, ir.Errorf(f.Pos, "the %s distribution is not supported by the code generator yet", f.Dist).Hintf("spec/README.md lists what each distribution supports")
	}
	return b.factorSum(f, func(x Val, args []Val) (Expr, error) { return d.LogDensity(b, x, args) }, func(lp Expr) (Expr, error) {
		lp = splitPositiveLogs(lp, b.positiveLatents())
		if Transformed(f.Target.Var) {
			jac, err := b.logJacobian(f)
			if err != nil {
				return nil, err
			}
			lp = Add(lp, jac)
		}
		return lp, nil
	})
}

// factorSum is Σ over the plates of the statement f (a bag plate's entries
// weighed by their counts, the unit's own plate left free) of
// whole(one(x, args)), with one given the statement's target and
// arguments, read element by element for an elementwise family with an
// array target (and then summed over the elements); whole may be nil.
func (b *Builder) factorSum(f *ir.Factor, one func(x Val, args []Val) (Expr, error), whole func(Expr) (Expr, error)) (e Expr, err error) {
	fam := ir.Families[f.Dist]
	defer recoverLowerError(&e, &err)
	var plates []Index
	var weights []Expr
	for _, p := range f.Plates {
		if p.Bag != nil {
			// `for n in w[d]` runs over the distinct terms of document d;
			// each contributes count times (tokens of one term are alike).
			parent, ok := p.Bag.Index[0].(*ir.Index)
			if !ok || len(p.Bag.Index) != 1 {
				return nil, ir.Errorf(p.Pos, "a bag plate must be `for %s in %s[d]` with d a loop index", p.Index, p.Bag.Var.Name).Hintf("loop over documents first: `for d in 1:D { for n in w[d] { ... } }`")
			}
			n := Index{Name: p.Index, Size: RaggedSize(p.Bag.Var.Name, b.indexFor(parent)), Plate: true}
			b.plates[p.Index] = n
			plates = append(plates, n)
			if !b.perEntry {
				weights = append(weights, T(p.Bag.Var.Name+".count", IxE(n)))
			}
			continue
		}
		i := Index{Name: p.Index, Size: RangedSize(p.Size, p.Lo, p.Hi), Plate: true}
		if b.group != nil && b.unit != nil && b.group.Plate == p.Index {
			// the unit's own points of a grouped statement (group.go)
			i.Size = RaggedSize(GroupRows(b.group.By.Name), *b.unit)
		}
		b.plates[p.Index] = i
		if b.unit != nil && b.unit.Name == p.Index {
			continue // the unit's own plate: d stays free
		}
		if b.pointwise {
			b.free = append(b.free, i)
			continue
		}
		plates = append(plates, i)
	}
	defer func() {
		for _, p := range f.Plates {
			delete(b.plates, p.Index)
		}
	}()
	if f.IsTerm() {
		return Sum(plates, Mul(append(weights, b.ValOf(f.Args[0]).At(nil))...)), nil
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
			as[k] = elementOf(a, fam.Params[min(k, len(fam.Params)-1)], sel)
		}
		o, err := one(xs, as)
		if err != nil {
			return nil, err
		}
		if b.pointwise {
			b.free = append(b.free, el...)
			lp = o
		} else {
			lp = Sum(el, o)
		}
	} else {
		if lp, err = one(x, args); err != nil {
			return nil, err
		}
	}
	if whole != nil {
		if lp, err = whole(lp); err != nil {
			return nil, err
		}
	}
	return Sum(plates, Mul(append(weights, lp)...)), nil
}

// elementOf is the argument a, for parameter p of an elementwise family,
// at the element sel of an array target: a scalar broadcasts, an argument
// shaped like the target is read at sel, a vector-shaped parameter (a
// Mixture's simplex of weights) is passed whole, and a distribution
// argument has each of its own arguments taken at sel.
func elementOf(a Val, p ir.ParamSig, sel []Expr) Val {
	switch {
	case a.Dist != nil:
		d := &DistVal{Name: a.Dist.Name}
		sig := ir.Families[a.Dist.Name]
		for k, x := range a.Dist.Args {
			d.Args = append(d.Args, elementOf(x, sig.Params[k], sel))
		}
		return Val{Src: a.Src, Dist: d, At: a.At}
	case p.Shape != "":
		return a
	}
	return Val{Src: a.Src, At: func([]Expr) Expr { return a.At(sel[len(sel)-len(a.Dims):]) }}
}
