package codegen

import (
	"fmt"
	"strings"

	"github.com/vigen-go/vigen/derive"
	"github.com/vigen-go/vigen/spec/ir"
)

// This file emits Model.Heldout for a model with a per-token predictive
// (derive.Predictive): held-out evaluation by document completion. The
// kernels HeldoutMix and HeldoutTopics evaluate E_q[Q_k] for a test
// document and E_q[P_v | z = k]; Heldout fits the test documents' local
// factors with the trained globals and params held fixed (one coordinate
// ascent iteration, as examples/lda's InferTheta does) and scores the
// held-out halves with runtime.HeldoutMixture.

// PredictiveLabel says how the per-token predictive of p is computed, for
// Heldout's doc comment and runtime.HeldoutScore.Predictive.
func PredictiveLabel(p *derive.Predictive) string {
	z := p.Local.Name
	n := p.Draw.Plates[1].Index
	d := p.Unit.Name
	how := func(rules []derive.Approx) string {
		for _, a := range rules {
			if !a.Exact {
				return "approximate: " + derive.RuleSummary(rules)
			}
		}
		return derive.RuleSummary(rules)
	}
	return fmt.Sprintf("p(%s[%s, %s] = v) = Σ_k E_q[%s_k] · E_q[%s_v | %s[%s, %s] = k], where E_q[%s_k]: %s; E_q[%s_v | %s = k]: %s",
		p.Bag.Name, d, n, fmtIR(p.Mixer.Args[0]), fmtIR(p.Draw.Args[0]), z, d, n,
		fmtIR(p.Mixer.Args[0]), how(p.MixRules), fmtIR(p.Draw.Args[0]), z, how(p.TopicRules))
}

