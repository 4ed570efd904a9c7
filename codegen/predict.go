package codegen

import (
	"fmt"
	"strings"

	"github.com/vigen-go/vigen/derive"
	"github.com/vigen-go/vigen/spec/ir"
)

// This file emits Predict, for a model with derive.Predictions: one
// kernel per observed statement writing each observation's log density
// and conditional mean at a point of the latents it reads, and Predict,
// which loads new data (the observed variables optional), restores q from
// a fit, and hands runtime.Predict the Gaussian factors to draw from and
// the kernels.

// emitPredict writes Predict and its kernels.
func (f *fitGen) emitPredict() {
	p := f.d.Predictions
	if p == nil {
		return
	}
	g, w := f.g, f.w
	g.omissible = map[string]bool{}
	for _, v := range p.Omissible {
		g.omissible[v.Name] = true
	}
	// the kernels
	kernelOf := make([]string, len(p.Stmts))
	perVar := map[string]int{}
	for _, s := range p.Stmts {
		perVar[s.Var.Name]++
	}
	seen := map[string]int{}
	for k, s := range p.Stmts {
		name := g.upper(s.Var.Name) + "Pointwise"
		if perVar[s.Var.Name] > 1 {
			seen[s.Var.Name]++
			name += fmt.Sprint(seen[s.Var.Name])
		}
		kernelOf[k] = name
		origin := fmt.Sprintf("%s:%d:%d: %s", s.Factor.Pos.File, s.Factor.Pos.Line, s.Factor.Pos.Col, fmtFactor(s.Factor))
		outs := []Output{{Target: "lp", Free: s.Free, Expr: s.LogLik, Origin: origin}}
		obsDims := s.Var.Type.Dims[:len(s.Free)] // the observations' grid: one per plate and element index
		var params []kernelParam
		var names []string
		for _, v := range s.Latents {
			params = append(params, kernelParam{Want: v.Name, Tensor: v.Name, Dims: v.Type.Dims})
			names = append(names, v.Name)
		}
		params = append(params, kernelParam{Want: "lp", Tensor: "lp", Dims: obsDims, Out: true, Clear: true})
		if s.Mean != nil {
			if n, ok := s.Mean.(*derive.Num); !ok || n.V != 0 { // a zero mean is the cleared output
				outs = append(outs, Output{Target: "mean", Free: s.Free, Expr: s.Mean, Origin: origin})
			}
			params = append(params, kernelParam{Want: "mean", Tensor: "mean", Dims: obsDims, Out: true, Clear: true})
		}
		what := "at the point " + strings.Join(names, ", ") + " of the latents"
		if len(names) == 0 {
			what = "(it reads no latent)"
		}
		head := fmt.Sprintf("%s writes into lp the log density of each observation of", name)
		tail := fmt.Sprintf("%s, row-major over the dimensions of %s (Predict).", what, s.Var.Name)
		if s.Mean != nil {
			tail = fmt.Sprintf("and into mean its conditional mean under %s, ", s.Factor.Dist) + tail
		}
		doc := append([]string{head, "", "\t" + origin, ""}, wrapComment(tail, 76)...)
		w.Raw(g.emitKernel(kernelSpec{Name: name, Doc: doc, Params: params, Outputs: outs}))
	}

	doc := []string{
		"Predict predicts the observations of d under the fit r: for each",
		"observed statement, the log density and the mean of every observation",
		"at q's means (the plug-in predictive) and over draws from q (Monte",
		"Carlo: the log predictive density log E_q[p(y_i | θ)] and E_q E[y_i | θ]),",
		"with the params at r's estimates (runtime.Predict). d is data of the",
		"model with new rows; " + observedWord(p.Omissible) + " " + varList(p.Omissible) + " may be left out",
		"(nil), and are then predicted without scores. Sizes of the latents that",
		"d leaves at 0 are taken from r.",
	}
	if len(p.Omissible) == 0 {
		doc[5] = "model with new rows, its observed variables given (the model reads them"
		doc[6] = "as covariates too), so that they are scored. Sizes of the latents that"
	}
	loadDoc := []string{"LoadPredictData reads new data for Predict from JSON, as LoadData does,",
		"except that " + observedWord(p.Omissible) + " " + varList(p.Omissible) + " may be left out and that",
		"Predict, not LoadData, checks the data against the fit."}
	if len(p.Omissible) == 0 {
		loadDoc[1] = "except that Predict, not LoadData, checks the data against the fit (the"
		loadDoc[2] = "observed variables must be given: the model reads them as covariates)."
	}
	w.Func(loadDoc,
		w.Sf("LoadPredictData(r %s) (*Data, error)", goIO.Ident("Reader")), func() {
			w.P("d := new(Data)")
			w.IfErr("err := d.table(new(Model)).Decode(r)", "nil", "err")
			w.Return("d", "nil")
		})
	w.Func([]string{"LeftOut names the observed variables d leaves out (nil), which Predict",
		"predicts without scoring them."}, "(d *Data) LeftOut() []string", func() {
		if len(p.Omissible) == 0 {
			w.Return("nil") // the model reads them as covariates: they must be given
			return
		}
		w.P("var out []string")
		for _, v := range p.Omissible {
			w.If(cond(fmt.Sprintf("d.%s == nil", g.dataField[v.Name])), func() {
				w.Pf("out = append(out, %q)", v.Name)
			})
		}
		w.Return("out")
	})
	w.Func(doc, w.Sf("Predict(r *Result, d *Data, opts %s) (*%s, error)", rt("PredictSettings"), rt("Prediction")), func() {
		w.If(cond("r == nil || d == nil"), func() {
			w.Return("nil", w.Sf(`%s("%s: Predict needs a fit and data")`, goFmt.Ident("Errorf"), g.m.Name))
		})
		w.P("dd := *d")
		w.P("r.Params.Into(&dd)")
		done := map[string]bool{}
		for _, qi := range f.qs { // every Gaussian factor's sizes: newState checks them all
			if qi.obj == nil {
				continue
			}
			field := "r.Latent." + qi.field
			for k, size := range qi.v.Type.Dims {
				if done[size] || g.m.Lookup(size) == nil || g.m.Lookup(size).Fixed {
					continue
				}
				done[size] = true
				n, given := fmt.Sprintf("len(%s.Mean)", field), field+" != nil" // a vector's length
				switch {
				case len(qi.v.Type.Dims) == 2 && k == 0: // the units of a per-unit latent
					n = fmt.Sprintf("len(%s)", field)
				case len(qi.v.Type.Dims) == 2: // the length of each unit's vector
					n, given = fmt.Sprintf("len(%s[0].Mean)", field), fmt.Sprintf("len(%s) > 0 && %s[0] != nil", field, field)
				}
				w.If(cond(fmt.Sprintf("dd.%s == 0 && !dd.given[%q] && %s", g.dataField[size], size, given)), func() {
					w.Pf("dd.%s = %s", g.dataField[size], n)
				})
			}
		}
		w.P("omit := map[string]bool{}")
		w.Block("for _, name := range d.LeftOut()", func() {
			w.P("omit[name] = true")
		})
		w.Define("m, err", "newModel(&dd, omit)")
		w.CheckErr("nil", "err")
		if len(p.Latents) > 0 {
			w.Define("q, err", "m.newState(Options{Start: r})")
			w.If(cond("err != nil"), func() {
				w.Return("nil", w.Sf(`%s("the fit does not match the data: %%v", err)`, goFmt.Ident("Errorf")))
			})
		}
		factors, point := f.pointFactors(p.Latents)
		var stmts []string
		for k, s := range p.Stmts {
			var dims, from, to []string
			for i, ix := range s.Free {
				d := f.dim(s.Var.Type.Dims[i])
				dims = append(dims, d)
				lo, end := 0, d
				if _, l, h, ok := derive.SizeRange(ix.Size); ok {
					lo = l
					if h != 0 {
						end = fmt.Sprintf("%s%+d", d, h)
					}
				}
				from = append(from, fmt.Sprint(lo))
				to = append(to, end)
			}
			var args []string
			for _, v := range s.Latents {
				args = append(args, point[v.Name])
			}
			args = append(args, "lp")
			hasMean := s.Mean != nil
			if hasMean {
				args = append(args, "mean")
			}
			observed := "true"
			if g.omissible[s.Var.Name] {
				observed = fmt.Sprintf("!omit[%q]", s.Var.Name)
			}
			stmt := fmt.Sprintf("%s:%d:%d: %s", s.Factor.Pos.File, s.Factor.Pos.Line, s.Factor.Pos.Col, fmtFactor(s.Factor))
			stmts = append(stmts, fmt.Sprintf("{Var: %q, Statement: %q, Family: %q, Dims: []int{%s}, From: []int{%s}, To: []int{%s}, Observed: %s, HasMean: %v,\n\t\tEval: func(lp, mean []float64) { m.%s(%s) }}",
				s.Var.Name, stmt, s.Factor.Dist, strings.Join(dims, ", "), strings.Join(from, ", "), strings.Join(to, ", "), observed, hasMean, kernelOf[k], strings.Join(args, ", ")))
		}
		fs := "nil"
		if len(factors) > 0 {
			fs = w.Sf("[]%s{\n\t\t%s,\n\t}", rt("PointFactor"), strings.Join(factors, ",\n\t\t"))
		}
		w.Return(w.Sf("%s(%s{Model: %q,\n\tFactors: %s,\n\tStmts: []%s{\n\t\t%s,\n\t}}, opts)",
			rt("Predict"), rt("PredictModel"), g.m.Name, fs, rt("PredictStmt"), strings.Join(stmts, ",\n\t\t")))
	})
}

