package derive

import "math"

// nonPolynomial is the Degree of an expression that is not a polynomial in
// the variable (it applies a primitive to it, or a non-integer power).
const nonPolynomial = math.MaxInt32

// Degree is the degree of e as a polynomial in the tensor called v, read
// off its structure without differentiating: 0 for an expression that does
// not read v, nonPolynomial for one that applies a primitive to it (or a
// power that is not a non-negative integer). It bounds the symbolic
// derivatives: Diff taken more than Degree times gives 0, so the tests
// "is f of degree ≤ 2 in v" that expectations and conjugacy make need no
// third derivative, which on a deep chain of primitives costs more than the
// whole objective. Like Diff, it treats a max(…) node as constant. The
// bound is structural: a polynomial whose terms cancel may have a smaller
// degree than Degree says.
func Degree(e Expr, v string) int {
	return Memoized(func(e Expr, rec func(Expr) int) int {
		switch e := e.(type) {
		case *Num, *Ix, *Shift, *Delta, *IDelta, *MaxNode:
			return 0
		case *Tensor:
			if e.Name == v {
				return 1
			}
			return 0
		case *AddNode:
			d := 0
			for _, t := range e.Terms {
				d = max(d, rec(t))
			}
			return d
		case *MulNode:
			d := 0
			for _, f := range e.Factors {
				fd := rec(f)
				if fd == nonPolynomial || d+fd >= nonPolynomial {
					return nonPolynomial
				}
				d += fd
			}
			return d
		case *SumNode:
			return rec(e.Body)
		case *Call:
			switch e.Prim.Name {
			case "group":
				return rec(e.Args[0])
			case "pow":
				base := rec(e.Args[0])
				if base == 0 && rec(e.Args[1]) == 0 {
					return 0
				}
				c, ok := e.Args[1].(*Num)
				if !ok || c.V < 0 || c.V != math.Trunc(c.V) || c.V > 64 || base == nonPolynomial {
					return nonPolynomial
				}
				return base * int(c.V)
			}
			for _, a := range e.Args {
				if rec(a) != 0 {
					return nonPolynomial
				}
			}
			return 0
		}
		return nonPolynomial
	})(e)
}

// degreeAbove2 reports whether e, whose second derivative in v (at fresh
// indices) is d2, has a nonzero third derivative: by Degree where the
// structure decides, and by differentiating d2 once more (at the indices
// at) only for a polynomial of structural degree above 2, where terms may
// cancel.
func degreeAbove2(e Expr, v string, d2 Expr, at []Index) bool {
	switch deg := Degree(e, v); {
	case deg <= 2:
		return false
	case deg == nonPolynomial:
		return true
	}
	return !isZero(Diff(d2, v, at))
}
