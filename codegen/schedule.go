package codegen

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/vigen-go/vigen/derive"
)

// This file schedules derived expressions into loop nests: the step that
// turns Σ_n x[n,a]·(y[n] − σ(Σ_i x[n,i]θ[i])) into one pass over n that
// computes σ once and accumulates into the gradient, with no knowledge of any
// particular model. The pieces:
//
//   - every output term Σ_J Π factors is split into accumulation loops (the
//     summed indices that share a factor with an output index, plus the
//     output indices) and inner reductions (the other summed indices,
//     eliminated greedily, cheapest first, as in variable elimination);
//   - the loop order is the permutation with the least estimated work, where
//     each factor is evaluated at the depth of its deepest index (loop-
//     invariant hoisting);
//   - terms are merged into one loop tree by their loop prefixes (fusion),
//     and every subexpression is computed once per tree node, keyed by its
//     canonical key (common-subexpression elimination).

// Output is one quantity a kernel accumulates: Target[Free...] = Expr.
// Symmetric outputs have two free indices and are computed for Free[1] ≥
// Free[0] only, then mirrored.
type Output struct {
	Target    string
	Free      []derive.Index
	Expr      derive.Expr
	Symmetric bool
	Origin    string // the source statement this output implements (for comments)
}

// Stmt is a statement of the loop-nest IR.
type Stmt interface{ stmt() }

// Let binds a temporary: Name = Expr.
type Let struct {
	Name string
	Expr derive.Expr
}

// Reduce computes Name = Σ_Loop Body, or max_Loop Body when Max is set.
type Reduce struct {
	Name string
	Loop *Loop
	Body derive.Expr // accumulated at the innermost statement of Loop
	Max  bool
	// Fused are further sums over the same loop, each Name = Σ_Loop Expr:
	// the reductions of other terms sharing this pass and its temporaries
	// (see fuseReductions).
	Fused []*Let
}

// VecLet computes the vector temporary Name[j] = Body for every j of Loop:
// a function of one index needed inside an outer loop is computed once per
// element rather than once per outer iteration.
type VecLet struct {
	Name  string
	Size  string
	Loop  *Loop
	Body  derive.Expr
	Stmts []Stmt // instead of Loop and Body: statements accumulating into Name[j]
}

func (*VecLet) stmt() {}

// Loop iterates Idx over 0..size-1, or From..size-1 when From is set.
type Loop struct {
	Idx  derive.Index
	From string
	Body []Stmt
}

// Accum adds Expr into Target[At...]. Each of At is a loop index (*Ix) or,
// for a scatter, an integer tensor of 1-based values (grad[z[n]−1] += …).
// Upper accumulations into a symmetric matrix keep only contributions on or
// above the diagonal (the rest is mirrored). Origins are the source
// statements it implements.
type Accum struct {
	Target  string
	At      []derive.Expr
	Size    string // the size of the last dimension (for strides)
	Upper   bool
	Expr    derive.Expr
	Origins []string
}

func (a *Accum) key() string {
	k := a.Target
	for _, x := range a.At {
		k += "|" + x.Key()
	}
	if a.Upper {
		k += "|upper"
	}
	return k
}

// Syr adds the symmetric rank-1 update Alpha·x·xᵀ to the upper triangle
// (diagonal included) of the square matrix Target (runtime.SyrUpper). X is
// a vector temporary (a rank-0 read of its name) or a read of an input
// tensor whose last index is the loop index of the vector's elements (a
// row of it, read in place).
type Syr struct {
	Target  string
	Size    string
	Alpha   derive.Expr
	X       derive.Expr
	Origins []string
}

// Mirror copies the upper triangle of the square matrix Target to the lower.
type Mirror struct {
	Target string
	Size   string
}

func (*Let) stmt()    {}
func (*Reduce) stmt() {}
func (*Loop) stmt()   {}
func (*Accum) stmt()  {}
func (*Mirror) stmt() {}
func (*Syr) stmt()    {}

// TempPrefix marks tensors that are scheduler temporaries.
const TempPrefix = "$"

// node is a node of the loop tree under construction.
type node struct {
	parent *node
	idx    derive.Index // zero at the root
	from   string
	depth  int
	lets   []Stmt
	memo   map[string]derive.Expr
	// vals remembers what val returned at this node: temporaries, once
	// bound, stay, so the same expression evaluates to the same value, and
	// a subexpression shared by many terms is walked once.
	vals     map[string]derive.Expr
	accums   []Stmt
	syrs     []Stmt // rank-1 updates (Syr), after the accumulations
	children []*node
	reduce   bool // the loop of a Reduce: never shared with other terms
}

type scheduler struct {
	ntemp *int
	root  *node
	home  map[string]*node    // where each temporary is defined
	inner bool                // scheduling a vector temporary: no further vectors
	temps map[string][]string // tempsOf's memo
	// canon renames an index to the canonical one of vector keys (vecKey).
	canon map[derive.Index]func(derive.Expr) derive.Expr
	// rowVecs are the vectors rankOne computed inside loops, by the key
	// of their factors (factorSetKey), for other terms of the same
	// iteration to read instead of recomputing the product.
	rowVecs []rowVec
}

// rowVec is a vector temporary Name[j] = Π factors, computed in the block
// of the loop node home.
type rowVec struct {
	name string
	home *node
	keys []string // canonical keys of its factors, sorted
}

// Schedule lowers outputs into a statement list.
func Schedule(outs []Output) []Stmt {
	// A symmetric output whose terms involve no plate of data is cheaper
	// computed whole than as a triangle plus a mirror pass.
	outs = append([]Output(nil), outs...)
	for k := range outs {
		if outs[k].Symmetric && !plateTied(outs[k]) {
			outs[k].Symmetric = false
		}
	}
	s := &scheduler{ntemp: new(int), root: &node{memo: map[string]derive.Expr{}}, home: map[string]*node{}}
	// Higher derivatives first: their inner loops decide which values
	// become vectors, which the gradient and value then share.
	for k := len(outs) - 1; k >= 0; k-- {
		for _, t := range terms(outs[k].Expr) {
			s.addTerm(outs[k], t)
		}
	}
	s.mergeAccums(s.root)
	out := s.emit(s.root)
	if countStmts(out) >= fuseMin || holdsAtoms(outs) {
		out = fuseReductions(out)
	}
	mirrored := map[string]bool{}
	for _, o := range outs {
		if o.Symmetric && !mirrored[o.Target] {
			mirrored[o.Target] = true
			out = append(out, &Mirror{Target: o.Target, Size: o.Free[0].Size})
		}
	}
	return out
}

