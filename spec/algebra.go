package spec

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/vigen-go/vigen/spec/ir"
)

// Vector and matrix algebra: products (`X * beta`, `a' * b`), the
// elementwise operators `.*` and `./`, vector literals `[a, b, 0]` and
// append(a, b).
//
// A vector built in the model has a length that is not a declared size:
// [a, b, 0] has 3 elements, append(v, 0) for v : real[K1] has K1+1. Its
// type first carries a pending dimension (written like "3@12:5": the length,
// then where the vector is), which the first declared size it meets takes
// over: unifying it with the size K (as softmax's result meets the range
// 1..K of a Categorical's target, or a real[K] in arithmetic) records a
// SizeCheck K = 3 that generated code checks when it loads the data, and
// every type naming the pending dimension is rewritten to K when the model
// is checked. A pending dimension no declared size takes is an error.

// pendSize is a pending dimension: the length of a vector built in the
// model, N plus the sum of the sizes Sizes.
type pendSize struct {
	name  string
	n     int
	sizes []string
	what  string // the vector, as written
	pos   ir.Pos
	to    string // the dimension it was unified with ("" while pending)
	// reported: an error about the vector was reported already
	reported bool
}

// length writes the length, e.g. "3" or "K1+1".
func (p *pendSize) length() string {
	parts := append([]string(nil), p.sizes...)
	if p.n > 0 || len(parts) == 0 {
		parts = append(parts, strconv.Itoa(p.n))
	}
	return strings.Join(parts, "+")
}

// newPending returns a pending dimension for a vector of length n + Σ sizes.
func (c *checker) newPending(n int, sizes []string, what ir.Expr, pos ir.Pos) string {
	if c.pend == nil {
		c.pend = map[string]*pendSize{}
	}
	sort.Strings(sizes)
	p := &pendSize{n: n, sizes: sizes, what: exprString(what), pos: pos}
	p.name = fmt.Sprintf("%s@%d:%d", p.length(), pos.Line, pos.Col)
	for k := 2; c.pend[p.name] != nil; k++ {
		p.name = fmt.Sprintf("%s@%d:%d#%d", p.length(), pos.Line, pos.Col, k)
	}
	c.pend[p.name] = p
	c.pendOrder = append(c.pendOrder, p)
	return p.name
}

// resolve follows d through the pending dimensions unified with others.
func (c *checker) resolve(d string) string {
	for {
		p := c.pend[d]
		if p == nil || p.to == "" {
			return d
		}
		d = p.to
	}
}

// unifyDim reports whether dimensions a and b can be the same, making a
// pending one the other (and recording the check of a declared size
// against a vector's length).
func (c *checker) unifyDim(a, b string) bool {
	a, b = c.resolve(a), c.resolve(b)
	if a == b {
		return true
	}
	pa, pb := c.pend[a], c.pend[b]
	switch {
	case pa != nil && pb != nil:
		if pa.length() != pb.length() {
			return false
		}
		pb.to = a
		return true
	case pb != nil:
		pa, pb, a, b = pb, pa, b, a
	case pa == nil:
		return false
	}
	// a is pending, b a declared size.
	if pa.n > 0 && contains(pa.sizes, b) {
		return false // K+1 ≠ K for every K
	}
	pa.to = b
	c.model.SizeChecks = append(c.model.SizeChecks, ir.SizeCheck{Size: b, Const: pa.n, Sizes: pa.sizes, What: pa.what, Pos: pa.pos})
	return true
}

// sameDimsU is sameDims with pending dimensions unified.
func (c *checker) sameDimsU(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !c.unifyDim(a[i], b[i]) {
			return false
		}
	}
	return true
}

