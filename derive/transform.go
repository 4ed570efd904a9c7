package derive

import (
	"fmt"

	"github.com/vigen-go/vigen/spec/ir"
)

// Constrained latents (real<lower=a>, real<lower=a, upper=b>, ordered,
// simplex) are fitted by transformation, as Stan fits them (Stan Reference
// Manual, "Constraint transforms"): the Gaussian factor q(u) = N(μ, Σ) lives
// on the unconstrained scale u, every read of the variable x is the
// constrained expression x = T(u), and the prior's statement gains the
// log-Jacobian log|det ∂T/∂u|, so that the density of u is
// p(T(u)) |det ∂T/∂u|. Since FactorLogDensity adds it, the objectives, the
// ELBO and the expectations all see it: the ELBO is
// E_q[log p(y, T(u)) + log|det ∂T/∂u|] + H[q(u)], the ELBO of q on u.
//
// In derive's expressions the tensor named after the variable is u.

// TransformRule is one entry of the transform table: the constrained
// value of an element, its log-Jacobian and the inverse map, as
// expressions and as text (for documentation and `vigen explain`).
type TransformRule struct {
	// X returns x as an expression of the unconstrained element u, with
	// lo and hi the lowered bounds (nil when absent). Elementwise
	// transforms only.
	X func(u, lo, hi Expr) Expr
	// LogJac returns log|dx/du| for one element. Elementwise transforms
	// only.
	LogJac func(u, lo, hi Expr) Expr
	// VecX, for a vector transform (ordered, positive_ordered), returns
	// element k of x from the whole vector: u(j) reads u's element at the
	// index j, k is the 0-based value of x's element index, and j is a
	// fresh index over the vector for the transform to sum over.
	VecX func(u func(j Expr) Expr, k Expr, j Index) Expr
	// VecLogJac, for a vector transform, returns the contribution of
	// element k (u_k its unconstrained element, k its 0-based index as a
	// value) to log|det ∂x/∂u|; the log-Jacobian is its sum over k.
	VecLogJac func(uk, k Expr) Expr
	// Text, JacText and InverseText state the map, its log-Jacobian and
	// its inverse (used to start and report; runtime/constrained.go
	// implements them on numbers).
	Text, JacText, InverseText string
}

// Transforms is the table of elementwise transforms, one entry per kind.
// The ordered transforms are vector transforms (VecX, VecLogJac); simplex
// is accepted by the language but not yet derived (transformError).
var Transforms = map[ir.TransformKind]TransformRule{
	ir.LowerBound: {
		X:           func(u, lo, _ Expr) Expr { return Add(lo, Call1("exp", u)) },
		LogJac:      func(u, _, _ Expr) Expr { return u },
		Text:        "x = a + exp(u)",
		JacText:     "log|dx/du| = u",
		InverseText: "u = log(x − a)",
	},
	ir.UpperBound: {
		X:           func(u, _, hi Expr) Expr { return Sub(hi, Call1("exp", u)) },
		LogJac:      func(u, _, _ Expr) Expr { return u },
		Text:        "x = b − exp(u)",
		JacText:     "log|dx/du| = u",
		InverseText: "u = log(b − x)",
	},
	ir.LowerUpper: {
		X: func(u, lo, hi Expr) Expr { return Add(lo, Mul(Sub(hi, lo), Call1("logistic", u))) },
		// log((b − a) σ(u) σ(−u)) = log(b − a) − softplus(−u) − softplus(u)
		LogJac: func(u, lo, hi Expr) Expr {
			return Add(Call1("log", Sub(hi, lo)), Neg(Call1("softplus", Neg(u))), Neg(Call1("softplus", u)))
		},
		Text:        "x = a + (b − a)·logistic(u)",
		JacText:     "log|dx/du| = log(b − a) + log logistic(u) + log logistic(−u)",
		InverseText: "u = logit((x − a)/(b − a))",
	},
	// Stan's ordered transform: x_1 = u_1, x_k = x_{k−1} + exp(u_k), that
	// is x_k = u_1 + Σ_{2≤j≤k} exp(u_j), written with the index step
	// le(j, k) = [j ≤ k] (0-based here) so that it differentiates like any
	// sum: ∂x_k/∂u_a = [a = 1] + [2 ≤ a ≤ k] exp(u_a). The Jacobian is
	// triangular: log|det| = Σ_{k≥2} u_k.
	ir.Ordered: {
		VecX: func(u func(Expr) Expr, k Expr, j Index) Expr {
			jv := IxE(j)
			h := Add(Mul(CallE(MustPrim("eq"), jv, N(0)), u(jv)), Mul(Le(N(1), jv), Call1("exp", u(jv))))
			return Sum([]Index{j}, Mul(Le(jv, k), h))
		},
		VecLogJac:   func(uk, k Expr) Expr { return Mul(Le(N(1), k), uk) },
		Text:        "x_1 = u_1, x_k = x_{k−1} + exp(u_k)",
		JacText:     "log|det ∂x/∂u| = Σ_{k≥2} u_k",
		InverseText: "u_1 = x_1, u_k = log(x_k − x_{k−1})",
	},
	// Stan's positive_ordered transform: x_k = Σ_{j≤k} exp(u_j);
	// log|det| = Σ_k u_k.
	ir.PositiveOrdered: {
		VecX: func(u func(Expr) Expr, k Expr, j Index) Expr {
			jv := IxE(j)
			return Sum([]Index{j}, Mul(Le(jv, k), Call1("exp", u(jv))))
		},
		VecLogJac:   func(uk, _ Expr) Expr { return uk },
		Text:        "x_1 = exp(u_1), x_k = x_{k−1} + exp(u_k)",
		JacText:     "log|det ∂x/∂u| = Σ_k u_k",
		InverseText: "u_1 = log x_1, u_k = log(x_k − x_{k−1})",
	},
}

