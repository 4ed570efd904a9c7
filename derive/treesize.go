package derive

// treeSize is the number of nodes of e written out as a tree (a node
// shared by several parents counted at each use), counted up to limit: the
// size that flattening products and distributing sums would print.
func treeSize(e Expr, limit float64) float64 {
	return Memoized(func(e Expr, rec func(Expr) float64) float64 {
		t := 1.0
		for _, c := range Children(e) {
			t += rec(c)
			if t > limit {
				break
			}
		}
		return t
	})(e)
}

// RenameTensors returns e with every read of a tensor named in m renamed
// to m's value (its indices kept). The result is rebuilt in normal form.
func RenameTensors(e Expr, m map[string]string) Expr {
	if len(m) == 0 {
		return e
	}
	return Memoized(func(e Expr, rec func(Expr) Expr) Expr {
		if t, ok := e.(*Tensor); ok {
			if to, ok := m[t.Name]; ok {
				idx := make([]Expr, len(t.Idx))
				for k, x := range t.Idx {
					idx[k] = rec(x)
				}
				return newTensor(to, idx, t.Sym, t.Int)
			}
		}
		return mapChildren(e, rec)
	})(e)
}

// TreeSize is the number of nodes of e written out as a tree, counted up
// to limit (see treeSize): a measure of what printing e would cost before
// common subexpressions are shared.
func TreeSize(e Expr, limit float64) float64 { return treeSize(e, limit) }

// Rewrite returns e with every subexpression x for which fn returns
// (y, true) replaced by y (not rewritten further); fn sees the
// subexpressions top down. The result is rebuilt in normal form.
func Rewrite(e Expr, fn func(x Expr) (Expr, bool)) Expr {
	return Memoized(func(e Expr, rec func(Expr) Expr) Expr {
		if y, ok := fn(e); ok {
			return y
		}
		return mapChildren(e, rec)
	})(e)
}
