package codegen

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/vigen-go/vigen/derive"
	"github.com/vigen-go/vigen/spec/ir"
)

// kernelParam is a slice parameter of a generated kernel: a tensor the
// body reads (an input), or one it accumulates into (an output).
type kernelParam struct {
	Want   string // preferred Go name
	Tensor string // the tensor name in derived expressions (inputs), or the Output.Target key (outputs)
	Dims   []string
	Out    bool
	// Clear: the kernel zeroes the output on entry.
	Clear bool
	// Trans: an input of rank 2 stored transposed (column-major, see
	// tensorInfo.Trans).
	Trans bool
	// Input: a variational parameter of another latent (inputParams),
	// which a trimmed kernel leaves out when its body never reads it.
	Input bool
}

// kernelSpec describes one generated kernel: a method of Model that
// evaluates scheduled outputs.
type kernelSpec struct {
	Name string
	Doc  []string // comment lines, without the leading //
	// Unit, if set, is an int parameter selecting the unit of a per-unit
	// kernel (the index is free in the outputs' expressions).
	Unit *derive.Index
	// Scalars are float64 parameters after the unit: Want is the Go name,
	// Tensor the rank-0 tensor the outputs read it as, a key no model
	// variable can have (a tempered update's "$invT").
	Scalars []kernelParam
	Params  []kernelParam
	Outputs []Output
	// Scalar: the kernel accumulates the scalar output "f" and returns it.
	Scalar bool
	// Points are the statements evaluated from their point terms, after
	// the scheduled outputs.
	Points []pointBlock
	// Trim: the kernel takes only the inputs its body reads; its callers
	// pass fitGen.argsFor(Name, …). generate finds them by generating
	// twice (gen.unread, gen.drop).
	Trim bool
}

// kernelChunk is the most outputs one generated function evaluates. The
// Go compiler's time grows faster than linearly in the size of a function,
// so the kernel of a model with many statements is split into methods of
// kernelChunk outputs each (a statement gives f, ∇f and ∇²f: three), which
// it calls in order. No example comes near it.
const kernelChunk = 3 * 64

// scalarOutput is o without the indices over derive.ScalarSize (the
// one-element vector of a scalar latent): its expression reads plain
// numbers, and an output whose free indices all run over one element
// accumulates into that element (grad[0], hess[0]).
func scalarOutput(o Output) Output {
	o.Expr = derive.DropScalarIndices(o.Expr)
	if len(o.Free) == 0 {
		return o
	}
	for _, i := range o.Free {
		if i.Size != derive.ScalarSize {
			return o
		}
	}
	o.Target += "[0]"
	o.Free, o.Symmetric = nil, false
	return o
}

