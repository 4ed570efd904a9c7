package codegen

import (
	"fmt"
	"go/token"
	"math"
	"strconv"
	"strings"

	"github.com/vigen-go/vigen/derive"
)

// tensorInfo says how generated code reads a tensor.
type tensorInfo struct {
	Go   string   // Go expression naming the flat slice (or the scalar)
	Dims []string // size names, for strides
	Int  bool     // stored as []int
	// Slice: a rank-0 tensor held in a one-element slice (kernel parameters).
	Slice bool
	// Trans: a matrix stored transposed, element [i, j] at j·rows + i, for
	// kernels that read a column per data point (a topic-term table read
	// at one term for every topic): those reads are then contiguous.
	Trans bool
}

// goPrinter prints the loop-nest IR as Go statements.
type goPrinter struct {
	tensors  map[string]tensorInfo
	sizes    map[string]string // size name → Go identifier
	idx      map[string]string // index name → Go identifier
	reserved map[string]bool
	usedT    map[string]bool
	usedS    map[string]bool
	scopes   []map[string]string // row views by block, innermost last: viewKey → Go name
	loops    []string            // enclosing loop indices, innermost last
	hoisted  map[string]bool     // vector temporaries declared at the top of the kernel
	syrBatch map[string]string   // matrix → its SyrBatch (declareSyrBatches)
	top      []Stmt              // the kernel's top-level statements
	// more, if set, supplies a tensor p.tensors lacks the first time it
	// is printed (emitKernel: the model's tensors get a kernel's local
	// names only if the kernel reads them).
	more                  func(name string) (tensorInfo, bool)
	gTemps                int // the point terms' temporaries printed (g1, g2, …)
	usesRuntime, usesMath bool
}

func newGoPrinter(tensors map[string]tensorInfo, sizes map[string]string, reserved map[string]bool) *goPrinter {
	return &goPrinter{tensors: tensors, sizes: sizes, idx: map[string]string{}, reserved: reserved,
		usedT: map[string]bool{}, usedS: map[string]bool{}, scopes: []map[string]string{{}}, hoisted: map[string]bool{}, syrBatch: map[string]string{}}
}

// info is how generated code reads the tensor name.
func (p *goPrinter) info(name string) (tensorInfo, bool) {
	if t, ok := p.tensors[name]; ok || p.more == nil {
		return t, ok
	}
	t, ok := p.more(name)
	if ok {
		p.tensors[name] = t
	}
	return t, ok
}

func (p *goPrinter) index(name string) string {
	if g, ok := p.idx[name]; ok {
		return g
	}
	g := strings.ReplaceAll(name, "'", "p")
	for p.reserved[g] || token.IsKeyword(g) || goReserved[g] || tempLike.MatchString(g) {
		g += "_"
	}
	p.idx[name] = g
	p.reserved[g] = true
	return g
}

func (p *goPrinter) size(name string) string {
	if name == derive.ScalarSize {
		return "1"
	}
	if size, lo, hi, ok := derive.SizeRange(name); ok {
		// the number of values of a loop over part of size
		return fmt.Sprintf("max(0, %s%+d)", p.size(size), hi-lo)
	}
	g, ok := p.sizes[name]
	if !ok {
		panic("codegen: unknown size " + name)
	}
	p.usedS[name] = true
	return g
}

func (p *goPrinter) stmts(sb *strings.Builder, ss []Stmt) {
	for _, s := range ss {
		p.stmt(sb, s)
	}
}

// topStmts prints a kernel body, preceding each top-level loop or
// accumulation with the source statements it implements. The vectors
// computed inside loops (per data point) are declared once, first.
func (p *goPrinter) topStmts(sb *strings.Builder, ss []Stmt) {
	var nested func(ss []Stmt, inLoop bool)
	nested = func(ss []Stmt, inLoop bool) {
		for _, st := range ss {
			if v, ok := st.(*VecLet); ok && inLoop && !p.hoisted[v.Name] {
				p.declareVec(sb, v)
				p.hoisted[v.Name] = true
			}
			for _, b := range bodies(st) {
				nested(b, true)
			}
		}
	}
	nested(ss, false)
	p.declareSyrBatches(sb, ss)
	last := ""
	for _, s := range ss {
		if c := strings.Join(Origins([]Stmt{s}), "; "); c != "" && c != last {
			fmt.Fprintf(sb, "// %s\n", c)
			last = c
		}
		p.stmt(sb, s)
	}
}

