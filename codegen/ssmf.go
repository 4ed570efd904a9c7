package codegen

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/vigen-go/vigen/derive"
	"github.com/vigen-go/vigen/runtime"
)

// This file emits what structured stochastic mean field (Hoffman 2014;
// runtime/ssmf.go) needs of a model besides SVI's methods (svi.go):
//
//   - SetMoments (runtime.SVISampled) sets a global factor's expectations,
//     the moment tensors local updates read, to those of a point mass at a
//     draw β̃, so that UpdateUnit and GibbsUnit fit the units given β̃. A
//     Normal's point mass is itself a Normal, of sd 0, and SetMoments sets
//     its parameters to it too; the other families have no such member, so
//     SSMF needs every update run under the draw to read their moments only.
//   - GibbsUnit (runtime.GibbsUnits) draws a unit's local latents in turn
//     from their complete conditionals, each conditional being the latent's
//     closed-form update with the others at point masses (Chen's complete
//     conditionals), and averages the categorical draws.
//
// A model they do not apply to gets NoSSMF or NoGibbs instead, saying why,
// each reason naming a latent and its position.

// ssmfFamilies are the families of global factors SSMF can draw, for
// messages; runtime.Reparameterizable decides.
const ssmfFamilies = "Dirichlet, Gamma, Normal and Beta"

// pointMass gives, for a family with a member that is a point mass (the
// Normal of sd 0), each parameter's value at the point: the sufficient
// statistic it equals, or "" for 0.
var pointMass = map[string]map[string]string{
	"Normal": {"mean": "x", "sd": ""},
}

// ssmfReason says why SSMF's global steps do not apply to a model SVI
// applies to, or "".
func (f *fitGen) ssmfReason() string {
	globals := f.sviGlobals()
	if len(globals) == 0 {
		return "it has no global latents to draw, only params (SVI steps them by online EM)"
	}
	var why []string
	for _, qi := range globals {
		if !runtime.Reparameterizable(qi.q.Family) {
			why = append(why, fmt.Sprintf("the global %s (%s) is %s, which SSMF cannot draw by reparameterization (%s globals can be)", qi.v.Name, f.pos(qi.v), qi.q.Family, ssmfFamilies))
		}
	}
	drawn := func(qi *qInfo) bool { return !qi.local && qi.upd != nil && pointMass[qi.q.Family] == nil }
	for _, qi := range f.qs {
		if !qi.local {
			continue
		}
		if qi.upd == nil {
			why = append(why, fmt.Sprintf("the local %s (%s) is %s, and SSMF fits the local factors given a draw of the globals by their closed-form updates", qi.v.Name, f.pos(qi.v), f.gaussianKind(qi)))
			continue
		}
		for _, g := range f.paramReads(append(append([]derive.Expr(nil), qi.upd.Params...), qi.upd.Untempered...), drawn) {
			why = append(why, fmt.Sprintf("the update of the local %s (%s) reads the parameters of q(%s) (%s), not only its expectations, which are all a draw of %s sets", qi.v.Name, f.pos(qi.v), g.v.Name, f.pos(g.v), g.v.Name))
		}
	}
	for _, qi := range globals {
		s := qi.upd.SVI
		exprs := append(append(append([]derive.Expr(nil), s.Unit...), s.UnitTempered...), s.UnitUntempered...)
		for _, g := range f.paramReads(exprs, drawn) {
			why = append(why, fmt.Sprintf("a unit's part of the natural parameters of the global %s (%s) reads the parameters of q(%s) (%s), not only its expectations, which are all a draw of %s sets", qi.v.Name, f.pos(qi.v), g.v.Name, f.pos(g.v), g.v.Name))
		}
	}
	return strings.Join(why, "; ")
}

// gaussianKind describes how a latent with a Gaussian factor is fitted.
func (f *fitGen) gaussianKind(qi *qInfo) string {
	if qi.method != "" {
		return "nonconjugate (a Gaussian factor fitted by Laplace or the delta method)"
	}
	return "conjugate with a Gaussian factor over the whole vector (MvNormal)"
}

