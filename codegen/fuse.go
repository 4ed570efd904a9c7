package codegen

import (
	"strings"

	"github.com/vigen-go/vigen/derive"
)

// fuseMin is the number of statements from which a kernel's schedule goes
// through fuseReductions. The scheduler schedules every term of an output
// on its own: a term Σ_n g(n)·h(a) whose plate n no output index ties
// becomes a reduction over n of its own, with its own temporaries. That
// is the right schedule for a few terms, and the one every example kernel
// has; the derivatives of coupled latents (an f holding the Taylor terms
// of other latents) have hundreds of such terms, each repeating the pass
// over the data and everything computed in it.
const fuseMin = 500

// holdsAtoms reports whether an output keeps per-point sums as factors
// (derive.HasPerPointAtoms): derive does so for large expressions only, and
// their kernels hold one reduction over the data per term.
func holdsAtoms(outs []Output) bool {
	for _, o := range outs {
		if derive.HasPerPointAtoms(o.Expr) {
			return true
		}
	}
	return false
}

// countStmts is the number of statements in ss, nested ones included.
func countStmts(ss []Stmt) int {
	n := 0
	for _, st := range ss {
		n++
		for _, b := range bodies(st) {
			n += countStmts(b)
		}
	}
	return n
}

// bodies returns the statement lists nested in st.
func bodies(st Stmt) [][]Stmt {
	switch st := st.(type) {
	case *Loop:
		return [][]Stmt{st.Body}
	case *Reduce:
		return [][]Stmt{st.Loop.Body}
	case *VecLet:
		if st.Loop != nil {
			return [][]Stmt{st.Loop.Body}
		}
		return [][]Stmt{st.Stmts}
	}
	return nil
}

// fuseReductions fuses the reductions of a block over the same loop into
// one pass (a reduction moves up to an earlier one when it reads nothing
// defined since), then removes the temporaries the fused passes compute
// twice (a let whose expression an enclosing or earlier let of the same
// scope already holds), until nothing changes.
func fuseReductions(ss []Stmt) []Stmt {
	if !hasFusable(ss) {
		return ss
	}
	for {
		before := countStmts(ss)
		ss = fuseBlock(ss)
		ss = cseBlock(ss, &cseScope{lets: map[string]string{}}, map[string]string{})
		if countStmts(ss) == before {
			return ss
		}
	}
}

// hasFusable reports whether some block of ss holds two sums over loops
// of the same size.
func hasFusable(ss []Stmt) bool {
	seen := map[derive.Index]bool{}
	for _, st := range ss {
		if r, ok := st.(*Reduce); ok && !r.Max && r.Loop.From == "" {
			i := derive.Index{Size: r.Loop.Idx.Size, Plate: r.Loop.Idx.Plate}
			if seen[i] {
				return true
			}
			seen[i] = true
		}
		for _, b := range bodies(st) {
			if hasFusable(b) {
				return true
			}
		}
	}
	return false
}

