// Package derive is vigen's symbolic engine. It works on scalar expressions
// in index (Einstein) notation: a vector or matrix quantity is written through
// its element at symbolic indices, and sums over plates and vector indices stay
// symbolic (Sum nodes), never unrolled. From a checked model (spec/ir) it
// builds, for each nonconjugate latent θ, the function f(θ) of Wang & Blei
// Eq. 12, its gradient, its Hessian and the delta-method term Tr{∇²f(μ)Σ}
// with its gradient (Eq. 17), all simplified to a normal form the code
// generator schedules into loops.
//
// Normal form. Expressions are built only through the constructors in this
// file, which simplify as they go: sums and products are flattened, constants
// folded, like terms combined, a Sum over an Add is distributed, nested Sums
// in a product are merged into one multi-index Sum (Σ_J Π factors), and a
// Kronecker delta δ(j, a) under Σ_j is eliminated by substituting a for j.
// Every node carries a canonical key (bound indices renamed), so structurally
// equal subexpressions compare equal; codegen uses the keys for common
// subexpression elimination.
//
// Point terms. Written out in normal form, the derivatives of a statement
// that reads a few coordinates of latents (a mixture's components, scalar
// scales, a let chain) multiply out into thousands of monomials. Such a
// statement's part also gets a PointTerm (point.go): its log density per
// data point as a Graph (graph.go) whose nodes are shared, differentiated
// node by node, which the kernels evaluate instead of the trees.
package derive

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Index is a symbolic index ranging over 0..Size-1, where Size names a size
// of the model. A ragged index runs over the (term, count) entries of one
// document of a bag: its Size is "@bag|parent|parentSize" (see Ragged), and
// it is meaningful only inside a loop over its parent index.
type Index struct {
	Name string
	Size string
	// Plate marks the loop index of a model plate (data points, documents,
	// bag entries), as opposed to the indices derive makes up for vector
	// components; the scheduler prefers to keep plates as loops.
	Plate bool
}

// RaggedSize is the Size of an index over the entries of bag[parent].
func RaggedSize(bag string, parent Index) string {
	return "@" + bag + "|" + parent.Name + "|" + parent.Size
}

// Ragged reports whether i runs over a bag document's entries, and if so
// the bag's name and the parent index selecting the document.
func (i Index) Ragged() (bag string, parent Index, ok bool) {
	if !strings.HasPrefix(i.Size, "@") {
		return "", Index{}, false
	}
	parts := strings.SplitN(i.Size[1:], "|", 3)
	if len(parts) != 3 {
		return "", Index{}, false
	}
	return parts[0], Index{Name: parts[1], Size: parts[2]}, true
}

func (i Index) String() string { return i.Name }

// Expr is a node of the expression IR. Nodes are immutable; build them with
// the constructors (N, T, TSym, TInt, IxE, Dlt, IDlt, CallE, Call1, Pow,
// Add, Mul, Sum, Max).
type Expr interface {
	// Key is a canonical string: equal keys mean equal expressions (up to
	// renaming of bound indices).
	Key() string
	// Free returns the free indices of the expression, sorted by name.
	Free() []Index
	node()
}

type base struct {
	key  string
	free []Index
	// sdepth is sumDepth of the node, computed once at construction.
	sdepth int
	// grouped marks a node holding a group(…) call (see chainProduct).
	grouped bool
	// atoms marks a node holding a group(Σ …) (HasPerPointAtoms).
	atoms bool
}

// mkBase is the base of a node with the given key, free indices and
// children.
func mkBase(key string, free []Index, children ...Expr) base {
	return mkBaseGrouped(key, free, false, children...)
}

// mkBaseGrouped is mkBase for a node that is a group(…) call if grouped.
func mkBaseGrouped(key string, free []Index, grouped bool, children ...Expr) base {
	chargeNode()
	b := base{free: free, grouped: grouped}
	for _, c := range children {
		if d := sumDepth(c); d > b.sdepth {
			b.sdepth = d
		}
		b.grouped = b.grouped || c.(interface{ isGrouped() bool }).isGrouped()
		b.atoms = b.atoms || c.(interface{ hasAtoms() bool }).hasAtoms()
	}
	b.key = compactKey(key, free, b.grouped)
	return b
}

// mkSumBase is the base of a Sum over body.
func mkSumBase(key string, free []Index, body Expr) base {
	b := mkBase(key, free, body)
	if n := strings.Count(key, "Σ"); n > b.sdepth {
		b.sdepth = n
	}
	return b
}

