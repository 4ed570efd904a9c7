package codegen

import (
	"fmt"
	"strings"

	"github.com/vigen-go/vigen/derive"
	"github.com/vigen-go/vigen/spec/ir"
)

// This file emits the params' side of stochastic variational inference:
// online EM (runtime.SVIParams; Cappé & Moulines 2009), the M-steps taken
// from running averages of expected sufficient statistics. The statistics
// are those the batch M-steps (mstep.go) sum over all units, laid out one
// M-step after another in the order of f.d.MSteps:
//
//   - counts: the param's expected counts from the statements inside the
//     unit plate (derive.OnlineCounts.Unit), shaped as the param; the rest
//     (a Dirichlet prior's α − 1, statements outside the plate) is added
//     by ParamStep;
//   - gaussian: runtime.GaussStats in flat form (n, Σ E[x], Σ E[x xᵀ]) of
//     the statement's target, if it is drawn in the unit plate; a data
//     target drawn in another plate has fixed statistics, which ParamStep
//     computes, and no entries here.
//
// Summed over all units and passed to ParamStep, they give the batch
// M-step's params (up to the order of floating-point additions where a
// counts M-step has a rest).

// sviParams says how the params take part in SVI: statsLen is the Go
// expression (in terms of m, the Model) of the number of expected
// sufficient statistics of their M-steps, or "" without params; reason,
// if not "", says why the model's params have no online EM.
func (f *fitGen) sviParams() (statsLen, reason string) {
	if len(f.params()) == 0 || f.unit == nil {
		return "", "" // without a unit plate, sviReason says why SVI does not apply
	}
	var parts, why []string
	for _, s := range f.d.MSteps {
		switch s.Kind {
		case "counts":
			switch {
			case s.OnlineWhy != "":
				why = append(why, s.OnlineWhy)
			case s.Online == nil:
				why = append(why, fmt.Sprintf("%s: internal error in vigen: the counts M-step of param %s has no online form (please report it with the model)", f.pos(s.Params[0]), s.Params[0].Name))
			case s.Online.Unit != nil:
				parts = append(parts, f.length(s.Params[0].Type.Dims))
			}
		case "gaussian":
			if f.gaussPerUnit(s.Gauss) {
				p := f.dim(s.Gauss.Dim)
				parts = append(parts, fmt.Sprintf("1 + %s + %s*%s", p, p, p))
			}
		default:
			v := s.Params[0]
			why = append(why, fmt.Sprintf("%s: param %s is estimated by Newton's method (a numeric M-step), whose objective is not a function of sums of per-unit statistics, so it has no online EM; fit by coordinate ascent, declare %s `const`, or make it a latent", f.pos(v), v.Name, v.Name))
		}
	}
	if len(why) > 0 {
		return "", strings.Join(why, "; ")
	}
	if len(parts) == 0 {
		return "", fmt.Sprintf("no param's M-step reads the local latents or data of the units of `for %s in 1:%s`, so online EM has nothing to average; fit by coordinate ascent", f.unit.Name, f.unit.Size)
	}
	return strings.Join(parts, " + "), ""
}

// gaussPerUnit reports whether the statement of a gaussian M-step is drawn
// once per unit of the model's unit plate, so that its statistics are a
// sum over units.
func (f *fitGen) gaussPerUnit(g *derive.GaussStep) bool {
	return f.unit != nil && g.Unit.Name == f.unit.Name && g.Unit.Size == f.unit.Size
}

