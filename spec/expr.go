package spec

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/alecthomas/participle/v2/lexer"

	"github.com/vigen-go/vigen/spec/ir"
)

// scope is one enclosing loop, innermost first.
type scope struct {
	parent *scope
	name   string
	size   string  // `for n in 1:N`: "N"; "" for a bag-token loop
	lo, hi int     // `for t in 3:T-1`: 2 and −1 (ir.Plate)
	bag    *ir.Ref // `for n in w[d]`: the document w[d]
	pos    lexer.Position
	bad    bool // the loop header did not check; uses stay silent
}

func (s *scope) lookup(name string) *scope {
	for ; s != nil; s = s.parent {
		if s.name == name {
			return s
		}
	}
	return nil
}

// names lists the loop indices in scope.
func (s *scope) names() []string {
	var out []string
	for ; s != nil; s = s.parent {
		out = append(out, s.name)
	}
	return out
}

// expr checks an expression and converts it to IR. On failure it reports
// the error (unless it follows from one already reported) and returns false.
func (c *checker) expr(e Expr, sc *scope) (ir.Expr, bool) {
	switch e := e.(type) {
	case *Number:
		v, err := strconv.ParseFloat(e.Text, 64)
		if err != nil || math.IsInf(v, 0) {
			c.errorf(e.Pos, "numbers must be finite float64 values (magnitude below about 1.8e308)", "number %s is out of range", e.Text)
			return nil, false
		}
		return &ir.Num{Value: v, Pos: c.pos(e.Pos)}, true
	case *Ident:
		return c.name(e, sc)
	case *IndexExpr:
		id, ok := e.X.(*Ident)
		if !ok {
			c.errorf(e.Lbrack, "index the variable inside the expression, e.g. `exp(x[n])` rather than `exp(x)[n]`", "only variables can be indexed")
			return nil, false
		}
		return c.indexed(id, e.Indices, sc)
	case *CallExpr:
		return c.call(e, sc)
	case *BinaryExpr:
		return c.binary(e, sc)
	case *VectorExpr:
		return c.vectorLit(e, sc)
	case *UnaryExpr:
		if e.Op == OpTranspose {
			c.errorf(e.Pos, "a transpose is supported on a vector on the left of `*`: `a' * b` is the inner product dot(a, b), `a' * M` the product of a with the matrix M", "a transpose is only supported in a product `a' * b`")
			c.markRead(e.X)
			return nil, false
		}
		x, ok := c.operand(e.X, sc)
		if !ok {
			return nil, false
		}
		t := x.Typ()
		return &ir.Unary{Op: e.Op, X: x, T: ir.Type{Kind: t.Kind, Dims: t.Dims}, Pos: c.pos(e.Pos)}, true
	}
	return nil, false
}

// operand checks an expression used as a value.
func (c *checker) operand(e Expr, sc *scope) (ir.Expr, bool) {
	x, ok := c.expr(e, sc)
	if !ok || !c.value(x) {
		return nil, false
	}
	return x, true
}

// value reports (and rejects) a bag or bag document used as a value.
func (c *checker) value(x ir.Expr) bool {
	if x.Typ().Class != ir.Bag {
		return true
	}
	c.errorAt(x.Position(), "loop over its tokens with `for n in w[d] { ... }` and use `w[d, n]`, the term id of token n",
		"%s is a bag, not a value", exprString(x))
	return false
}

func (c *checker) binaryType(e *BinaryExpr, x, y ir.Expr) (ir.Type, bool) {
	xt, yt := x.Typ(), y.Typ()
	t := ir.Type{Kind: ir.Real}
	if xt.Kind == ir.Int && yt.Kind == ir.Int && strings.IndexByte("+-*", e.Op) >= 0 {
		t.Kind = ir.Int
	}
	switch {
	case xt.Rank() == 0:
		t.Dims = yt.Dims
	case yt.Rank() == 0 || c.sameDimsU(xt.Dims, yt.Dims):
		t.Dims = xt.Dims
	default:
		hint := "arithmetic works elementwise on equal shapes; either side may be a scalar"
		if e.Op == '*' {
			hint = "`*` multiplies by a scalar, equal shapes elementwise, and a matrix by a vector or a matrix (real[N, P] * real[P] is real[N])"
		}
		c.errorf(e.Pos, hint,
			"shape mismatch in %s: %s is %s but %s is %s", opString(e.Op), exprString(x), xt, exprString(y), yt)
		return t, false
	}
	return t, true
}