func terms(e derive.Expr) []derive.Expr {
	if a, ok := e.(*derive.AddNode); ok {
		return a.Terms
	}
	return []derive.Expr{e}
}

// split returns a term's numeric coefficient, summed indices and factors.
func split(t derive.Expr) (float64, []derive.Index, []derive.Expr) {
	c := 1.0
	var idx []derive.Index
	if m, ok := t.(*derive.MulNode); ok {
		if n, ok := m.Factors[0].(*derive.Num); ok {
			c = n.V
			t = derive.Mul(m.Factors[1:]...)
		}
	}
	if n, ok := t.(*derive.Num); ok {
		return c * n.V, nil, nil
	}
	if s, ok := t.(*derive.SumNode); ok {
		idx = s.Idx
		t = s.Body
	}
	var factors []derive.Expr
	if m, ok := t.(*derive.MulNode); ok {
		factors = append([]derive.Expr(nil), m.Factors...)
	} else {
		factors = []derive.Expr{t}
	}
	return c, idx, pullDeltas(factors)
}

// pullDeltas moves a delta that every term of a sum factor shares out of
// the sum: (y·δ(z[n],a) − σ·δ(z[n],a)) becomes δ(z[n],a)·(y − σ), so the
// delta can select an element (scatter) instead of costing a loop.
func pullDeltas(factors []derive.Expr) []derive.Expr {
	var out []derive.Expr
	for _, f := range factors {
		a, ok := f.(*derive.AddNode)
		if !ok {
			out = append(out, f)
			continue
		}
		var pulled []derive.Expr
		terms := append([]derive.Expr(nil), a.Terms...)
		for _, cand := range factorsOf(terms[0]) {
			switch cand.(type) {
			case *derive.IDelta, *derive.Delta:
			default:
				continue
			}
			shared := true
			for _, t := range terms[1:] {
				if !hasFactor(t, cand) {
					shared = false
					break
				}
			}
			if !shared {
				continue
			}
			for k, t := range terms {
				terms[k] = dropFactor(t, cand)
			}
			pulled = append(pulled, cand)
		}
		if len(pulled) == 0 {
			out = append(out, f)
			continue
		}
		rest := derive.Add(terms...)
		out = append(out, pulled...)
		out = append(out, factorsOf(rest)...)
	}
	return out
}

func hasFactor(t, f derive.Expr) bool {
	for _, x := range factorsOf(t) {
		if x.Key() == f.Key() {
			return true
		}
	}
	return false
}

func dropFactor(t, f derive.Expr) derive.Expr {
	var rest []derive.Expr
	dropped := false
	for _, x := range factorsOf(t) {
		if !dropped && x.Key() == f.Key() {
			dropped = true
			continue
		}
		rest = append(rest, x)
	}
	return derive.Mul(rest...)
}

func hasIndex(e derive.Expr, names map[string]bool) bool {
	for _, f := range e.Free() {
		if names[f.Name] {
			return true
		}
	}
	return false
}

func uses(e derive.Expr, j derive.Index) bool {
	for _, f := range e.Free() {
		if f.Name == j.Name {
			return true
		}
	}
	return false
}

const sizeGuess = 100.0

// sizeOf guesses an index's range: the entries of a bag outnumber the
// model's other dimensions.
func sizeOf(i derive.Index) float64 {
	if _, _, ok := i.Ragged(); ok {
		return 10 * sizeGuess
	}
	return sizeGuess
}

// eliminate turns summed indices into inner reductions, cheapest first, while
// an index is not tied to an output index. With no output indices the last
// summed index stays a loop (so terms over the same plate fuse).
func eliminate(idx []derive.Index, factors []derive.Expr, free []derive.Index) ([]derive.Index, []derive.Expr) {
	freeSet := map[string]bool{}
	for _, f := range free {
		freeSet[f.Name] = true
	}
	idx = append([]derive.Index(nil), idx...)
	for {
		if len(free) == 0 && len(idx) <= 1 {
			return idx, factors
		}
		best, bestCost, bestResult := -1, 0.0, 0.0
		for k, j := range idx {
			if isParentOf(j, idx) || freeSet[j.Name] {
				continue // a document index stays while its entries are summed; tied indices stay
			}
			tied := false
			vars := map[string]derive.Index{}
			for _, f := range factors {
				if !uses(f, j) {
					continue
				}
				if hasIndex(f, freeSet) {
					tied = true
				}
				for _, v := range f.Free() {
					vars[v.Name] = v
				}
			}
			if tied {
				continue
			}
			// Eliminate first the index whose reduction is smallest (the
			// result depends on the other indices), then the cheapest.
			cost, result := 1.0, 1.0
			for name, v := range vars {
				cost *= sizeOf(v)
				if name != j.Name {
					result *= sizeOf(v)
				}
			}
			better := best < 0 || result < bestResult || result == bestResult && (cost < bestCost || cost == bestCost && eliminateFirst(j, idx[best]))
			if better {
				best, bestCost, bestResult = k, cost, result
			}
		}
		if best < 0 {
			return idx, factors
		}
		j := idx[best]
		in, out := partition(factors, func(f derive.Expr) bool { return uses(f, j) })
		red := derive.Sum([]derive.Index{j}, derive.Mul(in...))
		factors = append(out, red)
		idx = append(idx[:best:best], idx[best+1:]...)
	}
}

// work estimates the cost of evaluating e once (as a tree: a shared
// subexpression counts at each use, but is walked once).
func work(e derive.Expr) float64 {
	switch e.(type) {
	case *derive.Num, *derive.Tensor, *derive.Ix, *derive.Shift, *derive.Delta:
		return 0
	}
	return derive.Memoized(work1)(e)
}

