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
	ps := f.params()
	if len(ps) == 0 {
		f.p("\n// Params is empty: the model has no params.\ntype Params struct{}\n")
		f.p("\n// Into leaves d as it is: the model has no params.\nfunc (p *Params) Into(d *Data) {}\n")
		return
	}
	f.p("\n// Params holds the point estimates of the params (variational EM), shaped\n")
	f.p("// as in Data: Into copies them into a Data, so that a later Fit can start\n// from them or, with Options.FixParams, infer with them held fixed.\ntype Params struct {\n")
	for _, p := range ps {
		f.p("\t// %s is the param %s : %s (%s).\n\t%s %s `json:%q`\n", p.field, p.v.Name, p.v.Type, f.pos(p.v), p.field, paramType(p), p.v.Name)
	}
	f.p("}\n")
	f.p("\n// Into sets the params of d to p.\nfunc (p *Params) Into(d *Data) {\n")
	for _, pi := range ps {
		if len(pi.dims) == 0 {
			f.p("\t{\n\t\tv := p.%s\n\t\td.%s = &v\n\t}\n", pi.field, pi.field)
		} else {
			f.p("\td.%s = p.%s\n", pi.field, pi.field)
		}
	}
	f.p("}\n")
	// result
	f.p("\n// paramsResult copies the params of m into the result's form.\nfunc (m *Model) paramsResult() Params {\n\tvar p Params\n")
	for _, pi := range ps {
		switch len(pi.dims) {
		case 0:
			f.p("\tp.%s = m.%s\n", pi.field, pi.model)
		case 1:
			f.p("\tp.%s = append([]float64(nil), m.%s...)\n", pi.field, pi.model)
		case 2:
			f.p("\tp.%s = runtime.CopyRows(m.%s, %s)\n", pi.field, pi.model, f.dim(pi.dims[1]))
		default:
			f.p("\tp.%s = runtime.CopyCube(m.%s, %s, %s)\n", pi.field, pi.model, f.dim(pi.dims[1]), f.dim(pi.dims[2]))
		}
	}
	f.p("\treturn p\n}\n")
	// own copies and starting values
	f.p("\n// ownParams returns a copy of m with its own param arrays, which Fit\n// overwrites in its M-steps; params missing from the data start at\n")
	f.p("// random simplex rows (from rng), identity covariances and zero vectors.\nfunc (m *Model) ownParams(rng *rand.Rand) *Model {\n\tc := *m\n")
	for _, pi := range ps {
		if len(pi.dims) == 0 {
			continue
		}
		size := f.length(pi.dims)
		f.p("\tif m.%s != nil {\n\t\tc.%s = append([]float64(nil), m.%s...)\n\t} else {\n\t\tc.%s = make([]float64, %s)\n", pi.model, pi.model, pi.model, pi.model, size)
		switch pi.v.Type.Class {
		case ir.Simplex:
			f.p("\t\truntime.InitPositive(rng, c.%s)\n\t\truntime.SimplexRows(c.%s, %s, 0)\n", pi.model, pi.model, f.dim(pi.dims[len(pi.dims)-1]))
		case ir.Cov:
			f.p("\t\truntime.Identity(c.%s, %s)\n", pi.model, f.dim(pi.dims[len(pi.dims)-1]))
		}
		f.p("\t}\n")
	}
	f.p("\treturn &c\n}\n")
	// start from a result's params
	f.p("\n// startParams copies the params of a previous result into m, checking\n// their shapes.\nfunc (m *Model) startParams(p *Params) error {\n")
	for _, pi := range ps {
		switch len(pi.dims) {
		case 0:
			f.p("\tm.%s = p.%s\n", pi.model, pi.field)
		default:
			var sizes []string
			for _, d := range pi.dims {
				sizes = append(sizes, f.dim(d))
			}
			f.p("\tif p.%s != nil {\n\t\tflat, err := runtime.Flat%d(%q, p.%s, %s, 0, 0)\n\t\tif err != nil {\n\t\t\treturn fmt.Errorf(\"start: %%w\", err)\n\t\t}\n\t\tcopy(m.%s, flat)\n\t}\n",
				pi.field, len(pi.dims), pi.v.Name, pi.field, strings.Join(sizes, ", "), pi.model)
		}
	}
	f.p("\treturn nil\n}\n")
}

