package derive

import (
	"fmt"
	"strings"
)

// Point terms (issue 39). A statement that reads a few coordinates of
// latents — scalars, and vectors of a literal size at literal indices, as a
// mixture's components are read — has a log density that is, per data
// point, a scalar function ℓ(x, y) of θ's coordinates x and the other
// latents' y. Differentiated as an index-notation tree, its Eq. 19
// expectation and third derivatives multiply out into thousands of
// monomials (a two-component mixture: 25,000 lines of Go). As a Graph, it
// is one straight-line program per point, and every derivative adds one
// shared copy of it:
//
//	G(x) = ℓ(x, ȳ) + ½ Σ_q Σ_ij Σ^q_ij ∂²ℓ/∂y_i∂y_j   (Eq. 19 over each q(y))
//
// is the point's term of f; ∇G, ∇²G and the delta contraction (Eq. 17)
// are its derivatives in x. A statement's Part gets a PointTerm when its
// expectation was Eq. 19 or an exact rule Eq. 19 agrees with (degree ≤ 2),
// so the graph computes the same f as the tree.

// PointTerm is a Part as graphs evaluated once per data point.
type PointTerm struct {
	Graph *Graph
	// Groups are the part's terms by the plates they sum over (none for a
	// statement outside loops).
	Groups []PointGroup
	// X[a] is the id of the graph variable θ_a (a in 0..Dim-1).
	X []int
}

// Clone is pt over a copy of its graph (Graph.Clone).
func (pt *PointTerm) Clone() *PointTerm {
	c := *pt
	c.Graph = pt.Graph.Clone()
	return &c
}

// PointGroup is the term of f summed over Plates: Σ_plates G.
type PointGroup struct {
	Plates []Index
	Value  int
}

// notPoint is the panic value with which a conversion gives up: the part
// keeps its tree.
type notPoint struct{ why string }

// maxPointDim is the largest literal size of a latent a point term reads
// (its graph has a variable per coordinate, and the kernels Dim² Hessian
// entries of them).
const maxPointDim = 8

// maxPointUnroll is the most terms a Σ over literal sizes unrolls into.
const maxPointUnroll = 64

// maxPointNodes bounds the graph of ℓ: a larger statement keeps its tree.
const maxPointNodes = 4000

// pointRules are the expectation rules Eq. 19 agrees with: Eq. 19 itself
// without substituted means, and the exact rules for terms of degree ≤ 2
// in a Gaussian latent (there Eq. 19 is exact).
var pointRules = []string{"Taylor (Eq. 19) in ", "exact: Gaussian moments up to second order", "exact: Normal moments up to second order", "exact: linear in ", "exact: degree 2 in "}

// literalDim is the number of coordinates of a latent dimension of a
// literal size (1 for a scalar's), or false.
func literalDim(size string) (int, bool) {
	if size == ScalarSize {
		return 1, true
	}
	return fixedSize(size)
}