// maxKeyLen bounds the length of a key. A key is built from its children's
// keys, so written out in full it grows with the size of the expression
// tree, which differentiation makes polynomial (product rule) in the depth
// of the expression: a longer key is replaced by a digest, a SHA-256 of the
// full key (which itself holds its children's keys or digests) followed by
// the node's free indices. Equal expressions still get equal keys, and
// unequal ones different keys: the free indices stay visible, so a Sum
// renaming them in its key (sumNode) renames them in the digest too, and
// the bound indices hidden inside are part of what is hashed. Sums whose
// bodies differ only by the names of bound indices hidden in a digest get
// different keys, which costs only a missed common subexpression. The
// bound is above the longest key of every example model, whose generated
// code is thus unaffected.
// Expressions holding group(…) calls come from long chains of primitives,
// whose derivatives nest many levels of groups: their keys are digested from
// maxGroupedKeyLen on, so that building a key costs about as much as the
// node's own arguments.
const (
	maxKeyLen        = 8192
	maxGroupedKeyLen = 256
)

func compactKey(key string, free []Index, grouped bool) string {
	if len(key) <= maxKeyLen && (!grouped || len(key) <= maxGroupedKeyLen) {
		return key
	}
	h := sha256.Sum256([]byte(key))
	var sb strings.Builder
	sb.WriteString("⟪")
	sb.WriteString(hex.EncodeToString(h[:16]))
	for _, f := range free {
		sb.WriteByte('|')
		sb.WriteString(idxKey(f))
	}
	sb.WriteString("⟫")
	return sb.String()
}

func (b *base) sumDepth() int { return b.sdepth }

func (b *base) isGrouped() bool { return b.grouped }

func (b *base) hasAtoms() bool { return b.atoms }

func (b *base) Key() string    { return b.key }
func (b *base) Free() []Index  { return b.free }
func (*base) node()            {}
func (b *base) String() string { return b.key }

// Num is a real constant.
type Num struct {
	base
	V float64
}

// Tensor reads one element of a named tensor: data, a constant, a latent's
// current value, a variational parameter or a derived (auxiliary) quantity.
// Idx holds one index expression per dimension: an *Ix, or an integer-valued
// Tensor (indirect indexing). Sym marks a symmetric matrix, whose two indices
// are stored in canonical order.
type Tensor struct {
	base
	Name string
	Idx  []Expr
	Sym  bool
	Int  bool // integer-valued (int data)
}

// Ix is an index used as an integer-valued subscript.
type Ix struct {
	base
	I Index
}

// Shift is an index shifted by a constant, the t-1 of a latent read
// x[t-1] (ShiftE). Like an indirect index it is an integer-valued
// expression whose value is 1-based: as a subscript it selects element
// I+Off (0-based), and its value is I+Off+1. Off may be 0 only inside an
// IDelta pairing an index over part of a size with one over all of it
// (IDlt), where it keeps δ from being eliminated over the wrong range.
type Shift struct {
	base
	I   Index
	Off int
}

// Delta is the Kronecker delta δ(A, B): 1 when the two indices are equal.
type Delta struct {
	base
	A, B Index
}

// Other is the index δ pairs with j (B for A, A for B), if j is one of its
// two.
func (d *Delta) Other(j Index) (Index, bool) {
	switch j.Name {
	case d.A.Name:
		return d.B, true
	case d.B.Name:
		return d.A, true
	}
	return Index{}, false
}

// IDelta is the indirect Kronecker delta: 1 when the integer-valued
// expression X, a 1-based value such as data z[n], selects index I (that
// is, X − 1 = I). It is what differentiating θ[z[n]] produces.
type IDelta struct {
	base
	X Expr
	I Index
}

// Call applies a primitive (an entry of Prims) to arguments.
type Call struct {
	base
	Prim *Prim
	Args []Expr
}

// AddNode is a sum of two or more terms.
type AddNode struct {
	base
	Terms []Expr
}

// MulNode is a product of two or more factors; a numeric coefficient, if
// any, comes first.
type MulNode struct {
	base
	Factors []Expr
}

// SumNode is Σ over the indices Idx of Body. In normal form Body is never an
// Add, a Sum or a product with a numeric coefficient.
type SumNode struct {
	base
	Idx  []Index
	Body Expr
}

// MaxNode is max over the indices Idx of Body, used only as the shift of a
// stable log-sum-exp. Its derivative is taken as zero: every expression
// vigen builds with it is exactly invariant to the shift.
type MaxNode struct {
	base
	Idx  []Index
	Body Expr
}

