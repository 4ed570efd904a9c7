package codegen

import (
	"fmt"
	"strings"

	"github.com/vigen-go/vigen/derive"
	"github.com/vigen-go/vigen/spec/ir"
)

// This file emits the variational-EM side of Fit: the params' storage in
// the result, their starting values, and one M-step per derive.MStep.

// paramInfo is what the generated code knows about one param.
type paramInfo struct {
	v     *ir.Var
	model string   // Model field (flat)
	field string   // Data and Params field
	dims  []string // sizes
}

func (f *fitGen) params() []paramInfo {
	var out []paramInfo
	for _, v := range f.g.m.VarsWithRole(ir.RoleParam) {
		out = append(out, paramInfo{v: v, model: f.g.goName[v.Name], field: f.g.dataField[v.Name], dims: v.Type.Dims})
	}
	return out
}

// paramType is the Go type of a param in Params (as in Data: rows of a
// matrix as slices).
func paramType(p paramInfo) string {
	if len(p.dims) == 0 {
		return "float64"
	}
	return strings.Repeat("[]", len(p.dims)) + "float64"
}

func (f *fitGen) emitParams() {
	w := f.w
	ps := f.params()
	if len(ps) == 0 {
		w.P()
		w.Doc("Params is empty: the model has no params.")
		w.P("type Params struct{}")
		w.P()
		w.Doc("Into leaves its Data as it is: the model has no params.")
		w.P("func (*Params) Into(*Data) {}")
		return
	}
	w.P()
	w.Doc("Params holds the point estimates of the params (variational EM), shaped",
		"as in Data: Into copies them into a Data, so that a later Fit can start",
		"from them or, with Options.FixParams, infer with them held fixed.")
	w.Block("type Params struct", func() {
		for _, p := range ps {
			w.Pf("// %s is the param %s : %s (%s).", p.field, p.v.Name, p.v.Type, f.pos(p.v))
			w.Pf("%s %s `json:%q`", p.field, paramType(p), p.v.Name)
		}
	})
	w.Func([]string{"Into sets the params of d to p."}, "(p *Params) Into(d *Data)", func() {
		for _, pi := range ps {
			if len(pi.dims) == 0 {
				w.Block("", func() {
					w.Pf("v := p.%s", pi.field)
					w.Pf("d.%s = &v", pi.field)
				})
			} else {
				w.Pf("d.%s = p.%s", pi.field, pi.field)
			}
		}
	})
	w.Func([]string{"paramsResult copies the params of m into the result's form."}, "(m *Model) paramsResult() Params", func() {
		w.P("var p Params")
		for _, pi := range ps {
			switch len(pi.dims) {
			case 0:
				w.Pf("p.%s = m.%s", pi.field, pi.model)
			case 1:
				w.Pf("p.%s = append([]float64(nil), m.%s...)", pi.field, pi.model)
			case 2:
				w.Pf("p.%s = %s(m.%s, %s)", pi.field, rt("CopyRows"), pi.model, f.dim(pi.dims[1]))
			default:
				w.Pf("p.%s = %s(m.%s, %s, %s)", pi.field, rt("CopyCube"), pi.model, f.dim(pi.dims[1]), f.dim(pi.dims[2]))
			}
		}
		w.Return("p")
	})
	w.Func([]string{"ownParams returns a copy of m with its own param arrays, which Fit",
		"overwrites in its M-steps; params missing from the data start at",
		"random simplex rows (from rng), identity covariances and zero vectors."},
		w.Sf("(m *Model) ownParams(rng *%s) *Model", goRand.Ident("Rand")), func() {
			w.P("c := *m")
			for _, pi := range ps {
				if len(pi.dims) == 0 {
					continue
				}
				w.IfElse(cond(fmt.Sprintf("m.%s != nil", pi.model)), func() {
					w.Pf("c.%s = append([]float64(nil), m.%s...)", pi.model, pi.model)
				}, func() {
					w.Pf("c.%s = make([]float64, %s)", pi.model, f.length(pi.dims))
					switch pi.v.Type.Class {
					case ir.Simplex:
						w.Pf("%s(rng, c.%s)", rt("InitPositive"), pi.model)
						w.Pf("%s(c.%s, %s, 0)", rt("SimplexRows"), pi.model, f.dim(pi.dims[len(pi.dims)-1]))
					case ir.Cov:
						w.Pf("%s(c.%s, %s)", rt("Identity"), pi.model, f.dim(pi.dims[len(pi.dims)-1]))
					}
				})
			}
			w.Return("&c")
		})
	w.Func([]string{"startParams copies the params of a previous result into m, checking", "their shapes."},
		"(m *Model) startParams(p *Params) error", func() {
			for _, pi := range ps {
				if len(pi.dims) == 0 {
					w.Pf("m.%s = p.%s", pi.model, pi.field)
					continue
				}
				var sizes []string
				for _, d := range pi.dims {
					sizes = append(sizes, f.dim(d))
				}
				w.If(cond(fmt.Sprintf("p.%s != nil", pi.field)), func() {
					w.Pf("flat, err := %s(%q, p.%s, %s, 0, 0)", rt(fmt.Sprintf("Flat%d", len(pi.dims))), pi.v.Name, pi.field, strings.Join(sizes, ", "))
					w.CheckErr(w.Sf(`%s("start: %%w", err)`, goFmt.Ident("Errorf")))
					w.Pf("copy(m.%s, flat)", pi.model)
				})
			}
			w.Return("nil")
		})
}