// factorReads returns, in update order, the factors one of whose tensors
// exprs read, among the (factor, tensor) reads keep accepts.
func (f *fitGen) factorReads(exprs []derive.Expr, keep func(qi *qInfo, tensor string) bool) []*qInfo {
	read := map[*qInfo]bool{}
	for _, e := range exprs {
		derive.Visit(e, func(x derive.Expr) {
			if t, ok := x.(*derive.Tensor); ok {
				if qi := f.byT[t.Name]; qi != nil && keep(qi, t.Name) {
					read[qi] = true
				}
			}
		})
	}
	var out []*qInfo
	for _, qi := range f.qs {
		if read[qi] {
			out = append(out, qi)
		}
	}
	return out
}

// paramReads returns the factors selected by sel whose parameter tensors
// (not their moment tensors) exprs read.
func (f *fitGen) paramReads(exprs []derive.Expr, sel func(*qInfo) bool) []*qInfo {
	return f.factorReads(exprs, func(qi *qInfo, t string) bool { return sel(qi) && isParamTensor(qi.q, t) })
}

// localReads returns the local latents selected by sel whose factors
// (parameters or moments) exprs read.
func (f *fitGen) localReads(exprs []derive.Expr, sel func(*qInfo) bool) []*qInfo {
	return f.factorReads(exprs, func(qi *qInfo, _ string) bool { return qi.local && sel(qi) })
}

// isParamTensor reports whether t is one of q's parameter tensors and not
// also a moment tensor (a Normal's mean is both; reads of it are given the
// moment, see fitGen.arg).
func isParamTensor(q *derive.QFactor, t string) bool {
	for _, st := range q.MomentStats {
		if q.Moments[st].Tensor == t {
			return false
		}
	}
	for _, p := range q.Params {
		if p.Tensor == t {
			return true
		}
	}
	return false
}

// emitSSMF prints SetMoments, or NoSSMF.
func (f *fitGen) emitSSMF(globals []*qInfo) {
	w := f.w
	if why := f.ssmfReason(); why != "" {
		w.Func([]string{"NoSSMF says why structured stochastic mean field (SSMF, SSMF-A) does not", "apply to the model."},
			"(a *caModel) NoSSMF() string", func() { w.Return(fmt.Sprintf("%q", why)) })
		return
	}
	text := "SetMoments sets the expectations of global factor g that the local updates read to those of a point mass at a draw, whose sufficient statistics t are laid out as Natural's, one block per statistic (runtime.SVISampled)."
	for _, qi := range globals {
		if pointMass[qi.q.Family] != nil {
			text += " A Normal factor becomes that point mass itself, the Normal of sd 0."
			break
		}
	}
	doc := paragraph(text + " SetNatural restores the factor.")
	w.Func(doc, "(a *caModel) SetMoments(q *state, g int, t []float64)", func() {
		for _, qi := range globals {
			if slices.ContainsFunc(f.hoistedOf(qi), func(h *hoisted) bool { return h.trans }) {
				w.P("m := a.m // the size of a transposed exponential")
				break
			}
		}
		w.Block("switch g", func() {
			for g, qi := range globals {
				w.Pf("case %d: // %s (%s)", g, qi.v.Name, f.pos(qi.v))
				stats := derive.Dists[qi.q.Family].ExpFam.Stats
				if len(stats) > 1 {
					w.Pf("n := len(q.%s)", qi.fields[0])
				}
				block := func(k int) string {
					hi := times(k+1, "n")
					if k == len(stats)-1 {
						hi = ""
					}
					return sliceExpr("t", times(k, "n"), hi)
				}
				for k, st := range stats {
					if fl := f.momentFieldOf(qi, st.Name); fl != "" {
						w.Pf("copy(q.%s, %s) // E[%s]", fl, block(k), st.Name)
					}
				}
				f.emitPointMassParams(qi, block, "", "")
				f.emitHoistedExps(qi)
			}
		})
	})
}

// momentFieldOf is the state field holding E_q[stat] of qi, or "" if the
// statistic is not kept.
func (f *fitGen) momentFieldOf(qi *qInfo, stat string) string {
	for k, st := range qi.q.MomentStats {
		if st == stat {
			return qi.mfields[k]
		}
	}
	return ""
}