// emitKernel schedules the outputs of k and prints the method.
func (g *gen) emitKernel(k kernelSpec) string {
	if len(k.Outputs)+3*len(k.Points) > kernelChunk {
		k.Trim = false // its parts take the kernel's parameters
		return g.splitKernel(k)
	}
	if k.Trim {
		var keep []kernelParam
		for _, prm := range k.Params {
			if !prm.Input || !g.drop[k.Name][prm.Tensor] {
				keep = append(keep, prm)
			}
		}
		k.Params = keep
	}
	local := newNamer("f", "m")
	unit := ""
	if k.Unit != nil {
		unit = local.get(k.Unit.Name)
	}
	tensors := map[string]tensorInfo{}
	goOf := map[string]string{}
	var sig []string
	for _, sc := range k.Scalars {
		name := local.get(sc.Want)
		sig = append(sig, name)
		tensors[sc.Tensor] = tensorInfo{Go: name}
	}
	for _, prm := range k.Params {
		name := local.get(prm.Want)
		sig = append(sig, name)
		if !prm.Out {
			tensors[prm.Tensor] = tensorInfo{Go: name, Dims: prm.Dims, Slice: true, Trans: prm.Trans}
		} else if len(prm.Dims) == 0 && prm.Tensor != "grad" && prm.Tensor != "hess" {
			name += "[0]" // a scalar output in a one-element slice
		}
		goOf[prm.Tensor] = name
	}
	var outs []Output
	for _, o := range k.Outputs {
		if n, ok := o.Expr.(*derive.Num); ok && n.V == 0 && o.Target == "f" {
			continue // nothing to add to the scalar result
		}
		if o.Target != "f" {
			o.Target = goOf[o.Target]
		}
		o.Expr = g.auxReads(o.Expr, tensors)
		o = scalarOutput(o)
		outs = append(outs, o)
	}
	stmts := Schedule(outs)
	if g.scheduled != nil {
		g.scheduled(k.Name, stmts)
	}
	localOf := map[string]string{}
	sizes := map[string]string{}
	var snames []string
	for s := range g.sizeGo {
		snames = append(snames, s)
	}
	sort.Strings(snames)
	for _, s := range snames {
		if v := g.m.Lookup(s); v != nil && v.Fixed {
			sizes[s] = s // a literal dimension is the number itself
			continue
		}
		sizes[s] = local.get(s)
	}
	p := newGoPrinter(tensors, sizes, local.taken)
	p.more = func(key string) (tensorInfo, bool) {
		t, ok := g.tensors[key]
		if !ok {
			return t, false
		}
		if strings.HasPrefix(key, "sum:") {
			t.Go = local.get(g.goName[key]) // a data-only sum (pointaux.go)
		} else {
			t.Go = local.get(localName(key))
		}
		localOf[key] = t.Go
		return t, true
	}
	if k.Unit != nil {
		p.idx[k.Unit.Name] = unit
	}
	var body strings.Builder
	p.topStmts(&body, stmts)
	for _, blk := range k.Points {
		g.emitPoints(&body, p, blk, goOf["grad"], goOf["hess"])
	}
	if k.Trim {
		for _, prm := range k.Params {
			if prm.Input && !p.usedT[prm.Tensor] {
				if g.unread[k.Name] == nil {
					g.unread[k.Name] = map[string]bool{}
				}
				g.unread[k.Name][prm.Tensor] = true
			}
		}
	}

	var sb strings.Builder
	// the parameters the body never reads are blank: every kernel of a
	// kind is called alike (a unit's, a tempered one's, one statistic's
	// natural parameters of several)
	read := map[string]bool{}
	for _, id := range identifier.FindAllString(stripComments(body.String()), -1) {
		read[id] = true
	}
	blank := func(name string) string {
		if read[name] {
			return name
		}
		return "_"
	}
	args := slices.Clone(sig)
	for i := range args {
		if i >= len(k.Scalars) && k.Params[i-len(k.Scalars)].Clear {
			continue // read by the clear(…) before the body
		}
		args[i] = blank(args[i]) // an output it adds nothing to, too
	}
	if unit != "" {
		args = append([]string{blank(unit)}, args...)
	}
	sb.WriteString(kernelHead(k, args))
	var sizeNames []string
	for s := range p.usedS {
		sizeNames = append(sizeNames, s)
	}
	sort.Strings(sizeNames)
	for _, s := range sizeNames {
		if v := g.m.Lookup(s); v != nil && v.Fixed {
			continue // a literal dimension
		}
		fmt.Fprintf(&sb, "\t%s := m.%s\n", sizes[s], g.sizeGo[s])
	}
	var tnames []string
	for key := range p.usedT {
		if _, ok := localOf[key]; ok {
			tnames = append(tnames, key)
		}
	}
	sort.Strings(tnames)
	for _, key := range tnames {
		fmt.Fprintf(&sb, "\t%s := m.%s\n", localOf[key], g.goName[key])
	}
	for _, prm := range k.Params {
		if prm.Clear && strings.HasSuffix(goOf[prm.Tensor], "[0]") {
			fmt.Fprintf(&sb, "\t%s = 0\n", goOf[prm.Tensor]) // a scalar output
		} else if prm.Clear {
			fmt.Fprintf(&sb, "\tclear(%s)\n", goOf[prm.Tensor])
		}
	}
	switch {
	case k.Scalar && len(outs) == 0 && len(k.Points) == 0:
		sb.WriteString("\treturn 0\n")
	case k.Scalar:
		sb.WriteString("\tvar f float64\n")
		sb.WriteString(body.String())
		sb.WriteString("\treturn f\n")
	default:
		sb.WriteString(body.String())
	}
	sb.WriteString("}\n")
	return sb.String()
}

// identifier matches the identifiers of Go code (and the words of its
// strings, which only makes a parameter look read).
var identifier = regexp.MustCompile(`[\p{L}_][\p{L}\p{N}_]*`)

