package derive

// DropScalarIndices rewrites e without the indices over ScalarSize, the
// one-element vectors as which derive reads scalar latents (a Gaussian
// factor is over a vector): a Σ over such an index is its body at the one
// element, and a free one is read at it. Generated code then holds plain
// numbers where it would hold loops that run once and one-element buffers
// (issue 39: scalars are scalars).
func DropScalarIndices(e Expr) Expr {
	for _, i := range e.Free() {
		if i.Size == ScalarSize {
			e = SubstIdx(e, i, N(1))
		}
	}
	if !hasScalarIndex(e) {
		return e
	}
	return Memoized(func(e Expr, rec func(Expr) Expr) Expr {
		if s, ok := e.(*SumNode); ok {
			var keep []Index
			body := s.Body
			for _, i := range s.Idx {
				if i.Size == ScalarSize {
					body = SubstIdx(body, i, N(1)) // the element, 1-based
				} else {
					keep = append(keep, i)
				}
			}
			return Sum(keep, rec(body))
		}
		return mapChildren(e, rec)
	})(e)
}

// hasScalarIndex reports whether e binds an index over ScalarSize.
func hasScalarIndex(e Expr) bool {
	found := false
	Visit(e, func(x Expr) {
		if s, ok := x.(*SumNode); ok {
			for _, i := range s.Idx {
				found = found || i.Size == ScalarSize
			}
		}
	})
	return found
}
