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
// derive.SVIPart), the params' online EM (svi_params.go), and SSMF's and
// the Gibbs local step's methods (ssmf.go). A model SVI does not apply to
// gets NoSVI, saying why.

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
		case qi.side:
			why = append(why, fmt.Sprintf("%s (%s) is local to `for %s in 1:%s`, a loop other than the unit plate's, and SVI samples the units of one loop", qi.v.Name, f.pos(qi.v), qi.obj.Unit.Name, qi.obj.Unit.Size))
		case qi.obj != nil && !qi.local && qi.obj.Conjugate:
			why = append(why, fmt.Sprintf("the global %s (%s) is conjugate with a Gaussian factor over the whole vector (MvNormal), whose natural parameters (η₁ = ∇f(0), η₂ = ½∇²f) SVI does not step yet", qi.v.Name, f.pos(qi.v)))
		case qi.obj != nil && !qi.local:
			why = append(why, fmt.Sprintf("the global %s (%s) is nonconjugate, and SVI steps only conjugate globals", qi.v.Name, f.pos(qi.v)))
		case f.unit != nil && qi.upd != nil && !qi.local && qi.upd.SVI == nil:
			why = append(why, qi.upd.NoSVIReason)
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
	w := f.w
	if why := f.sviReason(); why != "" {
		w.Func([]string{"NoSVI says why stochastic variational inference does not apply to the", "model."},
			"(a *caModel) NoSVI() string", func() { w.Return(fmt.Sprintf("%q", why)) })
		return
	}
	globals := f.sviGlobals()
	statsLen, _ := f.sviParams()
	var sizes, names, families, rows []string
	for _, qi := range globals {
		families = append(families, fmt.Sprintf("%q", qi.q.Family))
		rows = append(rows, f.rowLen(qi))
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
		what = append(what, "the natural parameters of the conjugate global factors (runtime.SVIGlobals)")
	}
	if statsLen != "" {
		what = append(what, "the expected sufficient statistics of the params' M-steps, unless they are fixed (runtime.SVIParams)")
	}
	doc := strings.Split(strings.TrimPrefix(comment("Stochastic describes what stochastic variational inference steps: "+strings.Join(what, ", and ")+"."), "// "), "\n// ")
	w.Func(doc, w.Sf("(a *caModel) Stochastic() %s", rt("SVIShape")), func() {
		if strings.Contains(strings.Join(append(sizes, rows...), "")+statsLen, "m.") {
			w.P("m := a.m")
		}
		fields := fmt.Sprintf("Natural: []int{%s}, Names: []string{%s},\nFamilies: []string{%s}, Rows: []int{%s},",
			strings.Join(sizes, ", "), strings.Join(names, ", "), strings.Join(families, ", "), strings.Join(rows, ", "))
		if statsLen == "" {
			w.Return(w.Sf("%s{\n%s\n}", rt("SVIShape"), fields))
			return
		}
		if len(globals) > 0 {
			w.Pf("s := %s{\n%s\n}", rt("SVIShape"), fields)
		} else {
			w.Pf("s := %s{}", rt("SVIShape"))
		}
		w.If(cond("!a.opts.FixParams"), func() { w.Pf("s.ParamStats = %s", statsLen) })
		w.Return("s")
	})
	if len(globals) > 0 {
		f.emitSVIGlobals(globals)
		for _, qi := range globals {
			w.Raw(f.sviKernels(qi))
		}
	}
	if statsLen != "" {
		f.emitSVIParams()
	}
	f.emitSSMF(globals)
	f.emitGibbs()
	f.emitShard()
}