func (p *goPrinter) stmt(sb *strings.Builder, s Stmt) {
	switch s := s.(type) {
	case *Let:
		fmt.Fprintf(sb, "%s := %s\n", tempName(s.Name), p.expr(s.Expr, 0))
	case *Reduce:
		if a, b, ok := p.dotRows(s); ok {
			p.usesRuntime = true
			fmt.Fprintf(sb, "%s := runtime.DotFMA(%s, %s)\n", tempName(s.Name), a, b)
			return
		}
		if s.Max {
			p.usesMath = true
			fmt.Fprintf(sb, "%s := math.Inf(-1)\n", tempName(s.Name))
		} else {
			fmt.Fprintf(sb, "var %s float64\n", tempName(s.Name))
		}
		for _, f := range s.Fused {
			fmt.Fprintf(sb, "var %s float64\n", tempName(f.Name))
		}
		p.declareViews(sb, s.Loop, s.Body)
		p.loopHead(sb, s.Loop)
		p.push(s.Loop.Idx.Name)
		p.stmts(sb, s.Loop.Body)
		if s.Max {
			fmt.Fprintf(sb, "%s = math.Max(%s, %s)\n", tempName(s.Name), tempName(s.Name), p.expr(s.Body, 0))
		} else {
			p.accum(sb, tempName(s.Name), s.Body)
		}
		for _, f := range s.Fused {
			p.accum(sb, tempName(f.Name), f.Expr)
		}
		p.pop()
		sb.WriteString("}\n")
	case *VecLet:
		if !p.hoisted[s.Name] {
			p.declareVec(sb, s)
		} else if s.Loop == nil {
			fmt.Fprintf(sb, "clear(%s)\n", tempName(s.Name))
		}
		if s.Loop == nil {
			p.stmts(sb, s.Stmts)
			return
		}
		if a, b, ok := p.mulVecRows(s); ok {
			p.usesRuntime = true
			fmt.Fprintf(sb, "runtime.MulVec(%s, %s, %s)\n", tempName(s.Name), a, b)
			return
		}
		p.declareViews(sb, s.Loop, s.Body)
		p.loopHead(sb, s.Loop)
		p.push(s.Loop.Idx.Name)
		p.stmts(sb, s.Loop.Body)
		fmt.Fprintf(sb, "%s[%s] = %s\n", tempName(s.Name), p.index(s.Loop.Idx.Name), p.expr(s.Body, 0))
		p.pop()
		sb.WriteString("}\n")
	case *Loop:
		if t, a, b, ok := p.mulAddRows(s); ok {
			p.usesRuntime = true
			fmt.Fprintf(sb, "runtime.MulAddFMA(%s, %s, %s)\n", t, a, b)
			return
		}
		p.declareViews(sb, s)
		p.loopHead(sb, s)
		p.push(s.Idx.Name)
		p.stmts(sb, s.Body)
		p.pop()
		sb.WriteString("}\n")
	case *Accum:
		if s.Upper && s.At[0].Key() != s.At[1].Key() {
			p.usesRuntime = true
			fmt.Fprintf(sb, "runtime.AddUpper(%s, %s, %s, %s, %s)\n", s.Target, p.size(s.Size), p.subscript(s.At[0]), p.subscript(s.At[1]), p.expr(s.Expr, 0))
			return
		}
		p.accum(sb, p.target(s.Target, s.At, s.Size), s.Expr)
	case *Syr:
		p.usesRuntime = true
		if b, ok := p.syrBatch[s.Target]; ok {
			fmt.Fprintf(sb, "%s.Add(%s, %s)\n", b, p.expr(s.Alpha, 0), p.rowOf(s.X))
			return
		}
		fmt.Fprintf(sb, "runtime.SyrUpper(%s, %s, %s, %s)\n", s.Target, p.size(s.Size), p.expr(s.Alpha, 0), p.rowOf(s.X))
	case *Mirror:
		if b, ok := p.syrBatch[s.Target]; ok {
			fmt.Fprintf(sb, "%s.Flush()\n", b)
		}
		n := p.size(s.Size)
		fmt.Fprintf(sb, "runtime.MirrorUpper(%s, %s)\n", s.Target, n)
		p.usesRuntime = true
	}
}

