package derive

import "fmt"

// Diff returns ∂e/∂v[at...], the derivative of e with respect to the element
// at of the tensor called v. The indices in at must not be bound anywhere in
// e (callers use fresh names). It applies one chain rule over the primitive
// table: d f(g₁..gₖ) = Σ_k ∂_k f · d g_k.
func Diff(e Expr, v string, at []Index) Expr {
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
			da := Diff(a, v, at)
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
			terms[k] = Diff(t, v, at)
		}
		return Add(terms...)
	case *MulNode:
		var terms []Expr
		for k, f := range e.Factors {
			df := Diff(f, v, at)
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
		return Sum(e.Idx, Diff(e.Body, v, at))
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
