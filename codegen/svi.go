package codegen

import (
	"fmt"
	"strings"

	"github.com/vigen-go/vigen/derive"
)

// This file emits what stochastic variational inference (runtime.FitSVI)
// needs of a model besides coordinate ascent's kernels: caModel's
// Stochastic, the natural parameters of the conjugate global factors split
// into the prior's part and each unit's part (runtime.SVIGlobals, from
// derive.SVIPart), and the params' online EM (svi_params.go). A model SVI
// does not apply to gets NoSVI, saying why.

// sviGlobals are the global factors SVI steps, in update order.
func (f *fitGen) sviGlobals() []*qInfo {
	var out []*qInfo
	for _, qi := range f.qs {
		if qi.upd != nil && !qi.local {
			out = append(out, qi)
		}
	}
	return out
}

// sviReason says why SVI does not apply to the model, or "".
func (f *fitGen) sviReason() string {
	statsLen, preason := f.sviParams()
	var why []string
	if f.unit == nil {
		why = append(why, "it has no unit plate (a loop `for d in 1:D` holding local latents) to draw minibatches from")
	}
	for _, qi := range f.qs {
		switch {
		case qi.obj != nil && !qi.local:
			why = append(why, fmt.Sprintf("the global %s (%s) is nonconjugate, and SVI steps only conjugate globals", qi.v.Name, f.pos(qi.v)))
		case f.unit != nil && qi.upd != nil && !qi.local && qi.upd.SVI == nil:
			why = append(why, qi.upd.NoSVI)
		case f.unit != nil && qi.upd != nil && !qi.local && !hasNaturalMaps(qi.q.Family):
			why = append(why, fmt.Sprintf("the global %s (%s) is %s, whose natural parameters SVI cannot step", qi.v.Name, f.pos(qi.v), qi.q.Family))
		}
	}
	if preason != "" {
		why = append(why, preason)
	}
	if statsLen == "" && len(f.sviGlobals()) == 0 && len(why) == 0 {
		why = append(why, "it has no global latents or params to step, only local ones: coordinate ascent fits each unit exactly")
	}
	return strings.Join(why, "; ")
}

// emitSVI prints the SVI side of caModel.
func (f *fitGen) emitSVI() {
	if why := f.sviReason(); why != "" {
		f.p("\n// NoSVI says why stochastic variational inference does not apply to the\n// model.\nfunc (a *caModel) NoSVI() string {\n\treturn %q\n}\n", why)
		return
	}
	globals := f.sviGlobals()
	statsLen, _ := f.sviParams()
	var sizes, names []string
	for _, qi := range globals {
		n := f.length(qi.q.Params[0].Dims)
		if len(qi.fields) > 1 && n == "1" {
			n = fmt.Sprint(len(qi.fields))
		} else if len(qi.fields) > 1 {
			n = fmt.Sprintf("%d * %s", len(qi.fields), n)
		}
		sizes = append(sizes, n)
		names = append(names, fmt.Sprintf("%q", qi.v.Name))
	}
	var what []string
	if len(globals) > 0 {
		what = append(what, "the natural\n// parameters of the conjugate global factors (runtime.SVIGlobals)")
	}
	if statsLen != "" {
		what = append(what, "the expected\n// sufficient statistics of the params' M-steps, unless they are fixed\n// (runtime.SVIParams)")
	}
	f.p("\n// Stochastic describes what stochastic variational inference steps: %s.\nfunc (a *caModel) Stochastic() runtime.SVIShape {\n", strings.Join(what, ", and "))
	if strings.Contains(strings.Join(sizes, "")+statsLen, "m.") {
		f.p("\tm := a.m\n")
	}
	if statsLen == "" {
		f.p("\treturn runtime.SVIShape{Natural: []int{%s}, Names: []string{%s}}\n}\n", strings.Join(sizes, ", "), strings.Join(names, ", "))
	} else {
		f.p("\ts := runtime.SVIShape{}\n")
		if len(globals) > 0 {
			f.p("\ts.Natural, s.Names = []int{%s}, []string{%s}\n", strings.Join(sizes, ", "), strings.Join(names, ", "))
		}
		f.p("\tif !a.opts.FixParams {\n\t\ts.ParamStats = %s\n\t}\n\treturn s\n}\n", statsLen)
	}
	if len(globals) > 0 {
		f.emitSVIGlobals(globals)
		for _, qi := range globals {
			f.sb.WriteString(f.sviKernels(qi))
		}
	}
	if statsLen != "" {
		f.emitSVIParams()
	}
}

