package spec

import (
	"strconv"

	"github.com/alecthomas/participle/v2/lexer"
	"github.com/vigen-go/vigen/spec/ir"
)

// stmts checks a statement list inside the loops sc, whose plates (outermost
// first) are plates.
func (c *checker) stmts(ss []Stmt, sc *scope, plates []ir.Plate) {
	for _, s := range ss {
		switch s := s.(type) {
		case *ForStmt:
			c.forStmt(s, sc, plates)
		case *TildeStmt:
			c.tilde(s, sc, plates)
		case *LetStmt:
			c.letStmt(s, sc)
		case *FactorStmt:
			c.factorStmt(s, sc, plates)
		}
	}
}

func (c *checker) forStmt(s *ForStmt, sc *scope, plates []ir.Plate) {
	if s.Index == nil {
		return
	}
	name := s.Index.Name
	c.checkName(s.Index)
	inner := &scope{parent: sc, name: name, pos: s.Index.Pos}
	if _, seen := c.loops[name]; !seen {
		c.loops[name] = s.Index.Pos
	}
	if d := c.syms[name]; d != nil {
		c.errorf(s.Index.Pos, "rename the loop index", "loop index %s shadows %s declared at %s", name, describe(d.v), c.where(d.v.Pos))
	} else if l := sc.lookup(name); l != nil {
		c.errorf(s.Index.Pos, "rename the loop index", "loop index %s shadows the index of the enclosing loop at %s", name, c.where(c.pos(l.pos)))
	}
	plate := ir.Plate{Index: name, Pos: c.pos(s.Pos)}
	if s.To != nil {
		inner.size, inner.lo, inner.hi, inner.bad = c.plateRange(s)
		plate.Size, plate.Lo, plate.Hi = inner.size, inner.lo, inner.hi
	} else {
		inner.bag = c.bagDoc(s, sc)
		inner.bad = inner.bag == nil
		plate.Bag = inner.bag
	}
	c.stmts(s.Body, inner, append(plates[:len(plates):len(plates)], plate))
}

// plateRange checks `A:N`, `A:N-B` or `A:N+B` (A ≥ 1 and B int literals, N
// a size) and returns N, A−1 and ±B.
func (c *checker) plateRange(s *ForStmt) (size string, lo, hi int, bad bool) {
	c.markRead(s.From)
	form := "write `for " + s.Index.Name + " in 1:N` with N a size, or a part of it such as `2:N` or `1:N-1`"
	if n, ok := intLiteral(s.From); !ok || n < 1 {
		c.errorf(s.From.Position(), form, "a loop starts at an int literal of at least 1")
		bad = true
	} else {
		lo = n - 1
	}
	to := s.To
	if b, ok := to.(*BinaryExpr); ok && (b.Op == '+' || b.Op == '-') {
		n, isInt := intLiteral(b.Y)
		if !isInt {
			c.markRead(b)
			c.errorf(b.Y.Position(), form, "the upper end of a loop is a size, or a size plus or minus an int literal")
			return "", 0, 0, true
		}
		hi = n
		if b.Op == '-' {
			hi = -n
		}
		to = b.X
	}
	if n, isInt := intLiteral(to); isInt && to == s.To && n >= 1 && n <= maxSizeLiteral {
		// `for k in 1:2` runs over the fixed size of the literal 2, the
		// dimension of a real[2]
		return c.fixedSize(n, to.Position()), lo, hi, bad
	}
	id, ok := to.(*Ident)
	if !ok {
		c.markRead(to)
		c.errorf(to.Position(), form, "the upper end of a loop must be a size name")
		return "", 0, 0, true
	}
	d := c.syms[id.Name]
	switch {
	case d == nil:
		c.errorf(id.Pos, suggest(id.Name, c.namesWithRole(ir.RoleSize)), "unknown size %s", id.Name)
		return "", 0, 0, true
	case d.v.Role != ir.RoleSize:
		d.read = true
		c.errorf(id.Pos, "loops run over sizes: `for "+s.Index.Name+" in 1:N`", "%s is %s, not a size", id.Name, roleNouns[d.v.Role])
		return "", 0, 0, true
	}
	return id.Name, lo, hi, bad
}

// intLiteral returns the value of a number written as an integer.
func intLiteral(e Expr) (int, bool) {
	n, ok := e.(*Number)
	if !ok {
		return 0, false
	}
	v, err := strconv.Atoi(n.Text)
	return v, err == nil
}

