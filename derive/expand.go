package derive

// maxExpandTerms bounds the number of terms expandPoly may produce.
const maxExpandTerms = 64

// expandPoly multiplies out the integer powers (2 to 4) of sums and the
// products of sums in e, so that (a − b·exp(u))² becomes
// a² − 2ab·exp(u) + b²·exp(u)², a sum of terms each with an exact
// expectation under a Gaussian q(u). It returns nil when nothing was
// expanded or the result would have more than maxExpandTerms terms.
func expandPoly(e Expr) Expr {
	r := expandTerms(e)
	if r == nil || len(r) > maxExpandTerms {
		return nil
	}
	out := Add(r...)
	if out.Key() == e.Key() {
		return nil
	}
	return out
}

// expandTerms returns e as a list of terms whose sum is e, products of
// sums multiplied out; nil when there are too many.
func expandTerms(e Expr) []Expr {
	switch e := e.(type) {
	case *AddNode:
		var out []Expr
		for _, t := range e.Terms {
			ts := expandTerms(t)
			if ts == nil {
				return nil
			}
			out = append(out, ts...)
			if len(out) > maxExpandTerms {
				return nil
			}
		}
		return out
	case *MulNode:
		return expandProduct(e.Factors)
	case *Call:
		if e.Prim.Name == "pow" {
			if n, ok := e.Args[1].(*Num); ok && n.V >= 2 && n.V <= 4 && n.V == float64(int(n.V)) {
				if _, isSum := e.Args[0].(*AddNode); isSum {
					fs := make([]Expr, int(n.V))
					for k := range fs {
						fs[k] = e.Args[0]
					}
					return expandProduct(fs)
				}
			}
		}
	}
	return []Expr{e}
}

// expandProduct multiplies out a product of factors.
func expandProduct(fs []Expr) []Expr {
	out := []Expr{N(1)}
	for _, f := range fs {
		ts := expandTerms(f)
		if ts == nil || len(out)*len(ts) > maxExpandTerms {
			return nil
		}
		next := make([]Expr, 0, len(out)*len(ts))
		for _, a := range out {
			for _, b := range ts {
				next = append(next, Mul(a, b))
			}
		}
		out = next
	}
	return out
}