// emitMSteps prints mstep, which runs every M-step, and one method per step.
func (f *fitGen) emitMSteps() {
	if len(f.params()) == 0 {
		return
	}
	f.p("\n// mstep is variational EM's M-step: it sets every param to the maximum of\n")
	f.p("// the expected complete log likelihood under q (MAP under declared\n// priors) and returns the largest relative change of a param.\n")
	f.p("func (m *Model) mstep(q *state, opts Options) (float64, error) {\n\tchange := 0.0\n")
	for _, s := range f.d.MSteps {
		f.p("\tif c, err := m.mstep%s(q, opts); err != nil {\n\t\treturn change, err\n\t} else {\n\t\tchange = math.Max(change, c)\n\t}\n", f.stepName(s))
	}
	f.p("\treturn change, nil\n}\n")
	for _, s := range f.d.MSteps {
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
	v := s.Params[0]
	u := s.Counts
	model := f.g.goName[v.Name]
	k := f.dim(v.Type.Dims[len(v.Type.Dims)-1])
	name := f.stepName(s)
	f.p("\n// mstep%s sets %s (%s) to its M-step: each row proportional to its\n", name, v.Name, f.pos(v))
	f.p("// expected counts (plus α − 1 under its Dirichlet prior) plus opts.Smoothing.\n// Rows with no counts become uniform.\n")
	f.p("func (m *Model) mstep%s(q *state, opts Options) (float64, error) {\n", name)
	inputs := f.args(u.Inputs, "d")
	if inputs != "" {
		inputs += ", "
	}
	f.p("\tprev := append([]float64(nil), m.%s...)\n\tclear(m.%s)\n\tm.%sCounts(%sm.%s)\n\truntime.SimplexRows(m.%s, %s, opts.Smoothing)\n", model, model, f.g.upper(v.Name), inputs, model, model, k)
	f.p("\treturn runtime.L2Change(m.%s, prev), nil\n}\n", model)
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
	f.sb.WriteString(f.g.emitKernel(kernelSpec{Name: f.g.upper(v.Name) + "Counts", Doc: doc, Params: params, Outputs: outs}))
}

func (f *fitGen) emitGaussStep(s *derive.MStep) {
	g := s.Gauss
	name := f.stepName(s)
	p := f.dim(g.Dim)
	var names []string
	for _, v := range s.Params {
		names = append(names, v.Name)
	}
	f.p("\n// mstep%s sets %s to their M-step for the statement\n//\n//\t%s:%d:%d: %s\n//\n", name, strings.Join(names, " and "), g.Stmt.Pos.File, g.Stmt.Pos.Line, g.Stmt.Pos.Col, fmtFactor(g.Stmt))
	f.p("// the %s from the expected sufficient statistics of the units' %s\n", map[bool]string{false: "mean and covariance", true: "mean and precision"}[g.Precision], g.Target.Name)
	f.p("// (each unit's covariance included), MAP under declared priors (App. C).\n")
	f.p("func (m *Model) mstep%s(q *state, opts Options) (float64, error) {\n\tp := %s\n\tst := runtime.NewGaussStats(p)\n\tfor d := 0; d < %s; d++ {\n", name, p, f.dim(g.Unit.Size))
	if g.Target.Role == ir.RoleData {
		f.p("\t\tst.Add(m.%s[d*p:(d+1)*p], nil)\n", f.g.goName[g.Target.Name])
	} else {
		qi := f.qOf(g.Target.Name)
		f.p("\t\tst.Add(q.%s[d*p:(d+1)*p], q.%s[d*p*p:(d+1)*p*p])\n", qi.fields[0], qi.fields[1])
	}
	f.p("\t}\n\treturn m.solve%s(st, opts)\n}\n", name)
	f.emitGaussSolve(s, names)
}

// emitGaussSolve prints solve<Name>, the maximization of a gaussian M-step
// for given statistics, which the batch M-step and online EM's ParamStep
// share.
func (f *fitGen) emitGaussSolve(s *derive.MStep, names []string) {
	g := s.Gauss
	name := f.stepName(s)
	f.p("\n// solve%s sets %s to the maximum for the statistics st (GaussMStep, with\n", name, strings.Join(names, " and "))
	f.p("// opts.Shrinkage and the declared priors) and returns their largest relative\n// change.\n")
	f.p("func (m *Model) solve%s(st *runtime.GaussStats, opts Options) (float64, error) {\n\tp := %s\n", name, f.dim(g.Dim))
	mean, cov := "m."+f.g.goName[g.Mean.Name], "m."+f.g.goName[g.Cov.Name]
	f.p("\tstep := runtime.GaussMStep{EstimateMean: %v, EstimateCov: %v, Precision: %v, Shrinkage: opts.Shrinkage}\n", g.Mean.Role == ir.RoleParam, g.Cov.Role == ir.RoleParam, g.Precision)
	if g.MeanPrior != nil {
		f.p("\tstep.MeanPriorMean, step.MeanPriorCov = m.%s, m.%s\n", f.g.goName[g.MeanPrior[0].Name], f.g.goName[g.MeanPrior[1].Name])
	}
	if g.CovPrior != nil {
		f.p("\tstep.WishartDOF, step.WishartScale = m.%s, m.%s\n", f.g.goName[g.CovPrior[0].Name], f.g.goName[g.CovPrior[1].Name])
	}
	f.p("\tprev := append(append([]float64(nil), %s...), %s...)\n", mean, cov)
	f.p("\tif err := step.Solve(st, %s, %s); err != nil {\n\t\treturn 0, fmt.Errorf(\"the M-step of %s (%s:%d:%d): %%w\", err)\n\t}\n", mean, cov, strings.Join(names, ", "), g.Stmt.Pos.File, g.Stmt.Pos.Line, g.Stmt.Pos.Col)
	f.p("\treturn math.Max(runtime.L2Change(%s, prev[:p]), runtime.L2Change(%s, prev[p:])), nil\n}\n", mean, cov)
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
	v, o := s.Params[0], s.Numeric
	name := f.stepName(s)
	model := f.g.goName[v.Name]
	kernel := f.g.upper(v.Name) + "Objective"
	inputs := f.args(o.Inputs, "d")
	if inputs != "" {
		inputs = ", " + inputs
	}
	f.p("\n// mstep%s sets %s (%s) to the maximum of the expected complete log\n", name, v.Name, f.pos(v))
	f.p("// likelihood in %s (%s), by Newton's method from its current value.\n", v.Name, kernel)
	f.p("func (m *Model) mstep%s(q *state, opts Options) (float64, error) {\n", name)
	f.p("\tprev := append([]float64(nil), m.%s...)\n", model)
	f.p("\tobj := func(x, g, h []float64) float64 {\n\t\treturn m.%s(x%s, g, h)\n\t}\n", kernel, inputs)
	f.p("\tr := runtime.Maximize(obj, m.%s, opts.Newton)\n", model)
	f.p("\tif r.Status == runtime.StatusNotFinite {\n\t\tcopy(m.%s, prev)\n", model)
	f.p("\t\treturn 0, fmt.Errorf(\"the M-step of %s (%s): the objective is not finite after %%d Newton steps; %s was left at its previous value\", r.Iterations)\n\t}\n", v.Name, f.pos(v), v.Name)
	f.p("\treturn runtime.L2Change(m.%s, prev), nil\n}\n", model)
	doc := []string{fmt.Sprintf("%s evaluates the expected complete log likelihood as a function of", kernel),
		fmt.Sprintf("the param %s (%s), writing its gradient into grad and its Hessian", v.Name, f.pos(v)),
		fmt.Sprintf("into hess (%s×%s, row-major). It is built from:", o.Dim, o.Dim), ""}
	for _, fc := range o.Factors {
		doc = append(doc, fmt.Sprintf("\t%s: %s", fc.Pos, fmtFactor(fc)))
	}
	f.sb.WriteString(f.g.objectiveKernel(o, false, kernel, doc))
}
