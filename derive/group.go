package derive

import (
	"github.com/vigen-go/vigen/spec/ir"
)

// A grouped statement reads a per-unit latent through a data index,
//
//	for n in 1:N { y[n] ~ Bernoulli(logistic(dot(x[n], theta[group[n]]))) }
//
// with group : int[N] in 1..M and theta : real[M, P] local to the plate over
// m. Unit m's f(θ_m) then holds the terms of the points with group[n] = m.
// Generated code lists those points once, unit by unit (the tensor
// GroupRows(group), 1-based point numbers, with offsets GroupRows(group) +
// ".off"), and loops over unit m's list: inside the unit's view the plate
// index n runs over the list's positions, data read at n is read at the
// listed point, and group[n] is the unit itself.

// Grouping is how a statement's outer plate reaches a unit.
type Grouping struct {
	Plate string  // the statement's outer plate index (n)
	By    *ir.Var // the int data giving each point's unit (group)
}

// GroupRows is the name of the tensor listing grouping g's points unit by
// unit; GroupRows(g)+".off" holds each unit's first position.
func GroupRows(g string) string { return g + ".rows" }

// grouping returns how statement f reads the per-unit latent v (local to
// the plate unit): nil if f sits inside the unit's plate, a Grouping if
// its outer plate reaches the unit through int data, or an error saying
// why neither holds.
func (b *Builder) grouping(f *ir.Factor, v string, unit Index) (*Grouping, error) {
	if len(f.Plates) > 0 && f.Plates[0].Bag == nil && f.Plates[0].Index == unit.Name {
		return nil, nil
	}
	if innerUnitPlate(f, unit) {
		return nil, nil
	}
	outside := func(pos ir.Pos) error {
		for k, p := range f.Plates {
			switch {
			case p.Bag == nil && p.Index == unit.Name && k > 0 && p.Ranged():
				return ir.Errorf(pos, "this statement reads %s inside `for %s in %s`, an inner loop over part of its units", v, unit.Name, p.Range()).Hintf("an inner loop over %s's units must run over all of them, `for %s in 1:%s`; a loop over part of them must be the outermost one", v, unit.Name, unit.Size)
			case p.Bag == nil && p.Index == unit.Name && k > 0:
				return ir.Errorf(pos, "this statement reads %s inside `for %s in 1:%s`, but that loop is not its outermost one", v, unit.Name, unit.Size).Hintf("the loop over %s's units must come first: nest the other loops inside `for %s in 1:%s`", v, unit.Name, unit.Size)
			case p.Bag == nil && p.Size == unit.Size && p.Index != unit.Name:
				return ir.Errorf(pos, "this statement reads %s inside `for %s in 1:%s`, but the units of %s are drawn in `for %s in 1:%s`: the two loops must use the same index name", v, p.Index, p.Size, v, unit.Name, unit.Size).Hintf("rename the loop index %s to %s", p.Index, unit.Name)
			}
		}
		return ir.Errorf(pos, "this statement reads %s outside the loop over its units, `for %s in 1:%s`", v, unit.Name, unit.Size).Hintf("a per-unit latent is read either inside `for %s in 1:%s` or as %s[g[n]] with g : int[N] in 1..%s data and n the index of the statement's outermost loop", unit.Name, unit.Size, v, unit.Size)
	}
	if len(f.Plates) == 0 || f.Plates[0].Bag != nil {
		return nil, outside(f.Pos)
	}
	n := f.Plates[0]
	var g *Grouping
	var err error
	visit := func(e ir.Expr) {
		ir.Walk(e, func(x ir.Expr) {
			r, ok := x.(*ir.Ref)
			if !ok || r.Var.Name != v || err != nil {
				return
			}
			by := groupIndex(r, n, unit)
			if by == nil {
				err = outside(r.Pos)
				return
			}
			if g != nil && g.By != by {
				err = ir.Errorf(r.Pos, "this statement reads %s through both %s and %s", v, g.By.Name, by.Name).Hintf("one grouping per statement is supported; split the statement in two, or index both through one grouping")
				return
			}
			g = &Grouping{Plate: n.Index, By: by}
		})
	}
	if !f.IsTerm() {
		visit(f.Target)
	}
	for _, a := range f.Args {
		visit(a)
	}
	if err != nil {
		return nil, err
	}
	if g == nil {
		return nil, outside(f.Pos)
	}
	return g, nil
}

// innerUnitPlate reports whether the unit's plate is one of f's loops, not
// the outermost, over the whole of its size, with no bag loop in f: the
// unit's terms are then the statement's terms at that index, whatever the
// order of its loops (`for n { for d { x[n, d] ~ … W[d] … } }` for W
// local to d), since the other loops' ranges do not depend on it.
func innerUnitPlate(f *ir.Factor, unit Index) bool {
	found := false
	for _, p := range f.Plates {
		if p.Bag != nil {
			return false
		}
		if p.Index == unit.Name {
			if p.Size != unit.Size || p.Ranged() {
				return false
			}
			found = true
		}
	}
	return found
}

// groupIndex returns g when r reads v[g[n], ...] with g : int[N] in
// 1..unit.Size data and n the plate p, or nil.
func groupIndex(r *ir.Ref, p ir.Plate, unit Index) *ir.Var {
	if len(r.Index) == 0 {
		return nil
	}
	gr, ok := r.Index[0].(*ir.Ref)
	if !ok || gr.Var.Role != ir.RoleData || gr.Var.Type.Kind != ir.Int || len(gr.Var.Type.Dims) != 1 || len(gr.Index) != 1 {
		return nil
	}
	if gr.Var.Type.Dims[0] != p.Size {
		return nil
	}
	rg := gr.Var.Type.Range
	if rg == nil || rg[0].Size != "" || rg[0].Value != 1 || rg[1].Size != unit.Size {
		return nil
	}
	if ix, ok := gr.Index[0].(*ir.Index); !ok || ix.Name != p.Index {
		return nil
	}
	return gr.Var
}

// groupedIndex is the subscript Lower uses inside a grouped statement for
// the plate index x (the listed point) or the read g[x] (the unit), and
// whether x is one of those.
func (b *Builder) groupedIndex(x ir.Expr) (Expr, bool) {
	g := b.group
	if g == nil || b.unit == nil {
		return nil, false
	}
	switch x := x.(type) {
	case *ir.Index:
		if x.Name == g.Plate {
			return TInt(GroupRows(g.By.Name), IxE(b.indexFor(x))), true
		}
	case *ir.Ref:
		if x.Var == g.By && len(x.Index) == 1 {
			if ix, ok := x.Index[0].(*ir.Index); ok && ix.Name == g.Plate {
				return IxE(*b.unit), true
			}
		}
	}
	return nil, false
}