// emitHeldout prints Model.Heldout and its kernels, when the model has a
// per-token predictive.
func (f *fitGen) emitHeldout() {
	p := f.d.Predictive
	if p == nil {
		return
	}
	g := f.g
	bag := p.Bag.Name
	off, term, count := g.goName[bag+".off"], g.goName[bag+".term"], g.goName[bag+".count"]
	unitGo, kGo, vGo := g.sizeGo[p.Unit.Size], g.sizeGo[p.K.Size], g.sizeGo[p.V.Size]
	label := PredictiveLabel(p)
	w := f.w
	doc := []string{"Heldout scores r, a fit of m, by document completion: obs and held are",
		"the observed and the held-out halves of test documents (line-aligned",
		"bags of 1-based term ids). The test documents' local factors are fitted",
		"to their observed halves with r's global factors and params held fixed",
		"(one coordinate-ascent iteration started from them, with opts' Method,",
		"Seed, Workers and local settings; LocalMaxIter 0 means",
		"runtime.HeldoutLocalMaxIter), and each held-out token is scored by its",
		fmt.Sprintf("predictive probability (%s):", f.pos(p.Bag)), ""}
	for _, l := range wrapComment(label, 72) {
		doc = append(doc, "\t"+l)
	}
	doc = append(doc, "", fmt.Sprintf("Terms that never occur in m's %s are left out of both halves", bag),
		"(runtime.HeldoutSplit, runtime.HeldoutMixture).")
	fail := func() { w.CheckErr("s", "err") }
	w.Func(doc, w.Sf("(m *Model) Heldout(ctx %s, r *Result, obs, held [][][2]int, opts Options) (%s, error)", goContext.Ident("Context"), rt("HeldoutScore")), func() {
		w.Pf("var s %s", rt("HeldoutScore"))
		w.If(cond("r == nil"), func() { w.Return("s", w.Sf(`%s("held-out evaluation: no fit")`, goFmt.Ident("Errorf"))) })
		w.Pf("seen, kept, err := %s(m.%s, m.%s, m.%s, obs, held)", rt("HeldoutSplit"), term, count, vGo)
		fail()
		w.P("t := *m")
		w.Pf("t.%s = len(kept)", unitGo)
		w.IfErr(w.Sf("t.%s, t.%s, t.%s, err = %s(%q, kept, t.%s, 1, t.%s)", off, term, count, rt("FlattenBag"), bag, unitGo, vGo), "s", "err")
		w.P("opts = opts.Heldout()")
		w.P("q, err := t.newState(opts)")
		fail()
		w.Doc("the test documents' local factors start as Fit starts them, the", "globals at r's")
		w.P("l := q.latent(&t)")
		keep := func() {
			for _, qi := range f.qs {
				if !qi.local {
					w.Pf("l.%s = r.Latent.%s", qi.field, qi.field)
				}
			}
		}
		keep()
		w.P("opts.Start = &Result{Latent: l, Params: r.Params}")
		w.P("res, err := t.Fit(ctx, opts)")
		fail()
		w.If(cond("res.Iterations != 1"), func() {
			w.Return("s", w.Sf(`%s("held-out evaluation: the fit of the test documents stopped: %%s", res.Status)`, goFmt.Ident("Errorf")))
		})
		w.Doc("the iteration's global update moved the globals; the score reads r's")
		w.P("l = res.Latent")
		keep()
		w.P("start := Options{Method: opts.Method, Start: &Result{Latent: l, Params: r.Params}}")
		if len(g.m.VarsWithRole(ir.RoleParam)) > 0 {
			w.P("u, err := t.withOwnParams(start)")
			fail()
		} else {
			w.P("u := &t")
		}
		w.IfErr("q, err = u.newState(start)", "s", "err")
		w.Pf("mix := make([]float64, u.%s*u.%s)", unitGo, kGo)
		w.Block(fmt.Sprintf("for d := 0; d < u.%s; d++", unitGo), func() {
			w.Pf("u.HeldoutMix(%s)", joinArgs("d", f.args(p.MixInputs, "d"), fmt.Sprintf("mix[d*u.%s:(d+1)*u.%s]", kGo, kGo)))
		})
		w.Pf("topics := make([]float64, u.%s*u.%s)", kGo, vGo)
		w.Pf("u.HeldoutTopics(%s)", joinArgs(f.args(p.TopicInputs, ""), "topics"))
		w.Pf("s, err = %s(mix, topics, u.%s, held, seen)", rt("HeldoutMixture"), kGo)
		w.Pf("s.Unsettled, s.Predictive = len(res.Unsettled), %q", label)
		w.Return("s", "err")
	})

	mixParams := append(inputParams(p.MixInputs), kernelParam{Want: "mix", Tensor: "out:mix", Dims: []string{p.K.Size}, Out: true})
	f.w.Raw(g.emitKernel(kernelSpec{Name: "HeldoutMix", Unit: &p.Unit, Params: mixParams,
		Doc: []string{fmt.Sprintf("HeldoutMix adds into mix E_q[%s_k], k = 1..%s, for document %s, the", fmtIR(p.Mixer.Args[0]), p.K.Size, p.Unit.Name),
			fmt.Sprintf("mixture weights of the predictive of %s (Heldout). The caller zeroes mix.", bag)},
		Outputs: []Output{{Target: "out:mix", Free: []derive.Index{p.K}, Expr: p.Mix, Origin: fmt.Sprintf("%s: %s", p.Mixer.Pos, fmtFactor(p.Mixer))}}}))
	topicParams := append(inputParams(p.TopicInputs), kernelParam{Want: "topics", Tensor: "out:topics", Dims: []string{p.K.Size, p.V.Size}, Out: true})
	f.w.Raw(g.emitKernel(kernelSpec{Name: "HeldoutTopics", Params: topicParams,
		Doc: []string{fmt.Sprintf("HeldoutTopics adds into topics row k the terms' E_q[%s_v | %s = k], the", fmtIR(p.Draw.Args[0]), p.Local.Name),
			fmt.Sprintf("topics of the predictive of %s (Heldout). The caller zeroes topics.", bag)},
		Outputs: []Output{{Target: "out:topics", Free: []derive.Index{p.K, p.V}, Expr: p.Topic, Origin: fmt.Sprintf("%s: %s", p.Draw.Pos, fmtFactor(p.Draw))}}}))
}

// wrapComment splits s into lines of at most width bytes at spaces.
func wrapComment(s string, width int) []string {
	var out []string
	line := ""
	for _, w := range strings.Fields(s) {
		if line != "" && len(line)+1+len(w) > width {
			out = append(out, line)
			line = w
			continue
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	if line != "" {
		out = append(out, line)
	}
	return out
}
