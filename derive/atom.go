package derive

// Per-point atoms. In normal form a product of sums is one Σ over all
// their indices and a product with a sum of Σ terms is multiplied out
// (expr.go), which keeps small expressions in the shape the scheduler
// wants. For large ones (a latent read by several coupled latents, whose
// f holds the Taylor terms of the others, Eq. 19) this multiplies out
// every per-point scalar such as Σ_i x[n,i]·w[i]·μ[i] with every other,
// and each derivative again. There, a Σ that is a scalar per data point
// (no free index but plates) is kept as one factor group(Σ …): products
// keep it as a factor, Diff differentiates it as one value (and keeps its
// derivative as one, see differ.atom), and the scheduler computes it once
// per point.

// factorSum rewrites a Σ whose body is a product of parts that
// read disjoint sets of its indices as the product of those parts' sums,
// or returns nil. Normal form merges a product of sums into one Σ over all
// their indices (Σ_J Π), so the f of a latent read by coupled latents is
// one Σ over the plate and the indices of every Taylor term it multiplies:
// Σ_n,i,i',q,q' x[n,i]·w[i]·x[n,i']·w[i']·S[q,q']·g(n). Differentiated
// there, each factor's product rule runs inside the loop over all the
// indices, and the derivative of each per-point scalar is multiplied out
// with every other. Instead, the indices other than plates split into
// connected components (two indices meet when a factor reads both); the
// factors of a component, summed over its indices, become one
// group(Σ_Jk …), a scalar per data point, when that sum has no free index
// but plates; the factors reading none of them stay outside (for a Σ with
// plate indices, under a Σ over the plates alone).
func factorSum(e *SumNode) Expr {
	var plates, rest []Index
	for _, j := range e.Idx {
		if j.Plate {
			plates = append(plates, j)
		} else {
			rest = append(rest, j)
		}
	}
	if len(rest) == 0 {
		return nil
	}
	fs := factorsOf(e.Body)
	// comp[k] is the component of rest[k] (union-find over the factors).
	comp := make([]int, len(rest))
	for k := range comp {
		comp[k] = k
	}
	find := func(k int) int {
		for comp[k] != k {
			k = comp[k]
		}
		return k
	}
	reads := make([][]int, len(fs))
	for fi, f := range fs {
		for k, j := range rest {
			if hasFree(f, j) {
				reads[fi] = append(reads[fi], k)
			}
		}
		for _, k := range reads[fi][min(1, len(reads[fi])):] {
			comp[find(k)] = find(reads[fi][0])
		}
	}
	var out []Expr
	var roots []int
	byRoot := map[int][]Expr{}
	for fi, f := range fs {
		if len(reads[fi]) == 0 {
			out = append(out, f)
			continue
		}
		r := find(reads[fi][0])
		if _, ok := byRoot[r]; !ok {
			roots = append(roots, r)
		}
		byRoot[r] = append(byRoot[r], f)
	}
	var inner []Index // indices left in the Σ around the product
	groups := 0
	for _, r := range roots {
		var idx []Index
		for k, j := range rest {
			if find(k) == r {
				idx = append(idx, j)
			}
		}
		s := Sum(idx, Mul(byRoot[r]...))
		if plateScalar(s) {
			out = append(out, Call1("group", s))
			groups++
		} else {
			out = append(out, byRoot[r]...)
			inner = append(inner, idx...)
		}
	}
	if groups == 0 || len(plates) == 0 && len(roots) == 1 && len(out) == 1 {
		return nil // nothing to split off: the Σ is one group already
	}
	return Sum(append(plates, inner...), Mul(out...))
}

// plateScalar reports whether e's free indices are all plates.
func plateScalar(e Expr) bool {
	for _, i := range e.Free() {
		if !i.Plate {
			return false
		}
	}
	return true
}

// atomize returns e with every Σ that is a scalar per data point kept as
// one factor group(Σ …), and the Σs over plates and other indices split by
// factorSum, rebuilt bottom-up.
func atomize(e Expr) Expr {
	return Memoized(func(e Expr, rec func(Expr) Expr) Expr {
		switch e := e.(type) {
		case *SumNode:
			return atomSum(Sum(e.Idx, rec(e.Body)))
		case *Call:
			if e.Prim.Name == "group" {
				if _, ok := e.Args[0].(*SumNode); ok {
					return e
				}
			}
		}
		return mapChildren(e, rec)
	})(e)
}

// atomSum applies atomize's rule to s, the result of Sum (a Σ, a sum of
// Σs or a multiple of one) whose body is atomized.
func atomSum(s Expr) Expr {
	switch s := s.(type) {
	case *AddNode, *MulNode:
		return mapChildren(s, atomSum)
	case *SumNode:
		r := Expr(s)
		if f := factorSum(s); f != nil {
			r = f
		}
		if rs, ok := r.(*SumNode); ok && perPoint(rs) {
			return Call1("group", rs)
		}
		return r
	}
	return s
}

// perPoint reports whether the Σ s is a scalar per data point: its free
// indices are plates, and it sums over a plate only if some are free.
func perPoint(s *SumNode) bool {
	if !plateScalar(s) {
		return false
	}
	if len(s.Free()) > 0 {
		return true
	}
	for _, j := range s.Idx {
		if j.Plate {
			return false
		}
	}
	return true
}

// HasPerPointAtoms reports whether e holds a group(Σ …) kept by atomize or
// differ.atom: then derivatives of e keep them (Diff's big mode), and
// codegen fuses the passes over the data that compute them.
func HasPerPointAtoms(e Expr) bool { return e.(interface{ hasAtoms() bool }).hasAtoms() }

// isSumAtom reports whether a, the argument of a group, makes it a
// per-point atom: a Σ, or a sum holding one (differ.atom).
func isSumAtom(a Expr) bool {
	switch a := a.(type) {
	case *SumNode:
		return true
	case *AddNode:
		return hasSumTerm(a)
	}
	return false
}