// emitSVIGlobals prints caModel's runtime.SVIGlobals methods. Global
// factor g is the g-th of globals; its natural parameter vector has one
// block per sufficient statistic (runtime.ToNatural's layout).
func (f *fitGen) emitSVIGlobals(globals []*qInfo) {
	w := f.w
	cases := func(body func(qi *qInfo)) {
		w.Block("switch g", func() {
			for g, qi := range globals {
				w.Pf("case %d: // %s (%s)", g, qi.v.Name, f.pos(qi.v))
				body(qi)
			}
		})
	}
	fields := func(qi *qInfo) string {
		var out []string
		for _, fl := range qi.fields {
			out = append(out, "q."+fl)
		}
		return strings.Join(out, ", ")
	}
	// blocks are the slices of eta holding qi's natural parameters, one per
	// field, each n long (nDecl).
	blocks := func(qi *qInfo) string {
		var out []string
		for k := range qi.fields {
			hi := times(k+1, "n")
			if k == len(qi.fields)-1 {
				hi = ""
			}
			out = append(out, sliceExpr("eta", times(k, "n"), hi))
		}
		return strings.Join(out, ", ")
	}
	nDecl := func(qi *qInfo) {
		if len(qi.fields) > 1 {
			w.Pf("n := len(q.%s)", qi.fields[0])
		}
	}
	w.Func([]string{"Natural writes the natural parameters of global factor g into eta."}, "(a *caModel) Natural(q *state, g int, eta []float64)", func() {
		cases(func(qi *qInfo) {
			w.Pf("%s(eta, %s, %s)", rt("ToNatural"), naturalFunc(qi.q.Family, true), fields(qi))
		})
	})
	w.Func([]string{"SetNatural sets global factor g to the natural parameters eta and", "refreshes its expectations."},
		"(a *caModel) SetNatural(q *state, g int, eta []float64)", func() {
			cases(func(qi *qInfo) {
				w.Pf("%s(eta, %s, %s)", rt("FromNatural"), naturalFunc(qi.q.Family, false), fields(qi))
				if len(qi.mfields) > 0 {
					w.Pf("a.m.moments%s(q)", qi.upper)
				}
			})
		})
	w.Func([]string{"PriorNatural adds into eta global factor g's natural parameters from", "the statements outside the unit plate (Eq. 18)."},
		"(a *caModel) PriorNatural(q *state, g int, eta []float64)", func() {
			w.P("m := a.m")
			cases(func(qi *qInfo) {
				nDecl(qi)
				w.Pf("m.%sNaturalPrior(%s)", qi.upper, joinArgs(f.argsFor(qi.upper+"NaturalPrior", qi.upd.SVI.PriorInputs, "d"), blocks(qi)))
			})
		})
	w.Func([]string{"UnitNatural adds into eta unit d's part of global factor g's natural",
		"parameters: its expected sufficient statistics (Eq. 18), times invT, the",
		"unit's inverse temperature (Mandt et al. 2016, Eq. 8; 1 untempered)."},
		"(a *caModel) UnitNatural(q *state, w *scratch, g, d int, invT float64, eta []float64)", func() {
			w.P("m := a.m")
			cases(func(qi *qInfo) {
				nDecl(qi)
				w.Pf("m.%sNaturalUnit(%s)", qi.upper, joinArgs("d", "invT", f.argsFor(qi.upper+"NaturalUnit", qi.upd.SVI.UnitInputs, "d"), blocks(qi)))
			})
		})
}

// joinArgs joins the non-empty argument lists args with commas.
func joinArgs(args ...string) string {
	var out []string
	for _, a := range args {
		if a != "" {
			out = append(out, a)
		}
	}
	return strings.Join(out, ", ")
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

// invTTensor is the tensor name of a unit's inverse temperature in kernels:
// not an identifier, so no model variable can have it.
const invTTensor = derive.InvTTensor

// sviKernels prints the kernels of a global's SVI split: its prior part
// and one unit's part of E_q[η].
func (f *fitGen) sviKernels(qi *qInfo) string {
	u, s := qi.upd, qi.upd.SVI
	stats := derive.Dists[qi.q.Family].ExpFam.Stats
	kernel := func(name string, unit *derive.Index, inputs []*derive.QFactor, exprs []derive.Expr, what ...string) string {
		if unit != nil && s.UnitUntempered != nil {
			// a temperature divides the tempered statements' part only
			exprs = make([]derive.Expr, len(s.Unit))
			for k := range exprs {
				exprs[k] = derive.Add(derive.Mul(derive.T(invTTensor), s.UnitTempered[k]), s.UnitUntempered[k])
			}
		}
		var scalars []kernelParam
		if unit != nil {
			scalars = []kernelParam{{Want: "invT", Tensor: invTTensor}} // the unit's inverse temperature
		}
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
			e := exprs[k]
			if unit != nil && s.UnitUntempered == nil {
				e = derive.Mul(derive.T(invTTensor), e)
			}
			outs = append(outs, Output{Target: key, Free: u.At, Expr: e, Origin: fmt.Sprintf("%s: latent %s, E[η] of %s", f.pos(qi.v), qi.v.Name, st.Name)})
		}
		doc := append([]string{name + " adds into its outputs " + what[0]}, what[1:]...)
		doc = append(doc, "")
		for _, fc := range u.Factors {
			if (unit != nil) == derive.InPlate(fc, *f.unit) {
				doc = append(doc, fmt.Sprintf("\t%s: %s", fc.Pos, fmtFactor(fc)))
			}
		}
		doc = append(doc, "", "The caller zeroes the outputs.")
		return f.g.emitKernel(kernelSpec{Name: name, Doc: doc, Unit: unit, Scalars: scalars, Params: params, Outputs: outs, Trim: true})
	}
	var stat []string
	for _, st := range stats {
		stat = append(stat, st.Name)
	}
	times := "times its inverse temperature invT (Mandt et al. 2016, Eq. 8; 1 untempered):"
	if s.UnitUntempered != nil {
		times = "those of the statements a temperature divides times its inverse temperature invT (Mandt et al. 2016, Eq. 8; 1 untempered), the priors of continuous local latents' as they are:"
	}
	return kernel(qi.upper+"NaturalPrior", nil, s.PriorInputs, s.Prior,
		fmt.Sprintf("the natural parameters of q(%s) (of %s)", qi.v.Name, strings.Join(stat, "; ")),
		"that the statements outside the unit plate give (Eq. 18, E_q[η]):") +
		kernel(qi.upper+"NaturalUnit", f.unit, s.UnitInputs, s.Unit,
			fmt.Sprintf("unit %s's part of the natural parameters of q(%s):", f.unit.Name, qi.v.Name),
			"its expected sufficient statistics (Eq. 18, E_q[η] of its statements),",
			times)
}
