package derive

import (
	"fmt"
	"slices"

	"github.com/vigen-go/vigen/spec/ir"
)

// Bound is the evidence lower bound L(q) = E_q[log p(x, z)] + H[q], with
// the expectations the engine takes (exact where a rule applies, Eq. 19's
// Taylor expansion otherwise, which makes it Eq. 21 for the Gaussian
// factors). It is split by where generated code computes it: Local is one
// unit's part (the statements inside the unit plate and the entropies of
// the unit's latents, with the unit index free); Global is the rest. The
// entropies of Gaussian factors, ½log|Σ| + (p/2)(1 + log 2π), are left to
// the runtime, which has the log-determinant.
type Bound struct {
	Unit                      *Index
	Local, Global             Expr
	LocalInputs, GlobalInputs []*QFactor
	// LocalLogJoint is the statements' part of Local alone, E_q[log
	// p(x_d, z_d | β)] of unit d without the entropies and without the
	// statements tempering leaves alone (Untempered): what tempering
	// divides by the temperature (Mandt et al. 2016, Eq. 4) and what the
	// temperature's own update weighs (Eq. 9). Its inputs are among
	// LocalInputs.
	LocalLogJoint Expr
	Expectations  []Approx
	// LocalTemperedNorm is Σ over the statements inside the unit plate of
	// E_q[log ∫ p(x | args)^s dx], s the inverse temperature (the tensor
	// InvTTensor), or Jensen's upper bound of it (see temper.go): the unit's
	// log normalizer that local variational tempering needs (Mandt et al.
	// 2016, Eq. 10). It reads the factors TemperedNormInputs and the
	// tables LSPTensor(v) of the latents v of TemperedNormTables. It is
	// nil, and NoTemperedNorm says why, when some statement has none.
	LocalTemperedNorm  Expr
	TemperedNormInputs []*QFactor
	TemperedNormTables []string
	NoTemperedNorm     string
}

// unit returns the plate of the model's local latents (nil if all latents
// are global), or an error if conjugate latents are local to different
// plates. Nonconjugate per-unit Gaussians may be local to other plates
// too (two-plate models: PPCA's z[n] and W[d]); the unit plate is then
// that of the conjugate local latents, or else of the first per-unit one,
// and the others are updated unit by unit in their own loops.
func (d *Derivation) unit() (*Index, error) {
	var u *Index
	var first *ir.Var
	note := func(v *ir.Var, x *Index) error {
		if x == nil {
			return nil
		}
		if u != nil && u.Name != x.Name {
			hint := "make one of them global (one vector drawn outside any loop), or fit the two parts in separate models"
			if u.Size == x.Size {
				hint = fmt.Sprintf("rename the loop index %s to %s: latents local to the units of %s are drawn in loops with one index name", x.Name, u.Name, u.Size)
			}
			return ir.Errorf(v.Pos, "%s is local to the units of `for %s in 1:%s` but %s (%s) to those of `for %s in 1:%s`, and latents local to different loops are not supported yet", v.Name, x.Name, x.Size, first.Name, first.Pos, u.Name, u.Size).Hintf("%s", hint)
		}
		u, first = x, v
		return nil
	}
	for _, up := range d.Updates {
		if err := note(up.Latent, up.Unit); err != nil {
			return nil, err
		}
	}
	if u == nil {
		for _, o := range d.Objectives {
			if o.Unit != nil {
				u, first = o.Unit, o.Latent
				break
			}
		}
	}
	for _, o := range d.Objectives {
		if o.Unit == nil || o.Unit.Name == u.Name && o.Unit.Size == u.Size {
			continue
		}
		if u.Size == o.Unit.Size {
			if err := note(o.Latent, o.Unit); err != nil {
				return nil, err
			}
		}
		if len(o.Groups) > 0 {
			return nil, ir.Errorf(o.Latent.Pos, "%s is local to the units of `for %s in 1:%s`, read through %s, while the model's unit loop is `for %s in 1:%s` (%s's): grouped reads of a latent local to another loop are not supported yet", o.Latent.Name, o.Unit.Name, o.Unit.Size, o.Groups[0].By.Name, u.Name, u.Size, first.Name).Hintf("read %s inside `for %s in 1:%s`, or fit the two parts in separate models", o.Latent.Name, o.Unit.Name, o.Unit.Size)
		}
	}
	return u, nil
}