// ---- constructors ----

// N returns the constant v.
func N(v float64) Expr {
	return &Num{base: mkBase(fmtNum(v), nil), V: v}
}

func fmtNum(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', 17, 64)
}

// IxE returns the index i as an integer-valued expression.
func IxE(i Index) Expr {
	return &Ix{base: mkBase(idxKey(i), []Index{i}), I: i}
}

func idxKey(i Index) string { return "⟨" + i.Name + "⟩" }

// ShiftE returns the index i shifted by off (i itself for off 0), as a
// subscript: x[t-1] is T("x", ShiftE(t, -1)).
func ShiftE(i Index, off int) Expr {
	if off == 0 {
		return IxE(i)
	}
	return shiftNode(i, off)
}

func shiftNode(i Index, off int) *Shift {
	return &Shift{base: mkBase(fmt.Sprintf("%s%+d", idxKey(i), off), []Index{i}), I: i, Off: off}
}

// T returns element idx of the tensor called name.
func T(name string, idx ...Expr) Expr { return newTensor(name, idx, false, false) }

// TSym returns element (i, j) of the symmetric matrix called name.
func TSym(name string, i, j Expr) Expr { return newTensor(name, []Expr{i, j}, true, false) }

// TInt returns element idx of the integer-valued tensor called name.
func TInt(name string, idx ...Expr) Expr { return newTensor(name, idx, false, true) }

func newTensor(name string, idx []Expr, sym, isInt bool) Expr {
	idx = append([]Expr(nil), idx...)
	if sym && len(idx) == 2 && idx[1].Key() < idx[0].Key() {
		idx[0], idx[1] = idx[1], idx[0]
	}
	key := name
	if len(idx) > 0 {
		key = listKey(name, '[', idx, ']')
	}
	return &Tensor{base: mkBase(key, unionFree(idx), idx...), Name: name, Idx: idx, Sym: sym, Int: isInt}
}

// listKey is the key head(x1,x2,…) of a tensor read or a call, with the
// keys of xs between open and close.
func listKey(head string, open byte, xs []Expr, close byte) string {
	var sb strings.Builder
	sb.WriteString(head)
	sb.WriteByte(open)
	for k, x := range xs {
		if k > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(x.Key())
	}
	sb.WriteByte(close)
	return sb.String()
}

// Dlt returns the Kronecker delta δ(a, b).
func Dlt(a, b Index) Expr {
	if a.Name == b.Name {
		return N(1)
	}
	if b.Name < a.Name {
		a, b = b, a
	}
	return &Delta{base: mkBase("δ("+idxKey(a)+","+idxKey(b)+")", []Index{a, b}), A: a, B: b}
}

// IDlt returns the delta between an index-valued expression x (an *Ix, or
// an integer tensor holding 1-based values) and the index i (an *Ix).
func IDlt(x, i Expr) Expr {
	ii, ok := i.(*Ix)
	if !ok {
		panic("derive: IDlt needs an index")
	}
	if xi, ok := x.(*Ix); ok {
		if xi.I.Size == ii.I.Size || !ranged(xi.I) && !ranged(ii.I) {
			return Dlt(xi.I, ii.I)
		}
		// An index over part of a size against one over another range:
		// Σ over the index of the whole range may be eliminated, over the
		// partial one not (IDelta's elimination substitutes X for I).
		if ranged(ii.I) && !ranged(xi.I) {
			xi, ii = ii, xi
		}
		x = shiftNode(xi.I, 0)
	}
	return &IDelta{base: mkBase("δ["+x.Key()+","+idxKey(ii.I)+"]", unionFree([]Expr{x, i}), x), X: x, I: ii.I}
}

// CallE applies the primitive p to args, simplifying where p's table entry
// says how (constant folding, inverse pairs such as logit∘logistic).
func CallE(p *Prim, args ...Expr) Expr {
	if len(args) != p.Arity {
		panic(fmt.Sprintf("derive: %s takes %d arguments, got %d", p.Name, p.Arity, len(args)))
	}
	allNum := true
	vals := make([]float64, len(args))
	for k, a := range args {
		n, ok := a.(*Num)
		if !ok {
			allNum = false
			break
		}
		vals[k] = n.V
	}
	if allNum {
		v := p.Eval(vals)
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			return N(v)
		}
	}
	if p.Simplify != nil {
		if e := p.Simplify(args); e != nil {
			return e
		}
	}
	c := &Call{base: mkBaseGrouped(listKey(p.Name, '(', args, ')'), unionFree(args), p.Name == "group", args...), Prim: p, Args: append([]Expr(nil), args...)}
	c.atoms = c.atoms || p.Name == "group" && isSumAtom(args[0])
	return c
}