// declareSyrBatches declares, for each matrix that rank-1 updates (Syr)
// inside loops add to, a runtime.SyrBatch that applies them four at a
// time; the Mirror of the matrix, the kernel's last statement for it,
// flushes the batch first.
func (p *goPrinter) declareSyrBatches(sb *strings.Builder, ss []Stmt) {
	var walk func(ss []Stmt, inLoop bool)
	walk = func(ss []Stmt, inLoop bool) {
		for _, st := range ss {
			if r, ok := st.(*Syr); ok && inLoop && p.syrBatch[r.Target] == "" && p.mirrored(r.Target) {
				name := r.Target + "Syr"
				for p.reserved[name] || p.reserved[name+"Buf"] {
					name += "_"
				}
				p.reserved[name], p.reserved[name+"Buf"] = true, true
				p.usesRuntime = true
				fmt.Fprintf(sb, "var %sBuf [runtime.SyrBatchRows * runtime.StackVec]float64\n", name)
				fmt.Fprintf(sb, "%s := runtime.NewSyrBatch(%s, %s, %sBuf[:])\n", name, r.Target, p.size(r.Size), name)
				p.syrBatch[r.Target] = name
			}
			for _, b := range bodies(st) {
				walk(b, true)
			}
		}
	}
	p.top = ss
	walk(ss, false)
}

// mirrored reports whether the kernel's top-level statements end target
// with a Mirror (where a SyrBatch is flushed).
func (p *goPrinter) mirrored(target string) bool {
	for _, st := range p.top {
		if m, ok := st.(*Mirror); ok && m.Target == target {
			return true
		}
	}
	return false
}

// declareVec declares the slice of a vector temporary: on the stack up to
// runtime.StackVec entries, since kernels run per unit and sweep and a
// heap vector per call feeds the collector.
func (p *goPrinter) declareVec(sb *strings.Builder, v *VecLet) {
	p.usesRuntime = true
	n := tempName(v.Name)
	fmt.Fprintf(sb, "var %sBuf [runtime.StackVec]float64\n%s := runtime.Vec(%sBuf[:], %s)\n", n, n, n, p.size(v.Size))
}

func (p *goPrinter) loopHead(sb *strings.Builder, l *Loop) {
	i := p.index(l.Idx.Name)
	if bag, parent, ok := l.Idx.Ragged(); ok {
		off := p.tensor(derive.T(bag+".off", derive.IxE(parent)).(*derive.Tensor))
		off = strings.TrimSuffix(strings.TrimPrefix(off, "float64("), ")")
		end := strings.Replace(off, "["+p.index(parent.Name)+"]", "["+p.index(parent.Name)+"+1]", 1)
		fmt.Fprintf(sb, "for %s := %s; %s < %s; %s++ {\n", i, off, i, end, i)
		return
	}
	if size, lo, hi, ok := derive.SizeRange(l.Idx.Size); ok && l.From == "" {
		end := p.size(size)
		if hi != 0 {
			end = fmt.Sprintf("%s%+d", end, hi)
		}
		fmt.Fprintf(sb, "for %s := %d; %s < %s; %s++ {\n", i, lo, i, end, i)
		return
	}
	n := p.size(l.Idx.Size)
	switch {
	case strings.HasPrefix(l.From, "<="):
		fmt.Fprintf(sb, "for %s := 0; %s <= %s; %s++ {\n", i, i, p.index(l.From[2:]), i)
	case l.From != "":
		fmt.Fprintf(sb, "for %s := %s; %s < %s; %s++ {\n", i, p.index(l.From), i, n, i)
	default:
		fmt.Fprintf(sb, "for %s := 0; %s < %s; %s++ {\n", i, i, n, i)
	}
}

func (p *goPrinter) target(name string, at []derive.Expr, size string) string {
	switch len(at) {
	case 0:
		return name
	case 1:
		return fmt.Sprintf("%s[%s]", name, p.subscript(at[0]))
	case 2:
		if i, ok := at[0].(*derive.Ix); ok {
			if j, ok := at[1].(*derive.Ix); ok {
				if v, ok := p.view(viewKey(name, []string{i.I.Name})); ok {
					return fmt.Sprintf("%s[%s]", v, p.index(j.I.Name))
				}
			}
		}
		i := p.subscript(at[0])
		return fmt.Sprintf("%s[%s*%s+%s]", name, wrapIf(i, strings.ContainsAny(i, "+-")), p.size(size), p.subscript(at[1]))
	}
	panic("codegen: output of rank > 2")
}

func (p *goPrinter) accum(sb *strings.Builder, target string, e derive.Expr) {
	op := "+="
	if m, ok := e.(*derive.MulNode); ok {
		if n, ok := m.Factors[0].(*derive.Num); ok && n.V < 0 {
			op = "-="
			e = derive.Mul(append([]derive.Expr{derive.N(-n.V)}, m.Factors[1:]...)...)
		}
	} else if n, ok := e.(*derive.Num); ok && n.V < 0 {
		op = "-="
		e = derive.N(-n.V)
	}
	fmt.Fprintf(sb, "%s %s %s\n", target, op, p.expr(e, 0))
}

