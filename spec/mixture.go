package spec

import (
	"fmt"
	"strings"

	"github.com/vigen-go/vigen/spec/ir"
)

// This file checks the families whose arguments include distributions
// (ir.ParamSig.Dist): `y ~ Mixture(w, Normal(m1, s1), Normal(m2, s2))`,
// whose components are written as calls of families without their target.

// paramAt is the parameter of fam that its k-th argument stands for: the
// last one for every argument past it when fam is Variadic.
func paramAt(fam *ir.Family, k int) ir.ParamSig {
	if k >= len(fam.Params) {
		if !fam.Variadic || len(fam.Params) == 0 {
			return ir.ParamSig{}
		}
		k = len(fam.Params) - 1
	}
	return fam.Params[k]
}

// variadicForm writes a variadic family's call with its parameter names:
// "Mixture(weights, component, component, ...)".
func variadicForm(fam *ir.Family) string {
	names := make([]string, len(fam.Params))
	for i, p := range fam.Params {
		names[i] = p.Name
	}
	last := names[len(names)-1]
	return fam.Name + "(" + strings.Join(append(names, last, "..."), ", ") + ")"
}

// variadicList describes a variadic family's arguments:
// "weights and two or more components".
func variadicList(fam *ir.Family) string {
	names := make([]string, len(fam.Params)-1)
	for i, p := range fam.Params[:len(fam.Params)-1] {
		names[i] = p.Name
	}
	return strings.Join(names, ", ") + " and two or more " + fam.Params[len(fam.Params)-1].Name + "s"
}

// distArg checks the k-th argument of fam, which must be a distribution
// written without its target, as the Normal(m1, s1) of Mixture(w,
// Normal(m1, s1), ...). Its arguments are checked here; the family
// itself, against the statement's target, by mixture.
func (c *checker) distArg(fam *ir.Family, k int, a Expr, sc *scope) (ir.Expr, bool) {
	p := paramAt(fam, k)
	hint := "write each " + p.Name + " as a distribution without its target, as in " + fam.Name + "(w, Normal(mu1, sigma1), Normal(mu2, sigma2))"
	call, ok := a.(*CallExpr)
	if !ok {
		c.markRead(a)
		c.errorf(a.Position(), hint, "%s: argument %d (a %s) must be a distribution, not %s", fam.Name, k+1, p.Name, describeExpr(a))
		return nil, false
	}
	name := call.Func.Name
	if _, isFam := ir.Families[name]; !isFam {
		c.markRead(call)
		if _, isFunc := ir.Funcs[name]; isFunc {
			c.errorf(call.Pos, hint, "%s: argument %d (a %s) must be a distribution, but %s is a function", fam.Name, k+1, p.Name, name)
		} else {
			c.errorf(call.Pos, listHint("distributions", name, sortedKeys(ir.Families)), "unknown distribution %s", name)
		}
		return nil, false
	}
	if ir.Families[name].Variadic {
		c.markRead(call)
		c.errorf(call.Pos, "write all the "+p.Name+"s in one "+fam.Name+"(...)", "%s: a %s cannot itself be a %s", fam.Name, p.Name, name)
		return nil, false
	}
	d := &ir.DistArg{Dist: name, Pos: c.pos(call.Pos)}
	ok = true
	for _, x := range call.Args {
		y, xok := c.operand(x, sc)
		if !xok {
			ok = false
			continue
		}
		d.Args = append(d.Args, y)
	}
	return d, ok
}

// describeExpr names the kind of a source expression for messages.
func describeExpr(e Expr) string {
	switch e.(type) {
	case *Number:
		return "a number"
	case *Ident, *IndexExpr:
		return "a variable"
	}
	return "an expression"
}

// mixture checks a statement of a family with distribution arguments,
// `y ~ Mixture(w, D1(...), D2(...), ...)`: each component against its own
// family with y as its target (so each is a density of y; they must be
// scalar, elementwise families of the same support), and the weights: a
// real scalar in (0, 1) for two components (the first one's weight), or a
// simplex vector over the components (its length, a size, is checked
// against their number when the data is loaded, or here if it is a literal
// dimension).
func (c *checker) mixture(fam *ir.Family, f *ir.Factor) bool {
	ok := true
	var first *ir.Family
	var firstArg *ir.DistArg
	comps := f.Args[len(fam.Params)-1:]
	for k, a := range comps {
		d := a.(*ir.DistArg)
		d.T = f.Target.T
		cf := ir.Families[d.Dist]
		hint := "a component is a distribution of one value, such as Normal, StudentT, Poisson or Gamma"
		switch {
		case !cf.Elementwise || cf.Value.Shape != "" || cf.Value.Class != ir.Plain:
			c.errorAt(d.Pos, hint, "%s: component %d, %s, is a distribution of %s; the components of a %s are scalar distributions", fam.Name, k+1, d.Dist, shapePhrase(cf.Value), fam.Name)
			ok = false
			continue
		}
		if len(d.Args) != len(cf.Params) {
			c.errorAt(d.Pos, "write "+callForm(cf.Name, cf.Params)+", without the target (it is the target of the ~)", "%s: component %d: %s takes %s, got %d", fam.Name, k+1, cf.Name, paramList(cf.Params), len(d.Args))
			ok = false
			continue
		}
		if first == nil {
			first, firstArg = cf, d
		} else if cf.Support != first.Support || cf.Value.Int != first.Value.Int {
			c.errorAt(d.Pos, "mix distributions over the same values, such as Normals or Poissons",
				"%s: component %d, %s, draws %s values but component 1, %s at %s, draws %s values", fam.Name, k+1, d.Dist, supportWord(cf), first.Name, c.where(firstArg.Pos), supportWord(first))
			ok = false
			continue
		}
		if !c.family(cf, &ir.Factor{Plates: f.Plates, Target: f.Target, Dist: d.Dist, Args: d.Args, Pos: d.Pos}) {
			ok = false
		}
	}
	w := f.Args[0]
	wt := w.Typ()
	switch {
	case wt.Rank() == 0 && wt.Class == ir.Plain:
		if len(comps) != 2 {
			c.errorAt(w.Position(), "pass a simplex vector of "+fmt.Sprint(len(comps))+" weights, one per component (declare it simplex[K], with K the number of components)",
				"%s: a single weight %s is the first component's, for two components; this %s has %d", fam.Name, exprString(w), fam.Name, len(comps))
			ok = false
		}
	case wt.Rank() == 1 && wt.Class == ir.Simplex:
		if s := c.syms[wt.Dims[0]]; s != nil && s.v.Fixed && s.v.SizeDefault != len(comps) {
			c.errorAt(w.Position(), fmt.Sprintf("pass %d weights, one per component (simplex[%d])", len(comps), len(comps)),
				"%s: the weights %s have the fixed length %s, but this %s has %d components", fam.Name, exprString(w), wt.Dims[0], fam.Name, len(comps))
			ok = false
		}
	default:
		c.errorAt(w.Position(), "the weights are a real in (0, 1) for two components (the first one's weight), or a simplex vector over the components",
			"%s: the %s %s must be a real scalar or a simplex vector, but it is %s", fam.Name, fam.Params[0].Name, exprString(w), wt)
		ok = false
	}
	return ok
}

// supportWord names the values a family draws.
func supportWord(f *ir.Family) string {
	if f.Value.Int {
		return "integer"
	}
	return f.Support.String()
}