// emitSVIParams prints caModel's UnitParamStats and ParamStep
// (runtime.SVIParams), called when sviParams gave a statsLen, and the
// per-unit and rest kernels of the counts M-steps.
func (f *fitGen) emitSVIParams() {
	if s, _ := f.sviParams(); s == "" {
		return
	}
	var layout []string
	for _, s := range f.d.MSteps {
		switch {
		case s.Kind == "counts" && s.Online.Unit != nil:
			layout = append(layout, fmt.Sprintf("the expected counts of %s (%s)", s.Params[0].Name, strings.Join(s.Params[0].Type.Dims, "×")))
		case s.Kind == "gaussian" && f.gaussPerUnit(s.Gauss):
			layout = append(layout, fmt.Sprintf("for %s, the count, sum and sum of outer products of %s (runtime.GaussStats, flat)", paramNames(s.Params), s.Gauss.Target.Name))
		}
	}
	f.p("\n// UnitParamStats adds into stats unit d's expected sufficient statistics\n")
	f.p("// of the params' M-steps (runtime.SVIParams), one M-step after another:\n")
	for i, l := range layout {
		sep := ";"
		if i == len(layout)-1 {
			sep = "."
		}
		f.p("// %s%s\n", l, sep)
	}
	f.p("func (a *caModel) UnitParamStats(q *state, w *scratch, d int, stats []float64) {\n\tm := a.m\n")
	if len(layout) > 1 {
		f.p("\toff := 0\n")
	}
	at, k := "0", 0 // where the step's statistics start; how many steps are done
	if len(layout) > 1 {
		at = "off"
	}
	for _, s := range f.d.MSteps {
		var n string
		switch {
		case s.Kind == "counts" && s.Online.Unit != nil:
			v := s.Params[0]
			inputs := f.args(s.Online.Unit.Inputs, "d")
			if inputs != "" {
				inputs += ", "
			}
			n = f.length(v.Type.Dims)
			f.p("\tm.%sCountsUnit(d, %sstats[%s:%s+%s])\n", f.g.upper(v.Name), inputs, at, at, n)
		case s.Kind == "gaussian" && f.gaussPerUnit(s.Gauss):
			g := s.Gauss
			p := f.dim(g.Dim)
			n = fmt.Sprintf("runtime.GaussStatsLen(%s)", p)
			if g.Target.Role == ir.RoleData {
				f.p("\truntime.AddGaussFlat(stats[%s:], %s, m.%s[d*%s:(d+1)*%s], nil)\n", at, p, f.g.goName[g.Target.Name], p, p)
			} else {
				qi := f.qOf(g.Target.Name)
				f.p("\truntime.AddGaussFlat(stats[%s:], %s, q.%s[d*%s:(d+1)*%s], q.%s[d*%s*%s:(d+1)*%s*%s])\n", at, p, qi.fields[0], p, p, qi.fields[1], p, p, p, p)
			}
		default:
			continue
		}
		if k++; k < len(layout) {
			f.p("\toff += %s\n", n)
		}
	}
	f.p("}\n")

	f.p("\n// ParamStep sets the params to their M-steps (as mstep does) for the\n")
	f.p("// expected sufficient statistics stats of all units (laid out as in\n")
	f.p("// UnitParamStats), then recomputes the values derived from them, and\n// returns the largest relative change of a param.\n")
	f.p("func (a *caModel) ParamStep(q *state, stats []float64) (float64, error) {\n\tm, opts := a.m, a.opts\n\tchange := 0.0\n")
	if len(layout) > 1 {
		f.p("\toff := 0\n")
	}
	pos := &statsPos{at: "0", left: len(layout)}
	if len(layout) > 1 {
		pos.at = "off"
	}
	for _, s := range f.d.MSteps {
		switch s.Kind {
		case "counts":
			f.emitCountsParamStep(s, pos)
		case "gaussian":
			f.emitGaussParamStep(s, pos)
		}
	}
	f.p("\tif err := m.computeAux(); err != nil {\n\t\treturn change, err\n\t}\n\treturn change, nil\n}\n")

	for _, s := range f.d.MSteps {
		if s.Kind != "counts" {
			continue
		}
		v := s.Params[0]
		if u := s.Online.Unit; u != nil {
			doc := []string{fmt.Sprintf("%sCountsUnit adds into its output unit %s's expected counts of %s's entries", f.g.upper(v.Name), u.Unit.Name, v.Name),
				fmt.Sprintf("(%sCounts's terms from the statements inside the unit plate):", f.g.upper(v.Name)), ""}
			for _, fc := range u.Factors {
				doc = append(doc, fmt.Sprintf("\t%s: %s", fc.Pos, fmtFactor(fc)))
			}
			doc = append(doc, "", "It adds to what the output holds: online EM sums the units of a minibatch.")
			f.sb.WriteString(f.countsKernel(v, u, f.g.upper(v.Name)+"CountsUnit", doc))
		}
		if u := s.Online.Rest; u != nil {
			doc := []string{fmt.Sprintf("%sCountsRest adds into its output the part of %s's expected counts", f.g.upper(v.Name), v.Name),
				"from the statements outside the unit plate:", ""}
			for _, fc := range u.Factors {
				doc = append(doc, fmt.Sprintf("\t%s: %s", fc.Pos, fmtFactor(fc)))
			}
			doc = append(doc, "", "It adds to what the output holds: the units' counts.")
			f.sb.WriteString(f.countsKernel(v, u, f.g.upper(v.Name)+"CountsRest", doc))
		}
	}
}