// emitMSteps prints mstep, which runs every M-step, and one method per step.
func (f *fitGen) emitMSteps() {
	if len(f.params()) == 0 {
		return
	}
	w := f.w
	w.Func([]string{"mstep is variational EM's M-step: it sets every param to the maximum of",
		"the expected complete log likelihood under q (MAP under declared",
		"priors) and returns the largest relative change of a param."},
		"(m *Model) mstep(q *state, opts Options) (float64, error)", func() {
			w.P("change := 0.0")
			for k, s := range f.msteps {
				if k > 0 {
					// the values derived from the params an earlier step set
					// (inverses, transposes, logarithms), for this step's
					// objective
					w.IfErr("err := m.computeAux()", "change", "err")
				}
				w.Define("c, err", fmt.Sprintf("m.mstep%s(q, opts)", f.stepName(s)))
				w.CheckErr("change", "err")
				w.Pf("change = %s(change, c)", goMath.Ident("Max"))
			}
			w.Return("change", "nil")
		})
	for _, s := range f.msteps {
		switch s.Kind {
		case "counts":
			f.emitCountsStep(s)
		case "gaussian":
			f.emitGaussStep(s)
		case "numeric":
			f.emitNumericStep(s)
		}
	}
}

// stepName names the M-step s: mstep<stepName> is its method. It joins the
// stems of the params it sets, unique among the steps (two steps setting
// {a, bC} and {aB, c} would both be ABC).
func (f *fitGen) stepName(s *derive.MStep) string {
	if n, ok := f.g.stepNames[s]; ok {
		return n
	}
	var parts []string
	for _, p := range s.Params {
		parts = append(parts, f.g.upper(p.Name))
	}
	n := strings.Join(parts, "")
	own := len(s.Params) == 1 // mstep<stem> is reserved for its param
	for (!own && f.g.fields.taken["mstep"+n]) || f.stepTaken(n) {
		n += "_"
		own = false
	}
	f.g.stepNames[s] = n
	return n
}

// stepTaken reports whether another M-step has the name n.
func (f *fitGen) stepTaken(n string) bool {
	for _, m := range f.g.stepNames {
		if m == n {
			return true
		}
	}
	return false
}

