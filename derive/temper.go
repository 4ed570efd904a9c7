package derive

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/vigen-go/vigen/spec/ir"
)

// Tempered normalizers for local variational tempering (Mandt et al.
// 2016, §2.4). LVT gives each unit d a temperature T_d and weighs it by
// the unit's tempered density, each statement p(x | args) inside the unit
// plate raised to s = 1/T and normalized on its own (the paper's
// p(x_d, z_d | β/T_d)). What q(T_d) needs (Eq. 10) is then
// Σ_statements E_q[log ∫ p(x | args)^s dx]: a table entry per
// distribution (Dist.TemperedLogNorm) gives the integral, and the
// expectation under q is taken as for the ELBO, exactly, or, for a
// Categorical whose probabilities are a simplex latent, by Jensen's bound
// log Σ_v E_q[p_v^s] read from a table that the runtime fills for the
// current q (runtime.DirichletLogSumPow): an upper bound, so the tempered
// ELBO stays a lower bound.

// Untempered reports whether tempering leaves the statement f alone: f
// draws a continuous latent local to the units (local says which latents
// are, by name), so it is that latent's prior. Mandt et al.'s Eq. 2 divides
// the whole local log likelihood log p(x_d, z_d | β) by T; their
// derivation for LDA (Appendix B.2) leaves p(θ_d) untempered and divides
// only the statements of the discrete assignments and the data, which is
// what vigen does for every model: a temperature softens the assignments
// and the data's pull, not the priors of continuous local latents. (With
// θ_d's sparse Dirichlet prior tempered too, the tempered objective of LDA
// has a second, hot fixed point that variational tempering falls into;
// examples/lda/TEMPERING.md.)
func Untempered(f *ir.Factor, local map[string]bool) bool {
	if f.Target == nil || f.Target.Var == nil {
		return false
	}
	v := f.Target.Var
	return v.Role == ir.RoleLatent && local[v.Name] && v.Type.Kind != ir.Int
}

// untemperedParts sets, for every local conjugate update whose Markov
// blanket holds untempered statements (Untempered), their part of E_q[η]
// (Update.Untempered), which a tempered update keeps as it is.
func (b *Builder) untemperedParts(d *Derivation, qs map[string]*QFactor) {
	if d.bound == nil || d.bound.Unit == nil || len(d.Objectives) > 0 {
		return // tempering needs every latent conjugate
	}
	unit := *d.bound.Unit
	local := d.localLatents()
	for _, u := range d.Updates {
		if u.Unit == nil {
			continue
		}
		var fs []*ir.Factor
		for _, f := range u.Factors {
			if Untempered(f, local) {
				fs = append(fs, f)
			}
		}
		if len(fs) == 0 {
			continue
		}
		var stats []string
		if u.Normalize {
			stats = []string{"onehot"} // log-probabilities up to a constant per row
		} else {
			for _, s := range Dists[u.Q.Family].ExpFam.Stats {
				stats = append(stats, s.Name)
			}
		}
		parts := make([][]Expr, len(stats))
		for _, f := range fs {
			b.unit, b.perEntry = &unit, bagDim(b.Model, u.Latent) > 0
			lp, err := b.FactorLogDensity(f)
			b.unit, b.perEntry = nil, false
			if err != nil {
				u.NoTemperReason = err.Error()
				break
			}
			ps, err := b.naturalParts(lp, u.Q, stats, u.At, f)
			if err != nil {
				u.NoTemperReason = err.Error()
				break
			}
			for k := range ps {
				parts[k] = append(parts[k], ps[k])
			}
		}
		if u.NoTemperReason != "" {
			continue
		}
		tmp := &Update{}
		for k := range parts {
			x, err := b.expectOthers(Add(parts[k]...), u.Latent.Name, &unit, qs, fs[0], tmp)
			if err != nil {
				u.NoTemperReason = err.Error()
				break
			}
			u.Untempered = append(u.Untempered, x)
		}
		u.UntemperedInputs = tmp.Inputs
	}
}

// InvTTensor is the rank-0 tensor a unit's inverse temperature s = 1/T is
// read as in derived expressions: not an identifier, so no model variable
// can have it.
const InvTTensor = "$invT"

// LSPTensor is the table of Jensen's bound log Σ_v E_q[p_v^s] for each row
// p of the simplex latent v (its dimensions without the last), at one s.
func LSPTensor(v string) string { return v + ".lsp" }

// LSPLatent returns the latent whose table tensor is t, if t is one.
func LSPLatent(t string) (string, bool) { return strings.CutSuffix(t, ".lsp") }

// stempered adapts a tempered log normalizer of scalar arguments.
func stempered(f func(a []Expr, s Expr) Expr) func(*Builder, Val, []Val, Expr) Expr {
	return func(_ *Builder, _ Val, args []Val, s Expr) Expr { return f(scalars(args), s) }
}