// name resolves a bare name: a loop index, a size or a variable.
func (c *checker) name(id *Ident, sc *scope) (ir.Expr, bool) {
	if l := sc.lookup(id.Name); l != nil {
		if l.bad {
			return nil, false
		}
		return &ir.Index{Name: id.Name, Size: l.size, Pos: c.pos(id.Pos)}, true
	}
	if d := c.findLet(id.Name, sc); d != nil && c.syms[id.Name] == nil {
		return c.letUse(d, id, nil, sc)
	}
	s := c.lookup(id, sc)
	if s == nil {
		return nil, false
	}
	return c.ref(s, id, nil, sc)
}

// lookup finds a declared name, reporting unknown names.
func (c *checker) lookup(id *Ident, sc *scope) *symbol {
	s := c.syms[id.Name]
	if s != nil {
		s.read = true
		return s
	}
	hint := ""
	if p, ok := c.letAt[id.Name]; ok {
		c.letMentioned[id.Name] = true
		hint = id.Name + " is defined by the let at " + c.where(c.pos(p)) + "; a let is used after it, and one inside a loop only in that loop's body"
	} else if p, ok := c.loops[id.Name]; ok {
		hint = id.Name + " is the index of the loop at " + c.where(c.pos(p)) + " and exists only inside that loop"
	} else {
		names := sc.names()
		for n := range c.syms {
			names = append(names, n)
		}
		hint = suggest(id.Name, names)
		if hint == "" {
			hint = "declare it first, e.g. `data " + id.Name + " : real` or `latent " + id.Name + " : real[K] ...`"
		}
	}
	c.errorf(id.Pos, hint, "unknown name %s", id.Name)
	return nil
}

// indexed checks `x[i, ...]`.
func (c *checker) indexed(id *Ident, idx []Expr, sc *scope) (ir.Expr, bool) {
	if l := sc.lookup(id.Name); l != nil {
		c.errorf(id.Pos, "a loop index is an int scalar; index a variable with it, as in `x["+id.Name+"]`", "loop index %s cannot be indexed", id.Name)
		return nil, false
	}
	if d := c.findLet(id.Name, sc); d != nil && c.syms[id.Name] == nil {
		return c.letUse(d, id, idx, sc)
	}
	s := c.lookup(id, sc)
	if s == nil {
		return nil, false
	}
	return c.ref(s, id, idx, sc)
}

// ref builds the Ref for variable s indexed by idx (which may be empty).
func (c *checker) ref(s *symbol, id *Ident, idx []Expr, sc *scope) (*ir.Ref, bool) {
	v := s.v
	if v.Role == ir.RoleSize {
		if len(idx) > 0 {
			c.errorf(idx[0].Position(), "a size is an int scalar; to loop over its range, write `for i in 1:"+v.Name+"`", "size %s cannot be indexed", v.Name)
			return nil, false
		}
		return &ir.Ref{Var: v, T: ir.Type{Kind: ir.Int}, Pos: c.pos(id.Pos)}, true
	}
	dims := effectiveDims(v)
	if s.ok && len(idx) > len(dims) {
		hint := "remove the extra index"
		if v.Type.Class == ir.Bag {
			hint = "index a bag as " + v.Name + "[d] for a document and " + v.Name + "[d, n] for its token n"
		}
		c.errorf(idx[len(dims)].Position(), hint, "too many indices for %s: it is %s, with %d dimension(s)", v.Name, v.Type, len(dims))
		return nil, false
	}
	r := &ir.Ref{Var: v, Pos: c.pos(id.Pos)}
	ok := s.ok
	for i, e := range idx {
		x, xok := c.indexExpr(e, sc)
		if !xok {
			ok = false
			continue
		}
		r.Index = append(r.Index, x)
		if ok && !c.checkIndex(r, x, i, dims, sc) {
			ok = false
		}
	}
	if !ok {
		return nil, false
	}
	r.T = indexType(v, len(idx))
	return r, true
}

// indexExpr checks one index: a loop index plus or minus an int literal
// (y[t-1]) is an ir.Offset, anything else an expression.
func (c *checker) indexExpr(e Expr, sc *scope) (ir.Expr, bool) {
	if b, ok := e.(*BinaryExpr); ok && (b.Op == '+' || b.Op == '-') {
		id, isID := b.X.(*Ident)
		n, isInt := intLiteral(b.Y)
		if isID && isInt && sc.lookup(id.Name) != nil {
			x, ok := c.name(id, sc)
			if !ok {
				return nil, false
			}
			if b.Op == '-' {
				n = -n
			}
			return &ir.Offset{Index: x.(*ir.Index), Off: n, Pos: c.pos(b.Pos)}, true
		}
	}
	return c.expr(e, sc)
}