func work1(e derive.Expr, work func(derive.Expr) float64) float64 {
	loops := func(idx []derive.Index, body derive.Expr) float64 {
		w := 1.0
		for range idx {
			w *= sizeGuess
		}
		return w * (1 + work(body))
	}
	switch e := e.(type) {
	case *derive.Num, *derive.Tensor, *derive.Ix, *derive.Shift, *derive.Delta:
		return 0
	case *derive.SumNode:
		return loops(e.Idx, e.Body)
	case *derive.MaxNode:
		return loops(e.Idx, e.Body)
	case *derive.Call:
		w := 10.0
		for _, a := range e.Args {
			w += work(a)
		}
		return w
	}
	w := 1.0
	for _, c := range derive.Children(e) {
		w += work(c)
	}
	return w
}

// order picks the loop order with the least estimated work.
func order(loops []derive.Index, factors []derive.Expr, summed map[string]bool) []derive.Index {
	best := append([]derive.Index(nil), loops...)
	// Default preference: summed indices first, those over data (plates)
	// before those over model dimensions, so that a pass over the data
	// evaluates what each point needs once; then output indices.
	rank := func(j derive.Index) int {
		_, _, ragged := j.Ragged()
		switch {
		case summed[j.Name] && (j.Plate || ragged):
			return 0
		case summed[j.Name]:
			return 1
		}
		return 2
	}
	sort.SliceStable(best, func(a, b int) bool { return rank(best[a]) < rank(best[b]) })
	if !nestable(best) { // parents first
		sort.SliceStable(best, func(a, b int) bool { return isParentOf(best[a], []derive.Index{best[b]}) })
	}
	if len(loops) > 6 {
		return best
	}
	// what each factor costs, and the loops it reads, are the same in
	// every order: worked out once, not once per permutation
	costs := make([]factorCost, len(factors))
	for k, f := range factors {
		for _, v := range f.Free() {
			costs[k].free = append(costs[k].free, v.Name)
		}
		costs[k].work = 1 + work(f)
	}
	bestCost := orderCost(best, costs)
	permute(append([]derive.Index(nil), best...), 0, func(p []derive.Index) {
		if c := orderCost(p, costs); c < bestCost*(1-1e-12) {
			best, bestCost = append([]derive.Index(nil), p...), c
		}
	})
	return best
}

// factorCost is what orderCost needs of a factor: the names of its free
// indices and 1 + its work.
type factorCost struct {
	free []string
	work float64
}

func permute(p []derive.Index, k int, fn func([]derive.Index)) {
	if k == len(p) {
		fn(p)
		return
	}
	for i := k; i < len(p); i++ {
		p[k], p[i] = p[i], p[k]
		permute(p, k+1, fn)
		p[k], p[i] = p[i], p[k]
	}
}

// isParentOf reports whether j selects the document of a ragged index in idx.
func isParentOf(j derive.Index, idx []derive.Index) bool {
	for _, i := range idx {
		if _, parent, ok := i.Ragged(); ok && parent.Name == j.Name {
			return true
		}
	}
	return false
}

// nestable reports whether every ragged index in p comes after its parent.
func nestable(p []derive.Index) bool {
	for k, i := range p {
		if _, parent, ok := i.Ragged(); ok {
			if pos := posOf(p, parent); pos < 0 || pos > k {
				return false
			}
		}
	}
	return true
}

// orderCost estimates the work of the loop nest p over factors: each
// factor is evaluated once per iteration of the loops down to the
// innermost one it reads.
func orderCost(p []derive.Index, factors []factorCost) float64 {
	if !nestable(p) {
		return math.Inf(1)
	}
	pos := map[string]int{}
	for k, j := range p {
		pos[j.Name] = k + 1
	}
	c := 0.0
	for _, f := range factors {
		d := 0
		for _, v := range f.free {
			if pos[v] > d {
				d = pos[v]
			}
		}
		reps := 1.0
		for k := 0; k < d; k++ {
			reps *= sizeGuess
		}
		c += reps * f.work
	}
	return c
}