// bagDoc checks the `w[d]` of `for n in w[d]` and returns it.
func (c *checker) bagDoc(s *ForStmt, sc *scope) *ir.Ref {
	x, ok := c.expr(s.From, sc)
	if !ok {
		return nil
	}
	r, isRef := x.(*ir.Ref)
	if !isRef || r.Var.Type.Class != ir.Bag {
		c.errorAt(x.Position(), "loops read `for n in 1:N` (N a size) or `for n in w[d]` (w a bag)", "cannot loop over %s: it is neither a range 1:N nor a bag document", exprString(x))
		return nil
	}
	if r.T.Class != ir.Bag || r.T.Rank() != 0 {
		c.errorAt(x.Position(), "loop over one document at a time, as in `for d in 1:D { for n in w[d] { ... } }`",
			"cannot loop over the tokens of %s: it is %s, not a single document", exprString(x), r.T)
		return nil
	}
	return r
}

// tilde checks `target ~ Dist(args)` and records the factor.
func (c *checker) tilde(s *TildeStmt, sc *scope, plates []ir.Plate) {
	target, sym := c.target(s.Target, sc)
	fam, famOK := ir.Families[s.Dist.Name]
	if !famOK {
		if _, isFunc := ir.Funcs[s.Dist.Name]; isFunc {
			c.errorf(s.Dist.Pos, "functions are used inside arguments, as in `Bernoulli(logistic(x))`", "%s is a function, not a distribution", s.Dist.Name)
		} else {
			c.errorf(s.Dist.Pos, listHint("distributions", s.Dist.Name, sortedKeys(ir.Families)), "unknown distribution %s", s.Dist.Name)
		}
	}
	f := &ir.Factor{Plates: append([]ir.Plate(nil), plates...), Target: target, Dist: s.Dist.Name, Pos: c.pos(s.Pos)}
	argsOK := true
	for k, a := range s.Args {
		var x ir.Expr
		ok := false
		if famOK && paramAt(fam, k).Dist {
			x, ok = c.distArg(fam, k, a, sc)
		} else {
			x, ok = c.operand(a, sc)
		}
		if !ok {
			argsOK = false
			continue
		}
		f.Args = append(f.Args, x)
	}
	if sym != nil {
		sym.priors = append(sym.priors, f)
		ir.Walk(&ir.Call{Args: f.Args}, func(e ir.Expr) {
			if r, ok := e.(*ir.Ref); ok && r.Var.Role != ir.RoleSize && !earlier(r, target) {
				sym.deps = append(sym.deps, r.Var)
			}
		})
	}
	if target == nil || !famOK {
		return
	}
	c.coverage(f, sc)
	if !argsOK {
		return
	}
	if fam.Variadic {
		if len(s.Args) < len(fam.Params)+1 {
			c.errorf(s.Dist.Pos, "write "+variadicForm(fam), "%s takes %s, got %d", fam.Name, variadicList(fam), len(s.Args))
			return
		}
		if c.mixture(fam, f) {
			c.model.Factors = append(c.model.Factors, f)
		}
		return
	}
	if len(s.Args) != len(fam.Params) {
		c.errorf(s.Dist.Pos, "write "+callForm(fam.Name, fam.Params), "%s takes %s, got %d", fam.Name, paramList(fam.Params), len(s.Args))
		return
	}
	if c.family(fam, f) {
		c.model.Factors = append(c.model.Factors, f)
	}
}

// target checks the left of `~`: a data, param or latent variable,
// possibly indexed. sym is the variable's symbol whenever the name
// resolved to one, even if the reference did not check.
func (c *checker) target(e Expr, sc *scope) (r *ir.Ref, sym *symbol) {
	var id *Ident
	var idx []Expr
	switch e := e.(type) {
	case *Ident:
		id = e
	case *IndexExpr:
		id, _ = e.X.(*Ident)
		idx = e.Indices
	}
	if id == nil {
		c.markRead(e)
		hint := "write e.g. `y[n] ~ Normal(mu, 1)` and put the expression inside the arguments"
		if _, isCall := e.(*CallExpr); isCall {
			hint = "the density of a transformed value needs the transform's Jacobian: write the distribution of the variable itself (`y[n] ~ LogNormal(m, s)` for `log(y[n]) ~ Normal(m, s)`), or give the transformed values as data"
		}
		c.errorf(e.Position(), hint, "the target of ~ must be a variable, possibly indexed")
		return nil, nil
	}
	if sc.lookup(id.Name) != nil {
		c.errorf(id.Pos, "the target is a variable indexed by loop indices, as in `y[n] ~ ...`", "loop index %s cannot be the target of ~", id.Name)
		return nil, nil
	}
	s := c.syms[id.Name]
	if s == nil {
		c.lookup(id, sc) // reports it
		return nil, nil
	}
	switch s.v.Role {
	case ir.RoleData, ir.RoleParam, ir.RoleLatent:
	default:
		c.errorf(id.Pos, "only data, param and latent variables have distributions; declare it `param` to estimate it with a prior",
			"%s cannot be the target of ~", describe(s.v))
		return nil, nil
	}
	r, _ = c.ref(s, id, idx, sc)
	for _, x := range idxExprs(r) {
		ir.Walk(x, func(e ir.Expr) {
			if ref, ok := e.(*ir.Ref); ok && ref.Var.Role != ir.RoleSize {
				s.deps = append(s.deps, ref.Var)
			}
		})
	}
	return r, s
}