// emitPointMassParams sets the parameters of a factor whose family has a
// point-mass member (pointMass) to the point whose statistics block(k)
// holds, for elements [lo:hi] of its parameter arrays (all with "").
func (f *fitGen) emitPointMassParams(qi *qInfo, block func(k int) string, lo, hi string) {
	pm := pointMass[qi.q.Family]
	if pm == nil {
		return
	}
	stats := derive.Dists[qi.q.Family].ExpFam.Stats
	rows := ""
	if lo != "" {
		rows = "[" + lo + ":" + hi + "]"
	}
	for j, name := range derive.ConjugateParamNames(qi.q.Family) {
		from := pm[name]
		if from == "" {
			f.w.Pf("clear(q.%s%s) // %s = 0 at a point", qi.fields[j], rows, name)
			continue
		}
		for k, st := range stats {
			if st.Name == from {
				f.w.Pf("copy(q.%s%s, %s) // %s = %s at a point", qi.fields[j], rows, block(k), name, from)
			}
		}
	}
}

// gibbsReason says why the Gibbs local step does not apply to a model SVI
// applies to, or "".
func (f *fitGen) gibbsReason() string {
	var why []string
	cat := map[string]*qInfo{} // the categorical locals' probability tensors
	nlocal := 0
	for _, qi := range f.qs {
		if qi.local {
			nlocal++
		}
		if qi.local && qi.upd != nil && qi.q.IsCategorical() {
			cat[qi.q.Params[0].Tensor] = qi
		}
	}
	if nlocal == 0 {
		return "it has no local latents to draw"
	}
	for _, qi := range f.qs {
		if !qi.local {
			continue
		}
		switch {
		case qi.upd == nil:
			why = append(why, fmt.Sprintf("the local %s (%s) is %s, and the Gibbs step draws each local latent from its complete conditional, its closed-form update", qi.v.Name, f.pos(qi.v), f.gaussianKind(qi)))
			continue
		case !qi.q.IsCategorical() && !runtime.Reparameterizable(qi.q.Family):
			why = append(why, fmt.Sprintf("the local %s (%s) is %s, which the Gibbs step cannot draw (Categorical, %s locals can be)", qi.v.Name, f.pos(qi.v), qi.q.Family, ssmfFamilies))
			continue
		}
		if _, reason := f.gibbsCounts(qi); reason != "" {
			why = append(why, reason)
		}
		exprs := append(append([]derive.Expr(nil), qi.upd.Params...), qi.upd.Untempered...)
		if len(f.factorReads(exprs, func(o *qInfo, _ string) bool { return o == qi })) > 0 {
			why = append(why, fmt.Sprintf("the update of the local %s (%s) reads %s itself, so its elements' conditionals depend on each other and cannot be drawn all at once", qi.v.Name, f.pos(qi.v), qi.v.Name))
		}
		drawn := func(o *qInfo) bool {
			return o != qi && o.local && o.upd != nil && !o.q.IsCategorical() && pointMass[o.q.Family] == nil
		}
		for _, o := range f.paramReads(exprs, drawn) {
			why = append(why, fmt.Sprintf("the update of the local %s (%s) reads the parameters of q(%s) (%s), not only its expectations, which are all a draw of %s sets", qi.v.Name, f.pos(qi.v), o.v.Name, f.pos(o.v), o.v.Name))
		}
	}
	// What the units contribute to the global steps must be linear in the
	// categorical draws, and read no other local: then the average of the
	// draws gives the average of the contributions.
	check := func(what string, exprs []derive.Expr) {
		others := f.localReads(exprs, func(o *qInfo) bool { return !o.q.IsCategorical() })
		for _, o := range others {
			why = append(why, fmt.Sprintf("%s read the local %s (%s), which the Gibbs step ends at its closed-form update given the categorical locals' average draws, not at an average over its own draws", what, o.v.Name, f.pos(o.v)))
		}
		for _, e := range exprs {
			if d := catDegree(e, cat); d < 0 || d > 1 {
				var names []string
				for _, o := range f.localReads([]derive.Expr{e}, func(o *qInfo) bool { return o.q.IsCategorical() }) {
					names = append(names, fmt.Sprintf("%s (%s)", o.v.Name, f.pos(o.v)))
				}
				why = append(why, fmt.Sprintf("%s are not linear in the draws of the categorical %s (they hold a product of two of them, or a function of one), so the average of the draws does not give their average", what, strings.Join(names, " and ")))
				break
			}
		}
	}
	for _, qi := range f.sviGlobals() {
		s := qi.upd.SVI
		if s == nil {
			continue
		}
		check(fmt.Sprintf("a unit's statistics for the global %s (%s)", qi.v.Name, f.pos(qi.v)), s.Unit)
	}
	if statsLen, _ := f.sviParams(); statsLen != "" {
		for _, s := range f.msteps {
			if s.Kind == "counts" && s.Online != nil && s.Online.Unit != nil {
				check(fmt.Sprintf("a unit's expected counts for the param %s (%s)", s.Params[0].Name, f.pos(s.Params[0])), s.Online.Unit.Params)
			}
		}
	}
	return strings.Join(dedupe(why), "; ")
}