func (s *scheduler) addTerm(o Output, t derive.Expr) {
	c, idx, factors := split(t)
	// Scatter: a factor δ(z[n] selects a), a an output index, makes the
	// term add into element z[n]−1 instead of looping over a.
	at := make([]derive.Expr, len(o.Free))
	free := append([]derive.Index(nil), o.Free...)
	for k, a := range o.Free {
		at[k] = derive.IxE(a)
		for fi, f := range factors {
			d, ok := f.(*derive.IDelta)
			if !ok || d.I.Name != a.Name || usesAny(d.X, o.Free) {
				continue
			}
			at[k] = d.X
			rest := append(append([]derive.Expr(nil), factors[:fi]...), factors[fi+1:]...)
			factors = factorsOf(derive.SubstIdx(s.groupSums(derive.Mul(rest...), a), a, d.X))
			free = removeIndex(free, a)
			break
		}
	}
	// A Kronecker delta between two output indices confines the term to
	// the diagonal: δ(a,b)·g(a) adds g(a) at [a, a], with no loop over b.
	for k := len(o.Free) - 1; k > 0; k-- {
		b := o.Free[k]
		if !containsIdx(free, b) {
			continue
		}
		for fi, f := range factors {
			d, ok := f.(*derive.Delta)
			if !ok {
				continue
			}
			a, ok := d.Other(b)
			if !ok || !containsIdx(free, a) {
				continue
			}
			at[k] = derive.IxE(a)
			rest := append(append([]derive.Expr(nil), factors[:fi]...), factors[fi+1:]...)
			factors = factorsOf(derive.Subst(derive.Mul(rest...), b, a))
			free = removeIndex(free, b)
			break
		}
	}
	scattered := len(free) < len(o.Free)
	if m, ok := derive.Mul(factors...).(*derive.Num); ok {
		c *= m.V
		factors = nil
	}
	// Summed indices a scatter target reads must stay loops.
	tied := append([]derive.Index(nil), free...)
	for _, x := range at {
		for _, i := range x.Free() {
			if !containsIdx(tied, i) {
				tied = append(tied, i)
			}
		}
	}
	if !s.inner && len(free) == 1 && len(idx) > 0 && !tiesAny(idx, tied) && (linkedOnlyByLeaves(factors, idx, free) || noPlates(idx) && linksFree(factors, idx, free)) {
		// Σ_J g(J)·h(J, a) with h a plain read: the sum over J is a vector
		// over a (shared with other uses), not a loop nest.
		in, out := partition(factors, func(f derive.Expr) bool { return usesAny(f, idx) })
		factors = append(out, derive.Sum(idx, derive.Mul(in...)))
		idx = nil
	}
	idx, factors = eliminate(idx, factors, tied)
	if s.rankOne(o, c, idx, free, factors) {
		return
	}
	summed := map[string]bool{}
	for _, j := range idx {
		summed[j.Name] = true
	}
	loops := order(append(append([]derive.Index(nil), idx...), free...), factors, summed)
	// Walk (or grow) the loop tree along the chosen order.
	n := s.root
	var path []*node
	for _, j := range loops {
		from := ""
		if scattered {
			// no triangle restriction; Upper filters instead
		} else if o.Symmetric && j.Name == o.Free[1].Name && posOf(loops, o.Free[0]) < posOf(loops, j) {
			from = o.Free[0].Name
		} else if o.Symmetric && j.Name == o.Free[0].Name && posOf(loops, o.Free[1]) < posOf(loops, j) {
			// inner a with outer b: a ≤ b; expressed as a loop 0..b
			from = "<=" + o.Free[1].Name
		}
		n = s.child(n, j, from)
		path = append(path, n)
	}
	for k, j := range loops {
		if k > 0 {
			factors = s.useRowVecs(factors, j, path[k-1])
		}
	}
	// Partial products: factors grouped by the depth at which they can be
	// evaluated, multiplied out level by level.
	byDepth := make([][]derive.Expr, len(loops)+1)
	for _, f := range factors {
		d := depthIn(f, loops)
		byDepth[d] = append(byDepth[d], f)
	}
	// Evaluate the deepest factors first: a value an inner loop needs for
	// every element (a vector) then serves the outer levels too.
	vals := make([][]derive.Expr, len(byDepth))
	for d := len(loops); d >= 0; d-- {
		at := s.root
		if d > 0 {
			at = path[d-1]
		}
		for _, f := range byDepth[d] {
			vals[d] = append(vals[d], s.val(at, f))
		}
	}
	var prod derive.Expr = derive.N(c)
	for d := 0; d <= len(loops); d++ {
		if len(byDepth[d]) == 0 {
			continue
		}
		at := s.root
		if d > 0 {
			at = path[d-1]
		}
		fs := append([]derive.Expr{prod}, vals[d]...)
		prod = derive.Mul(fs...)
		if d < len(loops) && !isScalarLocal(prod) {
			// also plain array reads: Go does not hoist loads out of loops
			prod = s.let(at, prod)
		}
	}
	var origins []string
	if o.Origin != "" {
		origins = []string{o.Origin}
	}
	size := ""
	if len(o.Free) > 0 {
		size = o.Free[len(o.Free)-1].Size
	}
	n.accums = append(n.accums, &Accum{Target: o.Target, At: at, Size: size, Upper: o.Symmetric && scattered, Expr: prod, Origins: origins})
}

// rankOne schedules a term c·Σ_J r(J)·u_J(a)·u_J(b) of a symmetric output
// [a, b], in which no factor reads both a and b and the factors reading b
// are those reading a with a renamed b (the Hessian of a log-sum-exp, or a
// GLM's Σ_n w_n x_na x_nb), as one symmetric rank-1 update per iteration
// of the sums: u computed once per iteration (or read in place, a row of
// an input), then runtime.SyrUpper on the triangle, vectorized, instead of
// a nest of two loops. It reports whether it did; u must read every summed
// index (else the sums belong elsewhere: eliminate).
func (s *scheduler) rankOne(o Output, c float64, idx, free []derive.Index, factors []derive.Expr) bool {
	if s.inner || !o.Symmetric || len(free) != 2 || len(o.Free) != 2 || len(idx) == 0 {
		return false
	}
	a, b := o.Free[0], o.Free[1]
	if a.Size != b.Size || free[0].Name != a.Name || free[1].Name != b.Name {
		return false
	}
	var fa, fb, rest []derive.Expr
	for _, f := range factors {
		ua, ub := uses(f, a), uses(f, b)
		switch {
		case ua && ub:
			return false
		case ua:
			fa = append(fa, f)
		case ub:
			fb = append(fb, f)
		default:
			rest = append(rest, f)
		}
	}
	if len(fa) == 0 {
		return false
	}
	u := derive.Mul(fa...)
	if derive.Subst(u, a, b).Key() != derive.Mul(fb...).Key() {
		return false
	}
	for _, j := range idx {
		if !uses(u, j) {
			return false
		}
	}
	summed := map[string]bool{}
	for _, j := range idx {
		summed[j.Name] = true
	}
	loops := order(append([]derive.Index(nil), idx...), factors, summed)
	if len(loops) != len(idx) {
		return false
	}
	n := s.root
	for _, j := range loops {
		n = s.child(n, j, "")
	}
	var x derive.Expr
	keys := s.canonKeys(fa, a)
	for _, rv := range s.rowVecs {
		if rv.home == n && slices.Equal(rv.keys, keys) {
			x = derive.T(rv.name) // the same vector, computed for another term
		}
	}
	if t, ok := u.(*derive.Tensor); x == nil && ok && rowRead(t, a) {
		x = t // a row of an input, read in place
	} else if x == nil {
		name := s.temp()
		// Not a reduce node: calls of a alone inside become vectors at the
		// root (exp θ once per evaluation, not once per iteration).
		loop := &node{parent: n, idx: a, depth: n.depth + 1, memo: map[string]derive.Expr{}}
		body := s.val(loop, u)
		n.lets = append(n.lets, &VecLet{Name: name, Size: a.Size, Loop: &Loop{Idx: a, Body: s.emit(loop)}, Body: body})
		s.home[name] = n
		s.rowVecs = append(s.rowVecs, rowVec{name: name, home: n, keys: keys})
		x = derive.T(name)
	}
	alpha := []derive.Expr{derive.N(c)}
	for _, f := range rest {
		alpha = append(alpha, s.val(n, f))
	}
	var origins []string
	if o.Origin != "" {
		origins = []string{o.Origin}
	}
	// terms of the same vector share one update, their weights summed
	for _, st := range n.syrs {
		if r := st.(*Syr); r.Target == o.Target && r.X.Key() == x.Key() {
			r.Alpha = derive.Add(r.Alpha, derive.Mul(alpha...))
			r.Origins = appendNew(r.Origins, origins...)
			return true
		}
	}
	n.syrs = append(n.syrs, &Syr{Target: o.Target, Size: a.Size, Alpha: derive.Mul(alpha...), X: x, Origins: origins})
	return true
}