func tempName(n string) string { return strings.TrimPrefix(n, TempPrefix) }

// goFloat prints a float64 value so that it is a float in Go: a constant
// that fits float64, or, for a value no constant is, math.Inf(±1) or
// math.NaN() (derive refuses the folds of the model's numbers that would
// make one; the derivation's own are computed as float64 arithmetic is).
func goFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "math.Inf(1)"
	case math.IsInf(v, -1):
		return "math.Inf(-1)"
	case math.IsNaN(v):
		return "math.NaN()"
	}
	s := strconv.FormatFloat(v, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eEn") {
		s += ".0"
	}
	return s
}

// expr prints e; prec is the binding strength of the context: 0 top, 1
// operand of +/−, 2 operand of *, 3 unary operand.
func (p *goPrinter) expr(e derive.Expr, prec int) string {
	switch e := e.(type) {
	case *derive.Num:
		s := goFloat(e.V)
		if strings.HasPrefix(s, "math.") {
			p.usesMath = true
		}
		if e.V < 0 && prec > 0 {
			return "(" + s + ")"
		}
		return s
	case *derive.Ix:
		return "float64(" + p.index(e.I.Name) + ")"
	case *derive.Shift:
		// its value is 1-based, as an indirect index's
		return fmt.Sprintf("float64(%s%+d)", p.index(e.I.Name), e.Off+1)
	case *derive.Delta:
		p.usesRuntime = true
		return fmt.Sprintf("runtime.Kronecker(%s, %s)", p.index(e.A.Name), p.index(e.B.Name))
	case *derive.IDelta:
		p.usesRuntime = true
		return fmt.Sprintf("runtime.Kronecker(%s, %s)", p.subscript(e.X), p.index(e.I.Name))
	case *derive.Tensor:
		return p.tensor(e)
	case *derive.Call:
		return p.call(e, prec)
	case *derive.AddNode:
		var sb strings.Builder
		terms := append([]derive.Expr(nil), e.Terms...)
		for k, t := range terms {
			if c, _ := coefOf(t); c > 0 {
				terms[0], terms[k] = terms[k], terms[0]
				break
			}
		}
		for k, t := range terms {
			c, _ := coefOf(t)
			switch {
			case k == 0:
				sb.WriteString(p.expr(t, 1))
			case c < 0:
				sb.WriteString(" - ")
				sb.WriteString(p.expr(negate(t), 2))
			default:
				sb.WriteString(" + ")
				sb.WriteString(p.expr(t, 1))
			}
		}
		if prec > 1 {
			return "(" + sb.String() + ")"
		}
		return sb.String()
	case *derive.MulNode:
		fs := e.Factors
		neg := false
		if n, ok := fs[0].(*derive.Num); ok && n.V == -1 {
			neg = true
			fs = fs[1:]
		}
		parts := make([]string, len(fs))
		for k, f := range fs {
			parts[k] = p.expr(f, 2)
		}
		s := strings.Join(parts, " * ")
		if neg {
			s = "-" + wrapIf(s, len(fs) > 1 || prec > 2)
			if prec > 1 {
				return "(" + s + ")"
			}
			return s
		}
		if prec > 2 {
			return "(" + s + ")"
		}
		return s
	case *derive.SumNode, *derive.MaxNode:
		panic("codegen: unscheduled reduction " + e.Key())
	}
	panic(fmt.Sprintf("codegen: cannot print %T", e))
}

func wrapIf(s string, b bool) string {
	if b {
		return "(" + s + ")"
	}
	return s
}

func coefOf(e derive.Expr) (float64, derive.Expr) {
	switch e := e.(type) {
	case *derive.Num:
		return e.V, nil
	case *derive.MulNode:
		if n, ok := e.Factors[0].(*derive.Num); ok {
			return n.V, derive.Mul(e.Factors[1:]...)
		}
	}
	return 1, e
}

func negate(e derive.Expr) derive.Expr { return derive.Mul(derive.N(-1), e) }

