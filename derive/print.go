package derive

import (
	"fmt"
	"strings"
)

// String prints e in readable infix notation with Σ for sums and δ for
// Kronecker deltas, e.g. "Σ_n (y[n]·u − softplus(u))". It is the canonical
// form `vigen check -derive` shows and tests compare against.
func String(e Expr) string {
	var sb strings.Builder
	write(&sb, e, 0)
	return sb.String()
}

// precedence levels: 0 top, 1 sum term, 2 product factor, 3 atom
func write(sb *strings.Builder, e Expr, ctx int) {
	switch e := e.(type) {
	case *Num:
		if e.V < 0 && ctx > 0 {
			sb.WriteString("(" + fmtNum(e.V) + ")")
			return
		}
		sb.WriteString(fmtNum(e.V))
	case *Ix:
		sb.WriteString(e.I.Name)
	case *Shift:
		fmt.Fprintf(sb, "%s%+d", e.I.Name, e.Off)
	case *Delta:
		sb.WriteString("δ(" + e.A.Name + "," + e.B.Name + ")")
	case *Tensor:
		if strings.HasPrefix(e.Name, "#") {
			if size, lo, hi, ok := SizeRange(e.Name[1:]); ok {
				// the length of a loop over part of a size: T − 2 for 3:T
				fmt.Fprintf(sb, "(%s%+d)", size, hi-lo)
				return
			}
			sb.WriteString(e.Name[1:])
			return
		}
		name, shift, _ := Shifted(e.Name)
		sb.WriteString(name)
		if len(e.Idx) == 1 && scalarIx(e.Idx[0]) {
			return // a scalar latent's one-element vector
		}
		if len(e.Idx) > 0 {
			sb.WriteByte('[')
			for k, x := range e.Idx {
				if k > 0 {
					sb.WriteByte(',')
				}
				write(sb, x, 0)
				if k < len(shift) && shift[k] != 0 {
					fmt.Fprintf(sb, "%+d", shift[k]) // y[t-1]
				}
			}
			sb.WriteByte(']')
		}
	case *Call:
		if e.Prim.Name == "pow" {
			if n, ok := e.Args[1].(*Num); ok && n.V == -1 {
				sb.WriteString("1/")
				write(sb, e.Args[0], 3)
				return
			}
			write(sb, e.Args[0], 3)
			sb.WriteByte('^')
			write(sb, e.Args[1], 3)
			return
		}
		if e.Prim.Name == "group" { // a product kept as one factor: (…)
			sb.WriteByte('(')
			write(sb, e.Args[0], 0)
			sb.WriteByte(')')
			return
		}
		sb.WriteString(e.Prim.Name + "(")
		writeList(sb, e.Args, ", ")
		sb.WriteByte(')')
	case *AddNode:
		if ctx > 1 {
			sb.WriteByte('(')
		}
		for k, t := range e.Terms {
			c, _ := coefRest(t)
			tctx := 1
			if k > 0 {
				if c < 0 {
					sb.WriteString(" − ")
					t = scaleAny(-1, t)
					if _, ok := t.(*AddNode); ok {
						tctx = 2 // a − (b + c), not a − b + c
					}
				} else {
					sb.WriteString(" + ")
				}
			}
			write(sb, t, tctx)
		}
		if ctx > 1 {
			sb.WriteByte(')')
		}
	case *MulNode:
		if ctx > 2 {
			sb.WriteByte('(')
		}
		fs := e.Factors
		if n, ok := fs[0].(*Num); ok && n.V == -1 {
			sb.WriteString("−")
			fs = fs[1:]
		}
		for k, f := range fs {
			if k > 0 {
				sb.WriteString("·")
			}
			write(sb, f, 2)
		}
		if ctx > 2 {
			sb.WriteByte(')')
		}
	case *MaxNode:
		sb.WriteString("max_")
		writeIndices(sb, e.Idx)
		sb.WriteByte('(')
		write(sb, e.Body, 0)
		sb.WriteByte(')')
	case *IDelta:
		sb.WriteString("δ(")
		write(sb, e.X, 0)
		sb.WriteString("," + e.I.Name + ")")
	case *SumNode:
		if scalarSum(e) {
			write(sb, e.Body, ctx) // a scalar latent's read Σ_i mu[i]: mu
			return
		}
		if ctx > 1 {
			sb.WriteByte('(')
		}
		sb.WriteString("Σ_")
		writeIndices(sb, e.Idx)
		sb.WriteByte(' ')
		write(sb, e.Body, 2)
		if ctx > 1 {
			sb.WriteByte(')')
		}
	}
}

// writeList writes xs at the top precedence level, separated by sep.
func writeList(sb *strings.Builder, xs []Expr, sep string) {
	for k, x := range xs {
		if k > 0 {
			sb.WriteString(sep)
		}
		write(sb, x, 0)
	}
}

// writeIndices writes the names of a Σ's or max's indices, comma-separated.
func writeIndices(sb *strings.Builder, idx []Index) {
	for k, i := range idx {
		if k > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(i.Name)
	}
}

// scalarSum reports whether s is a sum over the one-element ScalarSize only
// (how a scalar latent is read), printed as its body.
func scalarSum(s *SumNode) bool {
	for _, i := range s.Idx {
		if i.Size != ScalarSize {
			return false
		}
	}
	return true
}

// scalarIx reports whether x is an index over ScalarSize.
func scalarIx(x Expr) bool {
	ix, ok := x.(*Ix)
	return ok && ix.I.Size == ScalarSize
}