// The index step le(a, b) = [a ≤ b] of two integer values, the
// cumulative sums of the ordered transforms are written with.
var _ = func() bool {
	def(&Prim{Name: "le", Arity: 2, Go: "runtime.Le", Domain: "integers", Latex: `\mathbb{1}`,
		Eval: func(x []float64) float64 {
			if x[0] <= x[1] {
				return 1
			}
			return 0
		},
		Partials: func(a []Expr, self Expr) []Expr { return []Expr{N(0), N(0)} }})
	return true
}()

// Le returns the step [a ≤ b] of two integer-valued expressions (indices
// as values are 0-based).
func Le(a, b Expr) Expr { return CallE(MustPrim("le"), a, b) }

// indexValue is the 0-based value of the index expression x: an index
// itself, or a 1-based integer tensor (θ[g[n]]) less one.
func indexValue(x Expr) Expr {
	if _, ok := x.(*Ix); ok {
		return x
	}
	return Sub(x, N(1))
}

// Transformed reports whether reads of v go through a transform: v is a
// nonconjugate latent with a declared constraint.
func Transformed(v *ir.Var) bool {
	return v != nil && v.Role == ir.RoleLatent && v.Treatment.Nonconjugate() && v.Transform != nil
}

// constrain returns the constrained element x = T(u) of the transformed
// variable v whose unconstrained element is the tensor u.
func (b *Builder) constrain(v *ir.Var, u Expr) (Expr, error) {
	r, lo, hi, err := b.transformRule(v)
	if err != nil {
		return nil, err
	}
	if r.VecX != nil {
		t, ok := u.(*Tensor)
		if !ok || len(t.Idx) == 0 {
			return nil, ir.Errorf(v.Pos, "internal error in vigen: the %s latent %s is read as a whole (please report it with the model)", v.Transform.Text, v.Name)
		}
		n := len(t.Idx) - 1
		lead := t.Idx[:n]
		read := func(j Expr) Expr {
			return newTensor(t.Name, append(append([]Expr(nil), lead...), j), false, false)
		}
		j := b.Fresh("j", v.Type.Dims[len(v.Type.Dims)-1])
		return r.VecX(read, indexValue(t.Idx[n]), j), nil
	}
	return r.X(u, lo, hi), nil
}

// transformRule returns v's rule and lowered bounds.
func (b *Builder) transformRule(v *ir.Var) (TransformRule, Expr, Expr, error) {
	t := v.Transform
	r, ok := Transforms[t.Kind]
	if !ok {
		return TransformRule{}, nil, nil, transformError(v)
	}
	var lo, hi Expr
	var err error
	if t.Lo != nil {
		if lo, err = b.Lower(t.Lo, nil); err != nil {
			return r, nil, nil, err
		}
	}
	if t.Hi != nil {
		if hi, err = b.Lower(t.Hi, nil); err != nil {
			return r, nil, nil, err
		}
	}
	return r, lo, hi, nil
}

// transformError is the error for a transform the derivation does not
// implement yet.
func transformError(v *ir.Var) error {
	return ir.Errorf(v.Pos, "nonconjugate %s latent %s is not supported yet: vigen fits bounded reals (real<lower=a>, real<upper=b>, real<lower=a, upper=b>) and ordered and positive_ordered vectors on the unconstrained scale, not yet %s vectors", v.Transform.Text, v.Name, v.Transform.Text).
		Hintf("declare it `real[...]` and write the constraint by hand, or for a simplex declare it `conjugate` with a Dirichlet prior")
}

