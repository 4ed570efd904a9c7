package spec

import (
	"strconv"
	"strings"

	"github.com/vigen-go/vigen/spec/ir"
)

// exprString prints a checked expression in source syntax, for messages.
// Nested binary operations are parenthesised.
func exprString(e ir.Expr) string {
	var b strings.Builder
	writeExpr(&b, e)
	return b.String()
}

func exprsString(es []ir.Expr) string {
	var b strings.Builder
	writeExprs(&b, es)
	return b.String()
}

func writeExprs(b *strings.Builder, es []ir.Expr) {
	for i, e := range es {
		if i > 0 {
			b.WriteString(", ")
		}
		writeExpr(b, e)
	}
}

func writeExpr(b *strings.Builder, e ir.Expr) {
	switch e := e.(type) {
	case *ir.Num:
		b.WriteString(strconv.FormatFloat(e.Value, 'g', -1, 64))
	case *ir.Ref:
		b.WriteString(e.Var.Name)
		if len(e.Index) > 0 {
			b.WriteByte('[')
			writeExprs(b, e.Index)
			b.WriteByte(']')
		}
	case *ir.Index:
		b.WriteString(e.Name)
	case *ir.Offset:
		b.WriteString(e.String())
	case *ir.Call:
		if e.Func == ir.FuncVector {
			b.WriteByte('[')
			writeExprs(b, e.Args)
			b.WriteByte(']')
			return
		}
		b.WriteString(e.Func)
		b.WriteByte('(')
		writeExprs(b, e.Args)
		b.WriteByte(')')
	case *ir.DistArg:
		b.WriteString(e.Dist)
		b.WriteByte('(')
		writeExprs(b, e.Args)
		b.WriteByte(')')
	case *ir.Binary:
		writeOperand(b, e.X)
		op := string(e.Op)
		if e.Op == ir.OpMatMul {
			op = "*"
		}
		b.WriteString(" " + op + " ")
		writeOperand(b, e.Y)
	case *ir.Unary:
		b.WriteByte(e.Op)
		writeOperand(b, e.X)
	default:
		b.WriteString("?")
	}
}

func writeOperand(b *strings.Builder, e ir.Expr) {
	if _, ok := e.(*ir.Binary); ok {
		b.WriteByte('(')
		writeExpr(b, e)
		b.WriteByte(')')
		return
	}
	writeExpr(b, e)
}