// localLatents tells, for each latent of d by name, whether it is local to
// the units of the unit plate (its objective or update has a Unit).
func (d *Derivation) localLatents() map[string]bool {
	local := map[string]bool{}
	for _, o := range d.Objectives {
		local[o.Latent.Name] = o.Unit != nil
	}
	for _, u := range d.Updates {
		local[u.Latent.Name] = u.Unit != nil
	}
	return local
}

// expectAt takes the expectation of e under the q factors over (e itself
// when over is empty), appending how to *log; it fails, positioned at pos
// and naming context (e.g. "for the ELBO"), when no rule covers e.
func (b *Builder) expectAt(e Expr, over []*QFactor, log *[]Approx, pos ir.Pos, context string) (Expr, error) {
	if len(over) == 0 {
		return e, nil
	}
	r, l := b.Expect(e, over)
	*log = append(*log, l...)
	if r == nil {
		return nil, expectFailure(pos, l, context)
	}
	return r, nil
}

func (b *Builder) bound(d *Derivation, qs map[string]*QFactor) (*Bound, error) {
	unit, err := d.unit()
	if err != nil {
		return nil, err
	}
	bd := &Bound{Unit: unit}
	local := d.localLatents()
	unitOf := map[string]bool{} // the latents local to the unit plate
	for _, o := range d.Objectives {
		unitOf[o.Latent.Name] = o.Unit != nil && o.Unit.Name == unit.Name
	}
	for _, u := range d.Updates {
		unitOf[u.Latent.Name] = u.Unit != nil
	}
	var loc, glob, lj []Expr
	var inUnitFactors []unitFactor // the tempered ones
	for _, f := range append(slices.Clone(b.Model.Factors), flatPriors(b.Model)...) {
		inUnit := unit != nil && len(f.Plates) > 0 && f.Plates[0].Bag == nil && f.Plates[0].Index == unit.Name
		var grp *Grouping
		if unit != nil && !inUnit {
			// a statement reading a per-unit latent as θ[g[n]] is summed
			// unit by unit over the unit's points (group.go)
			for _, o := range d.Objectives {
				if o.Unit == nil || o.Unit.Name != unit.Name || !mentionsVar(f, o.Latent.Name) {
					continue
				}
				g, err := b.grouping(f, o.Latent.Name, *unit)
				if err != nil {
					return nil, err
				}
				if grp != nil && g != nil && g.By != grp.By {
					return nil, ir.Errorf(f.Pos, "internal error in vigen: the ELBO reads per-unit latents through both %s and %s (please report it with the model)", grp.By.Name, g.By.Name)
				}
				if g != nil {
					grp = g
				}
				inUnit = true
			}
		}
		if inUnit {
			b.unit, b.group = unit, grp
		}
		lp, err := b.FactorLogDensity(f)
		b.unit, b.group = nil, nil
		if err != nil {
			return nil, err
		}
		var read []*QFactor
		reads := TensorsRead(lp)
		for _, v := range b.Model.VarsWithRole(ir.RoleLatent) {
			if !reads[v.Name] {
				continue
			}
			q := qs[v.Name]
			if q == nil {
				return nil, noFactorError(f.Pos, "this statement", v)
			}
			if q.IsGaussianVector() && local[v.Name] {
				if !inUnit || !unitOf[v.Name] {
					// a latent local to another loop (or read outside its
					// unit's part): its factors as a whole
					rq := b.rowsQ(v, lp, qs)
					if rq == nil {
						return nil, ir.Errorf(f.Pos, "internal error in vigen: the ELBO reads the per-unit latent %s outside its units (please report it with the model)", v.Name)
					}
					read = append(read, rq)
					continue
				}
				lp = unitView(lp, v.Name, *unit)
			}
			read = append(read, q)
		}
		if lp, err = b.expectAt(lp, read, &bd.Expectations, f.Pos, "for the ELBO"); err != nil {
			return nil, err
		}
		if inUnit {
			if !Untempered(f, local) {
				inUnitFactors = append(inUnitFactors, unitFactor{f, grp})
				lj = append(lj, lp)
			}
			loc = append(loc, lp)
			bd.LocalInputs = addInputs(bd.LocalInputs, read)
		} else {
			glob = append(glob, lp)
			bd.GlobalInputs = addInputs(bd.GlobalInputs, read)
		}
	}
	bd.LocalLogJoint = Add(lj...)
	for _, q := range d.Q {
		if q.IsGaussianVector() {
			continue
		}
		var u *Index
		if local[q.Var] {
			u = unit
		}
		h, err := b.entropy(q, u)
		if err != nil {
			return nil, err
		}
		if u != nil {
			loc = append(loc, h)
			bd.LocalInputs = addInputs(bd.LocalInputs, []*QFactor{q})
		} else {
			glob = append(glob, h)
			bd.GlobalInputs = addInputs(bd.GlobalInputs, []*QFactor{q})
		}
	}
	bd.Local, bd.Global = Add(loc...), Add(glob...)
	// last, so that the indices it draws leave the ELBO's names alone; only
	// for models tempering applies to, whose latents are all conjugate
	if len(d.Objectives) > 0 {
		bd.NoTemperedNorm = "it has nonconjugate latents"
		inUnitFactors = nil
	}
	for _, uf := range inUnitFactors {
		b.unit, b.group = unit, uf.grp
		b.temperedNorm(uf.f, bd, qs)
		b.unit, b.group = nil, nil
	}
	if bd.NoTemperedNorm != "" {
		bd.LocalTemperedNorm, bd.TemperedNormInputs, bd.TemperedNormTables = nil, nil, nil
	}
	return bd, nil
}

