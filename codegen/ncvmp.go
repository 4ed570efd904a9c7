package codegen

import (
	"fmt"
	"strings"

	"github.com/vigen-go/vigen/derive"
)

// This file prints what an NCVMP update (Knowles & Minka 2011) needs from a
// latent declared `nonconjugate ncvmp` (derive.Projection): a kernel for the
// part of f quadratic in θ, one filling the rows x_n of the projections
// u_n = x_nᵀθ, and one evaluating every projection's log factor g_n and
// its two derivatives at given u; runtime.NCVMPFactor runs the algorithm.

// ncvmpKernels prints the three kernels of o's NCVMP update.
func (g *gen) ncvmpKernels(o *derive.Objective) string {
	pr := o.NCVMP
	l := o.Latent
	up := g.upper(l.Name)
	qo := &derive.Objective{Latent: l, Dim: o.Dim, A: o.A, B: o.B, CovName: o.CovName, Inputs: o.Inputs, Parts: pr.Quad}
	doc := []string{fmt.Sprintf("%sQuad evaluates the part of f(%s) quadratic in %s (%s), writing its", up, l.Name, l.Name, l.Pos),
		"gradient into grad and its constant Hessian into hess: the natural parameters of",
		"the Gaussian message NCVMP takes from these statements exactly (VMP). Built from:", ""}
	for _, p := range pr.Quad {
		doc = append(doc, fmt.Sprintf("\t%s: %s", p.Factor.Pos, fmtFactor(p.Factor)))
	}
	var sb strings.Builder
	sb.WriteString(g.objectiveKernel(qo, false, up+"Quad", doc))

	inputs := inputParams(o.Inputs)
	var rowParams, logParams, logOuts []kernelParam
	var rowOut, logOut []Output
	var stmts []string
	for k, t := range pr.Terms {
		origin := fmt.Sprintf("%s:%d:%d: %s", t.Factor.Pos.File, t.Factor.Pos.Line, t.Factor.Pos.Col, fmtFactor(t.Factor))
		stmts = append(stmts, fmt.Sprintf("\t%s: %s", t.Factor.Pos, fmtFactor(t.Factor)))
		rows := fmt.Sprintf("rows%d", k)
		rowParams = append(rowParams, kernelParam{Want: rows, Tensor: rows, Dims: []string{t.Idx.Size, o.Dim}, Out: true, Clear: true})
		rowOut = append(rowOut, Output{Target: rows, Free: []derive.Index{t.Idx, o.A}, Expr: t.Row, Origin: origin})
		logParams = append(logParams, kernelParam{Want: fmt.Sprintf("u%d", k), Tensor: t.U, Dims: []string{t.Idx.Size}})
		for j, e := range []derive.Expr{t.G, t.G1, t.G2} {
			name := fmt.Sprintf("%s%d", []string{"g", "dg", "d2g"}[j], k)
			logOuts = append(logOuts, kernelParam{Want: name, Tensor: name, Dims: []string{t.Idx.Size}, Out: true, Clear: true})
			logOut = append(logOut, Output{Target: name, Free: []derive.Index{t.Idx}, Expr: e, Origin: origin})
		}
	}
	doc = []string{fmt.Sprintf("%sRows writes the rows x_n of the projections u_n = x_nᵀ%s through which", up, l.Name),
		fmt.Sprintf("these statements read %s (%s), one array per statement (n×%s, row-major):", l.Name, l.Pos, o.Dim), ""}
	doc = append(doc, stmts...)
	sb.WriteString(g.emitKernel(kernelSpec{Name: up + "Rows", Doc: doc, Params: append(rowParams, inputs...), Outputs: rowOut}))
	doc = []string{fmt.Sprintf("%sLogFactors evaluates, for each statement k and data point n, the log", up),
		fmt.Sprintf("factor g(u) of %s's projection u = uk[n] and its first and second", l.Name),
		"derivatives, into gk[n], dgk[n] and d2gk[n]; NCVMP integrates them over",
		"u ~ N(m_n, v_n) by Gauss–Hermite quadrature (Knowles & Minka 2011, §5.1):", ""}
	doc = append(doc, stmts...)
	params := append(append(logParams, logOuts...), inputs...)
	sb.WriteString(g.emitKernel(kernelSpec{Name: up + "LogFactors", Doc: doc, Params: params, Outputs: logOut}))
	return sb.String()
}