// emitSVIGlobals prints caModel's runtime.SVIGlobals methods. Global
// factor g is the g-th of globals; its natural parameter vector has one
// block per sufficient statistic (runtime.ToNatural's layout).
func (f *fitGen) emitSVIGlobals(globals []*qInfo) {
	cases := func(body func(qi *qInfo) string) {
		f.p("\tswitch g {\n")
		for g, qi := range globals {
			f.p("\tcase %d: // %s (%s)\n%s", g, qi.v.Name, f.pos(qi.v), body(qi))
		}
		f.p("\t}\n")
	}
	fields := func(qi *qInfo) string {
		var out []string
		for _, fl := range qi.fields {
			out = append(out, "q."+fl)
		}
		return strings.Join(out, ", ")
	}
	blocks := func(qi *qInfo) string {
		if len(qi.fields) == 1 {
			return "eta"
		}
		out := []string{"eta[:n]"}
		for k := 1; k < len(qi.fields); k++ {
			if k == len(qi.fields)-1 {
				out = append(out, fmt.Sprintf("eta[%s:]", mulN(k)))
			} else {
				out = append(out, fmt.Sprintf("eta[%s:%s]", mulN(k), mulN(k+1)))
			}
		}
		return strings.Join(out, ", ")
	}
	nDecl := func(qi *qInfo) string {
		if len(qi.fields) == 1 {
			return ""
		}
		return fmt.Sprintf("\t\tn := len(q.%s)\n", qi.fields[0])
	}
	f.p("\n// Natural writes the natural parameters of global factor g into eta.\nfunc (a *caModel) Natural(q *state, g int, eta []float64) {\n")
	cases(func(qi *qInfo) string {
		return fmt.Sprintf("\t\truntime.ToNatural(eta, %s, %s)\n", naturalFunc(qi.q.Family, true), fields(qi))
	})
	f.p("}\n")
	f.p("\n// SetNatural sets global factor g to the natural parameters eta and\n// refreshes its expectations.\nfunc (a *caModel) SetNatural(q *state, g int, eta []float64) {\n")
	cases(func(qi *qInfo) string {
		s := fmt.Sprintf("\t\truntime.FromNatural(eta, %s, %s)\n", naturalFunc(qi.q.Family, false), fields(qi))
		if len(qi.mfields) > 0 {
			s += fmt.Sprintf("\t\ta.m.moments%s(q)\n", qi.upper)
		}
		return s
	})
	f.p("}\n")
	f.p("\n// PriorNatural adds into eta global factor g's natural parameters from\n// the statements outside the unit plate (Eq. 18).\nfunc (a *caModel) PriorNatural(q *state, g int, eta []float64) {\n\tm := a.m\n")
	cases(func(qi *qInfo) string {
		in := f.args(qi.upd.SVI.PriorInputs, "d")
		if in != "" {
			in += ", "
		}
		return nDecl(qi) + fmt.Sprintf("\t\tm.%sNaturalPrior(%s%s)\n", qi.upper, in, blocks(qi))
	})
	f.p("}\n")
	f.p("\n// UnitNatural adds into eta unit d's part of global factor g's natural\n// parameters: its expected sufficient statistics (Eq. 18).\nfunc (a *caModel) UnitNatural(q *state, w *scratch, g, d int, eta []float64) {\n\tm := a.m\n")
	cases(func(qi *qInfo) string {
		in := f.args(qi.upd.SVI.UnitInputs, "d")
		if in != "" {
			in += ", "
		}
		return nDecl(qi) + fmt.Sprintf("\t\tm.%sNaturalUnit(d, %s%s)\n", qi.upper, in, blocks(qi))
	})
	f.p("}\n")
}