// countsKernel prints the kernel adding the expected counts u.Params[0] of
// the simplex param v into an output shaped as v.
func (f *fitGen) countsKernel(v *ir.Var, u *derive.Update, name string, doc []string) string {
	params := inputParams(u.Inputs)
	key := "out:" + v.Name
	params = append(params, kernelParam{Want: v.Name, Tensor: key, Dims: v.Type.Dims, Out: true})
	outs := []Output{{Target: key, Free: u.At, Expr: u.Params[0], Origin: fmt.Sprintf("%s: param %s", f.pos(v), v.Name)}}
	return f.g.emitKernel(kernelSpec{Name: name, Doc: doc, Unit: u.Unit, Params: params, Outputs: outs})
}

func paramNames(vs []*ir.Var) string {
	var names []string
	for _, v := range vs {
		names = append(names, v.Name)
	}
	return strings.Join(names, " and ")
}

// emitCountsParamStep prints ParamStep's part for the counts M-step s: the
// units' counts from stats plus the rest, normalized as in mstep<Name>.
func (f *fitGen) emitCountsParamStep(s *derive.MStep, pos *statsPos) {
	v := s.Params[0]
	model := f.g.goName[v.Name]
	k := f.dim(v.Type.Dims[len(v.Type.Dims)-1])
	f.p("\t// %s (%s): as mstep%s\n\t{\n\t\tprev := append([]float64(nil), m.%s...)\n", v.Name, f.pos(v), f.stepName(s), model)
	if s.Online.Unit != nil {
		n := f.length(v.Type.Dims)
		f.p("\t\tcopy(m.%s, stats[%s:%s+%s])\n", model, pos.at, pos.at, n)
		f.p("%s", pos.next(n))
	} else {
		f.p("\t\tclear(m.%s)\n", model)
	}
	if u := s.Online.Rest; u != nil {
		inputs := f.args(u.Inputs, "d")
		if inputs != "" {
			inputs += ", "
		}
		f.p("\t\tm.%sCountsRest(%sm.%s)\n", f.g.upper(v.Name), inputs, model)
	}
	f.p("\t\truntime.SimplexRows(m.%s, %s, opts.Smoothing)\n", model, k)
	f.p("\t\tchange = math.Max(change, runtime.L2Change(m.%s, prev))\n\t}\n", model)
}

// emitGaussParamStep prints ParamStep's part for the gaussian M-step s:
// GaussMStep.Solve on the statistics from stats (or, for a data target
// outside the unit plate, computed from the data), as in mstep<Name>.
func (f *fitGen) emitGaussParamStep(s *derive.MStep, pos *statsPos) {
	g := s.Gauss
	f.p("\t// %s (%s:%d:%d): as mstep%s\n\t{\n\t\tp := %s\n", paramNames(s.Params), g.Stmt.Pos.File, g.Stmt.Pos.Line, g.Stmt.Pos.Col, f.stepName(s), f.dim(g.Dim))
	if f.gaussPerUnit(g) {
		f.p("\t\tst := runtime.FlatGaussStats(stats[%s:], p)\n", pos.at)
		f.p("%s", pos.next("runtime.GaussStatsLen(p)"))
	} else {
		// a data target in a plate of its own: fixed statistics
		f.p("\t\tst := runtime.NewGaussStats(p)\n\t\tfor d := 0; d < %s; d++ {\n\t\t\tst.Add(m.%s[d*p:(d+1)*p], nil)\n\t\t}\n", f.dim(g.Unit.Size), f.g.goName[g.Target.Name])
	}
	f.p("\t\tc, err := m.solve%s(st, opts)\n\t\tif err != nil {\n\t\t\treturn change, err\n\t\t}\n\t\tchange = math.Max(change, c)\n\t}\n", f.stepName(s))
}

// statsPos tracks where ParamStep reads the next step's statistics: at
// (a Go expression) and how many steps with statistics are left.
type statsPos struct {
	at   string
	left int
}

// next counts off a step of n statistics and returns the statement moving
// off past them, if a step follows.
func (p *statsPos) next(n string) string {
	if p.left--; p.left > 0 {
		return "\t\toff += " + n + "\n"
	}
	return ""
}
