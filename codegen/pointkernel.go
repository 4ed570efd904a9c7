package codegen

import (
	"fmt"
	"strings"

	"github.com/vigen-go/vigen/derive"
)

// pointBlock is a statement's contribution to a kernel evaluated from its
// derive.PointTerm: for each of the term's groups, a loop over the group's
// plates adding the group's nodes into the kernel's outputs.
type pointBlock struct {
	Origin string // the statement, "file:line:col: source"
	Term   *derive.PointTerm
	Groups []pointOutputs
}

// pointOutputs are what one group adds: to f the node F, to grad[a]
// Grad[a] and to hess[a, b] (a ≤ b, mirrored) Hess[a][b−a]; a nil slice
// adds nothing.
type pointOutputs struct {
	Plates []derive.Index
	F      int
	Grad   []int
	Hess   [][]int
}

// pointOutputsOf are the nodes a kernel adds for term: f, ∇f and ∇²f of
// each group's value (of the delta objective's, Eq. 17, with the
// covariance tensor cov, if delta), or f alone for a value kernel. The
// delta objective's Hessian holds fourth derivatives of f; where they
// would make more than maxPointCurvature nodes, ∇²f stands in for it, as
// for trees (objectiveKernel), and standIn reports it.
func pointOutputsOf(term *derive.PointTerm, delta, derivatives bool, cov string) (out []pointOutputs, standIn bool) {
	for _, gr := range term.Groups {
		v := gr.Value
		if delta {
			v = term.DeltaValue(v, cov)
		}
		po := pointOutputs{Plates: gr.Plates, F: v}
		if derivatives {
			hessOf := func(h int) [][]int {
				var rows [][]int
				for a := range term.X {
					var row []int
					for b := a; b < len(term.X); b++ {
						row = append(row, term.Hessian(h, a, b))
					}
					rows = append(rows, row)
				}
				return rows
			}
			for a := range term.X {
				po.Grad = append(po.Grad, term.Gradient(v, a))
			}
			switch {
			case !delta:
				po.Hess = hessOf(v)
			case term.Graph.Reachable(append([]int{v}, po.Grad...)...) > maxPointCurvature:
				// the gradient alone is over the limit: the fourth
				// derivatives are not built at all
				po.Hess, standIn = hessOf(gr.Value), true
			default:
				po.Hess = hessOf(v)
				roots := append([]int{v}, po.Grad...)
				for _, row := range po.Hess {
					roots = append(roots, row...)
				}
				if term.Graph.Reachable(roots...) > maxPointCurvature {
					po.Hess, standIn = hessOf(gr.Value), true
				}
			}
		}
		out = append(out, po)
	}
	return out, standIn
}

// maxPointCurvature is the most nodes a group of a delta kernel evaluates
// with the delta objective's own Hessian. The examples' groups have at most
// 38; a two-component mixture with ordered means and latent scales
// (mixlit) has 2,035 to 2,488 per point, 828 to 1,042 with ∇²f in its
// place; three-component mixtures 28,000 to 53,000, and 6,000 to 10,000.
var maxPointCurvature = 1000

// pointEmitter prints the nodes of one group: each node used more than
// once, or computed outside the loop and read inside it, gets a local;
// the others are written into the expression that reads them.
type pointEmitter struct {
	p     *goPrinter
	g     *derive.Graph
	uses  map[int]int
	named map[int]string
}