func (p *goPrinter) tensor(t *derive.Tensor) string {
	if strings.HasPrefix(t.Name, TempPrefix) {
		if len(t.Idx) == 1 {
			return tempName(t.Name) + "[" + p.subscript(t.Idx[0]) + "]"
		}
		return tempName(t.Name)
	}
	if strings.HasPrefix(t.Name, "#") {
		return "float64(" + p.size(t.Name[1:]) + ")"
	}
	if base, offs, ok := derive.Shifted(t.Name); ok {
		return p.shifted(t, base, offs)
	}
	info, ok := p.info(t.Name)
	if !ok {
		panic("codegen: unknown tensor " + t.Name)
	}
	p.usedT[t.Name] = true
	t = p.orient(t, "")
	s := info.Go
	if info.Trans && len(t.Idx) == 2 {
		i, j := p.subscript(t.Idx[0]), p.subscript(t.Idx[1])
		return fmt.Sprintf("%s[%s*%s+%s]", s, wrapIf(j, strings.ContainsAny(j, "+-")), p.size(info.Dims[0]), i)
	}
	if v, ok := p.view(viewKey(t.Name, prefixNames(t))); ok && len(t.Idx) >= 2 {
		s = v + "[" + p.subscript(t.Idx[len(t.Idx)-1]) + "]"
	} else if len(t.Idx) > 0 {
		s = fmt.Sprintf("%s[%s]", s, p.flatIndex(p.subscripts(t.Idx), info.Dims))
	}
	if len(t.Idx) == 0 && info.Slice {
		s += "[0]"
	}
	if info.Int {
		s = "float64(" + s + ")"
	}
	return s
}

// wholeLoop reports whether l runs over the whole of its dimension (not a
// triangle, a bag's entries or part of a size): the elements of a row.
func wholeLoop(l *Loop) bool {
	if l.From != "" {
		return false
	}
	if _, _, ragged := l.Idx.Ragged(); ragged {
		return false
	}
	_, _, _, part := derive.SizeRange(l.Idx.Size)
	return !part
}

// rowProduct returns, for e = a[…, j]·b[…, j], a product of two reads that
// run along rows (or vector temporaries) over j, the two rows as Go slices.
func (p *goPrinter) rowProduct(e derive.Expr, j derive.Index) (string, string, bool) {
	m, ok := e.(*derive.MulNode)
	if !ok || len(m.Factors) != 2 {
		return "", "", false
	}
	var rows [2]string
	for k, f := range m.Factors {
		t, ok := f.(*derive.Tensor)
		if !ok {
			return "", "", false
		}
		if rows[k], ok = p.rowSlice(t, j); !ok {
			return "", "", false
		}
	}
	return rows[0], rows[1], true
}

// dotRows returns, for a sum over a whole dimension of the product of two
// rows, Σ_j a[…, j]·b[…, j], the two rows, for runtime.DotFMA.
func (p *goPrinter) dotRows(r *Reduce) (string, string, bool) {
	if r.Max || len(r.Fused) > 0 || len(r.Loop.Body) > 0 || !wholeLoop(r.Loop) {
		return "", "", false
	}
	return p.rowProduct(r.Body, r.Loop.Idx)
}

// mulVecRows returns, for a vector temporary v[j] = a[…, j]·b[…, j] over a
// whole dimension (CTM's e^θ ⊙ β_w per entry), the two rows, for
// runtime.MulVec.
func (p *goPrinter) mulVecRows(v *VecLet) (string, string, bool) {
	if v.Loop == nil || len(v.Loop.Body) > 0 || !wholeLoop(v.Loop) || v.Loop.Idx.Size != v.Size {
		return "", "", false
	}
	return p.rowProduct(v.Body, v.Loop.Idx)
}

// mulAddRows returns, for a loop over a whole dimension j whose body is
// one accumulation target[…, j] += a[…, j]·b[…, j] of two rows into a row
// (the unnormalized probabilities of a categorical: exp E[log θ] ⊙ exp
// E[log β_w]), the three rows as Go slices, for runtime.MulAddFMA.
func (p *goPrinter) mulAddRows(l *Loop) (string, string, string, bool) {
	j := l.Idx
	if len(l.Body) != 1 || !wholeLoop(l) {
		return "", "", "", false
	}
	acc, ok := l.Body[0].(*Accum)
	if !ok || acc.Upper || len(acc.At) == 0 || len(acc.At) > 2 || acc.Size != j.Size {
		return "", "", "", false
	}
	if last, ok := acc.At[len(acc.At)-1].(*derive.Ix); !ok || last.I.Name != j.Name {
		return "", "", "", false
	}
	if len(acc.At) == 2 && uses(acc.At[0], j) {
		return "", "", "", false
	}
	a, b, ok := p.rowProduct(acc.Expr, j)
	if !ok {
		return "", "", "", false
	}
	size := p.size(j.Size)
	target := fmt.Sprintf("%s[:%s]", acc.Target, size)
	if len(acc.At) == 2 {
		target = rowAt(acc.Target, p.subscript(acc.At[0]), size)
		if ix, isIx := acc.At[0].(*derive.Ix); isIx {
			if v, ok := p.view(viewKey(acc.Target, []string{ix.I.Name})); ok {
				target = v
			}
		}
	}
	return target, a, b, true
}