// hasNaturalMaps reports whether SVI can step a conjugate factor of family.
func hasNaturalMaps(family string) bool {
	num := func(int) derive.Expr { return derive.N(0) }
	_, _, ok := derive.NaturalMaps(family, num, num)
	return ok
}

// naturalFunc prints the conversion of one element of a factor of family
// to its natural parameters (func(e, p []float64), for runtime.ToNatural)
// or back (func(p, e []float64), for runtime.FromNatural), from the
// family's table entry.
func naturalFunc(family string, to bool) string {
	tensors := map[string]tensorInfo{}
	read := func(slice string) func(k int) derive.Expr {
		return func(k int) derive.Expr {
			name := fmt.Sprintf("%s%d", slice, k)
			tensors[name] = tensorInfo{Go: fmt.Sprintf("%s[%d]", slice, k)}
			return derive.T(name)
		}
	}
	toEta, toParams, _ := derive.NaturalMaps(family, read("p"), read("e"))
	out, exprs, sig := "e", toEta, "e, p"
	if !to {
		out, exprs, sig = "p", toParams, "p, e"
	}
	pr := newGoPrinter(tensors, map[string]string{}, map[string]bool{})
	var lhs, rhs []string
	for k, x := range exprs {
		lhs = append(lhs, fmt.Sprintf("%s[%d]", out, k))
		rhs = append(rhs, pr.expr(x, 0))
	}
	return fmt.Sprintf("func(%s []float64) { %s = %s }", sig, strings.Join(lhs, ", "), strings.Join(rhs, ", "))
}

// sviKernels prints the kernels of a global's SVI split: its prior part
// and one unit's part of E_q[η].
func (f *fitGen) sviKernels(qi *qInfo) string {
	u, s := qi.upd, qi.upd.SVI
	stats := derive.Dists[qi.q.Family].ExpFam.Stats
	kernel := func(name string, unit *derive.Index, inputs []*derive.QFactor, exprs []derive.Expr, what ...string) string {
		params := inputParams(inputs)
		var outs []Output
		for k, st := range stats {
			key := "out:eta" + fmt.Sprint(k)
			want := "eta"
			if len(stats) > 1 {
				want = fmt.Sprintf("eta%d", k+1)
			}
			params = append(params, kernelParam{Want: want, Tensor: key, Dims: qi.q.Params[0].Dims, Out: true})
			if n, ok := exprs[k].(*derive.Num); ok && n.V == 0 {
				continue // nothing to add
			}
			outs = append(outs, Output{Target: key, Free: u.At, Expr: exprs[k], Origin: fmt.Sprintf("%s: latent %s, E[η] of %s", f.pos(qi.v), qi.v.Name, st.Name)})
		}
		doc := append([]string{name + " adds into its outputs " + what[0]}, what[1:]...)
		doc = append(doc, "")
		for _, fc := range u.Factors {
			if (unit != nil) == derive.InPlate(fc, *f.unit) {
				doc = append(doc, fmt.Sprintf("\t%s: %s", fc.Pos, fmtFactor(fc)))
			}
		}
		doc = append(doc, "", "The caller zeroes the outputs.")
		return f.g.emitKernel(kernelSpec{Name: name, Doc: doc, Unit: unit, Params: params, Outputs: outs})
	}
	var stat []string
	for _, st := range stats {
		stat = append(stat, st.Name)
	}
	return kernel(qi.upper+"NaturalPrior", nil, s.PriorInputs, s.Prior,
		fmt.Sprintf("the natural parameters of q(%s) (of %s)", qi.v.Name, strings.Join(stat, "; ")),
		"that the statements outside the unit plate give (Eq. 18, E_q[η]):") +
		kernel(qi.upper+"NaturalUnit", f.unit, s.UnitInputs, s.Unit,
			fmt.Sprintf("unit %s's part of the natural parameters of q(%s):", f.unit.Name, qi.v.Name),
			"its expected sufficient statistics (Eq. 18, E_q[η] of its statements):")
}

// mulN is k·n in Go, for slicing natural parameter blocks.
func mulN(k int) string {
	if k == 1 {
		return "n"
	}
	return fmt.Sprintf("%d*n", k)
}
