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
	d := &differ{v: v, at: at, memo: map[string]Expr{}, big: treeSize(e, bigTree) > bigTree || HasPerPointAtoms(e)}
	return d.diff(e)
}

type differ struct {
	v    string
	at   []Index
	memo map[string]Expr
	// big: e is large enough for the derivatives of its sums to stay
	// factored (see bigTree).
	big bool
}

// bigTree is the tree size (treeSize) of an expression from which Diff
// keeps its results factored. In normal form a product is flat and a sum
// of Σ terms is distributed over every product it multiplies, so the k-th
// derivative of a product of p factors, each reading a plate scalar such
// as Σ_i x[n,i]·w(θ)[i], has about p^k terms, each a nest of loops:
// coupled latents whose f holds the Taylor terms of the others (Eq. 19)
// generate hundreds of thousands of lines. Above this size the derivative
// of a Σ that is a scalar per data point (its free indices are plates) is
// a group(Σ …): one value per point that products keep as a factor
// instead of distributing; so is every Σ of an expression that holds such
// groups (HasPerPointAtoms), and Sums split by factorSum, and Expect keeps
// per-point sums as factors when its result is above this size (atom.go).
// Every example model's expressions are far below the bound, so their
// kernels are unaffected. A variable so that tests can compare both forms.
var bigTree = 10000.0

func (d *differ) diff(e Expr) Expr {
	switch e.(type) {
	case *Num, *Ix, *Shift, *Delta, *IDelta, *MaxNode:
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
	case *Num, *Ix, *Shift, *Delta, *IDelta, *MaxNode:
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
		if e.Prim.Name == "group" {
			return factorOut(d.diff(e.Args[0]))
		}
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
			terms = append(terms, chainProduct(partials[k], da))
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
		if d.big {
			if f := factorSum(e); f != nil {
				return d.diff(f)
			}
		}
		return d.atom(Sum(e.Idx, d.diff(e.Body)))
	}
	panic(fmt.Sprintf("derive: Diff of %T", e))
}

// atom keeps r, the derivative of a Σ, as one factor group(r) in big mode
// when r is a scalar per data point (its free indices are plates): Mul
// would otherwise pull its Σ out of every product it enters and distribute
// the products over it.
func (d *differ) atom(r Expr) Expr {
	if !d.big {
		return r
	}
	c, rest := coefRest(r)
	switch x := rest.(type) {
	case *SumNode:
	case *AddNode:
		if !hasSumTerm(x) {
			return r
		}
	default:
		return r
	}
	free := rest.Free()
	if len(free) == 0 {
		return r
	}
	for _, i := range free {
		if !i.Plate {
			return r
		}
	}
	return scaleAny(c, Call1("group", rest))
}

// groupMin is the number of factors from which chainProduct groups them.
const groupMin = 3

// chainProduct is the chain rule's product ∂f·dg. Along a chain of
// primitives f(g(h(…u))) the product of the partials would flatten into
// one product with a factor per level, and each further derivative would
// apply the product rule to all of them: the k-th derivative of a chain of
// depth d would have about d^k terms. Instead, the factors that depend on
// nothing but plates (the partials, scalars per data point) are kept as
// one factor group(…) once there are groupMin of them, so that a chain
// is a nest of small products, each differentiated once (Diff memoizes),
// and derivatives grow linearly with the depth. Factors with other free
// indices (x[n, a], Kronecker deltas) and sums stay outside, where the
// scheduler and the delta elimination of Sum see them.
func chainProduct(p, da Expr) Expr {
	prod := Mul(p, da)
	m, ok := prod.(*MulNode)
	if !ok {
		return prod
	}
	var inner, outer []Expr
	for _, f := range m.Factors {
		if scalarFactor(f) {
			inner = append(inner, f)
		} else {
			outer = append(outer, f)
		}
	}
	if len(inner) < groupMin {
		return prod
	}
	return Mul(append(outer, Call1("group", Mul(inner...)))...)
}

// factorOut writes a sum whose terms share the same factors that are not
// plate scalars (the derivative of a group: every term holds the one
// x[n, b] of the chain rule) as those factors times the sum of the rest,
// so that the sum, a scalar per data point, is computed outside the loops
// over the derivative's indices.
func factorOut(e Expr) Expr {
	a, ok := e.(*AddNode)
	if !ok || hasSumTerm(a) {
		return e
	}
	var common []Expr
	rests := make([]Expr, len(a.Terms))
	for k, t := range a.Terms {
		var outer, inner []Expr
		for _, f := range factorsOf(t) {
			if _, isNum := f.(*Num); isNum || scalarFactor(f) {
				inner = append(inner, f)
			} else {
				outer = append(outer, f)
			}
		}
		if len(outer) == 0 {
			return e
		}
		if k == 0 {
			common = outer
		} else if !sameKeys(common, outer) {
			return e
		}
		rests[k] = Mul(inner...)
	}
	return Mul(append(append([]Expr(nil), common...), Add(rests...))...)
}

func factorsOf(e Expr) []Expr {
	if m, ok := e.(*MulNode); ok {
		return m.Factors
	}
	return []Expr{e}
}

// sameKeys reports whether two lists of factors (sorted by key, as in a
// product) are equal.
func sameKeys(a, b []Expr) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if a[k].Key() != b[k].Key() {
			return false
		}
	}
	return true
}

// scalarFactor reports whether f can go into a group: not a number, a
// delta or a sum (nor a sum of sums, which Mul distributes), and with no
// free index but plates.
func scalarFactor(f Expr) bool {
	switch f := f.(type) {
	case *Num, *Delta, *IDelta, *SumNode:
		return false
	case *AddNode:
		if hasSumTerm(f) {
			return false
		}
	}
	for _, i := range f.Free() {
		if !i.Plate {
			return false
		}
	}
	return true
}

func isZero(e Expr) bool {
	n, ok := e.(*Num)
	return ok && n.V == 0
}

// TensorsRead is the set of the names of the tensors e reads: one walk,
// where DependsOn for each of many names would walk e once per name.
func TensorsRead(e Expr) map[string]bool {
	out := map[string]bool{}
	Visit(e, func(x Expr) {
		if t, ok := x.(*Tensor); ok {
			out[t.Name] = true
		}
	})
	return out
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