// pointTerm returns lp (a statement's log density, before expectations)
// as a PointTerm of o's latent, with the expectations under others taken
// by Eq. 19, or nil and why not.
func pointTerm(o *Objective, lp Expr, others []*QFactor, log []Approx) (pt *PointTerm, why string) {
	if o.Unit != nil {
		return nil, "a per-unit latent"
	}
	for _, a := range log {
		ok := false
		for _, r := range pointRules {
			ok = ok || strings.HasPrefix(a.Rule, r) && !strings.Contains(a.Rule, "substituted (first-order)")
		}
		if !ok {
			return nil, "expectation rule " + a.Rule
		}
	}
	latents := map[string]bool{o.Latent.Name: true}
	dims := map[string]int{}
	n, ok := literalDim(o.Dim)
	if !ok || n > maxPointDim {
		return nil, "θ is not of a small literal size"
	}
	dims[o.Latent.Name] = n
	qOf := map[string]*QFactor{}
	for _, q := range others {
		if !q.IsGaussianVector() || q.Rows || q.row || len(q.Dims) != 1 {
			return nil, "reads " + q.Var + ", which is not one Gaussian vector"
		}
		k, ok := literalDim(q.Dims[0])
		if !ok || k > maxPointDim {
			return nil, "reads " + q.Var + ", which is not of a small literal size"
		}
		latents[q.Var], dims[q.Var], qOf[q.Var] = true, k, q
	}
	defer func() {
		if r := recover(); r != nil {
			np, ok := r.(notPoint)
			if !ok {
				panic(r)
			}
			pt, why = nil, np.why
		}
	}()
	c := &pointConv{g: NewGraph(), latents: latents, dims: dims, theta: o.Latent.Name, q: qOf, memo: map[string]int{}}
	pt = &PointTerm{Graph: c.g}
	for a := range n {
		pt.X = append(pt.X, c.g.Variable(o.Latent.Name, a, T(o.Latent.Name, N(float64(a+1)))))
	}
	type group struct {
		plates []Index
		terms  []int
	}
	var groups []*group
	terms := []Expr{lp}
	if a, ok := lp.(*AddNode); ok {
		terms = a.Terms
	}
	for _, t := range terms {
		var plates, lit []Index
		body := t
		var outside []Expr // c of c·Σ_n g(n), c free of n: the loop Σ_n c·g(n)
		if m, ok := t.(*MulNode); ok {
			var sums []*SumNode
			var rest []Expr
			for _, f := range m.Factors {
				if s, ok := f.(*SumNode); ok {
					sums = append(sums, s)
				} else {
					rest = append(rest, f)
				}
			}
			if len(sums) == 1 {
				t, outside = sums[0], rest
			}
		}
		if s, ok := t.(*SumNode); ok {
			for _, j := range s.Idx {
				if _, ok := literalDim(j.Size); ok && !j.Plate {
					lit = append(lit, j)
					continue
				}
				if _, _, ok := j.Ragged(); ok {
					return nil, "a sum over a bag's entries"
				}
				// a plate, or an index over a size of the model that a
				// vector statement sums over: a loop of the term
				plates = append(plates, j)
			}
			body = Sum(lit, s.Body)
			if len(outside) > 0 {
				body = Mul(append(outside, body)...)
			}
		}
		var gr *group
		for _, h := range groups {
			if sameSizes(h.plates, plates) && renamable(plates, h.plates) {
				gr = h
				for k := range plates {
					body = Subst(body, plates[k], h.plates[k])
				}
				break
			}
		}
		if gr == nil {
			gr = &group{plates: plates}
			groups = append(groups, gr)
		}
		c.plates = gr.plates
		gr.terms = append(gr.terms, c.conv(body))
		if len(c.g.Nodes) > maxPointNodes {
			return nil, fmt.Sprintf("more than %d nodes", maxPointNodes)
		}
	}
	for _, gr := range groups {
		l := c.g.Add(gr.terms...)
		pt.Groups = append(pt.Groups, PointGroup{Plates: gr.plates, Value: c.taylor(l)})
	}
	return pt, ""
}

// renamable reports whether renaming the plates from to to, one after the
// other, is one simultaneous renaming: no plate takes the name another
// one had.
func renamable(from, to []Index) bool {
	for k := range to {
		for m := range from {
			if m != k && from[m].Name == to[k].Name {
				return false
			}
		}
	}
	return true
}

func sameSizes(a, b []Index) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if a[k].Size != b[k].Size {
			return false
		}
	}
	return true
}

// pointConv converts an Expr into graph nodes.
type pointConv struct {
	g       *Graph
	latents map[string]bool
	dims    map[string]int
	theta   string
	q       map[string]*QFactor
	plates  []Index // the plates of the term being converted
	memo    map[string]int
	shapes  func(Expr) shape
}

// shape is what conv needs to know of a subexpression: whether it reads a
// latent, and whether it holds a sum or maximum (which a leaf, printed as
// one Go expression, cannot).
type shape struct{ latent, reduces bool }

// shapeOf is e's shape, memoized over the shared subexpressions.
func (c *pointConv) shapeOf(e Expr) shape {
	if c.shapes == nil {
		c.shapes = Memoized(func(e Expr, rec func(Expr) shape) shape {
			var s shape
			switch x := e.(type) {
			case *Tensor:
				s.latent = c.latents[x.Name]
			case *SumNode, *MaxNode:
				s.reduces = true
			}
			for _, ch := range Children(e) {
				cs := rec(ch)
				s.latent, s.reduces = s.latent || cs.latent, s.reduces || cs.reduces
			}
			return s
		})
	}
	return c.shapes(e)
}

// leafOK reports whether e, which reads no latent, can be one leaf: no
// sums, and no free index but the term's plates.
func (c *pointConv) leafOK(e Expr) bool {
	for _, j := range e.Free() {
		if !containsIndex(c.plates, j) {
			return false
		}
	}
	return !c.shapeOf(e).reduces
}

func (c *pointConv) conv(e Expr) int {
	key := e.Key()
	if id, ok := c.memo[key]; ok {
		return id
	}
	id := c.convNode(e)
	c.memo[key] = id
	return id
}