// simplexLatent reports whether name is a latent declared simplex.
func (b *Builder) simplexLatent(name string) bool {
	v := b.Model.Lookup(name)
	return v != nil && v.Role == ir.RoleLatent && v.Type.Class == ir.Simplex
}

// categoricalTemperedLogNorm is log Σ_v p_v^s, or, for p a row of a
// simplex latent, its table of Jensen's bound.
func categoricalTemperedLogNorm(b *Builder, _ Val, a []Val, s Expr) Expr {
	i := b.freshFor(a[0].Dims[0])
	el := a[0].At([]Expr{IxE(i)})
	if t, ok := el.(*Tensor); ok && b.simplexLatent(t.Name) && len(t.Idx) > 0 {
		if last, ok := t.Idx[len(t.Idx)-1].(*Ix); ok && last.I.Name == i.Name {
			return T(LSPTensor(t.Name), t.Idx[:len(t.Idx)-1]...)
		}
	}
	return logE(Sum([]Index{i}, Pow(el, s)))
}

// FactorTemperedLogNorm is Σ over the statement's elements of log ∫ p(x |
// args)^s dx, summed over its plates like FactorLogDensity (a bag plate's
// entries weighed by their counts), with s the expression of the inverse
// temperature, or nil and why the statement has none.
func (b *Builder) FactorTemperedLogNorm(f *ir.Factor, s Expr) (Expr, string) {
	d, ok := Dists[f.Dist]
	switch {
	case f.Dist == FlatDist || f.IsTerm():
		return nil, fmt.Sprintf("the statement at %s is not a distribution, so it has no tempered normalizer", f.Pos)
	case !ok || d.TemperedLogNorm == nil:
		return nil, fmt.Sprintf("the tempered normalizer ∫ p(x)^(1/T) dx of %s (%s) is not in vigen's table yet", f.Dist, f.Pos)
	case Transformed(f.Target.Var):
		return nil, fmt.Sprintf("%s (%s) is transformed, and tempered normalizers are taken on the declared scale only", f.Target.Var.Name, f.Pos)
	}
	e, err := b.factorSum(f, func(x Val, args []Val) (Expr, error) {
		if n := d.TemperedLogNorm(b, x, args, s); n != nil {
			return n, nil
		}
		return nil, errNoTemperedNorm
	}, nil)
	if err != nil {
		return nil, fmt.Sprintf("the tempered normalizer of %s (%s) has no form for these arguments", f.Dist, f.Pos)
	}
	return e, ""
}

var errNoTemperedNorm = errors.New("no tempered normalizer")

// temperedNorm adds the statement f's part of a unit's tempered log
// normalizer (Bound.LocalTemperedNorm), or sets Bound.NoTemperedNorm.
func (b *Builder) temperedNorm(f *ir.Factor, bd *Bound, qs map[string]*QFactor) {
	if bd.NoTemperedNorm != "" {
		return
	}
	tn, why := b.FactorTemperedLogNorm(f, T(InvTTensor))
	if why != "" {
		bd.NoTemperedNorm = why
		return
	}
	var read []*QFactor
	for _, v := range b.Model.VarsWithRole(ir.RoleLatent) {
		if !DependsOn(tn, v.Name) {
			continue
		}
		q := qs[v.Name]
		if q == nil || q.IsGaussianVector() {
			bd.NoTemperedNorm = fmt.Sprintf("the tempered normalizer of the statement at %s reads %s, which has no conjugate factor", f.Pos, v.Name)
			return
		}
		read = append(read, q)
	}
	if len(read) > 0 {
		r, log := b.Expect(tn, read)
		if r == nil {
			bd.NoTemperedNorm = fmt.Sprintf("the tempered normalizer of the statement at %s has no expectation under q", f.Pos)
			return
		}
		for _, a := range log {
			if !a.Exact {
				bd.NoTemperedNorm = fmt.Sprintf("the tempered normalizer of the statement at %s has no exact expectation under q (%s: %s)", f.Pos, a.Term, a.Rule)
				return
			}
		}
		tn = r
	}
	Visit(tn, func(x Expr) {
		if t, ok := x.(*Tensor); ok {
			if v, ok := LSPLatent(t.Name); ok && !slices.Contains(bd.TemperedNormTables, v) {
				bd.TemperedNormTables = append(bd.TemperedNormTables, v)
			}
		}
	})
	if bd.LocalTemperedNorm != nil {
		tn = Add(bd.LocalTemperedNorm, tn)
	}
	bd.LocalTemperedNorm = tn
	bd.TemperedNormInputs = addInputs(bd.TemperedNormInputs, read)
}
