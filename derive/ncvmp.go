package derive

import (
	"fmt"

	"github.com/vigen-go/vigen/spec/ir"
)

// This file splits a nonconjugate latent's objective the way non-conjugate
// variational message passing needs it (Knowles & Minka 2011, §3–5).
// NCVMP keeps the Gaussian q(θ) of Laplace and the delta method but
// updates it by messages: the part of f quadratic in θ (its Gaussian prior,
// and every statement conjugate to it, such as the Σ_n y_n x_nᵀθ of a
// logistic likelihood) sends its exact natural parameters, and each other
// statement must read θ through one linear form u = x_nᵀθ per data point,
// so that its expected log factor S_n = E_q[g_n(u)] depends only on the
// projection's mean and variance and is a one-dimensional Gauss–Hermite
// integral (§5.1), and its message is Eq. 7.

// Projection is a nonconjugate objective split for NCVMP: f = Σ Quad +
// Σ_terms Σ_n g_n(u_n), u_n = Row_nᵀθ.
type Projection struct {
	// Quad are the parts of f quadratic in θ, one per statement that has
	// any, with their gradients and (constant) Hessians.
	Quad []*Part
	// Terms are the statements' parts read through one linear form.
	Terms []*ProjTerm
}

// ProjTerm is one statement's non-quadratic part, Σ_{Idx} g(u) with
// u = Σ_A Row[A]·θ[A]: Idx is its one loop index over the data points (an
// index over ScalarSize when it has none), free in Row, G, G1 and G2; A is
// the objective's index A. G reads the projection as the tensor U at Idx,
// and G1, G2 are its first and second derivatives in U.
type ProjTerm struct {
	Factor    *ir.Factor
	Idx       Index
	U         string
	Row       Expr
	G, G1, G2 Expr
}

// projection splits o for NCVMP, or says why it cannot be.
func (b *Builder) projection(o *Objective) (*Projection, error) {
	v := o.Latent
	if o.Unit != nil {
		return nil, ir.Errorf(v.Pos, "NCVMP is available for a latent fitted with one Gaussian factor, not for %s, which has one per unit", v.Name).Hintf("declare %s `nonconjugate laplace` or `nonconjugate delta`", v.Name)
	}
	pr := &Projection{}
	for _, part := range o.Parts {
		var quad []Expr
		for _, t := range addTerms(part.F) {
			if !DependsOn(t, v.Name) {
				quad = append(quad, t) // a constant: part of f_Q(0)
				continue
			}
			h := Diff(Diff(t, v.Name, []Index{o.A}), v.Name, []Index{o.B})
			if !DependsOn(h, v.Name) {
				quad = append(quad, t)
				continue
			}
			pt, err := b.projTerm(o, part.Factor, t, len(pr.Terms))
			if err != nil {
				return nil, err
			}
			pr.Terms = append(pr.Terms, pt)
		}
		if len(quad) > 0 {
			q := &Part{Factor: part.Factor, F: Add(quad...)}
			q.Grad = Diff(q.F, v.Name, []Index{o.A})
			q.Hess = Diff(q.Grad, v.Name, []Index{o.B})
			pr.Quad = append(pr.Quad, q)
		}
	}
	if len(pr.Terms) == 0 {
		return nil, ir.Errorf(v.Pos, "every statement reading %s is quadratic in it, so NCVMP has nothing to do", v.Name).Hintf("declare %s `conjugate` with an MvNormal prior (the closed form, Eq. 18), or `nonconjugate laplace`", v.Name)
	}
	return pr, nil
}

// addTerms returns the terms of an addition, or e itself.
func addTerms(e Expr) []Expr {
	if a, ok := e.(*AddNode); ok {
		return a.Terms
	}
	return []Expr{e}
}

