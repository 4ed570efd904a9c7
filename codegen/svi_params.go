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
// M-step after another in the order of f.msteps:
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
	for _, s := range f.msteps {
		switch s.Kind {
		case "counts":
			switch {
			case s.NoOnlineReason != "":
				why = append(why, s.NoOnlineReason)
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
	for _, s := range f.msteps {
		switch {
		case s.Kind == "counts" && s.Online.Unit != nil:
			layout = append(layout, fmt.Sprintf("the expected counts of %s (%s)", s.Params[0].Name, strings.Join(s.Params[0].Type.Dims, "×")))
		case s.Kind == "gaussian" && f.gaussPerUnit(s.Gauss):
			layout = append(layout, fmt.Sprintf("for %s, the count, sum and sum of outer products of %s (runtime.GaussStats, flat)", paramNames(s.Params), s.Gauss.Target.Name))
		}
	}
	w := f.w
	doc := []string{"UnitParamStats adds into stats unit d's expected sufficient statistics",
		"of the params' M-steps (runtime.SVIParams), one M-step after another:"}
	for i, l := range layout {
		sep := ";"
		if i == len(layout)-1 {
			sep = "."
		}
		doc = append(doc, l+sep)
	}
	w.Func(doc, "(a *caModel) UnitParamStats(q *state, w *scratch, d int, stats []float64)", func() {
		w.P("m := a.m")
		pos := newStatsPos(w, len(layout))
		for _, s := range f.msteps {
			switch {
			case s.Kind == "counts" && s.Online.Unit != nil:
				v := s.Params[0]
				n := f.length(v.Type.Dims)
				w.Pf("m.%sCountsUnit(%s)", f.g.upper(v.Name), joinArgs("d", f.args(s.Online.Unit.Inputs, "d"), pos.slice("stats", n)))
				pos.next(n)
			case s.Kind == "gaussian" && f.gaussPerUnit(s.Gauss):
				g := s.Gauss
				p := f.dim(g.Dim)
				if g.Target.Role == ir.RoleData {
					w.Pf("%s(%s, %s, m.%s[d*%s:(d+1)*%s], nil)", rt("AddGaussFlat"), pos.slice("stats", ""), p, f.g.goName[g.Target.Name], p, p)
				} else {
					qi := f.qOf(g.Target.Name)
					w.Pf("%s(%s, %s, q.%s[d*%s:(d+1)*%s], q.%s[d*%s*%s:(d+1)*%s*%s])", rt("AddGaussFlat"), pos.slice("stats", ""), p, qi.fields[0], p, p, qi.fields[1], p, p, p, p)
				}
				pos.next(w.Sf("%s(%s)", rt("GaussStatsLen"), p))
			}
		}
	})

	w.Func([]string{"ParamStep sets the params to their M-steps (as mstep does) for the",
		"expected sufficient statistics stats of all units (laid out as in",
		"UnitParamStats), then recomputes the values derived from them, and",
		"returns the largest relative change of a param."},
		"(a *caModel) ParamStep(q *state, stats []float64) (float64, error)", func() {
			w.P("m, opts := a.m, a.opts")
			w.P("change := 0.0")
			pos := newStatsPos(w, len(layout))
			for _, s := range f.msteps {
				switch s.Kind {
				case "counts":
					f.emitCountsParamStep(s, pos)
				case "gaussian":
					f.emitGaussParamStep(s, pos)
				}
			}
			w.IfErr("err := m.computeAux()", "change", "err")
			w.Return("change", "nil")
		})

	for _, s := range f.msteps {
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
			f.w.Raw(f.countsKernel(v, u, f.g.upper(v.Name)+"CountsUnit", doc))
		}
		if u := s.Online.Rest; u != nil {
			doc := []string{fmt.Sprintf("%sCountsRest adds into its output the part of %s's expected counts", f.g.upper(v.Name), v.Name),
				"from the statements outside the unit plate:", ""}
			for _, fc := range u.Factors {
				doc = append(doc, fmt.Sprintf("\t%s: %s", fc.Pos, fmtFactor(fc)))
			}
			doc = append(doc, "", "It adds to what the output holds: the units' counts.")
			f.w.Raw(f.countsKernel(v, u, f.g.upper(v.Name)+"CountsRest", doc))
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
	w := f.w
	v := s.Params[0]
	model := f.g.goName[v.Name]
	k := f.dim(v.Type.Dims[len(v.Type.Dims)-1])
	w.Pf("// %s (%s): as mstep%s", v.Name, f.pos(v), f.stepName(s))
	w.Block("", func() {
		w.Pf("prev := append([]float64(nil), m.%s...)", model)
		if s.Online.Unit != nil {
			n := f.length(v.Type.Dims)
			w.Pf("copy(m.%s, %s)", model, pos.slice("stats", n))
			pos.next(n)
		} else {
			w.Pf("clear(m.%s)", model)
		}
		if u := s.Online.Rest; u != nil {
			w.Pf("m.%sCountsRest(%s)", f.g.upper(v.Name), joinArgs(f.args(u.Inputs, "d"), "m."+model))
		}
		w.Pf("%s(m.%s, %s, opts.Smoothing)", rt("SimplexRows"), model, k)
		w.Pf("change = %s(change, %s(m.%s, prev))", goMath.Ident("Max"), rt("L2Change"), model)
	})
}

// emitGaussParamStep prints ParamStep's part for the gaussian M-step s:
// GaussMStep.Solve on the statistics from stats (or, for a data target
// outside the unit plate, computed from the data), as in mstep<Name>.
func (f *fitGen) emitGaussParamStep(s *derive.MStep, pos *statsPos) {
	w := f.w
	g := s.Gauss
	w.Pf("// %s (%s): as mstep%s", paramNames(s.Params), g.Stmt.Pos, f.stepName(s))
	w.Block("", func() {
		w.Pf("p := %s", f.dim(g.Dim))
		if f.gaussPerUnit(g) {
			w.Pf("st := %s(%s, p)", rt("FlatGaussStats"), pos.slice("stats", ""))
			pos.next(w.Sf("%s(p)", rt("GaussStatsLen")))
		} else {
			// a data target in a plate of its own: fixed statistics
			w.Pf("st := %s(p)", rt("NewGaussStats"))
			w.Block(fmt.Sprintf("for d := 0; d < %s; d++", f.dim(g.Unit.Size)), func() {
				w.Pf("st.Add(m.%s[d*p:(d+1)*p], nil)", f.g.goName[g.Target.Name])
			})
		}
		w.Pf("c, err := m.solve%s(st, opts)", f.stepName(s))
		w.CheckErr("change", "err")
		w.Pf("change = %s(change, c)", goMath.Ident("Max"))
	})
}

// statsPos tracks where UnitParamStats and ParamStep find the next step's
// statistics in stats: at 0 if there is one step, else at a variable off,
// declared at the start of the function (the steps' code is in blocks) and
// moved past each step's statistics while another step follows.
type statsPos struct {
	w     *goFile
	multi bool // several steps: off is declared
	left  int  // steps with statistics not yet passed
}

// newStatsPos starts the statistics of steps steps, declaring off if
// there are several.
func newStatsPos(w *goFile, steps int) *statsPos {
	if steps > 1 {
		w.P("off := 0")
	}
	return &statsPos{w: w, multi: steps > 1, left: steps}
}

// slice is x's part from the current step's start, n long ("" for the rest).
func (p *statsPos) slice(x, n string) string {
	switch {
	case !p.multi:
		return sliceExpr(x, "0", n)
	case n == "":
		return x + "[off:]"
	}
	return x + "[off:off+" + n + "]"
}

// next moves off past a step of n statistics, if a step follows.
func (p *statsPos) next(n string) {
	if p.left--; p.left > 0 {
		p.w.Pf("off += %s", n)
	}
}