// effectiveDims are a variable's dimensions, with a bag's implicit token
// dimension (named after the bag) appended.
func effectiveDims(v *ir.Var) []string {
	if v.Type.Class == ir.Bag {
		return append(append([]string{}, v.Type.Dims...), v.Name)
	}
	return v.Type.Dims
}

// indexType is the type of v with its first k dimensions indexed.
func indexType(v *ir.Var, k int) ir.Type {
	t := v.Type
	rest := append([]string(nil), effectiveDims(v)[k:]...)
	out := ir.Type{Kind: t.Kind, Range: t.Range, Dims: rest}
	switch t.Class {
	case ir.Bag:
		if len(rest) > 0 {
			out.Class = ir.Bag
			out.Dims = rest[:len(rest)-1]
		}
	case ir.Cov:
		if len(rest) >= 2 {
			out.Class = ir.Cov
		}
	case ir.Simplex:
		if len(rest) >= 1 {
			out.Class = ir.Simplex
		}
	}
	if len(out.Dims) == 0 {
		out.Dims = nil
	}
	return out
}

// checkIndex checks index x in position i of r against dimension dims[i]:
// a loop index must come from a loop over that dimension; any other index
// must be an int scalar ranging over 1..dims[i].
func (c *checker) checkIndex(r *ir.Ref, x ir.Expr, i int, dims []string, sc *scope) bool {
	dim := dims[i]
	v := r.Var
	if ix, ok := x.(*ir.Index); ok {
		l := sc.lookup(ix.Name)
		switch {
		case l.size != "" && l.size != dim:
			c.errorAt(ix.Pos, indexHint(c, v, i, dim), "index %s runs over 1:%s but dimension %d of %s %s", ix.Name, l.size, i+1, v.Name, dimPhrase(c, dim))
			return false
		case l.bag != nil && l.bag.Var.Name != dim:
			c.errorAt(ix.Pos, indexHint(c, v, i, dim), "index %s runs over the tokens of %s but dimension %d of %s %s", ix.Name, exprString(l.bag), i+1, v.Name, dimPhrase(c, dim))
			return false
		case l.bag != nil:
			// The indices before n must pick the same document as the loop.
			n := len(l.bag.Index)
			if i < n || exprsString(r.Index[i-n:i]) != exprsString(l.bag.Index) {
				c.errorAt(ix.Pos, "write "+v.Name+"["+exprsString(append(append([]ir.Expr{}, l.bag.Index...), ix))+"]",
					"index %s runs over the tokens of %s, so the indices before it must be %s", ix.Name, exprString(l.bag), exprsString(l.bag.Index))
				return false
			}
		}
		if l.size != "" && l.hi > 0 {
			c.errorAt(ix.Pos, "end the loop at "+dim+", or index with "+ix.Name+"-"+strconv.Itoa(l.hi), "index %s runs up to %s+%d, past the end of dimension %d of %s, which has size %s", ix.Name, l.size, l.hi, i+1, v.Name, dim)
			return false
		}
		return true
	}
	if o, ok := x.(*ir.Offset); ok {
		return c.checkOffset(r, o, i, dim, sc)
	}
	if n, ok := x.(*ir.Num); ok && n.Value == math.Trunc(n.Value) && n.Value >= 1 && n.Value < 1<<31 {
		// a literal index; the generated code checks it against the size
		// when the data is loaded, and the checker against a literal
		// dimension
		if s := c.syms[dim]; s != nil && s.v.Fixed && int(n.Value) > s.v.SizeDefault {
			c.errorAt(x.Position(), fmt.Sprintf("index %s from 1 to %s", v.Name, dim),
				"index %s is past the end of %s: dimension %d of %s has the fixed length %s", exprString(n), v.Name, i+1, v.Name, dim)
			return false
		}
		return true
	}
	if n, ok := x.(*ir.Num); ok {
		c.errorAt(x.Position(), "a literal index is a whole number of at least 1, as in "+v.Name+"[1]", "literal index %s into dimension %d of %s must be a whole number from 1 to %s", exprString(n), i+1, v.Name, dim)
		return false
	}
	t := x.Typ()
	want := "an int in 1.." + dim
	switch {
	case t.Rank() > 0:
		c.errorAt(x.Position(), "an index is one int value; loop over the elements with `for i in 1:"+dim+"`", "index %s must be %s, but it is %s", exprString(x), want, t)
	case t.Kind != ir.Int:
		hint := "arithmetic gives a real, so an index is a loop index, a loop index plus or minus an int literal (`t-1`), or an int variable declared `in 1.." + dim + "`"
		c.errorAt(x.Position(), hint, "non-integer index %s: an index into dimension %d of %s must be %s", exprString(x), i+1, v.Name, want)
	case t.Range == nil:
		hint := "an index must be a loop index or an int declared `in 1.." + dim + "`"
		if ref, ok := x.(*ir.Ref); ok && ref.Var.Role != ir.RoleSize {
			hint = "declare " + ref.Var.Name + " with `in 1.." + dim + "`"
		}
		c.errorAt(x.Position(), hint, "index %s has no range: an index into dimension %d of %s must be %s", exprString(x), i+1, v.Name, want)
	case t.Range[0].Size != "" || t.Range[0].Value != 1 || t.Range[1].String() != dim: // a literal bound matches a literal dimension
		c.errorAt(x.Position(), indexHint(c, v, i, dim), "index %s ranges over %s..%s but dimension %d of %s %s", exprString(x), t.Range[0], t.Range[1], i+1, v.Name, dimPhrase(c, dim))
	default:
		return true
	}
	return false
}