// emitPoints prints blk into sb: grad and hess name the kernel's output
// slices (empty for a value kernel). The statement's groups (its terms by
// the plates they sum over) share one emitter: a node that does not depend
// on the point is computed once, before the first group, whichever groups
// read it; the nodes of a point are computed inside their group's loop.
func (g *gen) emitPoints(sb *strings.Builder, p *goPrinter, blk pointBlock, grad, hess string) {
	gr := blk.Term.Graph
	dim := len(blk.Term.X)
	// what a group adds: f, ∇f, and the upper Hessian (mirrored)
	type acc struct {
		target, mirror string
		node           int
	}
	type group struct {
		plates []derive.Index
		accs   []acc
		hs     []hoistedTerm
	}
	var groups []group
	for _, po := range blk.Groups {
		gp := group{plates: po.Plates}
		if po.F >= 0 {
			gp.accs = append(gp.accs, acc{"f", "", po.F})
		}
		for a, id := range po.Grad {
			gp.accs = append(gp.accs, acc{fmt.Sprintf("%s[%d]", grad, a), "", id})
		}
		for a, row := range po.Hess {
			for k, id := range row {
				b := a + k
				mirror := ""
				if a != b {
					mirror = fmt.Sprintf("%s[%d]", hess, b*dim+a)
				}
				gp.accs = append(gp.accs, acc{fmt.Sprintf("%s[%d]", hess, a*dim+b), mirror, id})
			}
		}
		// terms c·d(n) with d(n) data alone: c times a sum computed once
		// per fit (pointaux.go)
		if len(po.Plates) > 0 {
			for k := range gp.accs {
				rest, h := g.splitHoistable(gr, gp.accs[k].node, po.Plates)
				gp.accs[k].node = rest
				for i := range h {
					h[i].target, h[i].mirror = gp.accs[k].target, gp.accs[k].mirror
				}
				gp.hs = append(gp.hs, h...)
			}
		}
		groups = append(groups, gp)
	}
	e := &pointEmitter{p: p, g: gr, uses: map[int]int{}, named: map[int]string{}}
	seen := map[int]bool{}
	var visit func(int)
	visit = func(id int) {
		if seen[id] {
			return
		}
		seen[id] = true
		for _, a := range gr.Nodes[id].Args {
			e.uses[a]++
			visit(a)
		}
	}
	// the nodes outside the loops read inside one: the nodes a loop
	// accumulates, and the operands of per-point nodes
	inLoop := map[int]bool{}
	for _, gp := range groups {
		for _, a := range gp.accs {
			e.uses[a.node]++
			visit(a.node)
			if len(gp.plates) > 0 {
				inLoop[a.node] = true
			}
		}
		for _, h := range gp.hs {
			e.uses[h.coef]++
			visit(h.coef)
		}
	}
	for id := range seen {
		if gr.Nodes[id].Point {
			for _, a := range gr.Nodes[id].Args {
				inLoop[a] = true
			}
		}
	}
	fmt.Fprintf(sb, "\t// %s\n", blk.Origin)
	for id := range gr.Nodes {
		if seen[id] && !gr.Nodes[id].Point && e.materialize(id, inLoop[id]) {
			e.define(sb, "\t", id)
		}
	}
	zero := func(id int) bool {
		x, ok := gr.IsConst(id)
		return ok && x == 0
	}
	for _, gp := range groups {
		// one statement per output: target += c1·sum1 + c2·sum2 + …
		var targets []string
		sums := map[string][]derive.Expr{}
		mirrorOf := map[string]string{}
		for _, h := range gp.hs {
			if zero(h.coef) {
				continue
			}
			if sums[h.target] == nil {
				targets = append(targets, h.target)
			}
			sums[h.target] = append(sums[h.target], derive.Mul(e.tree(h.coef), derive.T(h.aux)))
			mirrorOf[h.target] = h.mirror
		}
		for _, t := range targets {
			term := e.p.expr(derive.Add(sums[t]...), 1)
			fmt.Fprintf(sb, "\t%s += %s\n", t, term)
			if m := mirrorOf[t]; m != "" {
				fmt.Fprintf(sb, "\t%s += %s\n", m, term)
			}
		}
		indent := "\t"
		for _, pl := range gp.plates {
			sb.WriteString(indent)
			p.loopHead(sb, &Loop{Idx: pl})
			indent += "\t"
		}
		var local []int // the point's nodes named in this loop
		defineHere := func(id int) {
			e.define(sb, indent, id)
			if gr.Nodes[id].Point {
				local = append(local, id)
			}
		}
		// the point's nodes this group reads
		mine := map[int]bool{}
		var mark func(int)
		mark = func(id int) {
			if mine[id] || !gr.Nodes[id].Point {
				return
			}
			mine[id] = true
			for _, a := range gr.Nodes[id].Args {
				mark(a)
			}
		}
		for _, a := range gp.accs {
			mark(a.node)
		}
		for id := range gr.Nodes {
			if mine[id] && e.materialize(id, false) {
				defineHere(id)
			}
		}
		for _, a := range gp.accs {
			if zero(a.node) {
				continue
			}
			if _, ok := e.named[a.node]; !ok && a.mirror != "" && gr.Nodes[a.node].Op != derive.OpVar && gr.Nodes[a.node].Op != derive.OpConst {
				defineHere(a.node) // read twice: hess[a, b] and hess[b, a]
			}
			fmt.Fprintf(sb, "%s%s += %s\n", indent, a.target, e.expr(a.node, 1))
			if a.mirror != "" {
				fmt.Fprintf(sb, "%s%s += %s\n", indent, a.mirror, e.expr(a.node, 1))
			}
		}
		for range gp.plates {
			indent = indent[:len(indent)-1]
			sb.WriteString(indent + "}\n")
		}
		for _, id := range local {
			delete(e.named, id) // out of scope after the loop
		}
	}
}