// Call1 applies the primitive named name to one argument.
func Call1(name string, x Expr) Expr { return CallE(MustPrim(name), x) }

// Pow returns x^y.
func Pow(x, y Expr) Expr { return CallE(MustPrim("pow"), x, y) }

// Neg returns -x.
func Neg(x Expr) Expr { return Mul(N(-1), x) }

// Sub returns x - y.
func Sub(x, y Expr) Expr { return Add(x, Neg(y)) }

// Div returns x / y.
func Div(x, y Expr) Expr { return Mul(x, Pow(y, N(-1))) }

// coefRest splits e into a numeric coefficient and the rest (nil rest for a
// pure number).
func coefRest(e Expr) (float64, Expr) {
	switch e := e.(type) {
	case *Num:
		return e.V, nil
	case *MulNode:
		if c, ok := e.Factors[0].(*Num); ok {
			return c.V, mulNoCoef(e.Factors[1:])
		}
	}
	return 1, e
}

// Add returns the sum of terms in normal form.
func Add(terms ...Expr) Expr {
	var flat []Expr
	var walk func(ts []Expr)
	walk = func(ts []Expr) {
		for _, t := range ts {
			if a, ok := t.(*AddNode); ok {
				walk(a.Terms)
			} else {
				flat = append(flat, t)
			}
		}
	}
	walk(terms)
	konst := 0.0
	coef := map[string]float64{}
	rest := map[string]Expr{}
	var order []string
	for _, t := range flat {
		c, r := coefRest(t)
		if r == nil {
			konst += c
			continue
		}
		k := r.Key()
		if _, seen := rest[k]; !seen {
			rest[k] = r
			order = append(order, k)
		}
		coef[k] += c
	}
	sort.Strings(order)
	var out []Expr
	for _, k := range order {
		c := coef[k]
		if c == 0 {
			continue
		}
		out = append(out, scale(c, rest[k]))
	}
	if konst != 0 {
		out = append(out, N(konst))
	}
	switch len(out) {
	case 0:
		return N(0)
	case 1:
		return out[0]
	}
	var sb strings.Builder
	sb.WriteByte('(')
	for k, t := range out {
		if k > 0 {
			sb.WriteString(" + ")
		}
		sb.WriteString(t.Key())
	}
	sb.WriteByte(')')
	return &AddNode{base: mkBase(sb.String(), unionFree(out), out...), Terms: out}
}

// scale returns c*r for a non-numeric r in normal form.
func scale(c float64, r Expr) Expr {
	if c == 1 {
		return r
	}
	if m, ok := r.(*MulNode); ok {
		return mulNode(append([]Expr{N(c)}, m.Factors...))
	}
	return mulNode([]Expr{N(c), r})
}

// Mul returns the product of factors in normal form.
func Mul(factors ...Expr) Expr {
	c := 1.0
	var flat []Expr
	var sums []*SumNode
	var walk func(fs []Expr)
	walk = func(fs []Expr) {
		for _, f := range fs {
			switch f := f.(type) {
			case *MulNode:
				walk(f.Factors)
			case *Num:
				c *= f.V
			case *SumNode:
				sums = append(sums, f)
			case *Delta:
				// δ_ab·δ_ab = δ_ab: a power of a delta would hide it from
				// the sums that eliminate it
				if !slices.ContainsFunc(flat, func(g Expr) bool { return g.Key() == f.Key() }) {
					flat = append(flat, f)
				}
			default:
				flat = append(flat, f)
			}
		}
	}
	walk(factors)
	if c == 0 {
		return N(0)
	}
	// A sum containing Σ terms is distributed over the product, so that Σs
	// reach the top (Σ_J Π is the normal form the scheduler works on).
	for k, f := range flat {
		a, ok := f.(*AddNode)
		if !ok || !hasSumTerm(a) && !hasShiftDelta(a) {
			continue
		}
		others := append(append([]Expr{N(c)}, flat[:k]...), flat[k+1:]...)
		for _, s := range sums {
			others = append(others, s)
		}
		terms := make([]Expr, len(a.Terms))
		for j, t := range a.Terms {
			terms[j] = Mul(append([]Expr{t}, others...)...)
		}
		return Add(terms...)
	}
	// A product containing an Add stays a product (we do not expand), but a
	// product of Sums becomes one Sum over the union of their indices, with
	// the other factors moved inside: Σ_J Π is the normal form.
	if len(sums) > 0 {
		var idx []Index
		body := flat
		for _, s := range sums {
			s2 := s
			// Avoid capture: rename a bound index that clashes with an index
			// free elsewhere in the product or bound by another Sum.
			for _, j := range s.Idx {
				if indexUsed(j, body) || containsIndex(idx, j) || otherSumsUse(j, sums, s) {
					fresh := Index{Name: j.Name + "'", Size: j.Size}
					for indexUsed(fresh, body) || containsIndex(idx, fresh) || otherSumsUse(fresh, sums, s) ||
						containsIndex(s2.Idx, fresh) || hasFree(s2.Body, fresh) {
						fresh.Name += "'"
					}
					s2 = renameBound(s2, j, fresh)
				}
			}
			idx = append(idx, s2.Idx...)
			body = append(body, s2.Body)
		}
		return scaleAny(c, Sum(idx, Mul(body...)))
	}
	if len(flat) == 0 {
		return N(c)
	}
	if c != 1 {
		return mulNode(append([]Expr{N(c)}, sortByKey(flat)...))
	}
	return mulNoCoef(flat)
}