// canonKeys returns the keys of fs with j renamed canonically, sorted.
func (s *scheduler) canonKeys(fs []derive.Expr, j derive.Index) []string {
	keys := make([]string, len(fs))
	for k, f := range fs {
		keys[k] = s.vecKey(f, j)
	}
	sort.Strings(keys)
	return keys
}

// useRowVecs replaces, among the factors fs of a term, those whose product
// over index j a vector of rowVecs holds by a read of that vector, where
// the vector is visible from at (at lies in its home's block) and
// available before j's loop. It returns fs unchanged otherwise.
func (s *scheduler) useRowVecs(fs []derive.Expr, j derive.Index, at *node) []derive.Expr {
	if len(s.rowVecs) == 0 {
		return fs
	}
	for _, rv := range s.rowVecs {
		visible := false
		for p := at; p != nil; p = p.parent {
			if p == rv.home {
				visible = true
				break
			}
		}
		if !visible {
			continue
		}
		// match rv's factors as a sub-multiset of those of fs reading j
		used := make([]bool, len(fs))
		matched := 0
		for _, key := range rv.keys {
			for k, f := range fs {
				if !used[k] && uses(f, j) && s.vecKey(f, j) == key {
					used[k] = true
					matched++
					break
				}
			}
		}
		if matched != len(rv.keys) {
			continue
		}
		out := []derive.Expr{derive.T(rv.name, derive.IxE(j))}
		for k, f := range fs {
			if !used[k] {
				out = append(out, f)
			}
		}
		return out
	}
	return fs
}

// rowRead reports whether t is a plain read of an input whose last index
// is a and whose other indices do not read a: a contiguous row over a.
func rowRead(t *derive.Tensor, a derive.Index) bool {
	if strings.HasPrefix(t.Name, TempPrefix) || strings.HasPrefix(t.Name, "#") || t.Sym || t.Int || len(t.Idx) == 0 || !isLeaf(t) {
		return false
	}
	if _, _, ok := derive.Shifted(t.Name); ok {
		return false
	}
	last, ok := t.Idx[len(t.Idx)-1].(*derive.Ix)
	if !ok || last.I.Name != a.Name {
		return false
	}
	for _, x := range t.Idx[:len(t.Idx)-1] {
		if uses(x, a) {
			return false
		}
	}
	return true
}

func posOf(loops []derive.Index, j derive.Index) int {
	for k, l := range loops {
		if l.Name == j.Name {
			return k
		}
	}
	return -1
}

func depthIn(e derive.Expr, loops []derive.Index) int {
	d := 0
	for _, v := range e.Free() {
		if p := posOf(loops, v) + 1; p > d {
			d = p
		}
	}
	return d
}

func (s *scheduler) child(n *node, j derive.Index, from string) *node {
	for _, c := range n.children {
		if !c.reduce && c.idx == j && c.from == from {
			return c
		}
	}
	c := &node{parent: n, idx: j, from: from, depth: n.depth + 1, memo: map[string]derive.Expr{}}
	n.children = append(n.children, c)
	return c
}

func isLeaf(e derive.Expr) bool {
	switch e := e.(type) {
	case *derive.Num, *derive.Ix, *derive.Shift, *derive.Delta:
		return true
	case *derive.IDelta:
		return isLeaf(e.X)
	case *derive.Tensor:
		for _, x := range e.Idx {
			if !isLeaf(x) {
				return false
			}
		}
		return true
	}
	return false
}

// placement returns the ancestor of n (or n) where e can be evaluated: the
// deepest node whose loop index e uses or where a temporary e reads is
// defined.
func (s *scheduler) placement(n *node, e derive.Expr) *node {
	free := map[string]bool{}
	for _, v := range e.Free() {
		free[v.Name] = true
	}
	homes := map[*node]bool{}
	for _, t := range s.tempsOf(e) {
		homes[s.home[t]] = true
	}
	for p := n; p != nil; p = p.parent {
		if p.parent == nil || free[p.idx.Name] || homes[p] {
			return p
		}
	}
	return n
}

// tempsOf returns the temporaries e reads, memoized by key: placement
// asks for every subexpression val meets, and the subexpressions of
// derivatives are shared many times over.
func (s *scheduler) tempsOf(e derive.Expr) []string {
	if t, ok := e.(*derive.Tensor); ok && strings.HasPrefix(t.Name, TempPrefix) {
		return []string{t.Name}
	}
	cs := derive.Children(e)
	if len(cs) == 0 {
		return nil
	}
	if s.temps == nil {
		s.temps = map[string][]string{}
	}
	k := e.Key()
	if ts, ok := s.temps[k]; ok {
		return ts
	}
	var ts []string
	for _, c := range cs {
		for _, t := range s.tempsOf(c) {
			if !slices.Contains(ts, t) {
				ts = append(ts, t)
			}
		}
	}
	s.temps[k] = ts
	return ts
}

func (s *scheduler) lookup(n *node, key string) (derive.Expr, bool) {
	for p := n; p != nil; p = p.parent {
		if v, ok := p.memo[key]; ok {
			return v, true
		}
	}
	return nil, false
}

func (s *scheduler) temp() string {
	*s.ntemp++
	return fmt.Sprintf("%st%d", TempPrefix, *s.ntemp)
}