// materialize reports whether node id gets a local: an operation read
// more than once, or (hoisted) one read inside a loop, or a data leaf
// other than a plain read used more than once.
func (e *pointEmitter) materialize(id int, hoisted bool) bool {
	n := e.g.Nodes[id]
	switch n.Op {
	case derive.OpConst, derive.OpVar:
		return false
	case derive.OpLeaf:
		_, plain := n.Leaf.(*derive.Tensor)
		return !plain && e.uses[id] > 1
	case derive.OpMax:
		return true // printed by define alone
	}
	return e.uses[id] > 1 || hoisted
}

func (e *pointEmitter) define(sb *strings.Builder, indent string, id int) {
	var s string
	if n := e.g.Nodes[id]; n.Op == derive.OpMax {
		args := make([]string, len(n.Args))
		for k, a := range n.Args {
			args[k] = e.expr(a, 0)
		}
		s = "max(" + strings.Join(args, ", ") + ")"
	} else {
		s = e.expr(id, 0)
	}
	e.p.gTemps++
	name := fmt.Sprintf("g%d", e.p.gTemps)
	for e.p.reserved[name] {
		name += "_"
	}
	e.p.reserved[name] = true
	e.named[id] = name
	fmt.Fprintf(sb, "%s%s := %s\n", indent, name, s)
}

// expr prints node id at precedence prec (goPrinter.expr's): a named node
// by its local, the others as derive expressions over placeholders.
func (e *pointEmitter) expr(id, prec int) string {
	return e.p.expr(e.tree(id), prec)
}

// tree is node id as a derive expression whose named nodes are
// placeholder temporaries (TempPrefix + local), printed as their names.
func (e *pointEmitter) tree(id int) derive.Expr {
	if name, ok := e.named[id]; ok {
		return derive.T(TempPrefix + name)
	}
	n := e.g.Nodes[id]
	switch n.Op {
	case derive.OpConst:
		return derive.N(n.V)
	case derive.OpLeaf:
		return n.Leaf
	case derive.OpVar:
		return e.g.Vars[n.Var].At
	}
	args := make([]derive.Expr, len(n.Args))
	for k, a := range n.Args {
		args[k] = e.tree(a)
	}
	switch n.Op {
	case derive.OpAdd:
		return derive.Add(args...)
	case derive.OpMul:
		return derive.Mul(args...)
	}
	return derive.CallE(n.Prim, args...)
}