// stripComments is Go code without its line comments.
func stripComments(code string) string {
	var sb strings.Builder
	for _, l := range strings.Split(code, "\n") {
		if t := strings.TrimSpace(l); !strings.HasPrefix(t, "//") {
			sb.WriteString(l)
			sb.WriteByte('\n')
		}
	}
	return sb.String()
}

// inputParams are the kernel parameters for the variational factors a
// kernel reads.
// A tensor is one parameter however often q lists it (a Normal's mean is
// also its moment E[x]); fitGen.argsFor passes the same list.
func inputParams(qs []*derive.QFactor) []kernelParam {
	var out []kernelParam
	seen := map[string]bool{}
	for _, q := range qs {
		for _, v := range q.Tensors() {
			if !seen[v.Tensor] {
				seen[v.Tensor] = true
				out = append(out, kernelParam{Want: localName(v.Tensor), Tensor: v.Tensor, Dims: v.Dims, Input: true})
			}
		}
	}
	return out
}

// maxDeltaCurvature is the largest printed tree (derive.TreeSize) of the
// fourth derivatives in the delta objective's Hessian that a kernel
// writes out; the models in the repository stay far below it (the largest,
// a mixture in the derivative corpus, is 2.9e6), and a two-component
// mixture with ordered means and latent scales reaches 3.5e7: 178,000
// lines of Go in 83 s of generation, against 26,000 in 30 s with ∇²f in
// its place. A variable so that tests can lower it.
var maxDeltaCurvature = 1e7

// maxKernelLines is the most lines of Go one derivative kernel may have.
// The examples' largest has 190, the derivative corpus's largest (a
// Normal–StudentT mixture, dist_mixture.vi) 6,728; a two-component mixture with ordered means
// and latent scales (mixlit, issue 39) writes a delta kernel of 13,573 lines
// whose package Go's compiler takes five CPU-minutes and gigabytes to
// build. Until the derivative code grows linearly with the model (issue
// 39), such a model is refused at the latent rather than left to the build.
// A variable so that tests can raise it.
var maxKernelLines = 10000

// kernelName finds the name of the first function or method of a kernel.
var kernelName = regexp.MustCompile(`(?m)^func (?:\([^)]*\) )?(\w+)\(`)

// kernelTooLarge is a positioned error if the kernel src printed for
// objective o is longer than maxKernelLines.
func kernelTooLarge(o *derive.Objective, src string) error {
	n := 0 // the longest function: a kernel of many statements is split into several
	for _, f := range strings.Split(src, "\nfunc ") {
		n = max(n, strings.Count(f, "\n"))
	}
	if n <= maxKernelLines {
		return nil
	}
	name := "?"
	if m := kernelName.FindStringSubmatch(src); m != nil {
		name = m[1]
	}
	var at []string
	for _, f := range o.Factors {
		at = append(at, f.Pos.String())
	}
	return ir.Errorf(o.Latent.Pos, "the model is too large for vigen's derivative code: the kernel %s of latent %s would be %d lines of Go (at most %d), from the statements at %s",
		name, o.Latent.Name, n, maxKernelLines, strings.Join(at, ", ")).
		Hintf("the derivatives of these statements (to the fourth, for the delta method with its Hessian) are written out in full, and code of this size takes Go's compiler minutes and gigabytes to build; vigen refuses it until its derivative code grows linearly with the model (issue 39)")
}

// kernel prints the function evaluating an objective: f, ∇f and ∇²f for
// Laplace, or the Eq. 17 objective, its gradient and ∇²f for delta.
func (g *gen) kernel(o *derive.Objective, delta bool) string {
	name := g.upper(o.Latent.Name) + "F"
	if delta {
		name = g.upper(o.Latent.Name) + "Delta"
	}
	return g.objectiveKernel(o, delta, name, nil)
}