func (c *pointConv) convNode(e Expr) int {
	if !c.shapeOf(e).latent && c.leafOK(e) {
		return c.g.LeafOf(e)
	}
	switch e := e.(type) {
	case *Num:
		return c.g.Const(e.V)
	case *Tensor:
		if !c.latents[e.Name] {
			break
		}
		if len(e.Idx) > 1 {
			panic(notPoint{e.Name + " read at two indices"})
		}
		elem := 0
		if len(e.Idx) == 1 {
			n, ok := e.Idx[0].(*Num)
			if !ok {
				panic(notPoint{e.Name + " read at an index that is not a literal"})
			}
			elem = int(n.V) - 1
		}
		if elem < 0 || elem >= c.dims[e.Name] {
			panic(notPoint{fmt.Sprintf("%s read at %d", e.Name, elem+1)})
		}
		at := T(e.Name, N(float64(elem+1)))
		if q := c.q[e.Name]; q != nil {
			at = q.Params[0].At([]Expr{N(float64(elem + 1))})
		}
		return c.g.Variable(e.Name, elem, at)
	case *Call:
		args := make([]int, len(e.Args))
		for k, a := range e.Args {
			args[k] = c.conv(a)
		}
		return c.g.Call(e.Prim, args...)
	case *AddNode:
		ts := make([]int, len(e.Terms))
		for k, t := range e.Terms {
			ts[k] = c.conv(t)
		}
		return c.g.Add(ts...)
	case *MulNode:
		fs := make([]int, len(e.Factors))
		for k, f := range e.Factors {
			fs[k] = c.conv(f)
		}
		return c.g.Mul(fs...)
	case *SumNode:
		return c.g.Add(c.unrolled(e.Idx, e.Body)...)
	case *MaxNode:
		return c.g.Max(c.unrolled(e.Idx, e.Body)...)
	}
	panic(notPoint{fmt.Sprintf("%T %s", e, String(e))})
}

// unrolled converts body at every assignment of the literal-size indices
// idx (a sum's terms, a maximum's candidates).
func (c *pointConv) unrolled(idx []Index, body Expr) []int {
	{
		count := 1
		for _, j := range idx {
			n, ok := literalDim(j.Size)
			if !ok || j.Plate {
				panic(notPoint{"a sum over " + j.Name + " inside the point's term"})
			}
			count *= n
			if count > maxPointUnroll {
				panic(notPoint{"a sum of more than " + fmt.Sprint(maxPointUnroll) + " literal terms"})
			}
		}
		bodies := []Expr{body}
		for _, j := range idx {
			n, _ := literalDim(j.Size)
			var next []Expr
			for _, b := range bodies {
				for v := range n {
					next = append(next, SubstIdx(b, j, N(float64(v+1))))
				}
			}
			bodies = next
		}
		ts := make([]int, len(bodies))
		for k, b := range bodies {
			ts[k] = c.conv(b)
		}
		return ts
	}
}

// taylor is Eq. 19 over each other latent's q, on the graph: the term
// G = ℓ + ½ Σ_q Σ_ij Σ^q_ij ∂²ℓ/∂y_i∂y_j, its covariances read as leaves.
func (c *pointConv) taylor(l int) int {
	terms := []int{l}
	g := c.g
	for v := range g.Vars {
		gv := g.Vars[v]
		q := c.q[gv.Latent]
		if q == nil {
			continue
		}
		dv := g.Diff(l, v)
		for w := range g.Vars {
			gw := g.Vars[w]
			if gw.Latent != gv.Latent || gw.Elem < gv.Elem {
				continue
			}
			h := g.Diff(dv, w)
			if x, ok := g.IsConst(h); ok && x == 0 {
				continue
			}
			half := 0.5
			if gw.Elem != gv.Elem {
				half = 1 // Σ symmetric: the (i, j) and (j, i) terms
			}
			cov := g.LeafOf(q.Params[1].At([]Expr{N(float64(gv.Elem + 1)), N(float64(gw.Elem + 1))}))
			terms = append(terms, g.Mul(g.Const(half), cov, h))
		}
	}
	return g.Add(terms...)
}

// Hessian is the node of ∂²G/∂θ_a∂θ_b of a group's value G.
func (pt *PointTerm) Hessian(value, a, b int) int {
	return pt.Graph.Diff(pt.Graph.Diff(value, pt.X[a]), pt.X[b])
}

// Gradient is the node of ∂G/∂θ_a.
func (pt *PointTerm) Gradient(value, a int) int { return pt.Graph.Diff(value, pt.X[a]) }

// DeltaValue is the node of the delta-method objective of Eq. 17 of a
// group's value G: G + ½ Tr{∇²G C} with C the covariance of q(θ), read as
// leaves of the tensor cov.
func (pt *PointTerm) DeltaValue(value int, cov string) int {
	g := pt.Graph
	terms := []int{value}
	for a := range pt.X {
		for b := a; b < len(pt.X); b++ {
			h := pt.Hessian(value, a, b)
			if x, ok := g.IsConst(h); ok && x == 0 {
				continue
			}
			half := 0.5
			if a != b {
				half = 1
			}
			terms = append(terms, g.Mul(g.Const(half), g.LeafOf(TSym(cov, N(float64(a+1)), N(float64(b+1)))), h))
		}
	}
	return g.Add(terms...)
}