// hasShiftDelta reports whether a term of a holds a δ(t+k, a) of a
// shifted read (x[t-1] differentiated): such sums are distributed over
// products, so that each δ selects one element, a Σ eliminates it, and
// generated code scatters into the element instead of looping over a.
func hasShiftDelta(a *AddNode) bool {
	for _, t := range a.Terms {
		fs := []Expr{t}
		if m, ok := t.(*MulNode); ok {
			fs = m.Factors
		}
		for _, f := range fs {
			if d, ok := f.(*IDelta); ok {
				if _, ok := d.X.(*Shift); ok {
					return true
				}
			}
		}
	}
	return false
}

func hasSumTerm(a *AddNode) bool {
	for _, t := range a.Terms {
		switch t := t.(type) {
		case *SumNode:
			return true
		case *MulNode:
			// c·Σ (coefRest without building the rest)
			if _, ok := t.Factors[0].(*Num); ok && len(t.Factors) == 2 {
				if _, ok := t.Factors[1].(*SumNode); ok {
					return true
				}
			}
		}
	}
	return false
}

func scaleAny(c float64, e Expr) Expr {
	if c == 1 {
		return e
	}
	c2, r := coefRest(e)
	if r == nil {
		return N(c * c2)
	}
	return scale(c*c2, r)
}

func otherSumsUse(j Index, sums []*SumNode, self *SumNode) bool {
	for _, s := range sums {
		if s != self && (containsIndex(s.Idx, j) || hasFree(s, j)) {
			return true
		}
	}
	return false
}

func indexUsed(j Index, es []Expr) bool {
	for _, e := range es {
		if hasFree(e, j) {
			return true
		}
	}
	return false
}

func containsIndex(xs []Index, j Index) bool {
	for _, x := range xs {
		if x.Name == j.Name {
			return true
		}
	}
	return false
}

func hasFree(e Expr, j Index) bool { return containsIndex(e.Free(), j) }

func mulNoCoef(fs []Expr) Expr {
	switch len(fs) {
	case 0:
		return N(1)
	case 1:
		return fs[0]
	}
	return mulNode(sortByKey(fs))
}

func mulNode(fs []Expr) Expr {
	var sb strings.Builder
	for k, f := range fs {
		if k > 0 {
			sb.WriteString("·")
		}
		sb.WriteString(f.Key())
	}
	return &MulNode{base: mkBase("["+sb.String()+"]", unionFree(fs), fs...), Factors: fs}
}

func sortByKey(fs []Expr) []Expr {
	out := append([]Expr(nil), fs...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Key() < out[j].Key() })
	return out
}