// checkOffset checks y[t+k] in position i of r: t must run over the
// dimension's size, and t+k stay within 1..size for every t of its loop.
func (c *checker) checkOffset(r *ir.Ref, o *ir.Offset, i int, dim string, sc *scope) bool {
	v := r.Var
	l := sc.lookup(o.Index.Name)
	if l.size == "" {
		c.errorAt(o.Pos, "read tokens at the loop index itself, as in "+v.Name+"[d, "+o.Index.Name+"]", "index %s runs over the tokens of %s and cannot be shifted", o.Index.Name, exprString(l.bag))
		return false
	}
	if l.size != dim {
		c.errorAt(o.Pos, indexHint(c, v, i, dim), "index %s runs over 1:%s but dimension %d of %s %s", o.Index.Name, l.size, i+1, v.Name, dimPhrase(c, dim))
		return false
	}
	first, last := 1+l.lo+o.Off, l.hi+o.Off // last relative to the size
	plate := ir.Plate{Size: l.size, Lo: l.lo, Hi: l.hi}
	switch {
	case first < 1:
		start := 1 - o.Off
		c.errorAt(o.Pos, fmt.Sprintf("start the loop at %d, `for %s in %d:%s`, so that %s is at least 1", start, o.Index.Name, start, plate.Range()[strings.IndexByte(plate.Range(), ':')+1:], o),
			"%s[%s] reads before the start of %s: for %s = %d (loop %s in %s at %s) the index is %d", v.Name, exprsString(append(append([]ir.Expr{}, r.Index[:i]...), o)), v.Name, o.Index.Name, 1+l.lo, o.Index.Name, plate.Range(), c.where(c.pos(l.pos)), first)
		return false
	case last > 0:
		end := dim
		if -o.Off < 0 {
			end += strconv.Itoa(-o.Off)
		} else if o.Off > 0 {
			end += "-" + strconv.Itoa(o.Off)
		}
		c.errorAt(o.Pos, fmt.Sprintf("end the loop at %s, `for %s in %d:%s`, so that %s is at most %s", end, o.Index.Name, 1+l.lo, end, o, dim),
			"%s reads past the end of %s: for %s = %s (loop at %s) the index is %s%+d, but dimension %d of %s has size %s", o, v.Name, o.Index.Name, plate.Range()[strings.IndexByte(plate.Range(), ':')+1:], c.where(c.pos(l.pos)), dim, last, i+1, v.Name, dim)
		return false
	}
	return true
}

// indexHint suggests how to index dimension i (of size dim) of v.
func indexHint(c *checker, v *ir.Var, i int, dim string) string {
	if s := c.syms[dim]; s != nil && s.v.Role != ir.RoleSize {
		return fmt.Sprintf("dimension %d of %s is indexed by a token loop `for n in %s[d]`", i+1, v.Name, dim)
	}
	return fmt.Sprintf("dimension %d of %s needs an index that runs over 1:%s, as the index of `for i in 1:%s` does; check the order of the indices", i+1, v.Name, dim, dim)
}

// dimPhrase describes a dimension: "has size P", or for a bag dimension
// "runs over the tokens of w".
func dimPhrase(c *checker, dim string) string {
	if s := c.syms[dim]; s != nil && s.v.Role != ir.RoleSize {
		return "runs over the tokens of " + dim
	}
	return "has size " + dim
}
