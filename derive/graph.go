package derive

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// A Graph is a scalar expression graph whose nodes are shared: every node
// is built once (hash-consed by operator and operand ids), and Diff
// differentiates a node once per variable, so the derivative of a graph of
// s nodes adds O(s) nodes, never copies of its subtrees (issue 39: the
// cheap-gradient principle of Griewank & Walther, applied symbolically).
// Its leaves are constants, variables (coordinates of latents, evaluated
// at a point) and data expressions (derive Exprs whose only free indices
// are the plates of the loop that evaluates the graph). Generated code
// evaluates it as straight-line code, one statement per shared node
// (codegen/pointkernel.go).
type Graph struct {
	Nodes []GNode
	// Vars are the variables, in the order their ids were given.
	Vars  []GVar
	ids   map[string]int
	diffs map[[2]int]int
	parts map[int][]int // partials, by call node
}

// GOp is the operator of a graph node.
type GOp uint8

// The operators of a Graph.
const (
	OpConst GOp = iota // a number, V
	OpLeaf             // a data expression, Leaf
	OpVar              // the variable Var, evaluated at Vars[Var].At
	OpAdd              // the sum of Args
	OpMul              // the product of Args
	OpCall             // Prim applied to Args
	OpMax              // the largest of Args, whose derivatives are taken as zero
)

// GNode is one node of a Graph. Args are ids of earlier nodes: the ids are
// a topological order.
type GNode struct {
	Op   GOp
	V    float64
	Leaf Expr
	Var  int
	Prim *Prim
	Args []int
	// Deps is the set of variables the node depends on (bit k for Vars[k]).
	Deps uint64
	// Point marks a node that depends on a leaf with a free index: it is
	// evaluated once per data point; the others once per evaluation.
	Point bool
}

// GVar is a variable of a Graph: one coordinate of a latent, evaluated at
// At (the latent's current value, or its variational mean).
type GVar struct {
	Latent string
	Elem   int // the flat 0-based coordinate
	At     Expr
}

// maxGraphVars is the most variables a Graph has (GNode.Deps is a bit set).
const maxGraphVars = 64

// NewGraph returns an empty graph.
func NewGraph() *Graph {
	return &Graph{ids: map[string]int{}, diffs: map[[2]int]int{}, parts: map[int][]int{}}
}

func (g *Graph) add(n GNode, key string) int {
	if id, ok := g.ids[key]; ok {
		return id
	}
	chargeNode()
	for _, a := range n.Args {
		n.Deps |= g.Nodes[a].Deps
		n.Point = n.Point || g.Nodes[a].Point
	}
	g.Nodes = append(g.Nodes, n)
	id := len(g.Nodes) - 1
	g.ids[key] = id
	return id
}

// Const is the node of the number v.
func (g *Graph) Const(v float64) int {
	if v == 0 {
		v = 0 // −0 and 0 are one node
	}
	return g.add(GNode{Op: OpConst, V: v}, "c"+strconv.FormatUint(math.Float64bits(v), 16))
}

// Clone is a copy of g that can grow without changing g: a Derivation's
// graphs are read by any number of generations at once, and each adds the
// derivatives its kernels need to its own copy.
func (g *Graph) Clone() *Graph {
	c := &Graph{Nodes: slices.Clone(g.Nodes), Vars: slices.Clone(g.Vars), ids: make(map[string]int, len(g.ids)), diffs: make(map[[2]int]int, len(g.diffs)), parts: make(map[int][]int, len(g.parts))}
	for k, v := range g.parts {
		c.parts[k] = v
	}
	for k, v := range g.ids {
		c.ids[k] = v
	}
	for k, v := range g.diffs {
		c.diffs[k] = v
	}
	return c
}

// IsConst reports whether node id is a number, and which.
func (g *Graph) IsConst(id int) (float64, bool) {
	n := g.Nodes[id]
	return n.V, n.Op == OpConst
}

// LeafOf is the node of the data expression e (a number if e is one).
func (g *Graph) LeafOf(e Expr) int {
	if n, ok := e.(*Num); ok {
		return g.Const(n.V)
	}
	return g.add(GNode{Op: OpLeaf, Leaf: e, Point: len(e.Free()) > 0}, "l"+e.Key())
}

// Variable is the node of the variable for coordinate elem of latent,
// evaluated at at; the first call for a coordinate gives it its id.
func (g *Graph) Variable(latent string, elem int, at Expr) int {
	key := "v" + latent + "\x00" + strconv.Itoa(elem)
	if id, ok := g.ids[key]; ok {
		return id
	}
	if len(g.Vars) == maxGraphVars {
		panic(notPoint{fmt.Sprintf("more than %d latent coordinates", maxGraphVars)})
	}
	g.Vars = append(g.Vars, GVar{Latent: latent, Elem: elem, At: at})
	k := len(g.Vars) - 1
	return g.add(GNode{Op: OpVar, Var: k, Deps: 1 << k}, key)
}