// Sum returns Σ over idx of body, in normal form.
func Sum(idx []Index, body Expr) Expr {
	if len(idx) == 0 {
		return body
	}
	switch b := body.(type) {
	case *Num:
		if b.V == 0 {
			return b
		}
	case *AddNode:
		terms := make([]Expr, len(b.Terms))
		for k, t := range b.Terms {
			terms[k] = Sum(idx, t)
		}
		return Add(terms...)
	case *SumNode:
		for _, j := range b.Idx {
			if containsIndex(idx, j) {
				fresh := Index{Name: j.Name + "'", Size: j.Size}
				for containsIndex(idx, fresh) || containsIndex(b.Idx, fresh) || hasFree(b.Body, fresh) {
					fresh.Name += "'"
				}
				b = renameBound(b, j, fresh)
			}
		}
		return Sum(append(append([]Index(nil), idx...), b.Idx...), b.Body)
	}
	c, rest := coefRest(body)
	if rest == nil {
		rest = N(1)
	}
	if c != 1 {
		return scaleAny(c, Sum(idx, rest))
	}
	// Kronecker-delta elimination: Σ_j δ(j,a)·g(j) = g(a).
	factors := []Expr{rest}
	if m, ok := rest.(*MulNode); ok {
		factors = m.Factors
	}
	for k, f := range factors {
		if d, ok := f.(*IDelta); ok {
			for jpos, j := range idx {
				if d.I.Name != j.Name || hasFree(d.X, j) || ranged(j) {
					continue // (over part of a size, X may fall outside j's values)
				}
				others := append(append([]Expr(nil), factors[:k]...), factors[k+1:]...)
				nb := SubstIdx(Mul(others...), j, d.X)
				rem := append(append([]Index(nil), idx[:jpos]...), idx[jpos+1:]...)
				return Sum(rem, nb)
			}
			continue
		}
		d, ok := f.(*Delta)
		if !ok {
			continue
		}
		for jpos, j := range idx {
			other, ok := d.Other(j)
			if !ok || other.Size != j.Size && (ranged(j) || ranged(other)) {
				continue // other may fall outside j's values
			}
			others := append(append([]Expr(nil), factors[:k]...), factors[k+1:]...)
			nb := Subst(Mul(others...), j, other)
			rem := append(append([]Index(nil), idx[:jpos]...), idx[jpos+1:]...)
			return Sum(rem, nb)
		}
	}
	// Indices the body does not use contribute a factor of their size;
	// not a ragged index (a document's words, a unit's points), whose
	// size depends on its parent index but would be read as a constant.
	var used, unused []Index
	for _, j := range idx {
		_, _, ragged := j.Ragged()
		if hasFree(rest, j) || parentIn(j, idx) || ragged {
			used = append(used, j)
		} else {
			unused = append(unused, j)
		}
	}
	if len(unused) > 0 {
		fs := []Expr{Sum(used, rest)}
		for _, j := range unused {
			fs = append(fs, SizeE(j.Size))
		}
		return Mul(fs...)
	}
	if len(used) == 0 {
		return rest
	}
	return sumNode(used, rest)
}

// ranged reports whether j runs over part of a size (RangedSize).
func ranged(j Index) bool {
	_, _, _, ok := SizeRange(j.Size)
	return ok
}

// Max returns the (derivative-free) maximum over idx of body.
func Max(idx []Index, body Expr) Expr {
	var used []Index
	for _, j := range idx {
		if hasFree(body, j) {
			used = append(used, j)
		}
	}
	if len(used) == 0 {
		return body
	}
	s := sumNode(used, body).(*SumNode)
	var free []Index
	for _, f := range body.Free() {
		if !containsIndex(used, f) {
			free = append(free, f)
		}
	}
	return &MaxNode{base: mkBase("max"+s.key, free, body), Idx: used, Body: body}
}

// parentIn reports whether j selects the document of a ragged index in idx.
func parentIn(j Index, idx []Index) bool {
	for _, i := range idx {
		if _, p, ok := i.Ragged(); ok && p.Name == j.Name {
			return true
		}
	}
	return false
}

// SizeE is the value of a size as a real number: the number itself for
// the fixed size of a literal dimension ("2", of real[2]), else the size's
// value once the data is loaded.
func SizeE(size string) Expr {
	if n, ok := fixedSize(size); ok {
		return N(float64(n))
	}
	return T("#" + size)
}

func sumNode(idx []Index, body Expr) Expr {
	// Canonical key: bound indices renamed in order of first appearance in
	// the body's key, so alpha-equivalent sums share a key.
	bk := body.Key()
	type occ struct {
		pos int
		i   Index
	}
	var occs []occ
	for _, j := range idx {
		occs = append(occs, occ{strings.Index(bk, idxKey(j)), j})
	}
	sort.SliceStable(occs, func(a, b int) bool { return occs[a].pos < occs[b].pos })
	depth := sumDepth(body) + 1
	repl := make([]string, 0, 2*len(occs))
	var sizes []string
	for n, o := range occs {
		repl = append(repl, idxKey(o.i), fmt.Sprintf("⟨#%d.%d⟩", depth, n))
		sizes = append(sizes, o.i.Size)
	}
	key := "Σ" + strings.Join(sizes, ",") + "{" + strings.NewReplacer(repl...).Replace(bk) + "}"
	var free []Index
	for _, f := range body.Free() {
		if !containsIndex(idx, f) {
			free = append(free, f)
		}
	}
	// A sum over a ragged index depends on the parent index that selects
	// its document, even if the body reads entries by flat position only.
	for _, j := range idx {
		if _, parent, ok := j.Ragged(); ok && !containsIndex(idx, parent) && !containsIndex(free, parent) {
			free = append(free, parent)
			sort.Slice(free, func(a, b int) bool { return free[a].Name < free[b].Name })
		}
	}
	return &SumNode{base: mkSumBase(key, free, body), Idx: append([]Index(nil), idx...), Body: body}
}