// fuseBlock fuses the reductions of one block, then of the blocks nested
// in it. A reduction r joins an earlier one r1 over the same loop either
// where r1 stands, if r reads nothing defined since, or at r's place, if
// nothing since r1 reads what r1 defines.
func fuseBlock(ss []Stmt) []Stmt {
	var out []Stmt
	reads := map[Stmt]map[string]bool{}
	defPos := map[string]int{}     // temporary → position of its definition in out
	lastReader := map[string]int{} // temporary → last position in out reading it
	note := func(st Stmt, at int) {
		for _, n := range definedBy(st) {
			defPos[n] = at
		}
		for t := range reads[st] {
			if p, ok := lastReader[t]; !ok || at > p {
				lastReader[t] = at
			}
		}
	}
	fusable := func(st Stmt) *Reduce {
		r, ok := st.(*Reduce)
		if !ok || r.Max || r.Loop.From != "" {
			return nil
		}
		return r
	}
	for _, st := range ss {
		r := fusable(st)
		if r == nil {
			reads[st] = readTemps(st)
			note(st, len(out))
			out = append(out, st)
			continue
		}
		r = &Reduce{Name: r.Name, Loop: &Loop{Idx: r.Loop.Idx, Body: r.Loop.Body}, Body: r.Body, Fused: r.Fused}
		reads[r] = readTemps(r)
		last := -1 // the last statement r depends on
		for t := range reads[r] {
			if p, ok := defPos[t]; ok && p > last {
				last = p
			}
		}
		merged := false
		for k, o := range out {
			r1 := fusable(o)
			if r1 == nil || r1.Loop.Idx.Size != r.Loop.Idx.Size || r1.Loop.Idx.Plate != r.Loop.Idx.Plate {
				continue
			}
			if r1.Loop.Idx.Name != r.Loop.Idx.Name && usesIndex(r, r1.Loop.Idx.Name) {
				continue
			}
			moves := false
			if k <= last {
				// r1 may move down to r if nothing after it reads it
				for _, n := range definedBy(r1) {
					if p, ok := lastReader[n]; ok && p > k {
						moves = true
						break
					}
				}
				if moves {
					continue
				}
				moves = true
			}
			if r1.Loop.Idx.Name != r.Loop.Idx.Name {
				r = renameIndex(r, r.Loop.Idx, r1.Loop.Idx)
			}
			r1.Loop.Body = append(r1.Loop.Body, r.Loop.Body...)
			r1.Fused = append(append(r1.Fused, &Let{Name: r.Name, Expr: r.Body}), r.Fused...)
			for t := range reads[r] {
				reads[r1][t] = true
			}
			if !moves {
				note(r1, k)
			} else {
				out = append(append(out[:k:k], out[k+1:]...), r1)
				defPos, lastReader = map[string]int{}, map[string]int{}
				for p, o := range out {
					note(o, p)
				}
			}
			merged = true
			break
		}
		if !merged {
			note(r, len(out))
			out = append(out, r)
		}
	}
	for _, st := range out {
		switch st := st.(type) {
		case *Loop:
			st.Body = fuseBlock(st.Body)
		case *Reduce:
			st.Loop.Body = fuseBlock(st.Loop.Body)
		case *VecLet:
			if st.Loop != nil {
				st.Loop.Body = fuseBlock(st.Loop.Body)
			} else {
				st.Stmts = fuseBlock(st.Stmts)
			}
		}
	}
	return out
}

// usesIndex reports whether the index called name occurs in st (free in an
// expression or as a loop index).
func usesIndex(st Stmt, name string) bool {
	found := false
	walkStmt(st, func(l *Loop) { found = found || l.Idx.Name == name }, func(e derive.Expr) {
		derive.Visit(e, func(x derive.Expr) {
			for _, f := range x.Free() {
				found = found || f.Name == name
			}
		})
	})
	return found
}

// walkStmt calls loop on every loop in st and expr on every expression.
func walkStmt(st Stmt, loop func(*Loop), expr func(derive.Expr)) {
	switch st := st.(type) {
	case *Let:
		expr(st.Expr)
	case *Reduce:
		loop(st.Loop)
		expr(st.Body)
		for _, f := range st.Fused {
			expr(f.Expr)
		}
	case *VecLet:
		if st.Loop != nil {
			loop(st.Loop)
			expr(st.Body)
		}
	case *Loop:
		loop(st)
	case *Accum:
		expr(st.Expr)
		for _, x := range st.At {
			expr(x)
		}
	case *Syr:
		expr(st.Alpha)
		expr(st.X)
	}
	for _, b := range bodies(st) {
		for _, s := range b {
			walkStmt(s, loop, expr)
		}
	}
}

// renameIndex returns the reduction r over from as one over to, which
// occurs nowhere in r.
func renameIndex(r *Reduce, from, to derive.Index) *Reduce {
	sub := derive.Substituter(from, to)
	var stmts func(ss []Stmt) []Stmt
	stmts = func(ss []Stmt) []Stmt {
		out := make([]Stmt, len(ss))
		for k, st := range ss {
			out[k] = rebuildStmt(st, sub, stmts)
		}
		return out
	}
	out := stmts([]Stmt{r})[0].(*Reduce)
	out.Loop.Idx = to
	return out
}

// definedBy returns the temporaries st defines in its block.
func definedBy(st Stmt) []string {
	switch st := st.(type) {
	case *Let:
		return []string{st.Name}
	case *VecLet:
		return []string{st.Name}
	case *Reduce:
		names := []string{st.Name}
		for _, f := range st.Fused {
			names = append(names, f.Name)
		}
		return names
	}
	return nil
}