func (f *fitGen) emitCountsStep(s *derive.MStep) {
	w := f.w
	v := s.Params[0]
	u := s.Counts
	model := f.g.goName[v.Name]
	k := f.dim(v.Type.Dims[len(v.Type.Dims)-1])
	name := f.stepName(s)
	inputs := f.args(u.Inputs, "d")
	if inputs != "" {
		inputs += ", "
	}
	w.Func([]string{fmt.Sprintf("mstep%s sets %s (%s) to its M-step: each row proportional to its", name, v.Name, f.pos(v)),
		"expected counts (plus α − 1 under its Dirichlet prior) plus opts.Smoothing.",
		"Rows with no counts become uniform."},
		fmt.Sprintf("(m *Model) mstep%s(q *state, opts Options) (float64, error)", name), func() {
			w.Pf("prev := append([]float64(nil), m.%s...)", model)
			w.Pf("clear(m.%s)", model)
			w.Pf("m.%sCounts(%sm.%s)", f.g.upper(v.Name), inputs, model)
			w.Pf("%s(m.%s, %s, opts.Smoothing)", rt("SimplexRows"), model, k)
			w.Return(w.Sf("%s(m.%s, prev)", rt("L2Change"), model), "nil")
		})
	params := inputParams(u.Inputs)
	key := "out:" + v.Name
	params = append(params, kernelParam{Want: v.Name, Tensor: key, Dims: v.Type.Dims, Out: true})
	outs := []Output{{Target: key, Free: u.At, Expr: u.Params[0], Origin: fmt.Sprintf("%s: param %s", f.pos(v), v.Name)}}
	doc := []string{fmt.Sprintf("%sCounts adds into its output the expected counts of %s's entries,", f.g.upper(v.Name), v.Name),
		"the coefficients of log " + v.Name + " in the expected complete log likelihood:", ""}
	for _, fc := range u.Factors {
		doc = append(doc, fmt.Sprintf("\t%s: %s", fc.Pos, fmtFactor(fc)))
	}
	doc = append(doc, "", "The caller zeroes the output.")
	w.Raw(f.g.emitKernel(kernelSpec{Name: f.g.upper(v.Name) + "Counts", Doc: doc, Params: params, Outputs: outs}))
}

func (f *fitGen) emitGaussStep(s *derive.MStep) {
	w := f.w
	g := s.Gauss
	name := f.stepName(s)
	p := f.dim(g.Dim)
	var names []string
	for _, v := range s.Params {
		names = append(names, v.Name)
	}
	doc := []string{fmt.Sprintf("mstep%s sets %s to their M-step for the statement", name, strings.Join(names, " and ")), "",
		fmt.Sprintf("\t%s: %s", g.Stmt.Pos, fmtFactor(g.Stmt)), "",
		fmt.Sprintf("the %s from the expected sufficient statistics of the units' %s", map[bool]string{false: "mean and covariance", true: "mean and precision"}[g.Precision], g.Target.Name),
		"(each unit's covariance included), MAP under declared priors (App. C)."}
	w.Func(doc, fmt.Sprintf("(m *Model) mstep%s(q *state, opts Options) (float64, error)", name), func() {
		w.Pf("p := %s", p)
		w.Pf("st := %s(p)", rt("NewGaussStats"))
		w.Block(fmt.Sprintf("for d := 0; d < %s; d++", f.dim(g.Unit.Size)), func() {
			if g.Target.Role == ir.RoleData {
				w.Pf("st.Add(m.%s[d*p:(d+1)*p], nil)", f.g.goName[g.Target.Name])
			} else {
				qi := f.qOf(g.Target.Name)
				w.Pf("st.Add(q.%s[d*p:(d+1)*p], q.%s[d*p*p:(d+1)*p*p])", qi.fields[0], qi.fields[1])
			}
		})
		w.Return(fmt.Sprintf("m.solve%s(st, opts)", name))
	})
	f.emitGaussSolve(s, names)
}