// sumDepth is the largest number of Σ in the key of a Sum in e (e
// included): the renamed bound indices of a new Sum enclosing e are numbered
// above it, so they never clash with those of the Sums inside.
func sumDepth(e Expr) int { return e.(interface{ sumDepth() int }).sumDepth() }

func unionFree(es []Expr) []Index {
	seen := map[string]Index{}
	for _, e := range es {
		for _, f := range e.Free() {
			seen[f.Name] = f
		}
	}
	if len(seen) == 0 {
		return nil
	}
	out := make([]Index, 0, len(seen))
	for _, f := range seen {
		out = append(out, f)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out
}

// Visit calls fn on e and all its subexpressions, parents first.
//
// A node shared by several parents (the same pointer) is visited once, at
// its first occurrence: expressions built by differentiation are DAGs whose
// trees can be exponentially larger.
func Visit(e Expr, fn func(Expr)) {
	seen := map[Expr]bool{}
	var rec func(Expr)
	rec = func(e Expr) {
		if seen[e] {
			return
		}
		seen[e] = true
		fn(e)
		for _, c := range Children(e) {
			rec(c)
		}
	}
	rec(e)
}

// Children returns the direct subexpressions of e.
func Children(e Expr) []Expr {
	switch e := e.(type) {
	case *Tensor:
		return e.Idx
	case *IDelta:
		return []Expr{e.X}
	case *Call:
		return e.Args
	case *AddNode:
		return e.Terms
	case *MulNode:
		return e.Factors
	case *SumNode:
		return []Expr{e.Body}
	case *MaxNode:
		return []Expr{e.Body}
	}
	return nil
}

// SubstIdx replaces the free index j by the index-valued expression x (an
// *Ix, or an integer tensor of 1-based values) throughout e.
func SubstIdx(e Expr, j Index, x Expr) Expr {
	if xi, ok := x.(*Ix); ok {
		return Subst(e, j, xi.I)
	}
	if sh, ok := x.(*Shift); ok && sh.Off == 0 {
		return Subst(e, j, sh.I)
	}
	return Memoized(func(e Expr, rec func(Expr) Expr) Expr { return substIdx(e, j, x, rec) })(e)
}

// Memoized returns the recursive function fn, which calls rec on the
// subexpressions it needs, with its results memoized by key, so that a
// subexpression occurring many times is visited once (rewrites, sizes,
// cost estimates).
func Memoized[T any](fn func(e Expr, rec func(Expr) T) T) func(Expr) T {
	memo := map[string]T{}
	var rec func(Expr) T
	rec = func(e Expr) T {
		k := e.Key()
		if r, ok := memo[k]; ok {
			return r
		}
		r := fn(e, rec)
		memo[k] = r
		return r
	}
	return rec
}

func substIdx(e Expr, j Index, x Expr, rec func(Expr) Expr) Expr {
	if !hasFree(e, j) {
		return e
	}
	switch e := e.(type) {
	case *Ix:
		return Sub(x, N(1)) // the 0-based value of the 1-based x
	case *Shift:
		return shiftBy(x, e.Off)
	case *Delta:
		other := e.A
		if other.Name == j.Name {
			other = e.B
		}
		return IDlt(x, IxE(other))
	case *IDelta:
		if e.I.Name == j.Name {
			return idltExprs(rec(e.X), x)
		}
		return IDlt(rec(e.X), IxE(e.I))
	case *Tensor:
		idx := make([]Expr, len(e.Idx))
		for k, s := range e.Idx {
			if ix, ok := s.(*Ix); ok && ix.I.Name == j.Name {
				idx[k] = x
			} else {
				idx[k] = rec(s)
			}
		}
		return newTensor(e.Name, idx, e.Sym, e.Int)
	case *SumNode:
		// a bound index that x reads free would capture it: rename it
		// (Σ_n δ(z[n], k) with k := z[n] is Σ_n' δ(z[n'], z[n]), not N)
		sn := e
		for _, v := range x.Free() {
			if containsIndex(sn.Idx, v) {
				fresh := Index{Name: v.Name + "'", Size: v.Size, Plate: v.Plate}
				for containsIndex(sn.Idx, fresh) || hasFree(sn.Body, fresh) || hasFree(x, fresh) {
					fresh.Name += "'"
				}
				sn = renameBound(sn, v, fresh)
			}
		}
		if sn != e {
			return Sum(sn.Idx, substIdx(sn.Body, j, x, func(y Expr) Expr { return SubstIdx(y, j, x) }))
		}
	}
	return mapChildren(e, rec)
}

// shiftBy is the index-valued expression x (1-based value) shifted by off.
func shiftBy(x Expr, off int) Expr {
	switch x := x.(type) {
	case *Ix:
		return shiftNode(x.I, off)
	case *Shift:
		return shiftNode(x.I, x.Off+off)
	case *Num:
		return N(x.V + float64(off))
	}
	panic("derive: a shifted read at an indirect index (" + x.Key() + ") is not supported")
}

// idltExprs is δ between two index-valued expressions, as an equality
// indicator primitive.
func idltExprs(a, b Expr) Expr {
	if a.Key() == b.Key() {
		return N(1)
	}
	return CallE(MustPrim("eq"), a, b)
}

// Subst replaces the free index from by to throughout e.
func Subst(e Expr, from, to Index) Expr {
	if !hasFree(e, from) {
		return e
	}
	return Substituter(from, to)(e)
}

// Substituter returns a function doing Subst(e, from, to), which remembers
// the subexpressions it rewrote across calls: for many substitutions of
// the same index in expressions that share parts.
func Substituter(from, to Index) func(Expr) Expr {
	return Memoized(func(e Expr, rec func(Expr) Expr) Expr { return subst(e, from, to, rec) })
}

func subst(e Expr, from, to Index, rec func(Expr) Expr) Expr {
	if !hasFree(e, from) {
		return e
	}
	switch e := e.(type) {
	case *Ix:
		return IxE(to)
	case *Shift:
		return shiftNode(to, e.Off)
	case *Delta:
		a, b := e.A, e.B
		if a.Name == from.Name {
			a = to
		}
		if b.Name == from.Name {
			b = to
		}
		return Dlt(a, b)
	case *IDelta:
		i := e.I
		if i.Name == from.Name {
			i = to
		}
		return IDlt(rec(e.X), IxE(i))
	case *SumNode:
		s := e
		if containsIndex(s.Idx, to) {
			fresh := Index{Name: to.Name + "'", Size: to.Size}
			for containsIndex(s.Idx, fresh) || hasFree(s.Body, fresh) {
				fresh.Name += "'"
			}
			s = renameBound(s, to, fresh)
		}
		return Sum(s.Idx, rec(s.Body))
	}
	return mapChildren(e, rec)
}

// renameBound renames the bound index j of s to fresh.
func renameBound(s *SumNode, j, fresh Index) *SumNode {
	idx := make([]Index, len(s.Idx))
	for k, x := range s.Idx {
		if x.Name == j.Name {
			x = fresh
		}
		idx[k] = x
	}
	body := Subst(s.Body, j, fresh)
	return &SumNode{base: s.base, Idx: idx, Body: body}
}

// mapChildren rebuilds e with fn applied to its children.
func mapChildren(e Expr, fn func(Expr) Expr) Expr {
	switch e := e.(type) {
	case *Tensor:
		idx := make([]Expr, len(e.Idx))
		for k, x := range e.Idx {
			idx[k] = fn(x)
		}
		return newTensor(e.Name, idx, e.Sym, e.Int)
	case *IDelta:
		return IDlt(fn(e.X), IxE(e.I))
	case *Call:
		args := make([]Expr, len(e.Args))
		for k, a := range e.Args {
			args[k] = fn(a)
		}
		return CallE(e.Prim, args...)
	case *AddNode:
		ts := make([]Expr, len(e.Terms))
		for k, t := range e.Terms {
			ts[k] = fn(t)
		}
		return Add(ts...)
	case *MulNode:
		fs := make([]Expr, len(e.Factors))
		for k, f := range e.Factors {
			fs[k] = fn(f)
		}
		return Mul(fs...)
	case *SumNode:
		return Sum(e.Idx, fn(e.Body))
	case *MaxNode:
		return Max(e.Idx, fn(e.Body))
	}
	return e
}