func argsKey(op string, args []int) string {
	var sb strings.Builder
	sb.WriteString(op)
	for _, a := range args {
		sb.WriteByte(',')
		sb.WriteString(strconv.Itoa(a))
	}
	return sb.String()
}

// Add is the node of the sum of xs: nested sums flattened, numbers
// folded, zeros dropped.
func (g *Graph) Add(xs ...int) int {
	var args []int
	c := 0.0
	for _, x := range xs {
		n := g.Nodes[x]
		switch n.Op {
		case OpConst:
			c += n.V
		case OpAdd:
			for _, a := range n.Args {
				if v, ok := g.IsConst(a); ok {
					c += v
				} else {
					args = append(args, a)
				}
			}
		default:
			args = append(args, x)
		}
	}
	if c != 0 {
		args = append(args, g.Const(c))
	}
	switch len(args) {
	case 0:
		return g.Const(0)
	case 1:
		return args[0]
	}
	slices.Sort(args)
	return g.add(GNode{Op: OpAdd, Args: args}, argsKey("+", args))
}

// Mul is the node of the product of xs: nested products flattened,
// numbers folded, ones dropped, zero if a factor is.
func (g *Graph) Mul(xs ...int) int {
	var args []int
	c := 1.0
	for _, x := range xs {
		n := g.Nodes[x]
		switch n.Op {
		case OpConst:
			c *= n.V
		case OpMul:
			for _, a := range n.Args {
				if v, ok := g.IsConst(a); ok {
					c *= v
				} else {
					args = append(args, a)
				}
			}
		default:
			args = append(args, x)
		}
	}
	if c == 0 {
		return g.Const(0)
	}
	if len(args) == 0 {
		return g.Const(c)
	}
	if c != 1 {
		args = append(args, g.Const(c))
	}
	if len(args) == 1 {
		return args[0]
	}
	slices.Sort(args)
	return g.add(GNode{Op: OpMul, Args: args}, argsKey("*", args))
}

// Call is the node of prim applied to args, a number if they all are.
func (g *Graph) Call(prim *Prim, args ...int) int {
	xs := make([]float64, len(args))
	all := true
	for k, a := range args {
		xs[k], all = g.Nodes[a].V, all && g.Nodes[a].Op == OpConst
	}
	if all {
		if v := prim.Eval(xs); !math.IsNaN(v) && !math.IsInf(v, 0) {
			return g.Const(v)
		}
	}
	if prim.Name == "pow" && len(args) == 2 && g.Nodes[args[1]].Op == OpConst {
		// exp(x)^c = exp(c·x): one exp whose derivatives are itself
		// times constants, where powers of exp(x) would each be
		// differentiated into another power (issue 39, item 3)
		if b := g.Nodes[args[0]]; b.Op == OpCall && b.Prim.Name == "exp" {
			return g.Call(MustPrim("exp"), g.Mul(args[1], b.Args[0]))
		}
	}
	return g.add(GNode{Op: OpCall, Prim: prim, Args: slices.Clone(args)}, argsKey("f"+prim.Name, args))
}

// Max is the node of the largest of xs, a shift that the expressions
// holding it are exactly invariant to (derive's MaxNode, the shift of a
// stable log-sum-exp): Diff takes its derivatives as zero.
func (g *Graph) Max(xs ...int) int {
	args := slices.Clone(xs)
	slices.Sort(args)
	args = slices.Compact(args)
	if len(args) == 1 {
		return args[0]
	}
	all, m := true, math.Inf(-1)
	for _, a := range args {
		v, ok := g.IsConst(a)
		all, m = all && ok, math.Max(m, v)
	}
	if all {
		return g.Const(m)
	}
	return g.add(GNode{Op: OpMax, Args: args}, argsKey("max", args))
}