// collapsedKernel prints the function evaluating an objective's collapsed
// form g (derive.Collapsed), its gradient and Hessian.
func (g *gen) collapsedKernel(o *derive.Objective) string {
	c := o.Collapsed
	co := &derive.Objective{Latent: o.Latent, Dim: o.Dim, A: o.A, B: o.B, Unit: o.Unit, Parts: c.Parts}
	for _, p := range c.Parts {
		co.Factors = append(co.Factors, p.Factor)
	}
	name := g.upper(o.Latent.Name) + "Collapsed"
	doc := []string{fmt.Sprintf("%s evaluates g(%s) = max over q(%s) of f(%s) for latent %s (%s),", name, o.Latent.Name, c.Z.Name, o.Latent.Name, o.Latent.Name, o.Latent.Pos),
		fmt.Sprintf("writing ∇g into grad and ∇²g into hess: %s's statements contribute the", c.Z.Name),
		"log-sum-exp of its natural parameters. A maximum of g is the fixed point of",
		fmt.Sprintf("the %s/%s alternation (derive/collapse.go). g is built from:", o.Latent.Name, c.Z.Name), ""}
	for _, f := range co.Factors {
		doc = append(doc, fmt.Sprintf("\t%s: %s", f.Pos, fmtFactor(f)))
	}
	return g.objectiveKernel(co, false, name, doc) + g.collapsedValueKernel(o, co)
}

// collapsedValueKernel prints g(θ) alone, without its derivatives, for
// the trial points of Newton's method where only the value decides
// (runtime.GaussianFactor.CollapsedValue): a pass over the data with no
// K×K work per point.
func (g *gen) collapsedValueKernel(o, co *derive.Objective) string {
	name := g.upper(o.Latent.Name) + "CollapsedValue"
	doc := []string{fmt.Sprintf("%s is the value of %sCollapsed, g(%s), without its derivatives.", name, g.upper(o.Latent.Name), o.Latent.Name)}
	return g.valueKernel(o, co, name, doc)
}

// targetKernel prints f(θ) alone, the log of the density (up to a
// constant) that a nonconjugate latent's Gaussian approximates, q*(θ) ∝
// exp f(θ) (Eq. 9): the target of the importance ratios of the PSIS
// diagnostic (runtime.GaussianFactor.Target), one pass over the data with
// no derivatives.
func (g *gen) targetKernel(o *derive.Objective) string {
	l := o.Latent
	name := g.upper(l.Name) + "Target"
	doc := wrapComment(fmt.Sprintf("%s is f(%s) of %sF without its derivatives: the log of the density, up to a constant, that q(%s) approximates (q* ∝ exp f, Eq. 9), for the PSIS diagnostic.", name, l.Name, g.upper(l.Name), l.Name), 76)
	return g.valueKernel(o, o, name, doc)
}

// valueKernel prints the function name returning the value of the
// objective of parts (o's, or its collapsed form's) at the latent of o,
// with no derivatives.
func (g *gen) valueKernel(o, parts *derive.Objective, name string, doc []string) string {
	var outs []Output
	var points []pointBlock
	for _, part := range parts.Parts {
		origin := fmt.Sprintf("%s:%d:%d: %s", part.Factor.Pos.File, part.Factor.Pos.Line, part.Factor.Pos.Col, fmtFactor(part.Factor))
		if part.Point != nil {
			term := part.Point.Clone() // the Derivation's stays as it is
			groups, _ := pointOutputsOf(term, false, false, "")
			points = append(points, pointBlock{Origin: origin, Term: term, Groups: groups})
			continue
		}
		outs = append(outs, Output{Target: "f", Expr: part.F, Origin: origin})
	}
	l := o.Latent
	params := append([]kernelParam{{Want: l.Name, Tensor: l.Name, Dims: []string{o.Dim}}}, inputParams(parts.Inputs)...)
	return g.emitKernel(kernelSpec{Name: name, Doc: doc, Unit: o.Unit, Params: params, Outputs: outs, Scalar: true, Points: points, Trim: true})
}