// emitGaussSolve prints solve<Name>, the maximization of a gaussian M-step
// for given statistics, which the batch M-step and online EM's ParamStep
// share.
func (f *fitGen) emitGaussSolve(s *derive.MStep, names []string) {
	w := f.w
	g := s.Gauss
	name := f.stepName(s)
	doc := []string{fmt.Sprintf("solve%s sets %s to the maximum for the statistics st (GaussMStep, with", name, strings.Join(names, " and ")),
		"opts.Shrinkage and the declared priors) and returns their largest relative",
		"change."}
	w.Func(doc, w.Sf("(m *Model) solve%s(st *%s, opts Options) (float64, error)", name, rt("GaussStats")), func() {
		w.Pf("p := %s", f.dim(g.Dim))
		mean, cov := "m."+f.g.goName[g.Mean.Name], "m."+f.g.goName[g.Cov.Name]
		w.Pf("step := %s{EstimateMean: %v, EstimateCov: %v, Precision: %v, Shrinkage: opts.Shrinkage}", rt("GaussMStep"), g.Mean.Role == ir.RoleParam, g.Cov.Role == ir.RoleParam, g.Precision)
		if g.MeanPrior != nil {
			w.Pf("step.MeanPriorMean, step.MeanPriorCov = m.%s, m.%s", f.g.goName[g.MeanPrior[0].Name], f.g.goName[g.MeanPrior[1].Name])
		}
		if g.CovPrior != nil {
			w.Pf("step.WishartDOF, step.WishartScale = m.%s, m.%s", f.g.goName[g.CovPrior[0].Name], f.g.goName[g.CovPrior[1].Name])
		}
		w.Pf("prev := append(append([]float64(nil), %s...), %s...)", mean, cov)
		w.IfErr(fmt.Sprintf("err := step.Solve(st, %s, %s)", mean, cov), "0", w.Sf(`%s("the M-step of %s (%s): %%w", err)`, goFmt.Ident("Errorf"), strings.Join(names, ", "), g.Stmt.Pos))
		w.Return(w.Sf("%s(%s(%s, prev[:p]), %s(%s, prev[p:]))", goMath.Ident("Max"), rt("L2Change"), mean, rt("L2Change"), cov), "nil")
	})
}

func (f *fitGen) qOf(name string) *qInfo {
	for _, qi := range f.qs {
		if qi.v.Name == name {
			return qi
		}
	}
	return nil
}

// emitNumericStep prints the M-step of a param without a closed form:
// Newton's method (runtime.Maximize) on its derived objective, printed as
// the kernel <Name>Objective.
func (f *fitGen) emitNumericStep(s *derive.MStep) {
	w := f.w
	v, o := s.Params[0], s.Numeric
	name := f.stepName(s)
	model := f.g.goName[v.Name]
	kernel := f.g.upper(v.Name) + "Objective"
	inputs := f.argsFor(kernel, o.Inputs, "d")
	if inputs != "" {
		inputs = ", " + inputs
	}
	w.Func([]string{fmt.Sprintf("mstep%s sets %s (%s) to the maximum of the expected complete log", name, v.Name, f.pos(v)),
		fmt.Sprintf("likelihood in %s (%s), by Newton's method from its current value.", v.Name, kernel)},
		fmt.Sprintf("(m *Model) mstep%s(q *state, opts Options) (float64, error)", name), func() {
			x := "m." + model
			if len(v.Type.Dims) == 0 {
				// a scalar param: Newton's method on a one-element vector
				x = "x"
				w.Pf("x := []float64{m.%s}", model)
			}
			w.Pf("prev := append([]float64(nil), %s...)", x)
			w.Block("obj := func(x, g, h []float64) float64", func() { w.Return(fmt.Sprintf("m.%s(x%s, g, h)", kernel, inputs)) })
			w.Pf("r := %s(obj, %s, opts.Newton)", rt("Maximize"), x)
			w.If(cond(w.Sf("r.Status == %s", rt("StatusNotFinite"))), func() {
				if x == "x" {
					w.Pf("m.%s = prev[0]", model)
				} else {
					w.Pf("copy(%s, prev)", x)
				}
				w.Return("0", w.Sf(`%s("the M-step of %s (%s): the objective is not finite after %%d Newton steps; %s was left at its previous value", r.Iterations)`, goFmt.Ident("Errorf"), v.Name, f.pos(v), v.Name))
			})
			if x == "x" {
				w.Pf("m.%s = x[0]", model)
			}
			w.Return(w.Sf("%s(%s, prev)", rt("L2Change"), x), "nil")
		})
	doc := []string{fmt.Sprintf("%s evaluates the expected complete log likelihood as a function of", kernel),
		fmt.Sprintf("the param %s (%s), writing its gradient into grad and its Hessian", v.Name, f.pos(v)),
		fmt.Sprintf("into hess (%s×%s, row-major). It is built from:", o.Dim, o.Dim), ""}
	for _, fc := range o.Factors {
		doc = append(doc, fmt.Sprintf("\t%s: %s", fc.Pos, fmtFactor(fc)))
	}
	w.Raw(f.g.objectiveKernel(o, false, kernel, doc))
}