// readTemps returns the temporaries st reads anywhere inside it.
func readTemps(st Stmt) map[string]bool {
	out := map[string]bool{}
	add := func(e derive.Expr) {
		derive.Visit(e, func(x derive.Expr) {
			if t, ok := x.(*derive.Tensor); ok && strings.HasPrefix(t.Name, TempPrefix) {
				out[t.Name] = true
			}
		})
	}
	walkStmt(st, func(*Loop) {}, add)
	return out
}

// cseScope maps the keys of the lets visible in a block to their names.
type cseScope struct {
	parent *cseScope
	lets   map[string]string
}

func (c *cseScope) lookup(key string) (string, bool) {
	for p := c; p != nil; p = p.parent {
		if n, ok := p.lets[key]; ok {
			return n, true
		}
	}
	return "", false
}

func (c *cseScope) child() *cseScope { return &cseScope{parent: c, lets: map[string]string{}} }

// cseBlock renames the temporaries in ss by ren, and drops every let (and
// fused sum) whose value a visible one already holds, adding the renaming
// to ren.
func cseBlock(ss []Stmt, scope *cseScope, ren map[string]string) []Stmt {
	rn := func(e derive.Expr) derive.Expr { return derive.RenameTensors(e, ren) }
	var out []Stmt
	for _, st := range ss {
		switch st := st.(type) {
		case *Let:
			e := rn(st.Expr)
			if name, ok := scope.lookup(e.Key()); ok {
				ren[st.Name] = name
				continue
			}
			scope.lets[e.Key()] = st.Name
			out = append(out, &Let{Name: st.Name, Expr: e})
		case *Reduce:
			body := cseBlock(st.Loop.Body, scope.child(), ren)
			r := &Reduce{Name: st.Name, Loop: &Loop{Idx: st.Loop.Idx, From: st.Loop.From, Body: body}, Body: rn(st.Body), Max: st.Max}
			seen := map[string]string{r.Body.Key(): r.Name}
			for _, f := range st.Fused {
				e := rn(f.Expr)
				if name, ok := seen[e.Key()]; ok {
					ren[f.Name] = name
					continue
				}
				seen[e.Key()] = f.Name
				r.Fused = append(r.Fused, &Let{Name: f.Name, Expr: e})
			}
			out = append(out, r)
		default:
			out = append(out, rebuildStmt(st, rn, func(ss []Stmt) []Stmt { return cseBlock(ss, scope.child(), ren) }))
		}
	}
	return out
}

// rebuildStmt returns st with its expressions rewritten by expr and its
// blocks by block (each block before the expressions beside it).
func rebuildStmt(st Stmt, expr func(derive.Expr) derive.Expr, block func([]Stmt) []Stmt) Stmt {
	switch st := st.(type) {
	case *Let:
		return &Let{Name: st.Name, Expr: expr(st.Expr)}
	case *Reduce:
		r := &Reduce{Name: st.Name, Loop: &Loop{Idx: st.Loop.Idx, From: st.Loop.From, Body: block(st.Loop.Body)}, Body: expr(st.Body), Max: st.Max}
		for _, f := range st.Fused {
			r.Fused = append(r.Fused, &Let{Name: f.Name, Expr: expr(f.Expr)})
		}
		return r
	case *VecLet:
		v := *st
		if st.Loop != nil {
			v.Loop = &Loop{Idx: st.Loop.Idx, From: st.Loop.From, Body: block(st.Loop.Body)}
			v.Body = expr(st.Body)
		} else {
			v.Stmts = block(st.Stmts)
		}
		return &v
	case *Loop:
		return &Loop{Idx: st.Idx, From: st.From, Body: block(st.Body)}
	case *Accum:
		a := *st
		a.Expr = expr(st.Expr)
		a.At = make([]derive.Expr, len(st.At))
		for k, x := range st.At {
			a.At[k] = expr(x)
		}
		return &a
	case *Syr:
		r := *st
		r.Alpha, r.X = expr(st.Alpha), expr(st.X)
		return &r
	}
	return st
}