func (g *gen) objectiveKernel(o *derive.Objective, delta bool, name string, doc []string) string {
	var outs []Output
	var points []pointBlock
	var approxCurv []string // parts whose delta Hessian is ∇²f alone
	for _, part := range o.Parts {
		if part.Point != nil {
			origin := fmt.Sprintf("%s:%d:%d: %s", part.Factor.Pos.File, part.Factor.Pos.Line, part.Factor.Pos.Col, fmtFactor(part.Factor))
			term := part.Point.Clone() // the Derivation's stays as it is
			groups, standIn := pointOutputsOf(term, delta, true, o.CovName)
			points = append(points, pointBlock{Origin: origin, Term: term, Groups: groups})
			if standIn {
				approxCurv = append(approxCurv, part.Factor.Pos.String())
			}
			continue
		}
		value, grad, hess := part.F, part.Grad, part.Hess
		if delta {
			value = derive.Add(part.F, derive.Mul(derive.N(0.5), part.Trace(o)))
			grad = derive.Add(part.Grad, derive.Mul(derive.N(0.5), part.TraceGrad(o)))
			// The delta objective's Hessian holds fourth derivatives of f.
			// It only steers Newton's method (Σ is −∇²f⁻¹ from the Laplace
			// kernel, and the gradient is exact), so where it would be
			// enormous ∇²f stands in for it as the curvature.
			if h4 := derive.Diff(part.TraceGrad(o), o.Latent.Name, []derive.Index{o.B}); derive.TreeSize(h4, maxDeltaCurvature) <= maxDeltaCurvature {
				hess = derive.Add(part.Hess, derive.Mul(derive.N(0.5), h4))
			} else {
				approxCurv = append(approxCurv, part.Factor.Pos.String())
			}
		}
		origin := fmt.Sprintf("%s:%d:%d: %s", part.Factor.Pos.File, part.Factor.Pos.Line, part.Factor.Pos.Col, fmtFactor(part.Factor))
		for _, out := range []Output{
			{Target: "f", Expr: value, Origin: origin},
			{Target: "grad", Free: []derive.Index{o.A}, Expr: grad, Origin: origin},
			{Target: "hess", Free: []derive.Index{o.A, o.B}, Expr: hess, Symmetric: true, Origin: origin},
		} {
			// a part linear in the latent, such as the log-Jacobian Σ_k u_k
			// of an improper flat prior, adds nothing to the Hessian
			if n, ok := out.Expr.(*derive.Num); !ok || n.V != 0 {
				outs = append(outs, out)
			}
		}
	}
	l := o.Latent
	params := []kernelParam{{Want: l.Name, Tensor: l.Name, Dims: []string{o.Dim}}}
	if delta {
		params = append(params, kernelParam{Want: "cov", Tensor: o.CovName, Dims: []string{o.Dim, o.Dim}})
	}
	inputs := inputParams(o.Inputs)
	params = append(params, inputs...)
	params = append(params,
		kernelParam{Want: "grad", Tensor: "grad", Out: true, Clear: true},
		kernelParam{Want: "hess", Tensor: "hess", Out: true, Clear: true})
	if doc != nil {
		return g.emitKernel(kernelSpec{Name: name, Doc: doc, Unit: o.Unit, Params: params, Outputs: outs, Scalar: true, Points: points, Trim: true})
	}
	dim := o.Dim
	if dim == derive.ScalarSize {
		dim = "1" // a scalar latent's one element
	}
	if delta {
		doc = append(doc, fmt.Sprintf("%s evaluates the delta-method objective of Eq. 17 for latent %s (%s),", name, l.Name, l.Pos),
			"f(μ) + ½Tr{∇²f(μ)Σ} with Σ = cov, writing its gradient in μ into grad",
			fmt.Sprintf("and its Hessian in μ into hess (%s×%s, row-major; it holds third and", dim, dim),
			"fourth derivatives of f, so Newton's method converges quadratically). f is built from:")
		if len(approxCurv) > 0 {
			doc = append(doc[:len(doc)-1], "fourth derivatives of f, so Newton's method converges quadratically), except",
				fmt.Sprintf("that the terms of %s add ∇²f alone: their fourth", strings.Join(approxCurv, ", ")),
				"derivatives would be too large to write out, and the Hessian only steers",
				"Newton's method (Σ comes from ∇²f). f is built from:")
		}
	} else {
		doc = append(doc, fmt.Sprintf("%s evaluates f(%s) of Eq. 12 for latent %s (%s), writing ∇f", name, l.Name, l.Name, l.Pos),
			fmt.Sprintf("into grad and ∇²f into hess (%s×%s, row-major). f is built from:", dim, dim))
	}
	doc = append(doc, "")
	for _, f := range o.Factors {
		doc = append(doc, fmt.Sprintf("\t%s: %s", f.Pos, fmtFactor(f)))
	}
	var names []string
	for _, in := range inputs {
		if !g.drop[name][in.Tensor] {
			names = append(names, localName(in.Tensor))
		}
	}
	if o.Unit != nil {
		doc = append(doc, "", fmt.Sprintf("%s is unit %s's vector %s[%s]; %s are the variational parameters of", l.Name, o.Unit.Name, l.Name, o.Unit.Name, strings.Join(names, ", ")),
			"the other latents f reads through expectations.")
	} else if len(names) > 0 {
		doc = append(doc, "", fmt.Sprintf("%s are the variational parameters of the other latents f reads", strings.Join(names, ", ")),
			"through expectations.")
	}
	return g.emitKernel(kernelSpec{Name: name, Doc: doc, Unit: o.Unit, Params: params, Outputs: outs, Scalar: true, Points: points, Trim: true})
}