// rowSlice prints, for a read of t whose last index (a symmetric matrix
// oriented so) is j and whose other indices do not read j, the row it runs
// along as a slice of j's size.
func (p *goPrinter) rowSlice(t *derive.Tensor, j derive.Index) (string, bool) {
	if info, ok := p.info(t.Name); ok && info.Trans && len(t.Idx) == 2 && info.Dims[0] == j.Size {
		// a column of the matrix, a row of its transposed storage
		if first, ok := t.Idx[0].(*derive.Ix); ok && first.I.Name == j.Name && !uses(t.Idx[1], j) {
			p.usedT[t.Name] = true
			return rowAt(info.Go, p.subscript(t.Idx[1]), p.size(info.Dims[0])), true
		}
		return "", false
	}
	t = p.orient(t, j.Name)
	if len(t.Idx) == 0 {
		return "", false
	}
	last, ok := t.Idx[len(t.Idx)-1].(*derive.Ix)
	if !ok || last.I.Name != j.Name {
		return "", false
	}
	for _, x := range t.Idx[:len(t.Idx)-1] {
		if uses(x, j) {
			return "", false
		}
	}
	if strings.HasPrefix(t.Name, TempPrefix) {
		if len(t.Idx) != 1 {
			return "", false
		}
		return tempName(t.Name), true
	}
	if _, _, ok := derive.Shifted(t.Name); ok || strings.HasPrefix(t.Name, "#") {
		return "", false
	}
	info, ok := p.info(t.Name)
	if !ok || info.Trans || info.Int || info.Slice && len(t.Idx) == 0 || len(info.Dims) != len(t.Idx) || info.Dims[len(info.Dims)-1] != j.Size {
		return "", false
	}
	p.usedT[t.Name] = true
	if v, ok := p.view(viewKey(t.Name, prefixNames(t))); ok && len(t.Idx) >= 2 {
		return v, true
	}
	return p.rowOf(t), true
}

// rowOf prints the vector of a Syr: a vector temporary, or the row of an
// input tensor that a read of it with its last index free spans.
func (p *goPrinter) rowOf(x derive.Expr) string {
	t := x.(*derive.Tensor)
	if strings.HasPrefix(t.Name, TempPrefix) {
		return tempName(t.Name)
	}
	info, ok := p.info(t.Name)
	if !ok {
		panic("codegen: unknown tensor " + t.Name)
	}
	if info.Trans {
		panic("codegen: a row of the transposed " + t.Name)
	}
	p.usedT[t.Name] = true
	rowLen := p.size(info.Dims[len(info.Dims)-1])
	if len(t.Idx) == 1 {
		return fmt.Sprintf("%s[:%s]", info.Go, rowLen)
	}
	return rowAt(info.Go, p.flatIndex(p.subscripts(t.Idx[:len(t.Idx)-1]), info.Dims), rowLen)
}

// subscripts prints each of idx (subscript).
func (p *goPrinter) subscripts(idx []derive.Expr) []string {
	out := make([]string, len(idx))
	for k, x := range idx {
		out[k] = p.subscript(x)
	}
	return out
}

// flatIndex is the offset, in a row-major array of dimensions dims, of the
// element (or, with fewer subscripts than dims, the row) at subs.
func (p *goPrinter) flatIndex(subs, dims []string) string {
	off := subs[0]
	for k, ix := range subs[1:] {
		switch {
		case off == "0": // the first row: 0·n + ix
			off = ix
		case ix == "0":
			off = fmt.Sprintf("%s*%s", wrapIf(off, strings.ContainsAny(off, "+-")), p.size(dims[k+1]))
		default:
			off = fmt.Sprintf("%s*%s+%s", wrapIf(off, strings.ContainsAny(off, "+-")), p.size(dims[k+1]), ix)
		}
	}
	return off
}

// rowAt prints row r, of length n, of the row-major slice s, with a length
// the compiler can see: s[r*n:][:n].
func rowAt(s, r, n string) string {
	return fmt.Sprintf("%s[%s*%s:][:%s]", s, wrapIf(r, strings.ContainsAny(r, "+-")), n, n)
}