// emitNCVMPFactor prints ncvmpX, the NCVMP view of q(x) that gaussianX
// passes to the runtime when opts.Method selects ncvmp.
func (f *fitGen) emitNCVMPFactor(qi *qInfo) {
	w := f.w
	o := qi.obj
	pr := o.NCVMP
	inputs := f.args(o.Inputs, "d")
	if inputs != "" {
		inputs = ", " + inputs
	}
	doc := []string{fmt.Sprintf("ncvmp%s is q(%s) (%s) as non-conjugate variational message passing", qi.upper, qi.v.Name, f.pos(qi.v)),
		"updates it (runtime.NCVMPFactor), or nil when another method is selected."}
	w.Func(doc, w.Sf("(m *Model) ncvmp%s(q *state) *%s", qi.upper, rt("NCVMPFactor")), func() {
		w.If(cond(fmt.Sprintf(`q.%s != "ncvmp"`, qi.method)), func() { w.Return("nil") })
		w.Pf("return m.projections%s(q)", qi.upper)
	})
	doc = []string{fmt.Sprintf("projections%s is q(%s) (%s) split for NCVMP (runtime.NCVMPFactor), whatever", qi.upper, qi.v.Name, f.pos(qi.v)),
		"the method: ELBO integrates its projected statements with it."}
	w.Func(doc, w.Sf("(m *Model) projections%s(q *state) *%s", qi.upper, rt("NCVMPFactor")), func() {
		w.Pf("p := %s", f.dim(o.Dim))
		var ns, ends []string
		for k, t := range pr.Terms {
			n := fmt.Sprintf("n%d", k)
			w.Pf("%s := %s", n, f.dim(t.Idx.Size))
			ns = append(ns, n)
			ends = append(ends, strings.Join(ns, "+"))
		}
		// slices of the batch's arrays, one per statement
		part := func(arr string, k int, stride string) string {
			lo, hi := "", ends[k]
			if k > 0 {
				lo = ends[k-1]
			}
			if stride != "" {
				paren := func(s string) string {
					if strings.Contains(s, "+") {
						return "(" + s + ")"
					}
					return s
				}
				if lo != "" {
					lo = paren(lo) + "*" + stride
				}
				hi = paren(hi) + "*" + stride
			}
			return fmt.Sprintf("%s[%s:%s]", arr, lo, hi)
		}
		var rows, us, outs []string
		for k := range pr.Terms {
			rows = append(rows, part("rows", k, "p"))
			us = append(us, part("u", k, ""))
			outs = append(outs, part("g", k, ""), part("dg", k, ""), part("d2g", k, ""))
		}
		q := "m." + qi.upper + "Quad"
		if in := f.argsFor(qi.upper+"Quad", o.Inputs, "d"); in != "" {
			q = fmt.Sprintf("func(x, g, h []float64) float64 { return m.%sQuad(x, %s, g, h) }", qi.upper, in)
		}
		w.P("return &", rt("NCVMPFactor"), "{")
		w.Pf("Quad: %s,", q)
		w.P("Batch: &", rt("ProjectionBatch"), "{")
		w.Pf("N: %s, P: p,", ends[len(ends)-1])
		w.Pf("Rows: func(rows []float64) { m.%sRows(%s%s) },", qi.upper, strings.Join(rows, ", "), inputs)
		w.Pf("LogFactors: func(u, g, dg, d2g []float64) { m.%sLogFactors(%s, %s%s) },", qi.upper, strings.Join(us, ", "), strings.Join(outs, ", "), inputs)
		w.P("},")
		w.P("}")
	})
}

// quadratureELBO reports whether the ELBO takes the expectations of qi's
// projected statements by quadrature, as NCVMP's update does, whichever
// method fits qi (so that the ELBOs of NCVMP, Laplace and delta fits
// compare the same bound): when their log
// factors g read no other latent, the bound's Taylor expansion of them
// (Eq. 21) is Σ_n g(m_n) + ½g”(m_n)v_n, which runtime.NCVMPFactor's
// QuadratureGap replaces by the quadrature. A g that reads another
// Gaussian latent carries that latent's expansion too, and the statement
// keeps Eq. 21's.
func (f *fitGen) quadratureELBO(qi *qInfo) bool {
	if qi.obj == nil || qi.obj.NCVMP == nil {
		return false
	}
	for _, t := range qi.obj.NCVMP.Terms {
		for _, in := range qi.obj.Inputs {
			for _, v := range in.Tensors() {
				if derive.DependsOn(t.G, v.Tensor) {
					return false
				}
			}
		}
	}
	return true
}

// anyQuadratureELBO reports whether some latent's statements enter the
// ELBO by quadrature under NCVMP (quadratureELBO).
func (f *fitGen) anyQuadratureELBO() bool {
	for _, qi := range f.qs {
		if f.quadratureELBO(qi) {
			return true
		}
	}
	return false
}

// emitELBOQuadrature prints state.elboQuadrature, the statements whose
// expectations the ELBO integrates by quadrature (runtime.Result's
// ELBOQuadrature): those of the latents quadratureELBO accepts.
func (f *fitGen) emitELBOQuadrature() {
	if !f.anyQuadratureELBO() {
		return
	}
	var stmts []string
	for _, qi := range f.qs {
		if f.quadratureELBO(qi) {
			for _, t := range qi.obj.NCVMP.Terms {
				stmts = append(stmts, fmt.Sprintf("%q", fmt.Sprintf("%s: %s:%d:%d: %s", qi.v.Name, t.Factor.Pos.File, t.Factor.Pos.Line, t.Factor.Pos.Col, fmtFactor(t.Factor))))
			}
		}
	}
	f.w.Func([]string{"elboQuadrature lists the statements whose expected log factors ELBO",
		"integrates by Gauss–Hermite quadrature, as NCVMP's update does."},
		"(q *state) elboQuadrature() []string", func() {
			f.w.P("return []string{", strings.Join(stmts, ", "), "}")
		})
}