// settlePending rewrites the pending dimensions of every checked
// expression to the sizes they were unified with, and reports those that
// met none.
func (c *checker) settlePending() {
	if len(c.pend) == 0 {
		return
	}
	fix := func(e ir.Expr) {
		ir.Walk(e, func(x ir.Expr) {
			var dims []string
			switch x := x.(type) {
			case *ir.Call:
				dims = x.T.Dims
			case *ir.Binary:
				dims = x.T.Dims
			case *ir.Unary:
				dims = x.T.Dims
			}
			for i, d := range dims {
				if c.pend[d] != nil {
					dims[i] = c.resolve(d)
				}
			}
		})
	}
	for _, f := range c.model.Factors {
		for _, a := range f.Args {
			fix(a)
		}
	}
	for _, l := range c.model.Lets {
		fix(l.Value)
	}
	for _, p := range c.pendOrder {
		if p.to == "" && !p.reported {
			c.errorAt(p.pos, "a vector built in the model takes its size from where it is used: use it where a declared size K is expected (as softmax(...) for `y ~ Categorical(...)` with y in 1..K, or with a real[K] in arithmetic); vigen then checks at data load that K is "+p.length(),
				"cannot tell which size the vector %s of length %s has", p.what, p.length())
		}
	}
}

// noBuiltVector reports (and rejects) a vector literal or append in x,
// where such vectors are not supported (where says where, e.g. "in the
// default of c").
func (c *checker) noBuiltVector(x ir.Expr, where, hint string) bool {
	ok := true
	ir.Walk(x, func(e ir.Expr) {
		if call, isCall := e.(*ir.Call); isCall && (call.Func == ir.FuncVector || call.Func == ir.FuncAppend) {
			if p := c.pend[call.T.Dims[0]]; p != nil {
				p.reported = true
			}
			if ok {
				c.errorAt(call.Pos, hint, "a vector built in the model (%s) is not supported %s", exprString(call), where)
			}
			ok = false
		}
	})
	return ok
}

// binary checks a binary expression.
func (c *checker) binary(e *BinaryExpr, sc *scope) (ir.Expr, bool) {
	if u, ok := e.X.(*UnaryExpr); ok && u.Op == OpTranspose && e.Op == '*' {
		return c.transposeProduct(e, u, sc)
	}
	x, xok := c.operand(e.X, sc)
	y, yok := c.operand(e.Y, sc)
	if !xok || !yok {
		return nil, false
	}
	op := e.Op
	switch op {
	case OpElemMul:
		op = '*'
	case OpElemDiv:
		op = '/'
	}
	xt, yt := x.Typ(), y.Typ()
	if e.Op == '*' && xt.Rank() > 0 && yt.Rank() > 0 && xt.Rank() != yt.Rank() || e.Op == '*' && xt.Rank() == 2 && yt.Rank() == 2 && !c.sameDimsU(xt.Dims, yt.Dims) {
		return c.matMul(e, x, y)
	}
	t, ok := c.binaryType(e, x, y)
	if !ok {
		return nil, false
	}
	return &ir.Binary{Op: op, X: x, Y: y, T: t, Pos: c.pos(e.Pos)}, true
}

// matMul checks the matrix product x * y.
func (c *checker) matMul(e *BinaryExpr, x, y ir.Expr) (ir.Expr, bool) {
	xt, yt := x.Typ(), y.Typ()
	hint := "`*` multiplies by a scalar, equal shapes elementwise, and a matrix by a vector or a matrix: real[N, P] * real[P] is real[N], real[N] * real[N, P] is real[P], real[N, P] * real[P, K] is real[N, K]"
	var inX, inY string // the dimensions that must agree
	var dims []string
	switch {
	case xt.Rank() == 2 && yt.Rank() == 1:
		inX, inY, dims = xt.Dims[1], yt.Dims[0], []string{xt.Dims[0]}
	case xt.Rank() == 1 && yt.Rank() == 2:
		inX, inY, dims = xt.Dims[0], yt.Dims[0], []string{yt.Dims[1]}
	case xt.Rank() == 2 && yt.Rank() == 2:
		inX, inY, dims = xt.Dims[1], yt.Dims[0], []string{xt.Dims[0], yt.Dims[1]}
	default:
		c.errorf(e.Pos, hint, "cannot multiply %s (%s) by %s (%s)", exprString(x), xt, exprString(y), yt)
		return nil, false
	}
	if !c.unifyDim(inX, inY) {
		c.errorf(e.Pos, hint, "size mismatch in the product %s * %s: %s is %s and %s is %s (%s ≠ %s)", exprString(x), exprString(y), exprString(x), xt, exprString(y), yt, c.resolve(inX), c.resolve(inY))
		return nil, false
	}
	return &ir.Binary{Op: ir.OpMatMul, X: x, Y: y, T: ir.Type{Kind: ir.Real, Dims: dims}, Pos: c.pos(e.Pos)}, true
}

