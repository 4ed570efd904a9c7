package spec

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/alecthomas/participle/v2/lexer"
	"github.com/vigen-go/vigen/spec/ir"
)

// unifier matches actual types against the shape patterns of a signature
// (see ir/tables.go): each pattern letter is bound to a size name the first
// time it is seen, and must name the same size every later time.
type unifier struct {
	c     *checker
	what  string            // the distribution or function, for messages
	bind  map[string]string // letter -> size name
	by    map[string]binder // letter -> what bound it, e.g. "mean mu0 is real[P]"
	ok    bool
	bcast bool // scalars may broadcast to Plain vector-shaped parameters
}

func newUnifier(c *checker, what string, broadcast bool) *unifier {
	return &unifier{c: c, what: what, bind: map[string]string{}, by: map[string]binder{}, ok: true, bcast: broadcast}
}

// desc describes an argument or target in messages, e.g. "mean mu0" or
// "the target theta"; it is formatted only when an error is reported.
type desc struct {
	prefix string
	x      ir.Expr
}

func (d desc) String() string { return d.prefix + " " + exprString(d.x) }

// binder records what bound a pattern letter.
type binder struct {
	d desc
	t ir.Type
}

func (b binder) String() string { return b.d.String() + " is " + b.t.String() }

// letters splits a shape pattern: "" -> [], "K" -> [K], "KxK" -> [K K].
func letters(shape string) []string {
	if shape == "" {
		return nil
	}
	return strings.Split(shape, "x")
}

// shapePhrase describes a parameter's shape and class in words.
func shapePhrase(p ir.ParamSig) string {
	switch l := letters(p.Shape); {
	case p.Class == ir.Cov && len(l) == 2:
		return "a covariance matrix (cov)"
	case p.Class == ir.Simplex && len(l) == 1:
		return "a simplex vector"
	case len(l) == 0:
		return "a scalar"
	case len(l) == 1:
		return "a vector"
	case len(l) == 2:
		return "a matrix"
	default:
		return fmt.Sprintf("an array of rank %d", len(l))
	}
}

// arg unifies one argument (or the target) of type t, described by desc
// (e.g. "mean mu0"), with parameter p. It reports at most one error.
func (u *unifier) arg(p ir.ParamSig, desc desc, t ir.Type, pos ir.Pos) bool {
	c := u.c
	fail := func(hint, format string, args ...any) bool {
		c.errorAt(pos, hint, "%s: "+format, append([]any{u.what}, args...)...)
		u.ok = false
		return false
	}
	shapeHint := "pass an argument of that shape (the table in spec/README.md gives each parameter's shape)"
	if desc.prefix == "the target" {
		shapeHint = "change the declaration of " + exprString(desc.x) + " to the shape " + u.what + " draws, or pick a distribution for its shape (see spec/README.md)"
	}
	if p.Int && t.Kind != ir.Int {
		return fail("declare it `int`, with a range where the distribution needs one", "%s must be integer-valued, but it is %s", desc, t)
	}
	if p.Class != ir.Plain && t.Class != p.Class {
		hint := shapeHint
		if p.Class == ir.Simplex {
			hint = "softmax(x) maps a real vector onto the simplex"
		} else if p.Class == ir.Cov && t.Rank() >= 2 {
			hint = "a covariance or precision argument must be a variable declared cov[P], e.g. `const Sigma0 : cov[P] = 0.01 * eye(P)`"
			switch desc.x.(type) {
			case *ir.Binary, *ir.Unary:
				hint = "arithmetic on a matrix gives a plain matrix, not known to be positive definite, so " + hint + ", or give the matrix you mean in the data"
			}
		}
		return fail(hint, "%s must be %s, but it is %s", desc, shapePhrase(p), t)
	}
	pat := letters(p.Shape)
	if t.Rank() == 0 && len(pat) > 0 && u.bcast && p.Class == ir.Plain && !p.Int {
		return true // a scalar broadcast to every element
	}
	if t.Rank() != len(pat) {
		return fail(shapeHint, "%s must be %s, but it is %s", desc, shapePhrase(p), t)
	}
	for i, l := range pat {
		d := t.Dims[i]
		if b, bound := u.bind[l]; bound {
			if !c.unifyDim(b, d) {
				return fail("the sizes must agree: check the declarations, or index the arguments to match", "size mismatch: %s is %s but %s (%s ≠ %s)", desc, t, u.by[l], d, b)
			}
			continue
		}
		u.bind[l] = d
		u.by[l] = binder{desc, t}
	}
	return true
}

// parseRange parses a support pattern "LO..HI" whose ends are int literals
// or pattern letters.
func parseRange(s string) (lo, hi string, ok bool) {
	lo, hi, ok = strings.Cut(s, "..")
	return lo, hi, ok && lo != "" && hi != ""
}

// rangeEnd matches one end of a support pattern against a bound. A
// literal bound that a pattern letter takes, the 3 of `y : int[N] in 1..3`
// for Categorical's 1..K, is a size like any other: the fixed size of the
// literal dimension 3 (as of real[3]), declared at p if no real[3] has.
func (u *unifier) rangeEnd(pat string, b ir.Bound, p lexer.Position) bool {
	if n, err := strconv.Atoi(pat); err == nil {
		return b.Size == "" && b.Value == n
	}
	size := b.Size
	if size == "" {
		if b.Value < 1 || b.Value > maxSizeLiteral {
			return false // no size has this many values
		}
		size = u.c.fixedSize(b.Value, p)
	}
	if s, bound := u.bind[pat]; bound {
		return u.c.unifyDim(s, size)
	}
	u.bind[pat] = size
	return true
}