// let binds e (already rewritten in terms of temporaries) at its placement.
func (s *scheduler) let(n *node, e derive.Expr) derive.Expr {
	if v, ok := s.lookup(n, e.Key()); ok {
		return v
	}
	at := s.placement(n, e)
	name := s.temp()
	at.lets = append(at.lets, &Let{Name: name, Expr: e})
	s.home[name] = at
	v := derive.T(name)
	at.memo[e.Key()] = v
	return v
}

// val returns an expression equal to e that can be used at n, binding
// temporaries for calls, reductions and anything hoisted out of n.
func (s *scheduler) val(n *node, e derive.Expr) derive.Expr {
	if isLeaf(e) {
		return e
	}
	if v, ok := s.lookup(n, e.Key()); ok {
		return v
	}
	if v, ok := n.vals[e.Key()]; ok {
		return v
	}
	v := s.val1(n, e)
	if n.vals == nil {
		n.vals = map[string]derive.Expr{}
	}
	n.vals[e.Key()] = v
	return v
}

// val1 is val for an e not yet evaluated at n.
func (s *scheduler) val1(n *node, e derive.Expr) derive.Expr {
	at := s.placement(n, e)
	if v := s.vector(n, at, e); v != nil {
		return v
	}
	switch e := e.(type) {
	case *derive.SumNode:
		return s.reduction(at, e.Key(), e.Idx, e.Body, false)
	case *derive.MaxNode:
		return s.reduction(at, e.Key(), e.Idx, e.Body, true)
	case *derive.Tensor:
		return rebuildTensor(e, s.vals(at, e.Idx))
	case *derive.Call:
		return s.let(at, derive.CallE(e.Prim, s.vals(at, e.Args)...))
	case *derive.AddNode:
		return s.letAbove(n, at, derive.Add(s.vals(at, e.Terms)...))
	case *derive.MulNode:
		return s.letAbove(n, at, derive.Mul(s.vals(at, e.Factors)...))
	}
	return e
}

// vals is val at at of each of xs.
func (s *scheduler) vals(at *node, xs []derive.Expr) []derive.Expr {
	out := make([]derive.Expr, len(xs))
	for k, x := range xs {
		out[k] = s.val(at, x)
	}
	return out
}

// letAbove is r as a temporary at at when at is above n, where r is
// needed; else r itself.
func (s *scheduler) letAbove(n, at *node, r derive.Expr) derive.Expr {
	if at != n {
		return s.let(at, r)
	}
	return r
}

func rebuildTensor(t *derive.Tensor, idx []derive.Expr) derive.Expr {
	switch {
	case t.Sym && len(idx) == 2:
		return derive.TSym(t.Name, idx[0], idx[1])
	case t.Int:
		return derive.TInt(t.Name, idx...)
	}
	return derive.T(t.Name, idx...)
}

// reduction schedules Σ_J body (or max_J body) as a temporary at n.
func (s *scheduler) reduction(n *node, key string, idx []derive.Index, body derive.Expr, isMax bool) derive.Expr {
	// A bound index may carry the name of an enclosing loop (Σ_i … f(Σ_i …)):
	// rename it, or the inner loop would clobber the outer one.
	idx = append([]derive.Index(nil), idx...)
	for k, j := range idx {
		for p := n; p != nil; p = p.parent {
			if p.parent != nil && p.idx.Name == j.Name {
				fresh := derive.Index{Name: j.Name + "'", Size: j.Size, Plate: j.Plate}
				for usesName(body, fresh.Name) || enclosing(n, fresh.Name) {
					fresh.Name += "'"
				}
				body = derive.Subst(body, j, fresh)
				idx[k] = fresh
				break
			}
		}
	}
	var factors []derive.Expr
	if isMax {
		factors = []derive.Expr{body}
		for len(idx) > 1 { // max over several indices: nest
			inner := derive.Max(idx[1:], body)
			factors, idx = []derive.Expr{inner}, idx[:1]
			body = inner
		}
	} else {
		_, _, factors = split(body)
		if len(idx) > 1 {
			idx, factors = eliminate(idx, factors, nil)
		}
		if len(idx) == 1 {
			factors = s.useRowVecs(factors, idx[0], n)
		}
	}
	j := idx[0]
	loop := &node{parent: n, idx: j, depth: n.depth + 1, memo: map[string]derive.Expr{}, reduce: true}
	fs := make([]derive.Expr, len(factors))
	for k, f := range factors {
		fs[k] = s.val(loop, f)
	}
	red := derive.Mul(fs...)
	name := s.temp()
	n.lets = append(n.lets, &Reduce{Name: name, Loop: &Loop{Idx: j, Body: s.emit(loop)}, Body: red, Max: isMax})
	s.home[name] = n
	v := derive.T(name)
	n.memo[key] = v
	return v
}

func (s *scheduler) emit(n *node) []Stmt {
	out := append([]Stmt(nil), n.lets...)
	out = append(out, n.accums...)
	out = append(out, n.syrs...)
	for _, c := range n.children {
		out = append(out, &Loop{Idx: c.idx, From: c.from, Body: s.emit(c)})
	}
	return out
}