// earlier reports whether r reads data or latent target's own variable at
// earlier elements only, as y[t-1] in `y[t] ~ Normal(b * y[t-1], s)` or
// x[t-1] in `x[t] ~ Normal(x[t-1], q)`: not a cycle,
// since each element depends on those before it.
func earlier(r, target *ir.Ref) bool {
	if target == nil || r.Var != target.Var || r.Var.Role != ir.RoleData && r.Var.Role != ir.RoleLatent {
		return false
	}
	for k, x := range r.Index {
		if n, ok := x.(*ir.Num); ok && k < len(target.Index) {
			// w[2] ~ Normal(w[1], s): literal indices, an earlier element
			if m, ok := target.Index[k].(*ir.Num); ok && n.Value < m.Value {
				return true
			}
		}
		o, ok := x.(*ir.Offset)
		if !ok || o.Off >= 0 || k >= len(target.Index) {
			continue
		}
		if ix, ok := target.Index[k].(*ir.Index); ok && ix.Name == o.Index.Name {
			return true
		}
	}
	return false
}

func idxExprs(r *ir.Ref) []ir.Expr {
	if r == nil {
		return nil
	}
	return r.Index
}

// markRead marks the variables named in e as read, without checking e;
// used where e is in error, to avoid a cascade of "never used" errors.
func (c *checker) markRead(e Expr) {
	switch e := e.(type) {
	case *Ident:
		if s := c.syms[e.Name]; s != nil {
			s.read = true
		}
	case *IndexExpr:
		c.markRead(e.X)
		for _, x := range e.Indices {
			c.markRead(x)
		}
	case *CallExpr:
		for _, x := range e.Args {
			c.markRead(x)
		}
	case *BinaryExpr:
		c.markRead(e.X)
		c.markRead(e.Y)
	case *UnaryExpr:
		c.markRead(e.X)
	case *VectorExpr:
		for _, x := range e.Elems {
			c.markRead(x)
		}
	}
}

// coverage checks that a factor inside loops indexes its target by every
// loop index, so that each element is drawn once.
func (c *checker) coverage(f *ir.Factor, sc *scope) {
	for _, p := range f.Plates {
		if l := sc.lookup(p.Index); l == nil || l.bad {
			return
		}
	}
	for _, p := range f.Plates {
		if p.Ranged() && f.Target.Var.Role == ir.RoleLatent {
			continue // with its other statements, it must draw every element (checkPriors)
		}
		if p.Ranged() && f.Target.Var.Role != ir.RoleData {
			c.errorAt(f.Target.Pos, "a "+f.Target.Var.Role.String()+" is drawn over whole dimensions; loops over part of a size (such as chains over time, x[t] ~ Normal(x[t-1], s)) may draw data and latents only",
				"%s %s is drawn only for %s in %s (loop at %s), so its other elements would have no distribution", f.Target.Var.Role, f.Target.Var.Name, p.Index, p.Range(), c.where(p.Pos))
			return
		}
	}
	for _, x := range f.Target.Index {
		if o, ok := x.(*ir.Offset); ok {
			c.errorAt(o.Pos, "index the target by the loop index itself, as in `y[t] ~ ...`, and shift the reads in the arguments instead (y[t-1])", "the target of ~ cannot be indexed at an offset (%s)", o)
			return
		}
	}
	for _, p := range f.Plates {
		found := false
		for _, x := range f.Target.Index {
			if ix, ok := x.(*ir.Index); ok && ix.Name == p.Index {
				found = true
			}
		}
		if found {
			continue
		}
		over := p.Range()
		if p.Bag != nil {
			over = "the tokens of " + exprString(p.Bag)
		}
		c.errorAt(f.Target.Pos, "index the target by "+p.Index+", or move the statement out of the loop",
			"%s would be drawn once for each %s in %s (loop at %s): its target must be indexed by %s", exprString(f.Target), p.Index, over, c.where(p.Pos), p.Index)
		return
	}
}

