package derive

import (
	"github.com/vigen-go/vigen/spec/ir"
)

// Lowering of the vector and matrix algebra of the language (spec's
// algebra.go): matrix products become Sums over the inner dimension, and a
// vector built in the model ([a, b, 0], append(v, 0)) is read element by
// element as a sum of its pieces, each times the indicator eq(position, p)
// that the element is the piece's: no piece is ever read outside its own
// range, so no index runs past the end of a vector.

// matMul lowers element sel of the matrix product x * y.
func (b *Builder) matMul(e *ir.Binary, sel []Expr) (Expr, error) {
	xd, yd := e.X.Typ().Dims, e.Y.Typ().Dims
	var j Index
	var xs, ys []Expr
	switch {
	case len(xd) == 2 && len(yd) == 1: // (A×B)·B → A
		j = b.freshFor(xd[1])
		xs, ys = []Expr{sel[0], IxE(j)}, []Expr{IxE(j)}
	case len(xd) == 1 && len(yd) == 2: // A·(A×B) → B
		j = b.freshFor(xd[0])
		xs, ys = []Expr{IxE(j)}, []Expr{IxE(j), sel[0]}
	case len(xd) == 2 && len(yd) == 2: // (A×B)·(B×C) → A×C
		j = b.freshFor(xd[1])
		xs, ys = []Expr{sel[0], IxE(j)}, []Expr{IxE(j), sel[1]}
	default:
		return nil, ir.Errorf(e.Pos, "internal error in vigen: a product of ranks %d and %d (please report it with the model)", len(xd), len(yd))
	}
	x, err := b.Lower(e.X, xs)
	if err != nil {
		return nil, err
	}
	y, err := b.Lower(e.Y, ys)
	if err != nil {
		return nil, err
	}
	return Sum([]Index{j}, Mul(x, y)), nil
}

// piece is one part of a vector built in the model: a scalar, or a vector
// whose dimension is a declared size.
type piece struct {
	x      ir.Expr
	vector bool
}

// pieces flattens a vector literal or append into its scalars and vectors.
func pieces(e ir.Expr) []piece {
	c, ok := e.(*ir.Call)
	if !ok || c.Func != ir.FuncVector && c.Func != ir.FuncAppend {
		return []piece{{e, e.Typ().Rank() == 1}}
	}
	var out []piece
	for _, a := range c.Args {
		out = append(out, pieces(a)...)
	}
	return out
}

// position is the 0-based position an element selector stands for: a loop
// index, or an int value (1-based in the language) read from data.
func position(e *ir.Call, sel Expr) (Expr, error) {
	switch s := sel.(type) {
	case *Ix:
		return s, nil
	case *Tensor:
		if s.Int {
			return Sub(s, N(1)), nil
		}
	}
	return nil, ir.Errorf(e.Pos, "this element of %s cannot be selected yet", fmtCall(e)).Hintf("select elements of a vector built in the model by a loop index or an int data value")
}

func fmtCall(e *ir.Call) string {
	if e.Func == ir.FuncVector {
		return "a vector literal"
	}
	return e.Func + "(...)"
}

// concat lowers element sel of a vector literal or append: the sum over
// its pieces of eq(position, offset of the element in the piece) times the
// element.
func (b *Builder) concat(e *ir.Call, sel []Expr) (Expr, error) {
	pos, err := position(e, sel[0])
	if err != nil {
		return nil, err
	}
	var terms []Expr
	var off Expr = N(0)
	for _, p := range pieces(e) {
		if !p.vector {
			x, err := b.Lower(p.x, nil)
			if err != nil {
				return nil, err
			}
			terms = append(terms, Mul(idltExprs(pos, off), x))
			off = Add(off, N(1))
			continue
		}
		size := p.x.Typ().Dims[0]
		j := b.freshFor(size)
		x, err := b.Lower(p.x, []Expr{IxE(j)})
		if err != nil {
			return nil, err
		}
		terms = append(terms, Sum([]Index{j}, Mul(idltExprs(pos, Add(off, IxE(j))), x)))
		off = Add(off, SizeE(size))
	}
	return Add(terms...), nil
}

// rowsDot lowers element n of rows_dot_product(x, y): Σ_p x[n, p] y[n, p].
func rowsDot(b *Builder, e *ir.Call, sel []Expr) (Expr, error) {
	j := b.freshFor(e.Args[0].Typ().Dims[1])
	x, err := b.Lower(e.Args[0], []Expr{sel[0], IxE(j)})
	if err != nil {
		return nil, err
	}
	y, err := b.Lower(e.Args[1], []Expr{sel[0], IxE(j)})
	if err != nil {
		return nil, err
	}
	return Sum([]Index{j}, Mul(x, y)), nil
}

func init() {
	funcs[ir.FuncVector] = func(b *Builder, e *ir.Call, sel []Expr) (Expr, error) { return b.concat(e, sel) }
	funcs[ir.FuncAppend] = funcs[ir.FuncVector]
	funcs["rows_dot_product"] = rowsDot
}