// shifted prints a read of base at shifted indices (derive.ShiftedName):
// y[t-1] is y[t-1] of y's array, never a row view.
func (p *goPrinter) shifted(t *derive.Tensor, base string, offs []int) string {
	info, ok := p.info(base)
	if !ok {
		panic("codegen: unknown tensor " + base)
	}
	p.usedT[base] = true
	subs := p.subscripts(t.Idx)
	for k := range subs {
		if k < len(offs) && offs[k] != 0 {
			subs[k] = fmt.Sprintf("%s%+d", subs[k], offs[k])
		}
	}
	s := fmt.Sprintf("%s[%s]", info.Go, p.flatIndex(subs, info.Dims))
	if info.Int {
		s = "float64(" + s + ")"
	}
	return s
}

// subscript prints an index expression: a loop index, or an int tensor read
// indirectly (1-based in the language, hence −1).
func (p *goPrinter) subscript(x derive.Expr) string {
	switch x := x.(type) {
	case *derive.Ix:
		return p.index(x.I.Name)
	case *derive.Tensor:
		s := p.tensor(x)
		s = strings.TrimSuffix(strings.TrimPrefix(s, "float64("), ")")
		return s + "-1"
	case *derive.Num:
		// a literal index, 1-based in the language
		return strconv.Itoa(int(x.V) - 1)
	case *derive.Shift:
		// x[t-1]: the loop index shifted
		if x.Off == 0 {
			return p.index(x.I.Name)
		}
		return fmt.Sprintf("%s%+d", p.index(x.I.Name), x.Off)
	}
	if c, ok := x.(*derive.Call); ok && c.Prim.Name == "eq" {
		return p.expr(x, 0)
	}
	panic("codegen: bad subscript " + x.Key())
}

func (p *goPrinter) call(c *derive.Call, prec int) string {
	if c.Prim.Name == "pow" {
		// A power of a number is one derive did not fold, its value out of
		// float64's range: math.Pow computes it at run time, as float64
		// arithmetic does, where the shortcuts below would print a Go
		// constant expression that does not compile (1 / (1e-170 *
		// 1e-170) overflows).
		_, numBase := c.Args[0].(*derive.Num)
		if y, ok := c.Args[1].(*derive.Num); ok && !numBase {
			x := c.Args[0]
			switch y.V {
			case -1:
				return wrapIf("1 / "+p.expr(x, 3), prec > 1)
			case 2:
				s := p.expr(x, 3)
				if isLeaf(x) {
					return wrapIf(s+" * "+s, prec > 2)
				}
				p.usesRuntime = true
				return "runtime.Sq(" + p.expr(x, 0) + ")"
			case -2:
				s := p.expr(x, 3)
				if isLeaf(x) {
					return wrapIf("1 / ("+s+" * "+s+")", prec > 1)
				}
			case 0.5:
				p.usesMath = true
				return "math.Sqrt(" + p.expr(x, 0) + ")"
			}
		}
	}
	args := make([]string, len(c.Args))
	for k, a := range c.Args {
		args[k] = p.expr(a, 0)
	}
	if strings.HasPrefix(c.Prim.Go, "math.") {
		p.usesMath = true
	} else if strings.HasPrefix(c.Prim.Go, "runtime.") {
		p.usesRuntime = true
	}
	return c.Prim.Go + "(" + strings.Join(args, ", ") + ")"
}

// Row views: inside a loop over j, an access x[n, j] whose other indices are
// fixed outside the loop reads a row x_n := x[n*P : n*P+P] declared before
// the loop, so the loop body indexes a slice instead of recomputing n*P+j.

func viewKey(tensor string, prefix []string) string {
	return tensor + "|" + strings.Join(prefix, ",")
}

// prefixNames returns the names of all but the last index of t, or nil if
// any of them is not a plain index.
func prefixNames(t *derive.Tensor) []string {
	if len(t.Idx) < 2 {
		return nil
	}
	var out []string
	for _, x := range t.Idx[:len(t.Idx)-1] {
		ix, ok := x.(*derive.Ix)
		if !ok {
			return nil
		}
		out = append(out, ix.I.Name)
	}
	return out
}

