package derive

import "fmt"

// Diff returns ∂e/∂v[at...], the derivative of e with respect to the element
// at of the tensor called v. The indices in at must not be bound anywhere in
// e (callers use fresh names). It applies one chain rule over the primitive
// table: d f(g₁..gₖ) = Σ_k ∂_k f · d g_k.
//
// A subexpression that occurs many times (differentiation shares its
// operands between the terms of the product and chain rules, so expressions
// are DAGs whose trees are much larger) is differentiated once: the results
// are memoized by key.
func Diff(e Expr, v string, at []Index) Expr {
	d := &differ{v: v, at: at, memo: map[string]Expr{}}
	return d.diff(e)
}

type differ struct {
	v    string
	at   []Index
	memo map[string]Expr
}

func (d *differ) diff(e Expr) Expr {
	switch e.(type) {
	case *Num, *Ix, *Delta, *IDelta, *MaxNode:
		return N(0)
	}
	k := e.Key()
	if r, ok := d.memo[k]; ok {
		return r
	}
	r := d.diff1(e)
	d.memo[k] = r
	return r
}

func (d *differ) diff1(e Expr) Expr {
	v, at := d.v, d.at
	switch e := e.(type) {
	case *Num, *Ix, *Delta, *IDelta, *MaxNode:
		return N(0)
	case *Tensor:
		if e.Name != v {
			return N(0)
		}
		if len(e.Idx) != len(at) {
			panic(fmt.Sprintf("derive: %s has %d indices, differentiating with %d", v, len(e.Idx), len(at)))
		}
		fs := make([]Expr, len(at))
		for k, x := range e.Idx {
			fs[k] = IDlt(x, IxE(at[k])) // δ(i, a), or δ(z[n] selects a) for an indirect index
		}
		if e.Sym && len(at) == 2 {
			// A symmetric matrix has one free entry per pair; treating both
			// orders as one variable is not supported.
			panic("derive: differentiating with respect to a symmetric matrix")
		}
		return Mul(fs...)
	case *Call:
		var terms []Expr
		var partials []Expr
		for k, a := range e.Args {
			da := d.diff(a)
			if isZero(da) {
				continue
			}
			if partials == nil {
				if e.Prim.Partials == nil {
					panic(fmt.Sprintf("derive: primitive %s has no derivative in the table", e.Prim.Name))
				}
				partials = e.Prim.Partials(e.Args, e)
			}
			terms = append(terms, Mul(partials[k], da))
		}
		return Add(terms...)
	case *AddNode:
		terms := make([]Expr, len(e.Terms))
		for k, t := range e.Terms {
			terms[k] = d.diff(t)
		}
		return Add(terms...)
	case *MulNode:
		var terms []Expr
		for k, f := range e.Factors {
			df := d.diff(f)
			if isZero(df) {
				continue
			}
			others := append(append([]Expr(nil), e.Factors[:k]...), e.Factors[k+1:]...)
			terms = append(terms, Mul(append(others, df)...))
		}
		return Add(terms...)
	case *SumNode:
		for _, j := range e.Idx {
			for _, a := range at {
				if j.Name == a.Name {
					panic(fmt.Sprintf("derive: index %s is bound and free", a.Name))
				}
			}
		}
		return Sum(e.Idx, d.diff(e.Body))
	}
	panic(fmt.Sprintf("derive: Diff of %T", e))
}

func isZero(e Expr) bool {
	n, ok := e.(*Num)
	return ok && n.V == 0
}

// DependsOn reports whether e reads the tensor called v.
func DependsOn(e Expr, v string) bool {
	found := false
	Visit(e, func(x Expr) {
		if t, ok := x.(*Tensor); ok && t.Name == v {
			found = true
		}
	})
	return found
}