// Diff is the node of ∂x/∂Vars[v], built once per (x, v).
func (g *Graph) Diff(x, v int) int {
	if g.Nodes[x].Deps&(1<<v) == 0 {
		return g.Const(0)
	}
	if d, ok := g.diffs[[2]int{x, v}]; ok {
		return d
	}
	n := g.Nodes[x]
	var d int
	switch n.Op {
	case OpVar:
		d = g.Const(1)
	case OpAdd:
		ts := make([]int, 0, len(n.Args))
		for _, a := range n.Args {
			ts = append(ts, g.Diff(a, v))
		}
		d = g.Add(ts...)
	case OpMul:
		var ts []int
		for k, a := range n.Args {
			if g.Nodes[a].Deps&(1<<v) == 0 {
				continue
			}
			fs := append(slices.Clone(n.Args[:k]), n.Args[k+1:]...)
			ts = append(ts, g.Mul(append(fs, g.Diff(a, v))...))
		}
		d = g.Add(ts...)
	case OpCall:
		var ts []int
		parts := g.partials(x)
		for k, a := range n.Args {
			if g.Nodes[a].Deps&(1<<v) == 0 {
				continue
			}
			ts = append(ts, g.Mul(parts[k], g.Diff(a, v)))
		}
		d = g.Add(ts...)
	default:
		d = g.Const(0)
	}
	g.diffs[[2]int{x, v}] = d
	return d
}

// partials are the nodes of ∂x/∂args of the call x, from the primitive
// table's Partials: they are derive Exprs over the arguments and the call
// itself, which stand in as placeholder tensors and are read back as the
// argument nodes.
func (g *Graph) partials(x int) []int {
	if ps, ok := g.parts[x]; ok {
		return ps
	}
	n := g.Nodes[x]
	args := make([]Expr, len(n.Args))
	bind := map[string]int{}
	for k, a := range n.Args {
		name := "$arg" + strconv.Itoa(k)
		if v, ok := g.IsConst(a); ok {
			args[k] = N(v) // a constant exponent stays a number (pow)
		} else {
			args[k] = T(name)
			bind[name] = a
		}
	}
	self := CallE(n.Prim, args...)
	ps := n.Prim.Partials(args, self)
	out := make([]int, len(ps))
	for k, p := range ps {
		out[k] = g.fromPlaceholders(p, bind, self.Key(), x)
	}
	g.parts[x] = out
	return out
}

// fromPlaceholders is the node of a partial derivative e written over the
// placeholder tensors of bind and the call itself (key selfKey, node self).
func (g *Graph) fromPlaceholders(e Expr, bind map[string]int, selfKey string, self int) int {
	if e.Key() == selfKey {
		return self
	}
	switch e := e.(type) {
	case *Num:
		return g.Const(e.V)
	case *Tensor:
		if id, ok := bind[e.Name]; ok && len(e.Idx) == 0 {
			return id
		}
	case *Call:
		args := make([]int, len(e.Args))
		for k, a := range e.Args {
			args[k] = g.fromPlaceholders(a, bind, selfKey, self)
		}
		return g.Call(e.Prim, args...)
	case *AddNode:
		ts := make([]int, len(e.Terms))
		for k, t := range e.Terms {
			ts[k] = g.fromPlaceholders(t, bind, selfKey, self)
		}
		return g.Add(ts...)
	case *MulNode:
		fs := make([]int, len(e.Factors))
		for k, f := range e.Factors {
			fs[k] = g.fromPlaceholders(f, bind, selfKey, self)
		}
		return g.Mul(fs...)
	}
	panic(fmt.Sprintf("derive: a partial derivative in the primitive table that a Graph cannot read: %s", String(e)))
}

// EvalGraph evaluates node x with the variables at vars and the leaves by
// leaf (a tree-walking check for tests, independent of generated code).
func (g *Graph) EvalGraph(x int, vars []float64, leaf func(Expr) float64) float64 {
	vals := make([]float64, x+1)
	for id := 0; id <= x; id++ {
		n := g.Nodes[id]
		switch n.Op {
		case OpConst:
			vals[id] = n.V
		case OpLeaf:
			vals[id] = leaf(n.Leaf)
		case OpVar:
			vals[id] = vars[n.Var]
		case OpAdd:
			s := 0.0
			for _, a := range n.Args {
				s += vals[a]
			}
			vals[id] = s
		case OpMul:
			p := 1.0
			for _, a := range n.Args {
				p *= vals[a]
			}
			vals[id] = p
		case OpMax:
			m := math.Inf(-1)
			for _, a := range n.Args {
				m = math.Max(m, vals[a])
			}
			vals[id] = m
		case OpCall:
			xs := make([]float64, len(n.Args))
			for k, a := range n.Args {
				xs[k] = vals[a]
			}
			vals[id] = n.Prim.Eval(xs)
		}
	}
	return vals[x]
}

// Reachable is the number of nodes roots read, themselves included: the
// size of the code that evaluates them.
func (g *Graph) Reachable(roots ...int) int {
	seen := map[int]bool{}
	var visit func(int)
	visit = func(id int) {
		if seen[id] {
			return
		}
		seen[id] = true
		for _, a := range g.Nodes[id].Args {
			visit(a)
		}
	}
	for _, r := range roots {
		visit(r)
	}
	return len(seen)
}
