package spec

import (
	"fmt"
	"strings"

	"github.com/alecthomas/participle/v2/lexer"

	"github.com/vigen-go/vigen/spec/ir"
)

// This file checks the two statements that are not draws: `let`
// definitions and `factor` terms.
//
// A let is expanded where it is used: the IR never names it, and derive
// sees the substituted expression (whose nodes keep the positions of the
// definition, so errors in it point there). `let NAME = VALUE` is visible
// after it, to the end of the enclosing loop body (to the end of the file
// at top level); `let NAME[i, ...] = VALUE` inside loops over i, ... defines
// an array over their sizes, visible after it everywhere, and a use
// NAME[e, ...] is VALUE with i, ... replaced by e, ....

// letDef is one `let`.
type letDef struct {
	name   string
	pos    lexer.Position
	scope  *scope   // the loop body of an unindexed let inside loops; nil if visible everywhere after it
	params []string // the loop indices of an indexed let
	dims   []string // their sizes
	value  ir.Expr
	used   bool
	// uses are the expansions of an indexed let, by the indices it was
	// read at (useKey), shared by the uses at the same indices.
	uses map[string]ir.Expr
}

// letStmt checks `let NAME[...] = VALUE` and records the definition.
func (c *checker) letStmt(s *LetStmt, sc *scope) {
	name := s.Name.Name
	c.checkName(s.Name)
	bad := false
	switch d, l := c.syms[name], sc.lookup(name); {
	case d != nil:
		c.errorf(s.Name.Pos, "rename the definition", "let %s redefines %s declared at %s", name, describe(d.v), c.where(d.v.Pos))
		bad = true
	case l != nil:
		c.errorf(s.Name.Pos, "rename the definition", "let %s redefines the index of the loop at %s", name, c.where(c.pos(l.pos)))
		bad = true
	default:
		if prev := c.findLet(name, sc); prev != nil {
			prev.used = true // reported here, not again as unused
			c.errorf(s.Name.Pos, "a name is defined once; rename one of them", "%s is already defined at %s", name, c.where(c.pos(prev.pos)))
			bad = true
		}
	}
	d := &letDef{name: name, pos: s.Name.Pos, scope: sc}
	if s.Indices != nil {
		d.scope = nil
		seen := map[string]bool{}
		for _, e := range s.Indices {
			id, ok := e.(*Ident)
			var l *scope
			if ok {
				l = sc.lookup(id.Name)
			}
			switch {
			case l == nil:
				c.markRead(e)
				c.errorf(e.Position(), "an indexed definition `let "+name+"[n] = ...` goes inside `for n in 1:N` and is indexed by that loop's index",
					"the indices of let %s must be indices of enclosing loops, but %s is not", name, printExpr(e, 0))
				bad = true
			case l.size == "":
				c.errorf(e.Position(), "define it per token without an index (`let "+name+" = ...`), or over a loop `for i in 1:N`",
					"let %s is indexed by %s, which runs over the tokens of a bag; define arrays over loops `for i in 1:N` only", name, id.Name)
				bad = true
			case seen[id.Name]:
				c.errorf(e.Position(), "index it once by each loop: `let "+name+"[i, j] = ...` inside `for i ... { for j ... { ... } }`", "let %s is indexed twice by %s", name, id.Name)
				bad = true
			default:
				if l.bad {
					bad = true
				}
				seen[id.Name] = true
				d.params = append(d.params, id.Name)
				d.dims = append(d.dims, l.size)
			}
		}
	}
	x, ok := c.operand(s.Value, sc)
	if !ok || bad {
		if c.syms[name] == nil {
			d.used = true
			c.lets = append(c.lets, d) // value nil: uses stay silent
		}
		return
	}
	if d.params != nil {
		// An element of an array reads no loop index but its own: others
		// would make one element take several values.
		var stray *ir.Index
		ir.Walk(x, func(e ir.Expr) {
			if ix, ok := e.(*ir.Index); ok && stray == nil && !contains(d.params, ix.Name) {
				stray = ix
			}
		})
		var offset *ir.Offset
		ir.Walk(x, func(e ir.Expr) {
			if o, ok := e.(*ir.Offset); ok && offset == nil && contains(d.params, o.Index.Name) {
				offset = o
			}
		})
		if offset != nil {
			c.errorAt(offset.Pos, "define it without an index, `let "+name+" = ...`: inside the loop that is one value per iteration, and it may read offsets",
				"let %s[%s] reads %s, an offset of its own index", name, strings.Join(d.params, ", "), offset)
		} else if stray != nil {
			l := sc.lookup(stray.Name)
			c.errorAt(stray.Pos, "index it by that loop's index too: `let "+name+"["+strings.Join(append(append([]string(nil), d.params...), stray.Name), ", ")+"] = ...`",
				"let %s[%s] reads %s, the index of the loop at %s, which is not among its indices", name, strings.Join(d.params, ", "), stray.Name, c.where(c.pos(l.pos)))
		}
		if offset != nil || stray != nil {
			d.used = true
			c.lets = append(c.lets, d) // value nil: uses stay silent
			return
		}
	}
	d.value = x
	c.lets = append(c.lets, d)
	c.model.Lets = append(c.model.Lets, &ir.Let{Name: name, Index: d.params, Value: x, Pos: c.pos(s.Name.Pos)})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// findLet returns the definition called name visible in sc, or nil.
func (c *checker) findLet(name string, sc *scope) *letDef {
	for k := len(c.lets) - 1; k >= 0; k-- {
		d := c.lets[k]
		if d.name != name {
			continue
		}
		for s := sc; ; s = s.parent {
			if s == d.scope {
				return d
			}
			if s == nil {
				break
			}
		}
	}
	return nil
}

// letUse expands a use of d, indexed by idx.
func (c *checker) letUse(d *letDef, id *Ident, idx []Expr, sc *scope) (ir.Expr, bool) {
	d.used = true
	if d.value == nil {
		return nil, false // the definition is in error
	}
	where := c.where(c.pos(d.pos))
	if len(d.params) == 0 {
		if len(idx) > 0 {
			c.errorf(idx[0].Position(), "index inside the definition, or define it one element at a time: `let "+d.name+"[i] = ...` inside `for i in 1:N`",
				"%s (defined at %s) is not an indexed definition, so it cannot be indexed", d.name, where)
			return nil, false
		}
		// An unindexed let is one expression wherever it is read: every use
		// shares it, so that a chain of lets each reading the previous one
		// twice stays as large as its source, not 2^links (a copy per use).
		return d.value, true
	}
	if len(idx) != len(d.params) {
		c.errorf(id.Pos, fmt.Sprintf("write %s[%s]", d.name, strings.Join(d.params, ", ")),
			"%s is defined element by element at %s, as %s[%s]: index it by %d index(es), not %d", d.name, where, d.name, strings.Join(d.params, ", "), len(d.params), len(idx))
		return nil, false
	}
	// Check the indices as those of a variable of the array's shape.
	v := &ir.Var{Name: d.name, Type: ir.Type{Kind: ir.Real, Dims: d.dims}}
	r := &ir.Ref{Var: v, Pos: c.pos(id.Pos)}
	ok := true
	sub := map[string]ir.Expr{}
	for i, e := range idx {
		x, xok := c.indexExpr(e, sc)
		if o, isOff := x.(*ir.Offset); isOff {
			c.errorAt(o.Pos, "read the offsets in the definition instead: an unindexed `let "+d.name+" = ...` inside the loop is one value per iteration and may read offsets such as x["+o.String()+"]",
				"%s (defined at %s) cannot be read at an offset (%s[%s])", d.name, where, d.name, o)
			ok = false
			continue
		}
		if !xok {
			ok = false
			continue
		}
		r.Index = append(r.Index, x)
		if ok && !c.checkIndex(r, x, i, d.dims, sc) {
			ok = false
		}
		sub[d.params[i]] = x
	}
	if !ok {
		return nil, false
	}
	key := useKey(d.params, sub)
	if shared, ok := d.uses[key]; ok && key != "" {
		return shared, true
	}
	out := substitute(d.value, sub)
	if key != "" {
		if d.uses == nil {
			d.uses = map[string]ir.Expr{}
		}
		d.uses[key] = out
	}
	return out, true
}

// useKey identifies the indices an indexed let is read at when each is a
// loop index (its name), or is "" (no sharing) for other index
// expressions.
func useKey(params []string, sub map[string]ir.Expr) string {
	var b strings.Builder
	for _, p := range params {
		ix, ok := sub[p].(*ir.Index)
		if !ok {
			return ""
		}
		b.WriteString(ix.Name)
		b.WriteByte(',')
	}
	return b.String()
}

// substitute returns a copy of e with the loop indices named in sub
// replaced by copies of their expressions. A subexpression e holds more
// than once (a let read twice) is copied once, so the copy has e's shape.
func substitute(e ir.Expr, sub map[string]ir.Expr) ir.Expr {
	memo := map[ir.Expr]ir.Expr{}
	var rec func(ir.Expr, map[string]ir.Expr) ir.Expr
	rec = func(e ir.Expr, sub map[string]ir.Expr) ir.Expr {
		if sub == nil {
			return substituteOnce(e, nil, rec)
		}
		if c, ok := memo[e]; ok {
			return c
		}
		c := substituteOnce(e, sub, rec)
		memo[e] = c
		return c
	}
	return rec(e, sub)
}

// substituteOnce is substitute's step at e, calling rec on its operands.
func substituteOnce(e ir.Expr, sub map[string]ir.Expr, rec func(ir.Expr, map[string]ir.Expr) ir.Expr) ir.Expr {
	substitute := rec
	switch e := e.(type) {
	case *ir.Num:
		n := *e
		return &n
	case *ir.Index:
		if x, ok := sub[e.Name]; ok {
			return substitute(x, nil)
		}
		n := *e
		return &n
	case *ir.Ref:
		n := *e
		n.Index = make([]ir.Expr, len(e.Index))
		for k, x := range e.Index {
			n.Index[k] = substitute(x, sub)
		}
		if len(e.Index) == 0 {
			n.Index = nil
		}
		return &n
	case *ir.Offset:
		// An indexed let reads no offset of its own indices (letStmt), so
		// only the offsets of enclosing loops' indices arrive here, and
		// they are not substituted.
		n := *e
		ix := *e.Index
		n.Index = &ix
		return &n
	case *ir.Call:
		n := *e
		n.Args = make([]ir.Expr, len(e.Args))
		for k, x := range e.Args {
			n.Args[k] = substitute(x, sub)
		}
		return &n
	case *ir.Binary:
		n := *e
		n.X, n.Y = substitute(e.X, sub), substitute(e.Y, sub)
		return &n
	case *ir.Unary:
		n := *e
		n.X = substitute(e.X, sub)
		return &n
	}
	panic(fmt.Sprintf("spec: substitute: unexpected %T", e))
}

// checkLets reports definitions never used.
func (c *checker) checkLets() {
	for _, d := range c.lets {
		if !d.used && !c.letMentioned[d.name] {
			c.errorf(d.pos, "remove it, or use it in a statement", "%s is defined but never used", d.name)
		}
	}
}

// factorStmt checks `factor EXPR` and records it as a factor without a
// target whose log density is EXPR.
func (c *checker) factorStmt(s *FactorStmt, sc *scope, plates []ir.Plate) {
	x, ok := c.operand(s.Expr, sc)
	if !ok {
		return
	}
	if t := x.Typ(); t.Rank() > 0 {
		c.errorAt(x.Position(), "add up its elements, as in `factor sum(...)`, or write the term per element inside a loop",
			"factor adds one number to the log density, but %s is %s", exprString(x), t)
		return
	}
	ir.Walk(x, func(e ir.Expr) {
		if r, ok := e.(*ir.Ref); ok && r.Var.Role == ir.RoleLatent {
			c.termRead[r.Var.Name] = true
		}
	})
	c.model.Factors = append(c.model.Factors, &ir.Factor{Plates: append([]ir.Plate(nil), plates...), Args: []ir.Expr{x}, Pos: c.pos(s.Pos)})
}

// collectLets records where every let is, for the hint of a use before
// its definition or outside its loop.
func (c *checker) collectLets(ss []Stmt) {
	for _, s := range ss {
		switch s := s.(type) {
		case *LetStmt:
			if s.Name != nil {
				if _, seen := c.letAt[s.Name.Name]; !seen {
					c.letAt[s.Name.Name] = s.Name.Pos
				}
			}
		case *ForStmt:
			c.collectLets(s.Body)
		}
	}
}
