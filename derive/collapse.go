package derive

import "github.com/vigen-go/vigen/spec/ir"

// This file derives the collapsed objective that lets generated code find
// the fixed point of a unit's θ/z coordinate ascent by Newton's method.
//
// In the CTM each unit alternates the Laplace update of θ_d and the closed
// form of its topic assignments z_dn; the alternation converges linearly,
// and slowly when topics overlap. For a categorical z whose natural
// parameter η_nk(θ) reads no other latent, max over q(z) of the terms
// involving z is Σ_n c_n log Σ_k exp η_nk(θ) (plus the terms of η that are
// constant in k), so
//
//	g(θ) = log p(θ) + Σ_n c_n [log Σ_k exp η_nk(θ) + dropped_n(θ)]
//
// and by the envelope theorem ∇g(θ) = ∇_θ f(θ; q*(z | θ)). A maximum of g
// is therefore a fixed point of the alternation for the mean of q(θ): the
// same point, reached with Newton's quadratic convergence. (In the CTM, g
// is the log posterior of θ_d with the topic assignments summed out.) The
// Laplace update then sets Σ from ∇²f at that point as before, so the
// result is unchanged; the delta method starts from it.

// Collapsed is the objective g of a per-unit nonconjugate latent with one
// local categorical latent Z maximized out. Parts are its terms (θ's prior
// and other children, then the log-sum-exp of Z's statements); they read
// no variational parameters.
type Collapsed struct {
	Z             *ir.Var
	F, Grad, Hess Expr
	Parts         []*Part
	// DeltaCollapses says the delta correction ½Tr{∇²f Σ} does not depend
	// on q(Z): ∇²_θ η_nk is the same for every category k (as in the CTM,
	// where η is linear in θ but for the −log Σ exp θ term constant in k),
	// so the delta method's fixed point is a stationary point of the
	// collapsed objective plus that correction.
	DeltaCollapses bool
}

// collapse returns the collapsed objective of o, or nil when the model does
// not have the shape above: o per unit, exactly one local categorical
// latent of the same unit whose η reads o's latent and no other latent,
// and every expectation in f taken over that latent only.
func (b *Builder) collapse(o *Objective, updates []*Update, qs map[string]*QFactor) *Collapsed {
	if o.Unit == nil {
		return nil
	}
	theta := o.Latent.Name
	var u *Update
	for _, x := range updates {
		if x.Normalize && x.Unit != nil && x.Unit.Name == o.Unit.Name && len(x.Natural) == 1 && DependsOn(x.Natural[0], theta) {
			if u != nil {
				return nil
			}
			u = x
		}
	}
	if u == nil {
		return nil
	}
	for _, in := range o.Inputs {
		if in.Var != u.Latent.Name {
			return nil
		}
	}
	// The terms of Z's statements that are constant in Z (the CTM's
	// −log Σ_k exp θ_k per token): E over Z alone is linear in Z's
	// probabilities, so they are its value at probabilities 0.
	zq := qs[u.Latent.Name]
	var constant []Expr
	for _, f := range u.Factors {
		b.unit = u.Unit
		lp, err := b.FactorLogDensity(f)
		b.unit = nil
		if err != nil {
			return nil
		}
		x := &expecter{b: b, qs: map[string]*QFactor{u.Latent.Name: zq}}
		e := x.expect(lp)
		if e == nil {
			return nil
		}
		constant = append(constant, replaceTensorPure(e, zq.Params[0].Tensor, func(*Tensor) Expr { return N(0) }))
	}
	eta := Add(append([]Expr{u.Natural[0]}, constant...)...)
	for _, v := range b.Model.VarsWithRole(ir.RoleLatent) {
		if v.Name != theta && DependsOn(eta, v.Name) {
			return nil
		}
	}
	inZ := map[*ir.Factor]bool{}
	for _, f := range u.Factors {
		inZ[f] = true
	}
	c := &Collapsed{Z: u.Latent}
	for _, p := range o.Parts {
		if !inZ[p.Factor] {
			c.Parts = append(c.Parts, &Part{Factor: p.Factor, F: p.F, Grad: p.Grad, Hess: p.Hess})
		}
	}
	// Σ over the unit's entries n (all of At but the unit and the
	// category k), each weighted by its count if z runs over a bag.
	k := u.At[len(u.At)-1]
	var entries []Index
	for _, i := range u.At[:len(u.At)-1] {
		if i.Name != o.Unit.Name {
			entries = append(entries, i)
		}
	}
	weight := Expr(N(1))
	if len(entries) == 1 {
		if bag, _, ok := entries[0].Ragged(); ok {
			weight = T(bag+".count", IxE(entries[0]))
		}
	}
	natural := unitView(u.Natural[0], theta, *o.Unit)
	ha, hb := b.Fresh("a", o.Dim), b.Fresh("b", o.Dim)
	c.DeltaCollapses = !hasFree(Diff(Diff(natural, theta, []Index{ha}), theta, []Index{hb}), k)
	// exp η as a product of the terms' exponentials, so exp(log β) = β
	// and exp(θ_k) is computed once per k, not per entry.
	var factors []Expr
	for _, t := range terms(natural) {
		factors = append(factors, Call1("exp", t))
	}
	lse := Call1("log", Sum([]Index{k}, Mul(factors...)))
	p := &Part{Factor: u.Factors[0], F: Add(Sum(entries, Mul(weight, lse)), unitView(Add(constant...), theta, *o.Unit))}
	p.Grad = Diff(p.F, theta, []Index{o.A})
	p.Hess = Diff(p.Grad, theta, []Index{o.B})
	c.Parts = append(c.Parts, p)
	var fs, gs, hs []Expr
	for _, p := range c.Parts {
		fs, gs, hs = append(fs, p.F), append(gs, p.Grad), append(hs, p.Hess)
	}
	c.F, c.Grad, c.Hess = Add(fs...), Add(gs...), Add(hs...)
	return c
}