// dedupe drops repeated strings, keeping the first of each.
func dedupe(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// catDegree is the degree of e as a polynomial in the probability tensors
// cat, or -1 where e is not a polynomial in them (a function such as log
// or exp of one, or one used as an index).
func catDegree(e derive.Expr, cat map[string]*qInfo) int {
	memo := map[derive.Expr]int{}
	var rec func(derive.Expr) int
	rec = func(e derive.Expr) int {
		if d, ok := memo[e]; ok {
			return d
		}
		d := 0
		switch e := e.(type) {
		case *derive.Tensor:
			for _, i := range e.Idx {
				if rec(i) != 0 {
					d = -1
				}
			}
			if d == 0 && cat[e.Name] != nil {
				d = 1
			}
		case *derive.IDelta:
			if rec(e.X) != 0 {
				d = -1
			}
		case *derive.Call:
			if n, ok := e.Args[len(e.Args)-1].(*derive.Num); ok && e.Prim.Name == "pow" && n.V >= 0 && n.V == math.Trunc(n.V) {
				if b := rec(e.Args[0]); b < 0 {
					d = -1
				} else {
					d = b * int(n.V)
				}
				break
			}
			for _, a := range e.Args {
				if rec(a) != 0 {
					d = -1
				}
			}
		case *derive.AddNode:
			for _, t := range e.Terms {
				if dt := rec(t); dt < 0 || d < 0 {
					d = -1
				} else {
					d = max(d, dt)
				}
			}
		case *derive.MulNode:
			for _, x := range e.Factors {
				if dx := rec(x); dx < 0 || d < 0 {
					d = -1
				} else {
					d += dx
				}
			}
		case *derive.SumNode:
			d = rec(e.Body)
		case *derive.MaxNode:
			if rec(e.Body) != 0 {
				d = -1
			}
		}
		memo[e] = d
		return d
	}
	return rec(e)
}

// gibbsCounts returns, for a categorical local whose rows are the entries
// of a bag in the unit (LDA's z[d, n] for n in w[d]), the Go expression of
// unit d's counts, the tokens each row stands for; "" for one row per
// token. reason says why the rows and the counts do not line up.
func (f *fitGen) gibbsCounts(qi *qInfo) (counts, reason string) {
	if !qi.q.IsCategorical() {
		return "", ""
	}
	u := qi.upd
	bag, parent, ok := u.At[0].Ragged()
	if !ok || parent.Name != u.Unit.Name {
		return "", ""
	}
	count, ok := f.g.goName[bag+".count"]
	if !ok || len(qi.q.Params[0].Dims) != 2 {
		return "", fmt.Sprintf("the local %s (%s) has a row per entry of %s and more dimensions, which the Gibbs step does not draw yet", qi.v.Name, f.pos(qi.v), bag)
	}
	off := "m." + f.g.goName[bag+".off"]
	return fmt.Sprintf("m.%s[%s[d]:%s[d+1]]", count, off, off), ""
}

// emitGibbs prints GibbsUnit, or NoGibbs.
func (f *fitGen) emitGibbs() {
	w := f.w
	if !f.gibbs {
		w.Func([]string{"NoGibbs says why the Gibbs local step does not apply to the model."},
			"(a *caModel) NoGibbs() string", func() { w.Return(fmt.Sprintf("%q", f.gibbsReason())) })
		return
	}
	var local, cats, rest []*qInfo
	for _, qi := range f.qs {
		if qi.local {
			local = append(local, qi)
			if qi.q.IsCategorical() {
				cats = append(cats, qi)
			} else {
				rest = append(rest, qi)
			}
		}
	}
	names := newNamer("a", "m", "q", "w", "d", "rng", "burnIn", "samples", "it", "i", "x", "kept")
	type rowsOf struct{ lo, hi, kept, counts string }
	rows := map[*qInfo]rowsOf{}
	for _, qi := range local {
		stem := unexported(qi.v.Name)
		rows[qi] = rowsOf{lo: names.get(stem + "Lo"), hi: names.get(stem + "Hi")}
	}
	invT := ""
	if f.temper {
		invT = ", 1"
	}
	text := "GibbsUnit replaces unit d's local factors by a Gibbs sampler's estimate of them (runtime.GibbsUnits). From their current values, each of burnIn+samples sweeps draws every local latent in turn from its complete conditional given the current draws of the others and the global factors as they are set: its closed-form update (Eq. 18), then a draw from it."
	qs := func(l []*qInfo) string {
		var out []string
		for _, qi := range l {
			out = append(out, "q("+qi.v.Name+")")
		}
		return strings.Join(out, " and ")
	}
	catEnd := qs(cats) + " is the average of its kept draws (the last draw if samples is 0)"
	if len(cats) > 1 {
		catEnd = qs(cats) + " are the averages of their kept draws (the last draws if samples is 0)"
	}
	restEnd := qs(rest) + " its closed-form update"
	if len(rest) > 1 {
		restEnd = qs(rest) + " their closed-form updates"
	}
	switch {
	case len(cats) > 0 && len(rest) > 0:
		avg := "that average"
		if len(cats) > 1 {
			avg = "those averages"
		}
		text += fmt.Sprintf(" Then %s, and %s given %s.", catEnd, restEnd, avg)
	case len(cats) > 0:
		text += fmt.Sprintf(" Then %s.", catEnd)
	default:
		text += fmt.Sprintf(" Then %s is %s given the last draws.", qs(rest), strings.TrimPrefix(restEnd, qs(rest)+" "))
	}
	doc := paragraph(text)
	w.Func(doc, w.Sf("(a *caModel) GibbsUnit(q *state, w *scratch, d int, rng *%s, burnIn, samples int)", goRand.Ident("Rand")), func() {
		w.P("m := a.m")
		for _, qi := range local {
			r := f.unitRows(qi)
			w.Pf("%s, %s := %s, %s", rows[qi].lo, rows[qi].hi, r.lo, r.hi)
		}
		for _, qi := range cats {
			r := rows[qi]
			if c, _ := f.gibbsCounts(qi); c != "" {
				r.counts = names.get(unexported(qi.v.Name) + "Count")
				w.Pf("%s := %s // the tokens each row stands for", r.counts, c)
			} else {
				r.counts = "nil"
			}
			rows[qi] = r
		}
		var lens []string
		for _, qi := range cats {
			r := rows[qi]
			r.kept = names.get(unexported(qi.v.Name) + "Kept")
			rows[qi] = r
			lens = append(lens, r.hi+"-"+r.lo)
		}
		switch {
		case len(cats) == 1:
			kept := rows[cats[0]].kept
			w.Pf("%s := %s(&w.gibbs, %s) // the sum of the kept draws", kept, rt("Grow"), lens[0])
			w.Pf("clear(%s)", kept)
		case len(cats) > 1:
			w.Pf("kept := %s(&w.gibbs, %s) // the sums of the kept draws", rt("Grow"), strings.Join(lens, "+"))
			w.P("clear(kept)")
			off := ""
			for k, qi := range cats {
				hi := joinPlus(off, lens[k])
				if k == len(cats)-1 {
					hi = ""
				}
				w.Pf("%s := %s", rows[qi].kept, sliceExpr("kept", orZero(off), hi))
				off = joinPlus(off, lens[k])
			}
		}
		loop := "for range burnIn + samples"
		if len(cats) > 0 {
			loop = "for it := range burnIn + samples" // it counts the burn-in
		}
		w.Block(loop, func() {
			for _, qi := range local {
				r := rows[qi]
				if r.counts != "" && r.counts != "nil" {
					w.Pf("// %s: its complete conditional, then a draw for each token of a row", qi.v.Name)
				} else {
					w.Pf("// %s: its complete conditional, then a draw from it", qi.v.Name)
				}
				w.Pf("m.update%s(q, w, d%s)", qi.upper, invT)
				if qi.q.IsCategorical() {
					w.Pf("%s(q.%s[%s:%s], %s, %s, rng)", rt("DrawCategoricalRows"), qi.fields[0], r.lo, r.hi, f.dim(qi.q.K), r.counts)
					continue
				}
				var params, stats []string
				for _, fl := range qi.fields {
					params = append(params, fmt.Sprintf("q.%s[%s:%s]", fl, r.lo, r.hi))
				}
				famStats := derive.Dists[qi.q.Family].ExpFam.Stats
				for _, st := range famStats {
					if fl := f.momentFieldOf(qi, st.Name); fl != "" {
						stats = append(stats, fmt.Sprintf("q.%s[%s:%s]", fl, r.lo, r.hi))
					} else {
						stats = append(stats, "nil")
					}
				}
				w.Pf("%s(%q, %s, rng, [][]float64{%s}, [][]float64{%s})", rt("DrawStats"), qi.q.Family, f.rowLen(qi), strings.Join(params, ", "), strings.Join(stats, ", "))
				f.emitPointMassParams(qi, func(k int) string {
					return fmt.Sprintf("q.%s[%s:%s]", f.momentFieldOf(qi, famStats[k].Name), r.lo, r.hi)
				}, r.lo, r.hi)
				f.emitHoistedExps(qi)
			}
			if len(cats) > 0 {
				w.Block("if it >= burnIn", func() {
					for _, qi := range cats {
						r := rows[qi]
						w.Block(fmt.Sprintf("for i, x := range q.%s[%s:%s]", qi.fields[0], r.lo, r.hi), func() {
							w.Pf("%s[i] += x", r.kept)
						})
					}
				})
			}
		})
		if len(cats) > 0 {
			w.Block("if samples > 0", func() {
				for _, qi := range cats {
					r := rows[qi]
					w.Pf("// q(%s): the average of its kept draws", qi.v.Name)
					w.Block(fmt.Sprintf("for i, x := range %s", r.kept), func() {
						w.Pf("q.%s[%s+i] = x / float64(samples)", qi.fields[0], r.lo)
					})
				}
			})
		}
		for _, qi := range rest {
			what := "that average"
			switch {
			case len(cats) == 0:
				what = "the last draws"
			case len(cats) > 1:
				what = "those averages"
			}
			w.Pf("// q(%s): its closed form given %s", qi.v.Name, what)
			w.Pf("m.update%s(q, w, d%s)", qi.upper, invT)
		}
	})
}

// rowLen is the Go expression of the row length of a factor of a vector
// family (a Dirichlet's last dimension), 1 for an elementwise family.
func (f *fitGen) rowLen(qi *qInfo) string {
	if derive.Dists[qi.q.Family].Value.Shape == "" {
		return "1"
	}
	dims := qi.q.Params[0].Dims
	return f.dim(dims[len(dims)-1])
}

// paragraph word-wraps text as the lines of a doc comment (goFile.Func).
func paragraph(text string) []string {
	return strings.Split(strings.TrimPrefix(comment(text), "// "), "\n// ")
}

// joinPlus is a + b, either of which may be "".
func joinPlus(a, b string) string {
	if a == "" {
		return b
	}
	return a + "+" + b
}

// orZero is x, or "0" for "".
func orZero(x string) string {
	if x == "" {
		return "0"
	}
	return x
}
