package derive

import (
	"fmt"

	"github.com/vigen-go/vigen/spec/ir"
)

// This file splits the closed-form update of each conjugate global latent
// for stochastic variational inference (Hoffman et al. 2013; Chen's notes,
// §SVI). Eq. 18's natural parameter of a global is a sum over its Markov
// blanket; the statements inside the unit plate contribute one term per
// unit, their expected sufficient statistics. SVI forms
//
//	λ̂ = Prior + (D/|B|) Σ_{d∈B} Unit_d
//
// from a minibatch B, so it needs the two parts apart, with the unit index
// free in Unit.

// SVIPart is a conjugate global's E_q[η] (one entry per sufficient
// statistic of its family, as Update.Natural) split into the statements
// outside the unit plate (Prior, which holds the prior) and one unit's
// statements (Unit, with the unit index free): E_q[η] = Prior + Σ_d Unit.
type SVIPart struct {
	Prior, Unit             []Expr
	PriorInputs, UnitInputs []*QFactor
	// UnitTempered and UnitUntempered split Unit into the statements a
	// temperature divides and those tempering leaves alone (Untempered,
	// the priors of continuous local latents); both nil when there are
	// none of the latter. A tempered unit part is UnitTempered/T +
	// UnitUntempered.
	UnitTempered, UnitUntempered []Expr
	// Expectations is how the expectations were taken.
	Expectations []Approx
}

// sviParts sets the SVI split (Update.SVI) of every global conjugate
// update, or says why it has none (Update.NoSVIReason).
func (b *Builder) sviParts(d *Derivation, qs map[string]*QFactor) {
	if d.bound == nil || d.bound.Unit == nil {
		return
	}
	unit := *d.bound.Unit
	local := d.localLatents()
	for _, u := range d.Updates {
		if u.Unit != nil {
			continue
		}
		u.SVI, u.NoSVIReason = b.sviPart(u, unit, local, qs)
	}
}

// InPlate reports whether statement f is inside the unit plate: its
// outermost loop is `for d in 1:D` with the unit's index.
func InPlate(f *ir.Factor, unit Index) bool {
	return len(f.Plates) > 0 && f.Plates[0].Bag == nil && f.Plates[0].Index == unit.Name && f.Plates[0].Size == unit.Size
}

func (b *Builder) sviPart(u *Update, unit Index, local map[string]bool, qs map[string]*QFactor) (*SVIPart, string) {
	v, q := u.Latent, u.Q
	if u.Normalize {
		return nil, fmt.Sprintf("the global %s (%s) is Categorical, and SVI steps only the natural parameters of continuous conjugate families", v.Name, v.Pos)
	}
	var stats []string
	for _, s := range Dists[q.Family].ExpFam.Stats {
		stats = append(stats, s.Name)
	}
	prior := make([][]Expr, len(stats))
	perUnit := make([][]Expr, len(stats))
	untempered := make([][]Expr, len(stats))
	tempered := make([][]Expr, len(stats))
	anyUntempered := false
	for _, f := range u.Factors {
		in := InPlate(f, unit)
		if !in {
			for _, lv := range b.Model.VarsWithRole(ir.RoleLatent) {
				if local[lv.Name] && mentionsVar(f, lv.Name) {
					return nil, fmt.Sprintf("the statement at %s in the Markov blanket of the global %s reads the local latent %s outside the loop over units, so its part cannot be split by unit", f.Pos, v.Name, lv.Name)
				}
			}
		}
		if in {
			b.unit = &unit
		}
		lp, err := b.FactorLogDensity(f)
		b.unit = nil
		if err != nil {
			return nil, err.Error()
		}
		parts, err := b.naturalParts(lp, q, stats, u.At, f)
		if err != nil {
			return nil, err.Error()
		}
		for k := range parts {
			if in {
				perUnit[k] = append(perUnit[k], parts[k])
				if Untempered(f, local) {
					untempered[k] = append(untempered[k], parts[k])
					anyUntempered = true
				} else {
					tempered[k] = append(tempered[k], parts[k])
				}
			} else {
				prior[k] = append(prior[k], parts[k])
			}
		}
	}
	s := &SVIPart{}
	record := true
	expect := func(es []Expr, in bool) ([]Expr, []*QFactor, error) {
		tmp := &Update{}
		var un *Index
		if in {
			un = &unit
		}
		out := make([]Expr, len(es))
		for k := range es {
			x, err := b.expectOthers(es[k], v.Name, un, qs, b.Model.Prior(v.Name), tmp)
			if err != nil {
				return nil, nil, err
			}
			out[k] = x
		}
		if record {
			s.Expectations = append(s.Expectations, tmp.Expectations...)
		}
		return out, tmp.Inputs, nil
	}
	sum := func(parts [][]Expr) []Expr {
		out := make([]Expr, len(parts))
		for k := range parts {
			out[k] = Add(parts[k]...)
		}
		return out
	}
	var err error
	if s.Prior, s.PriorInputs, err = expect(sum(prior), false); err != nil {
		return nil, err.Error()
	}
	if s.Unit, s.UnitInputs, err = expect(sum(perUnit), true); err != nil {
		return nil, err.Error()
	}
	if anyUntempered {
		record = false // the same expectations as Unit's, split
		var ins []*QFactor
		if s.UnitUntempered, ins, err = expect(sum(untempered), true); err != nil {
			return nil, err.Error()
		}
		s.UnitInputs = addInputs(s.UnitInputs, ins)
		if s.UnitTempered, ins, err = expect(sum(tempered), true); err != nil {
			return nil, err.Error()
		}
		s.UnitInputs = addInputs(s.UnitInputs, ins)
	}
	return s, ""
}