// declareViews declares the row views the direct statements of l use and
// returns their keys.
func (p *goPrinter) declareViews(sb *strings.Builder, l *Loop, extra ...derive.Expr) []string {
	j := l.Idx.Name
	type view struct {
		key, goSlice string
		prefix       []string
		dims         []string
	}
	var found []view
	seen := map[string]bool{}
	consider := func(goSlice, key string, prefix, dims []string) {
		for _, n := range prefix {
			if n == j {
				return
			}
		}
		if _, ok := p.view(key); ok || seen[key] {
			return
		}
		seen[key] = true
		found = append(found, view{key, goSlice, prefix, dims})
	}
	visit := func(e derive.Expr) {
		derive.Visit(e, func(x derive.Expr) {
			t, ok := x.(*derive.Tensor)
			if !ok || len(t.Idx) < 2 || strings.HasPrefix(t.Name, TempPrefix) {
				return
			}
			t = p.orient(t, j)
			last, ok := t.Idx[len(t.Idx)-1].(*derive.Ix)
			pre := prefixNames(t)
			if !ok || last.I.Name != j || pre == nil {
				return
			}
			info, ok := p.info(t.Name)
			if !ok || info.Trans {
				return
			}
			consider(info.Go, viewKey(t.Name, pre), pre, info.Dims)
		})
	}
	for _, e := range extra {
		visit(e)
	}
	for _, st := range l.Body {
		switch st := st.(type) {
		case *Let:
			visit(st.Expr)
		case *Accum:
			visit(st.Expr)
			if len(st.At) == 2 && !st.Upper {
				i0, ok0 := st.At[0].(*derive.Ix)
				i1, ok1 := st.At[1].(*derive.Ix)
				if ok0 && ok1 && i1.I.Name == j {
					consider(st.Target, viewKey(st.Target, []string{i0.I.Name}), []string{i0.I.Name}, []string{i0.I.Size, i1.I.Size})
				}
			}
		}
	}
	var keys []string
	for _, v := range found {
		var parts []string
		for _, n := range v.prefix {
			parts = append(parts, p.index(n))
		}
		name := v.goSlice + "_" + strings.Join(parts, "")
		for p.reserved[name] {
			name += "_"
		}
		p.reserved[name] = true
		off := ""
		for k, n := range v.prefix {
			if k == 0 {
				off = p.index(n)
			} else {
				off = fmt.Sprintf("(%s)*%s+%s", off, p.size(v.dims[k]), p.index(n))
			}
		}
		rowLen := p.size(v.dims[len(v.dims)-1])
		off = fmt.Sprintf("%s*%s", wrapIf(off, strings.ContainsAny(off, "+")), rowLen)
		// x[off:][:len:len] has a length the compiler can see, so reads
		// x_n[j] with j < len need no bounds check.
		fmt.Fprintf(sb, "%s := %s[%s:][:%s:%s]\n", name, v.goSlice, off, rowLen, rowLen)
		p.scopes[len(p.scopes)-1][v.key] = name
		keys = append(keys, v.key)
	}
	return keys
}

// view returns the row view for key declared in an enclosing block.
func (p *goPrinter) view(key string) (string, bool) {
	for k := len(p.scopes) - 1; k >= 0; k-- {
		if v, ok := p.scopes[k][key]; ok {
			return v, true
		}
	}
	return "", false
}

// push opens the block of a loop over index; pop closes it, freeing the
// names of its views.
func (p *goPrinter) push(index string) {
	p.scopes = append(p.scopes, map[string]string{})
	p.loops = append(p.loops, index)
}

func (p *goPrinter) pop() {
	for _, name := range p.scopes[len(p.scopes)-1] {
		delete(p.reserved, name)
	}
	p.scopes = p.scopes[:len(p.scopes)-1]
	p.loops = p.loops[:len(p.loops)-1]
}

// orient returns a symmetric matrix read with its indices ordered so that
// the one of the more deeply nested loop (inner, if given, counts as the
// deepest) comes last: rows are contiguous, and A[i,j] = A[j,i].
func (p *goPrinter) orient(t *derive.Tensor, inner string) *derive.Tensor {
	if !t.Sym || len(t.Idx) != 2 {
		return t
	}
	a, ok1 := t.Idx[0].(*derive.Ix)
	b, ok2 := t.Idx[1].(*derive.Ix)
	if !ok1 || !ok2 {
		return t
	}
	depth := func(name string) int {
		if name == inner {
			return len(p.loops) + 1
		}
		for k := len(p.loops) - 1; k >= 0; k-- {
			if p.loops[k] == name {
				return k + 1
			}
		}
		return 0
	}
	if depth(a.I.Name) > depth(b.I.Name) {
		return &derive.Tensor{Name: t.Name, Idx: []derive.Expr{b, a}, Sym: true, Int: t.Int}
	}
	return t
}