// mergeAccums combines the accumulations into one target at a node into a
// single statement, factoring out the factors they share:
// g[a] += t·x[n,a]; g[a] += y[n]·x[n,a]  becomes  g[a] += (t + y[n])·x[n,a],
// with the sum hoisted to where it can be computed.
func (s *scheduler) mergeAccums(n *node) {
	var out []Stmt
	groups := map[string][]*Accum{}
	var order []string
	for _, st := range n.accums {
		a := st.(*Accum)
		if _, ok := groups[a.key()]; !ok {
			order = append(order, a.key())
		}
		groups[a.key()] = append(groups[a.key()], a)
	}
	for _, tgt := range order {
		g := groups[tgt]
		if len(g) == 1 {
			out = append(out, g[0])
			continue
		}
		// Common factors, by key, present in every term.
		count := map[string]int{}
		first := map[string]derive.Expr{}
		lists := make([][]derive.Expr, len(g))
		for k, a := range g {
			lists[k] = factorsOf(a.Expr)
			seen := map[string]bool{}
			for _, f := range lists[k] {
				if _, isNum := f.(*derive.Num); isNum || seen[f.Key()] {
					continue
				}
				seen[f.Key()] = true
				count[f.Key()]++
				first[f.Key()] = f
			}
		}
		var common []derive.Expr
		var keys []string
		for k, c := range count {
			if c == len(g) {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			common = append(common, first[k])
		}
		var rests []derive.Expr
		for k := range g {
			var rest []derive.Expr
			used := map[string]bool{}
			for _, f := range lists[k] {
				if containsKey(keys, f.Key()) && !used[f.Key()] {
					used[f.Key()] = true
					continue
				}
				rest = append(rest, f)
			}
			rests = append(rests, derive.Mul(rest...))
		}
		sum := s.val(n, derive.Add(rests...))
		var origins []string
		for _, a := range g {
			origins = appendNew(origins, a.Origins...)
		}
		m := *g[0]
		m.Expr, m.Origins = derive.Mul(append(common, sum)...), origins
		out = append(out, &m)
	}
	n.accums = out
	for _, c := range n.children {
		s.mergeAccums(c)
	}
}

func factorsOf(e derive.Expr) []derive.Expr {
	if m, ok := e.(*derive.MulNode); ok {
		return m.Factors
	}
	return []derive.Expr{e}
}

func containsKey(keys []string, k string) bool {
	for _, x := range keys {
		if x == k {
			return true
		}
	}
	return false
}

func appendNew(list []string, xs ...string) []string {
	for _, x := range xs {
		found := false
		for _, y := range list {
			found = found || y == x
		}
		if !found {
			list = append(list, x)
		}
	}
	return list
}

// Origins returns the source statements the accumulations in ss implement,
// in first-seen order.
func Origins(ss []Stmt) []string {
	var out []string
	for _, st := range ss {
		switch st := st.(type) {
		case *Accum:
			out = appendNew(out, st.Origins...)
		case *Syr:
			out = appendNew(out, st.Origins...)
		case *Loop:
			out = appendNew(out, Origins(st.Body)...)
		}
	}
	return out
}

func usesAny(e derive.Expr, idx []derive.Index) bool {
	for _, i := range idx {
		if uses(e, i) {
			return true
		}
	}
	return false
}

func removeIndex(xs []derive.Index, j derive.Index) []derive.Index {
	var out []derive.Index
	for _, x := range xs {
		if x.Name != j.Name {
			out = append(out, x)
		}
	}
	return out
}

func containsIdx(xs []derive.Index, j derive.Index) bool {
	for _, x := range xs {
		if x.Name == j.Name {
			return true
		}
	}
	return false
}

// vector materializes a call that depends on one loop index j only, when
// evaluating it at its placement would repeat it for every iteration of a
// loop enclosing j's: the values go into a slice computed once, before the
// outermost loop, and the use reads slice[j].
func (s *scheduler) vector(n, at *node, e derive.Expr) derive.Expr {
	if s.inner {
		return nil
	}
	// Only indices of enclosing loops count: others (a unit index passed
	// to the kernel) are fixed for the whole evaluation.
	var loopFree []derive.Index
	for _, f := range e.Free() {
		for p := at; p != nil && p.parent != nil; p = p.parent {
			if p.idx.Name == f.Name {
				loopFree = append(loopFree, f)
				break
			}
		}
	}
	if len(loopFree) != 1 || at.parent == nil {
		return nil
	}
	if len(loopFree) == 1 && at.idx.Name == loopFree[0].Name {
		// an existing vector of the same values serves any use
		if v, ok := s.root.memo[s.vecKey(e, loopFree[0])]; ok {
			return derive.T(v.(*derive.Tensor).Name, derive.IxE(loopFree[0]))
		}
	}
	switch e.(type) {
	case *derive.Call:
		// worth it only when an outer loop would repeat it
		if at.reduce || at.parent.parent == nil {
			return nil
		}
	case *derive.SumNode:
		// a reduction per element, shared by every use (f's θᵀt and ∇f's
		// t); only over a model dimension, never a plate of data
	default:
		return nil
	}
	j := loopFree[0]
	if at.idx.Name != j.Name {
		return nil
	}
	if _, isSum := e.(*derive.SumNode); isSum && j.Plate {
		return nil
	}
	key := s.vecKey(e, j)
	if v, ok := s.root.memo[key]; ok {
		return derive.T(v.(*derive.Tensor).Name, derive.IxE(j))
	}
	if _, _, ragged := j.Ragged(); ragged {
		return nil
	}
	// Temporaries e reads must be available at the root.
	ok := true
	derive.Visit(e, func(x derive.Expr) {
		if t, isT := x.(*derive.Tensor); isT && strings.HasPrefix(t.Name, TempPrefix) && s.home[t.Name] != s.root {
			ok = false
		}
	})
	if !ok {
		return nil
	}
	if sum, ok := e.(*derive.SumNode); ok {
		return s.sumVector(sum, j)
	}
	name := s.temp()
	loop := &node{parent: s.root, idx: j, depth: 1, memo: map[string]derive.Expr{}, reduce: true}
	body := s.valInside(loop, e)
	s.root.lets = append(s.root.lets, &VecLet{Name: name, Size: j.Size, Loop: &Loop{Idx: j, Body: s.emit(loop)}, Body: body})
	s.home[name] = s.root
	s.root.memo[key] = derive.T(name)
	return derive.T(name, derive.IxE(j))
}

// groupSums replaces, in e (a term about to scatter into element x[n] of
// its output index a), each sum over data whose value depends on a alone,
// Σ_n' g(n')·δ(z[n'], a) with factors free of n' pulled out, by a read of
// a vector of its values over a, computed once (sumVector): substituted
// a := z[n], the sum would otherwise be evaluated again for every n, the
// count of a group recomputed for each of its points.
func (s *scheduler) groupSums(e derive.Expr, a derive.Index) derive.Expr {
	if s.inner || a.Plate {
		return e
	}
	if _, _, ragged := a.Ragged(); ragged {
		return e
	}
	return derive.Rewrite(e, func(x derive.Expr) (derive.Expr, bool) {
		sum, ok := x.(*derive.SumNode)
		if !ok || !uses(sum, a) {
			return nil, false
		}
		in, out := partition(factorsOf(sum.Body), func(f derive.Expr) bool { return usesAny(f, sum.Idx) })
		inner := derive.Sum(sum.Idx, derive.Mul(in...))
		free := inner.Free()
		if len(free) != 1 || free[0].Name != a.Name {
			return nil, false
		}
		innerSum, ok := inner.(*derive.SumNode)
		if !ok {
			return nil, false
		}
		return derive.Mul(append(out, s.sumVector(innerSum, a))...), true
	})
}

// sumVector returns a read, at j, of the vector of the values of the sum e
// over index j (its only free index), computed once before the kernel's
// loops and shared by every use: accumulated in the order the data is laid
// out, for n { for j { v[j] += … } }, scheduled like an output.
func (s *scheduler) sumVector(e *derive.SumNode, j derive.Index) derive.Expr {
	key := s.vecKey(e, j)
	if v, ok := s.root.memo[key]; ok {
		return derive.T(v.(*derive.Tensor).Name, derive.IxE(j))
	}
	name := s.temp()
	sub := &scheduler{ntemp: s.ntemp, root: &node{parent: s.root, memo: map[string]derive.Expr{}}, home: s.home, inner: true}
	sub.root.depth = s.root.depth
	sub.addTerm(Output{Target: tempName(name), Free: []derive.Index{j}, Expr: e}, e)
	sub.mergeAccums(sub.root)
	s.root.lets = append(s.root.lets, &VecLet{Name: name, Size: j.Size, Stmts: sub.emit(sub.root)})
	s.home[name] = s.root
	s.root.memo[key] = derive.T(name)
	return derive.T(name, derive.IxE(j))
}

// vecKey is the memo key of a vector of the values of e over index j: e's
// key with j renamed to a canonical name, so that the same values computed
// for any index share one vector.
func (s *scheduler) vecKey(e derive.Expr, j derive.Index) string {
	if s.canon == nil {
		s.canon = map[derive.Index]func(derive.Expr) derive.Expr{}
	}
	sub, ok := s.canon[j]
	if !ok {
		sub = derive.Substituter(j, derive.Index{Name: "#vec", Size: j.Size})
		s.canon[j] = sub
	}
	return "vec:" + sub(e).Key()
}

// valInside evaluates a call or reduction at n without materializing it
// again.
func (s *scheduler) valInside(n *node, e derive.Expr) derive.Expr {
	if r, ok := e.(*derive.SumNode); ok {
		return s.reduction(n, r.Key(), r.Idx, r.Body, false)
	}
	c := e.(*derive.Call)
	args := make([]derive.Expr, len(c.Args))
	for k, a := range c.Args {
		args[k] = s.val(n, a)
	}
	return derive.CallE(c.Prim, args...)
}

// linkedOnlyByLeaves reports whether every factor that reads a summed index
// is a plain tensor read, and some of them also read the free index.
func linkedOnlyByLeaves(factors []derive.Expr, idx, free []derive.Index) bool {
	linked := false
	for _, f := range factors {
		if !usesAny(f, idx) {
			continue
		}
		// Every factor under the sum must be a plain read: anything
		// costlier belongs in the fused pass over the data.
		if _, ok := f.(*derive.Tensor); !ok || !isLeaf(f) {
			return false
		}
		if usesAny(f, free) {
			linked = true
		}
	}
	return linked
}

// isScalarLocal reports whether e is a constant or an unindexed local
// (a temporary or a scalar input), which costs nothing to reuse.
func isScalarLocal(e derive.Expr) bool {
	switch e := e.(type) {
	case *derive.Num:
		return true
	case *derive.Tensor:
		return len(e.Idx) == 0
	}
	return false
}

func usesName(e derive.Expr, name string) bool {
	found := false
	derive.Visit(e, func(x derive.Expr) {
		if found {
			return
		}
		switch x := x.(type) {
		case *derive.SumNode:
			for _, i := range x.Idx {
				found = found || i.Name == name
			}
		case *derive.MaxNode:
			for _, i := range x.Idx {
				found = found || i.Name == name
			}
		}
		for _, f := range x.Free() {
			found = found || f.Name == name
		}
	})
	return found
}

func enclosing(n *node, name string) bool {
	for p := n; p != nil && p.parent != nil; p = p.parent {
		if p.idx.Name == name {
			return true
		}
	}
	return false
}

// eliminateFirst breaks ties between indices to eliminate: vector indices
// derive made up go before the model's plates (which stay loops, so the
// passes over the data fuse), then by name.
func eliminateFirst(i, j derive.Index) bool {
	if i.Plate != j.Plate {
		return !i.Plate
	}
	return i.Name < j.Name
}

// noPlates reports whether none of idx is a model plate: sums over vector
// components are cheap to turn into shared vectors.
func noPlates(idx []derive.Index) bool {
	for _, i := range idx {
		if i.Plate {
			return false
		}
	}
	return true
}

// linksFree reports whether some factor reads both a summed and a free index.
func linksFree(factors []derive.Expr, idx, free []derive.Index) bool {
	for _, f := range factors {
		if usesAny(f, idx) && usesAny(f, free) {
			return true
		}
	}
	return false
}

// plateTied reports whether some term of o sums over a plate index that a
// factor shares with an output index (so the term loops over the data).
func plateTied(o Output) bool {
	for _, t := range terms(o.Expr) {
		_, idx, factors := split(t)
		for _, j := range idx {
			if !j.Plate {
				continue
			}
			for _, f := range factors {
				if uses(f, j) && usesAny(f, o.Free) {
					return true
				}
			}
		}
	}
	return false
}

// tiesAny reports whether any of idx is in tied (a summed index a scatter
// target reads, which must stay a loop).
func tiesAny(idx, tied []derive.Index) bool {
	for _, i := range idx {
		if containsIdx(tied, i) {
			return true
		}
	}
	return false
}

// partition splits factors into those for which in holds and the others,
// each in order.
func partition(factors []derive.Expr, in func(derive.Expr) bool) (yes, no []derive.Expr) {
	for _, f := range factors {
		if in(f) {
			yes = append(yes, f)
		} else {
			no = append(no, f)
		}
	}
	return yes, no
}