// transposeProduct checks `a' * b`: the inner product of two vectors, or
// a vector times a matrix.
func (c *checker) transposeProduct(e *BinaryExpr, u *UnaryExpr, sc *scope) (ir.Expr, bool) {
	x, xok := c.operand(u.X, sc)
	y, yok := c.operand(e.Y, sc)
	if !xok || !yok {
		return nil, false
	}
	xt, yt := x.Typ(), y.Typ()
	hint := "a transpose is supported on a vector on the left of `*`: `a' * b` is the inner product dot(a, b) of two vectors of one size, `a' * M` the product of the vector a with the matrix M"
	switch {
	case xt.Rank() == 1 && yt.Rank() == 1:
		if !c.unifyDim(xt.Dims[0], yt.Dims[0]) {
			c.errorf(e.Pos, "the vectors of an inner product have one size", "size mismatch in %s' * %s: %s is %s and %s is %s", exprString(x), exprString(y), exprString(x), xt, exprString(y), yt)
			return nil, false
		}
		return &ir.Call{Func: "dot", Args: []ir.Expr{x, y}, T: ir.Type{Kind: ir.Real}, Pos: c.pos(e.Pos)}, true
	case xt.Rank() == 1 && yt.Rank() == 2:
		return c.matMul(e, x, y)
	}
	c.errorf(u.Pos, hint, "cannot transpose %s (%s) here", exprString(x), xt)
	return nil, false
}

// vectorLit checks a vector literal [a, b, ...] of scalars.
func (c *checker) vectorLit(e *VectorExpr, sc *scope) (ir.Expr, bool) {
	call := &ir.Call{Func: ir.FuncVector, Pos: c.pos(e.Pos)}
	ok := true
	for _, a := range e.Elems {
		x, xok := c.operand(a, sc)
		if !xok {
			ok = false
			continue
		}
		if x.Typ().Rank() > 0 {
			c.errorAt(x.Position(), "to join vectors (or a vector and scalars), use append(a, b)", "the elements of a vector literal are scalars, but %s is %s", exprString(x), x.Typ())
			ok = false
		}
		call.Args = append(call.Args, x)
	}
	if !ok {
		return nil, false
	}
	call.T = ir.Type{Kind: ir.Real, Dims: []string{c.newPending(len(call.Args), nil, call, call.Pos)}}
	return call, true
}

// appendCall checks append(a, b) (or append_row): a and b are vectors or
// scalars; the result is the vector of a's elements followed by b's.
func (c *checker) appendCall(e *CallExpr, sc *scope) (ir.Expr, bool) {
	name := e.Func.Name
	if len(e.Args) != 2 {
		c.errorf(e.Pos, "call it as "+name+"(a, b); nest calls to join more, as in "+name+"(a, "+name+"(b, c)) or use [a, b, c] for scalars", "%s takes 2 arguments (a, b), got %d", name, len(e.Args))
		for _, a := range e.Args {
			c.expr(a, sc)
		}
		return nil, false
	}
	call := &ir.Call{Func: ir.FuncAppend, Pos: c.pos(e.Pos)}
	ok := true
	n := 0
	var sizes []string
	for _, a := range e.Args {
		x, xok := c.operand(a, sc)
		if !xok {
			ok = false
			continue
		}
		call.Args = append(call.Args, x)
		t := x.Typ()
		switch t.Rank() {
		case 0:
			n++
		case 1:
			d := c.resolve(t.Dims[0])
			if p := c.pend[d]; p != nil {
				n += p.n
				sizes = append(sizes, p.sizes...)
			} else {
				sizes = append(sizes, d)
			}
		default:
			c.errorAt(x.Position(), "append joins vectors and scalars; index a matrix to get a row", "%s: %s is %s, not a vector or a scalar", name, exprString(x), t)
			ok = false
		}
	}
	if !ok {
		return nil, false
	}
	call.T = ir.Type{Kind: ir.Real, Dims: []string{c.newPending(n, sizes, call, call.Pos)}}
	return call, true
}