// varList names vs as "a", "a and b", "a, b and c".
func varList(vs []*ir.Var) string {
	var names []string
	for _, v := range vs {
		names = append(names, v.Name)
	}
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// pointFactors writes the allocation of a Point buffer for the Gaussian
// factor of each latent of vs, and returns the runtime.PointFactor
// literals and the buffers' names, by latent.
func (f *fitGen) pointFactors(vs []*ir.Var) (items []string, point map[string]string) {
	point = map[string]string{}
	for _, v := range vs {
		var qi *qInfo
		for _, x := range f.qs {
			if x.v == v {
				qi = x
			}
		}
		pt := lowerFirst(qi.upper) + "Point"
		point[v.Name] = pt
		f.w.Pf("%s := make([]float64, len(q.%s))", pt, qi.fields[0])
		units := "1"
		if u := f.perUnit(qi); u != nil {
			units = f.dim(u.Size)
		}
		items = append(items, fmt.Sprintf("{Latent: %q, Units: %s, Dim: %s, Mean: q.%s, Cov: q.%s, Point: %s}",
			v.Name, units, f.dim(qi.obj.Dim), qi.fields[0], qi.fields[1], pt))
	}
	return items, point
}

// emitJoint writes the LogJoint kernel and caModel's JointQ
// (runtime.JointDiagnosed), for a model with a derive.Joint.
func (f *fitGen) emitJoint() {
	j := f.d.Joint
	if j == nil {
		return
	}
	g, w := f.g, f.w
	var outs []Output
	var params []kernelParam
	var names []string
	for _, v := range j.Latents {
		params = append(params, kernelParam{Want: v.Name, Tensor: v.Name, Dims: v.Type.Dims})
		names = append(names, v.Name)
	}
	doc := append(wrapComment("LogJoint is the log joint density log p(x, θ) at the point "+strings.Join(names, ", ")+
		" of the latents (on the unconstrained scale of constrained ones, with the log-Jacobians), for the diagnostic of the joint q. It sums:", 76), "")
	for _, part := range j.Parts {
		origin := fmt.Sprintf("%s:%d:%d: %s", part.Factor.Pos.File, part.Factor.Pos.Line, part.Factor.Pos.Col, fmtFactor(part.Factor))
		outs = append(outs, Output{Target: "f", Expr: part.LogP, Origin: origin})
		doc = append(doc, "\t"+origin)
	}
	w.Raw(g.emitKernel(kernelSpec{Name: "LogJoint", Doc: doc, Params: params, Outputs: outs, Scalar: true}))
	w.Func([]string{"JointQ is q's Gaussian factors, drawn into their Points, and the log",
		"joint density at the Points, for the diagnostic of the joint q",
		"(runtime.JointDiagnosed)."},
		w.Sf("(a *caModel) JointQ(q *state) ([]%s, func() float64)", rt("PointFactor")), func() {
			w.P("m := a.m")
			items, point := f.pointFactors(j.Latents)
			var args []string
			for _, v := range j.Latents {
				args = append(args, point[v.Name])
			}
			w.Return(w.Sf("[]%s{\n\t\t%s,\n\t}", rt("PointFactor"), strings.Join(items, ",\n\t\t")),
				fmt.Sprintf("func() float64 { return m.LogJoint(%s) }", strings.Join(args, ", ")))
		})
}

// observedWord is "the observed variable" or "the observed variables".
func observedWord(vs []*ir.Var) string {
	if len(vs) == 1 {
		return "the observed variable"
	}
	return "the observed variables"
}