// instantiate replaces bound letters in a support pattern.
func (u *unifier) instantiate(pat string) string {
	if s, ok := u.bind[pat]; ok {
		return s
	}
	return pat
}

// call checks a call of a built-in function.
func (c *checker) call(e *CallExpr, sc *scope) (ir.Expr, bool) {
	name := e.Func.Name
	if name == ir.FuncAppend || name == "append_row" {
		return c.appendCall(e, sc)
	}
	fn, known := ir.Funcs[name]
	if !known {
		if _, isDist := ir.Families[name]; isDist {
			c.errorf(e.Pos, "distributions appear only on the right of `~`", "%s is a distribution, not a function", name)
		} else {
			c.errorf(e.Pos, listHint("functions", name, sortedKeys(ir.Funcs)), "unknown function %s", name)
		}
		for _, a := range e.Args {
			c.expr(a, sc) // report errors inside the arguments too
		}
		return nil, false
	}
	if len(e.Args) != len(fn.Params) {
		c.errorf(e.Pos, "call it as "+callForm(name, fn.Params), "%s takes %s, got %d", name, paramList(fn.Params), len(e.Args))
		return nil, false
	}
	u := newUnifier(c, name, false)
	call := &ir.Call{Func: name, Pos: c.pos(e.Pos)}
	ok := true
	for i, p := range fn.Params {
		a := e.Args[i]
		if p.Size {
			x, sok := c.sizeArg(name, p, a, sc)
			if !sok {
				ok = false
				continue
			}
			l := p.Shape
			if l == "" {
				l = firstUnbound(fn.Result.Shape, u.bind)
			}
			u.bind[l] = x.Var.Name
			call.Args = append(call.Args, x)
			continue
		}
		x, xok := c.operand(a, sc)
		if !xok {
			ok = false
			continue
		}
		call.Args = append(call.Args, x)
		if fn.Elementwise {
			continue
		}
		if !u.arg(p, desc{p.Name, x}, x.Typ(), x.Position()) {
			ok = false
		}
	}
	if !ok {
		return nil, false
	}
	if fn.Elementwise {
		t, eok := c.elementwiseType(name, fn.Params, call.Args)
		call.T = t
		return call, eok
	}
	call.T = ir.Type{Kind: ir.Real, Class: fn.Result.Class}
	if fn.Result.Int {
		call.T.Kind = ir.Int
	}
	for _, l := range letters(fn.Result.Shape) {
		d, bound := u.bind[l]
		if !bound {
			c.errorf(e.Pos, "pass the size explicitly, as in eye(P), or use it where the size is known", "%s: cannot tell the size %s of the result", name, l)
			return nil, false
		}
		call.T.Dims = append(call.T.Dims, d)
	}
	return call, true
}

// sizeArg checks an argument that must name a size, as in eye(P).
func (c *checker) sizeArg(fn string, p ir.ParamSig, a Expr, sc *scope) (*ir.Ref, bool) {
	id, isID := a.(*Ident)
	if isID && sc.lookup(id.Name) == nil {
		if s := c.syms[id.Name]; s != nil && s.v.Role == ir.RoleSize {
			s.read = true
			return &ir.Ref{Var: s.v, T: ir.Type{Kind: ir.Int}, Pos: c.pos(id.Pos)}, true
		}
	}
	if n, isInt := intLiteral(a); isInt && n >= 1 && n <= maxSizeLiteral {
		// eye(2): the literal dimension 2, as of cov[2]
		s := c.syms[c.fixedSize(n, a.Position())]
		return &ir.Ref{Var: s.v, T: ir.Type{Kind: ir.Int}, Pos: c.pos(a.Position())}, true
	}
	c.errorf(a.Position(), "declare the size with `size P` and pass its name, or write its length, eye(2)", "%s: argument %s must be a size name or a whole number of at least 1, as in %s(P)", fn, p.Name, fn)
	return nil, false
}

// firstUnbound returns the first letter of pattern not yet bound.
func firstUnbound(pattern string, bind map[string]string) string {
	for _, l := range letters(pattern) {
		if _, ok := bind[l]; !ok {
			return l
		}
	}
	return ""
}

// elementwiseType types an elementwise function applied to scalars or
// equally-shaped arrays (mixed with scalars).
func (c *checker) elementwiseType(name string, params []ir.ParamSig, args []ir.Expr) (ir.Type, bool) {
	t := ir.Type{Kind: ir.Real}
	var shapeFrom ir.Expr
	for i, a := range args {
		at := a.Typ()
		if params[i].Int && at.Kind != ir.Int {
			c.errorAt(a.Position(), "", "%s: %s must be integer-valued, but it is %s", name, params[i].Name, at)
			return t, false
		}
		if at.Rank() == 0 {
			continue
		}
		if shapeFrom == nil {
			shapeFrom, t.Dims = a, at.Dims
			continue
		}
		if !c.sameDimsU(at.Dims, t.Dims) {
			c.errorAt(a.Position(), "", "%s: shape mismatch: %s is %s but %s is %s", name, exprString(a), at, exprString(shapeFrom), shapeFrom.Typ())
			return t, false
		}
	}
	return t, true
}

// paramList formats "2 arguments (mean, sd)".
func paramList(ps []ir.ParamSig) string {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name
	}
	n := "argument"
	if len(ps) != 1 {
		n += "s"
	}
	return fmt.Sprintf("%d %s (%s)", len(ps), n, strings.Join(names, ", "))
}

// callForm writes a call with its parameter names, e.g. "Normal(mean, sd)".
func callForm(name string, ps []ir.ParamSig) string {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name
	}
	return name + "(" + strings.Join(names, ", ") + ")"
}