// family checks a factor against its distribution's signature: the target
// against Value, the arguments against Params, letters unified throughout.
func (c *checker) family(fam *ir.Family, f *ir.Factor) bool {
	t, v := f.Target.T, f.Target.Var
	val := fam.Value
	tdesc := desc{"the target", f.Target}
	u := newUnifier(c, fam.Name, true)
	pos := f.Target.Pos
	rangeFail := false
	switch {
	case val.Int && t.Kind != ir.Int && val.Range != "":
		rangeFail = true // reported below, with the range
	case val.Int && t.Kind != ir.Int:
		c.errorAt(pos, "declare it int", "%s: %s must be integer-valued, but %s is %s", fam.Name, tdesc, v.Name, v.Type)
		u.ok = false
	case !val.Int && t.Kind == ir.Int:
		c.errorAt(pos, "declare it real", "%s: %s must be real-valued, but %s is %s", fam.Name, tdesc, v.Name, v.Type)
		u.ok = false
	}
	if val.Class != t.Class {
		want := "a plain (non-cov, non-simplex) value"
		if val.Class != ir.Plain {
			want = shapePhrase(val)
		}
		hint := "declare " + v.Name + " as " + shapePhrase(val) + ", or pick a distribution for " + t.String() + " values (see spec/README.md)"
		if val.Class == ir.Plain {
			hint = "a " + t.Class.String() + " variable needs a distribution over " + t.Class.String() + " values"
			if ex, ok := map[ir.Class]string{ir.Cov: "Wishart", ir.Simplex: "Dirichlet"}[t.Class]; ok {
				hint += ", such as " + ex
			}
		}
		c.errorAt(pos, hint, "%s: %s must be %s, but it is %s", fam.Name, tdesc, want, t)
		return false
	}
	elementwise := fam.Elementwise && val.Shape == ""
	if want := len(letters(val.Shape)); !elementwise && t.Rank() > want {
		hint := "index the target so that each draw is " + shapePhrase(val)
		if len(f.Target.Index) == 0 {
			unit := "row"
			if want == 0 {
				unit = "element"
			}
			hint = "draw it one " + unit + " at a time, inside a loop: `for i in 1:" + t.Dims[0] + " { " + v.Name + "[i] ~ " + fam.Name + "(...) }`"
		}
		c.errorAt(pos, hint, "%s: %s must be %s, but it is %s", fam.Name, tdesc, shapePhrase(val), t)
		return false
	}
	if !elementwise {
		u.bcast = false
		valShape := val
		valShape.Int = false
		u.arg(valShape, tdesc, t, pos)
		u.bcast = true
	}
	for i, p := range fam.Params {
		a := f.Args[i]
		at := a.Typ()
		adesc := desc{p.Name, a}
		if elementwise && p.Shape == "" {
			switch {
			case p.Int && at.Kind != ir.Int:
				c.errorAt(a.Position(), "", "%s: %s must be integer-valued, but it is %s", fam.Name, adesc, at)
				u.ok = false
			case at.Rank() > 0 && !c.sameDimsU(at.Dims, t.Dims):
				c.errorAt(a.Position(), "arguments of an elementwise distribution are scalars or shaped like its target",
					"%s: %s is %s but %s is %s", fam.Name, adesc, at, tdesc, t)
				u.ok = false
			}
			continue
		}
		u.arg(p, adesc, at, a.Position())
	}
	if val.Range != "" && u.ok {
		lo, hi, _ := parseRange(val.Range)
		if rangeFail || t.Range == nil || !u.rangeEnd(lo, t.Range[0], c.rangePos(v)) || !u.rangeEnd(hi, t.Range[1], c.rangePos(v)) {
			want := u.instantiate(lo) + ".." + u.instantiate(hi)
			hint := ""
			if p := c.pend[c.resolve(u.instantiate(hi))]; p != nil {
				// the probabilities are a vector built in the model whose
				// length cannot be the target's size
				p.reported = true
				want = u.instantiate(lo) + ".." + p.length()
				hint = p.what + " has " + p.length() + " elements: give the outcomes a size of their own, as in `size J` and `" + v.Name + " : int[...] in 1..J`; vigen checks at data load that J is " + p.length()
			} else if v.Type.Class == ir.Plain {
				hint = "declare it `" + ir.Type{Kind: ir.Int, Dims: v.Type.Dims, Range: &[2]ir.Bound{toBound(u.instantiate(lo)), toBound(u.instantiate(hi))}}.String() + "`"
			}
			c.errorAt(pos, hint, "%s: %s must be an int in %s, but %s is %s", fam.Name, tdesc, want, v.Name, v.Type)
			u.ok = false
		}
	}
	return u.ok
}

// rangePos is where v's declaration writes its range `in LO..HI`.
func (c *checker) rangePos(v *ir.Var) lexer.Position {
	if s := c.syms[v.Name]; s != nil && s.decl != nil && s.decl.Type != nil && s.decl.Type.Range != nil {
		return s.decl.Type.Range.Pos
	}
	return lexer.Position{Filename: v.Pos.File, Line: v.Pos.Line, Column: v.Pos.Col}
}

func toBound(s string) ir.Bound {
	if n, err := strconv.Atoi(s); err == nil {
		return ir.Bound{Value: n}
	}
	return ir.Bound{Size: s}
}