// logJacobian returns the log-Jacobian of the target of f, the prior of a
// transformed latent, summed over the target's elements: with the plates
// summed by the caller, f's statement then gives the density of u.
func (b *Builder) logJacobian(f *ir.Factor) (Expr, error) {
	v := f.Target.Var
	r, lo, hi, err := b.transformRule(v)
	if err != nil {
		return nil, err
	}
	var el []Index
	var sel []Expr
	for _, d := range f.Target.Typ().Dims {
		i := b.freshFor(d)
		el = append(el, i)
		sel = append(sel, IxE(i))
	}
	b.raw = true
	u, err := b.Lower(f.Target, sel)
	b.raw = false
	if err != nil {
		return nil, err
	}
	if r.VecLogJac != nil {
		// the element's index along the vector: a free index of a whole
		// target (mu ~ …), or the loop index or literal picking the
		// element of a per-element prior (mu[k] ~ … inside for k)
		t, ok := u.(*Tensor)
		if !ok || len(t.Idx) == 0 {
			return nil, ir.Errorf(f.Pos, "internal error in vigen: the target of a %s prior lowers to %s, not an element of %s (please report it with the model)", v.Type.Class, String(u), v.Name)
		}
		return Sum(el, r.VecLogJac(u, t.Idx[len(t.Idx)-1])), nil
	}
	return Sum(el, r.LogJac(u, lo, hi)), nil
}

// FlatDist is the Dist of the statement FlatPrior makes up.
const FlatDist = "flat"

// FlatPrior is the statement standing for the improper flat prior of a
// constrained latent v with no `~` (Stan's implicit prior, flat on the
// constrained scale x): its log density is 0 on x, so on u it is the
// log-Jacobian alone, which FactorLogDensity returns. It is not in the
// model's statements: the objective of v (as its prior) and the ELBO
// (flatPriors) add it, so that the Jacobian is never dropped.
func FlatPrior(v *ir.Var) *ir.Factor {
	return &ir.Factor{Target: &ir.Ref{Var: v, T: v.Type, Pos: v.Pos}, Dist: FlatDist, Pos: v.Pos}
}

// ImproperFlat reports whether v is a latent with an improper flat prior:
// a nonconjugate latent with no `~` (constrained or not).
func ImproperFlat(m *ir.Model, v *ir.Var) bool {
	return v.Role == ir.RoleLatent && v.Treatment.Nonconjugate() && m.Prior(v.Name) == nil
}

// flatPriors returns FlatPrior of every constrained latent of m with an
// improper flat prior, in declaration order.
func flatPriors(m *ir.Model) []*ir.Factor {
	var out []*ir.Factor
	for _, v := range m.VarsWithRole(ir.RoleLatent) {
		if ImproperFlat(m, v) && Transformed(v) {
			out = append(out, FlatPrior(v))
		}
	}
	return out
}

// checkConjugateBound checks the bound of a conjugate latent v with prior
// f: it may only state the support of the prior's family (ir.Family.SupportText),
// as `real<lower=0>` does for a Gamma.
func checkConjugateBound(v *ir.Var, f *ir.Factor) error {
	t := v.Transform
	if t == nil || f == nil {
		return nil
	}
	d := Dists[f.Dist]
	fam := ir.Families[f.Dist]
	lo, hi := 0.0, 0.0
	loOK, hiOK := t.Lo == nil, t.Hi == nil
	if n, ok := t.Lo.(*ir.Num); ok {
		lo, loOK = n.Value, true
	}
	if n, ok := t.Hi.(*ir.Num); ok {
		hi, hiOK = n.Value, true
	}
	support := ""
	if d != nil && fam != nil {
		support = d.SupportText
		if sLo, sHi, ok := supportInterval(d.SupportText, fam.Value.Name); ok && loOK && hiOK &&
			(t.Lo == nil) == (sLo == nil) && (t.Hi == nil) == (sHi == nil) &&
			(sLo == nil || *sLo == lo) && (sHi == nil || *sHi == hi) {
			return nil
		}
	}
	if support == "" {
		support = "the real line"
	}
	return ir.Errorf(v.Pos, "conjugate latent %s is declared %s, but its prior %s at %s has support %s: on a conjugate latent a bound only restates the prior's support", v.Name, v.TypeString(), f.Dist, f.Pos, support).
		Hintf("%s", fmt.Sprintf("remove the bound, or declare %s `nonconjugate laplace` to fit it on the unconstrained scale", v.Name))
}

// supportInterval reads the interval of the value called name from a
// distribution's support text ("x > 0", "0 < x < 1"): nil ends are
// unbounded. It reports false when the text states no interval.
func supportInterval(support, name string) (lo, hi *float64, ok bool) {
	var a, c float64
	var x string
	if n, _ := fmt.Sscanf(support, "%g < %s < %g", &a, &x, &c); n == 3 && x == name {
		return &a, &c, true
	}
	if n, _ := fmt.Sscanf(support, "%s > %g", &x, &a); n == 2 && x == name {
		return &a, nil, true
	}
	if n, _ := fmt.Sscanf(support, "%s ≥ %g", &x, &a); n == 2 && x == name {
		return &a, nil, true
	}
	return nil, nil, false
}
