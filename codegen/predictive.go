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
// document and E_q[P_v | z = k]; Heldout is runtime.Heldout (the
// algorithm: fit the test documents' local factors with the trained
// globals and params held fixed, one coordinate-ascent iteration, and score
// the held-out halves with runtime.HeldoutMixture) given heldoutModel, the
// package's adapter to runtime.HeldoutModel.

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
		"(runtime.Heldout).")
	w.Func(doc, w.Sf("(m *Model) Heldout(ctx %s, r *Result, obs, held [][][2]int, opts Options) (%s, error)", goContext.Ident("Context"), rt("HeldoutScore")), func() {
		w.Return(w.Sf("%s(ctx, heldoutModel{m}, r, obs, held, opts, %q)", rt("Heldout"), label))
	})
	w.P()
	w.Doc("heldoutModel adapts Model to runtime.HeldoutModel for Heldout.")
	w.P("type heldoutModel struct{ m *Model }")
	w.Func(nil, "(h heldoutModel) Bag() ([]int, []float64, int)", func() {
		w.Return("h.m."+term, "h.m."+count, "h.m."+vGo)
	})
	w.Func(nil, w.Sf("(h heldoutModel) Docs(docs [][][2]int) (%s[Latent, Params], error)", rt("HeldoutModel")), func() {
		w.P("t := *h.m")
		w.Pf("t.%s = len(docs)", unitGo)
		w.P("var err error")
		w.Pf("t.%s, t.%s, t.%s, err = %s(%q, docs, t.%s, 1, t.%s)", off, term, count, rt("FlattenBag"), bag, unitGo, vGo)
		w.Return("heldoutModel{&t}", "err")
	})
	w.Func(nil, "(h heldoutModel) Start(opts Options) (Latent, error)", func() {
		w.P("q, err := h.m.newState(opts)")
		w.CheckErr("Latent{}", "err")
		w.Return(f.latentCall("q", "h.m"), "nil")
	})
	w.Func(nil, "(h heldoutModel) Globals(l, g Latent) Latent", func() {
		for _, qi := range f.qs {
			if !qi.local {
				w.Pf("l.%s = g.%s", qi.field, qi.field)
			}
		}
		w.Return("l")
	})
	w.Func(nil, w.Sf("(h heldoutModel) Fit(ctx %s, opts Options) (*Result, error)", goContext.Ident("Context")), func() {
		w.Return("h.m.Fit(ctx, opts)")
	})
	w.Func(nil, "(h heldoutModel) Predictive(start Options) ([]float64, []float64, int, error)", func() {
		fail := func() { w.CheckErr("nil", "nil", "0", "err") }
		w.P("m := h.m")
		if len(g.m.VarsWithRole(ir.RoleParam)) > 0 {
			w.P("u, err := m.withOwnParams(start)")
			fail()
			w.P("q, err := u.newState(start)")
		} else {
			w.P("u := m")
			w.P("q, err := u.newState(start)")
		}
		fail()
		var gauss []string
		for _, qi := range f.qs {
			if qi.q.IsGaussianVector() && (containsQ(p.MixInputs, qi.q) || containsQ(p.TopicInputs, qi.q)) {
				gauss = append(gauss, qi.fields[1])
			}
		}
		if len(gauss) > 0 {
			w.If(cond("start.HeldoutPlugIn"), func() {
				w.P("// the predictive at the Gaussian factors' means")
				for _, c := range gauss {
					w.Pf("clear(q.%s)", c)
				}
			})
		}
		w.Pf("mix := make([]float64, u.%s*u.%s)", unitGo, kGo)
		w.Block(fmt.Sprintf("for d := 0; d < u.%s; d++", unitGo), func() {
			w.Pf("u.HeldoutMix(%s)", joinArgs("d", f.argsFor("HeldoutMix", p.MixInputs, "d"), fmt.Sprintf("mix[d*u.%s:(d+1)*u.%s]", kGo, kGo)))
		})
		w.Pf("topics := make([]float64, u.%s*u.%s)", kGo, vGo)
		w.Pf("u.HeldoutTopics(%s)", joinArgs(f.argsFor("HeldoutTopics", p.TopicInputs, ""), "topics"))
		w.Return("mix", "topics", "u."+kGo, "nil")
	})

	mixParams := append(inputParams(p.MixInputs), kernelParam{Want: "mix", Tensor: "out:mix", Dims: []string{p.K.Size}, Out: true})
	f.w.Raw(g.emitKernel(kernelSpec{Name: "HeldoutMix", Unit: &p.Unit, Params: mixParams, Trim: true,
		Doc: []string{fmt.Sprintf("HeldoutMix adds into mix E_q[%s_k], k = 1..%s, for document %s, the", fmtIR(p.Mixer.Args[0]), p.K.Size, p.Unit.Name),
			fmt.Sprintf("mixture weights of the predictive of %s (Heldout). The caller zeroes mix.", bag)},
		Outputs: []Output{{Target: "out:mix", Free: []derive.Index{p.K}, Expr: p.Mix, Origin: fmt.Sprintf("%s: %s", p.Mixer.Pos, fmtFactor(p.Mixer))}}}))
	topicParams := append(inputParams(p.TopicInputs), kernelParam{Want: "topics", Tensor: "out:topics", Dims: []string{p.K.Size, p.V.Size}, Out: true})
	f.w.Raw(g.emitKernel(kernelSpec{Name: "HeldoutTopics", Params: topicParams, Trim: true,
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

func containsQ(qs []*derive.QFactor, q *derive.QFactor) bool {
	for _, x := range qs {
		if x == q {
			return true
		}
	}
	return false
}