// projTerm reads one non-quadratic term t of f as Σ_n g_n(u_n).
func (b *Builder) projTerm(o *Objective, f *ir.Factor, t Expr, k int) (*ProjTerm, error) {
	v := o.Latent.Name
	fail := func(format string, args ...any) error {
		return ir.Errorf(f.Pos, "NCVMP cannot fit %s: this statement %s", v, fmt.Sprintf(format, args...)).
			Hintf("NCVMP needs each statement to read %s through one linear form per data point in one loop, as in `y[n] ~ Bernoulli(logistic(dot(x[n], %s)))`; use `nonconjugate laplace` or `delta` for this model", v, v)
	}
	// t = w · Σ_{idx} body, with the weight w free of θ
	var weight []Expr
	var sum *SumNode
	switch t := t.(type) {
	case *SumNode:
		sum = t
	case *MulNode:
		// a sum over the data points times factors free of θ, or a
		// product that is g itself (no loop)
		dependent := 0
		for _, fc := range t.Factors {
			if DependsOn(fc, v) {
				dependent++
			}
		}
		for _, fc := range t.Factors {
			if s, ok := fc.(*SumNode); ok && dependent == 1 && DependsOn(s, v) {
				sum = s
				continue
			}
			weight = append(weight, fc)
		}
		if sum == nil {
			weight = nil
		}
	}
	var idx Index
	var body Expr
	switch {
	case sum == nil:
		idx = b.Fresh("n", ScalarSize)
		body = t
	case len(sum.Idx) != 1:
		return nil, fail("sums over %d indices; NCVMP's generated code reads statements over one loop", len(sum.Idx))
	default:
		idx = sum.Idx[0]
		body = Mul(append(weight, sum.Body)...)
		if _, _, ragged := idx.Ragged(); ragged {
			return nil, fail("loops over a ragged index")
		}
		if _, _, _, ranged := SizeRange(idx.Size); ranged {
			return nil, fail("loops over part of a size")
		}
	}
	// The linear forms: the largest subexpressions linear in θ, looking
	// through products (a factor free of θ belongs to g).
	var forms []Expr
	var find func(e Expr)
	find = func(e Expr) {
		if !DependsOn(e, v) {
			return
		}
		if _, isMul := e.(*MulNode); !isMul && o.linear(e) {
			forms = append(forms, e)
			return
		}
		for _, c := range Children(e) {
			find(c)
		}
	}
	find(body)
	if len(forms) == 0 {
		return nil, fail("reads %s in a way vigen cannot split", v)
	}
	form := forms[0]
	for _, x := range forms[1:] {
		if x.Key() != form.Key() {
			return nil, fail("reads %s through two different linear forms, %s and %s", v, String(form), String(x))
		}
	}
	for _, j := range form.Free() {
		if j.Name != idx.Name && j.Name != o.A.Name {
			return nil, fail("reads %s through a linear form over an index (%s) other than its loop's", v, j.Name)
		}
	}
	// The form is affine, x_nᵀθ + c_n: g reads u + c_n, where u = x_nᵀθ is
	// the projection NCVMP integrates over.
	u := fmt.Sprintf("ncvmp·u%d", k)
	c := replaceTensorPure(form, v, func(*Tensor) Expr { return N(0) })
	g := Memoized(func(e Expr, rec func(Expr) Expr) Expr {
		if e.Key() == form.Key() {
			return Add(T(u), c)
		}
		return mapChildren(e, rec)
	})(body)
	if DependsOn(g, v) {
		return nil, fail("reads %s outside its linear form %s", v, String(form))
	}
	g1 := Diff(g, u, nil)
	g2 := Diff(g1, u, nil)
	at := func(e Expr) Expr {
		return replaceTensorPure(e, u, func(*Tensor) Expr { return T(u, IxE(idx)) })
	}
	return &ProjTerm{Factor: f, Idx: idx, U: u, Row: Diff(form, v, []Index{o.A}), G: at(g), G1: at(g1), G2: at(g2)}, nil
}

// linear reports whether e is linear (affine) in the objective's latent.
func (o *Objective) linear(e Expr) bool {
	return !DependsOn(Diff(e, o.Latent.Name, []Index{o.A}), o.Latent.Name)
}

// GAt returns G with the projection read as the scalar tensor name, for
// printing g(u).
func (t *ProjTerm) GAt(name string) Expr {
	return replaceTensorPure(t.G, t.U, func(*Tensor) Expr { return T(name) })
}