// unitFactor is a statement summed unit by unit, with its grouping.
type unitFactor struct {
	f   *ir.Factor
	grp *Grouping
}

func addInputs(list, qs []*QFactor) []*QFactor {
	for _, q := range qs {
		if !containsQ(list, q) {
			list = append(list, q)
		}
	}
	return list
}

// entropy is H[q], summed over q's elements (all of them, or one unit's
// when unit is set); elements standing for a bag entry count as many
// times as the term occurs.
func (b *Builder) entropy(q *QFactor, unit *Index) (Expr, error) {
	d := Dists[q.Family]
	if d == nil || d.Entropy == nil {
		return nil, ir.Errorf(b.Model.Lookup(q.Var).Pos, "internal error in vigen: the entropy of q(%s) (%s) has no closed form in the table (please report it with the model)", q.Var, q.Family)
	}
	at, err := b.qIndices(q, unit)
	if err != nil {
		return nil, err
	}
	vectorFam := q.IsCategorical() || q.IsSimplex()
	outer := at
	if vectorFam {
		outer = at[:len(at)-1]
	}
	var sel []Expr
	var summed []Index
	var weights []Expr
	for _, i := range outer {
		sel = append(sel, IxE(i))
		if unit != nil && i.Name == unit.Name {
			continue
		}
		summed = append(summed, i)
		if bag, _, ok := i.Ragged(); ok {
			weights = append(weights, T(bag+".count", IxE(i)))
		}
	}
	args := make([]Val, len(q.Params))
	for k, p := range q.Params {
		p := p
		if vectorFam {
			args[k] = Val{Dims: []string{at[len(at)-1].Size}, At: func(s []Expr) Expr { return p.At(append(append([]Expr(nil), sel...), s...)) }}
		} else {
			args[k] = scalar(p.At(sel))
		}
	}
	h := d.Entropy(b, args)
	if h == nil {
		return nil, ir.Errorf(b.Model.Lookup(q.Var).Pos, "internal error in vigen: the entropy of q(%s) (%s) has no closed form in the table (please report it with the model)", q.Var, q.Family)
	}
	return Sum(summed, Mul(append(weights, h)...)), nil
}

// mentionsVar reports whether statement f reads the variable called name.
func mentionsVar(f *ir.Factor, name string) bool {
	if !f.IsTerm() && ir.Mentions(f.Target, name) {
		return true
	}
	for _, a := range f.Args {
		if ir.Mentions(a, name) {
			return true
		}
	}
	return false
}