// splitKernel prints kernel k, of more than kernelChunk outputs, as methods
// of kernelChunk outputs each (the first Part0, the next Part1, …) that
// accumulate into k's outputs, and k calling them in order: it clears the
// outputs it should and sums the parts' scalar results.
func (g *gen) splitKernel(k kernelSpec) string {
	local := newNamer("f", "m")
	var args []string
	if k.Unit != nil {
		args = append(args, local.get(k.Unit.Name))
	}
	for _, sc := range k.Scalars {
		args = append(args, local.get(sc.Want))
	}
	for _, prm := range k.Params {
		args = append(args, local.get(prm.Want))
	}
	var parts, calls strings.Builder
	parts.WriteString(kernelHead(k, args))
	named := args[len(args)-len(k.Params):]
	for i, prm := range k.Params {
		if prm.Clear {
			fmt.Fprintf(&parts, "\tclear(%s)\n", named[i])
		}
	}
	// the chunks run over the outputs, then the point blocks (a
	// statement's f, ∇f and ∇²f: three outputs each)
	type chunk struct {
		outs   []Output
		points []pointBlock
	}
	var chunks []chunk
	for lo := 0; lo < len(k.Outputs); lo += kernelChunk {
		chunks = append(chunks, chunk{outs: k.Outputs[lo:min(lo+kernelChunk, len(k.Outputs))]})
	}
	for lo := 0; lo < len(k.Points); lo += kernelChunk / 3 {
		chunks = append(chunks, chunk{points: k.Points[lo:min(lo+kernelChunk/3, len(k.Points))]})
	}
	for c, ch := range chunks {
		part := k
		part.Name = fmt.Sprintf("%sPart%d", lowerFirst(k.Name), c)
		part.Outputs, part.Points = ch.outs, ch.points
		part.Params = append([]kernelParam(nil), k.Params...)
		for i := range part.Params {
			part.Params[i].Clear = false
		}
		part.Doc = []string{fmt.Sprintf("%s adds part %d of %s's %d (see %s).", part.Name, c+1, k.Name, len(chunks), k.Name)}
		calls.WriteString(g.emitKernel(part))
		call := fmt.Sprintf("m.%s(%s)", part.Name, strings.Join(args, ", "))
		switch {
		case !k.Scalar:
			fmt.Fprintf(&parts, "\t%s\n", call)
		case c == 0:
			fmt.Fprintf(&parts, "\tf := %s\n", call)
		default:
			fmt.Fprintf(&parts, "\tf += %s\n", call)
		}
	}
	if k.Scalar {
		parts.WriteString("\treturn f\n")
	}
	parts.WriteString("}\n")
	return parts.String() + calls.String()
}

// kernelHead prints the doc comment and signature of kernel k whose
// parameters are named args (the unit's first).
func kernelHead(k kernelSpec, args []string) string {
	var sb strings.Builder
	sb.WriteString("\n")
	for _, l := range k.Doc {
		if l == "" {
			sb.WriteString("//\n")
		} else {
			fmt.Fprintf(&sb, "// %s\n", l)
		}
	}
	var params []string
	if k.Unit != nil {
		params, args = append(params, args[0]+" int"), args[1:]
	}
	if len(k.Scalars) > 0 {
		params, args = append(params, strings.Join(args[:len(k.Scalars)], ", ")+" float64"), args[len(k.Scalars):]
	}
	if len(args) > 0 {
		params = append(params, strings.Join(args, ", ")+" []float64")
	}
	ret := ""
	if k.Scalar {
		ret = " float64"
	}
	fmt.Fprintf(&sb, "func (m *Model) %s(%s)%s {\n", k.Name, strings.Join(params, ", "), ret)
	return sb.String()
}
