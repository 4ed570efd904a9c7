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
	w := p.Bag.Name
	off, term, count := g.goName[w+".off"], g.goName[w+".term"], g.goName[w+".count"]
	unitGo, kGo, vGo := g.sizeGo[p.Unit.Size], g.sizeGo[p.K.Size], g.sizeGo[p.V.Size]
	label := PredictiveLabel(p)
	f.p("\n// Heldout scores r, a fit of m, by document completion: obs and held are\n")
	f.p("// the observed and the held-out halves of test documents (line-aligned\n")
	f.p("// bags of 1-based term ids). The test documents' local factors are fitted\n")
	f.p("// to their observed halves with r's global factors and params held fixed\n")
	f.p("// (one coordinate-ascent iteration started from them, with opts' Method,\n")
	f.p("// Seed, Workers and local settings; LocalMaxIter 0 means\n")
	f.p("// runtime.HeldoutLocalMaxIter), and each held-out token is scored by its\n")
	f.p("// predictive probability (%s):\n//\n", f.pos(p.Bag))
	for _, l := range wrapComment(label, 72) {
		f.p("//\t%s\n", l)
	}
	f.p("//\n// Terms that never occur in m's %s are left out of both halves\n// (runtime.HeldoutSplit, runtime.HeldoutMixture).\n", w)
	f.p("func (m *Model) Heldout(ctx context.Context, r *Result, obs, held [][][2]int, opts Options) (runtime.HeldoutScore, error) {\n")
	f.p("\tvar s runtime.HeldoutScore\n")
	f.p("\tif r == nil {\n\t\treturn s, fmt.Errorf(\"held-out evaluation: no fit\")\n\t}\n")
	f.p("\tseen, kept, err := runtime.HeldoutSplit(m.%s, m.%s, m.%s, obs, held)\n\tif err != nil {\n\t\treturn s, err\n\t}\n", term, count, vGo)
	f.p("\tt := *m\n\tt.%s = len(kept)\n", unitGo)
	f.p("\tif t.%s, t.%s, t.%s, err = runtime.FlattenBag(%q, kept, t.%s, 1, t.%s); err != nil {\n\t\treturn s, err\n\t}\n", off, term, count, w, unitGo, vGo)
	f.p("\topts = opts.Heldout()\n")
	f.p("\tq, err := t.newState(opts)\n\tif err != nil {\n\t\treturn s, err\n\t}\n")
	f.p("\t// the test documents' local factors start as Fit starts them, the\n\t// globals at r's\n")
	f.p("\tl := q.latent(&t)\n")
	keep := func() {
		for _, qi := range f.qs {
			if !qi.local {
				f.p("\tl.%s = r.Latent.%s\n", qi.field, qi.field)
			}
		}
	}
	keep()
	f.p("\topts.Start = &Result{Latent: l, Params: r.Params}\n")
	f.p("\tres, err := t.Fit(ctx, opts)\n\tif err != nil {\n\t\treturn s, err\n\t}\n")
	f.p("\tif res.Iterations != 1 {\n\t\treturn s, fmt.Errorf(\"held-out evaluation: the fit of the test documents stopped: %%s\", res.Status)\n\t}\n")
	f.p("\t// the iteration's global update moved the globals; the score reads r's\n\tl = res.Latent\n")
	keep()
	f.p("\tstart := Options{Method: opts.Method, Start: &Result{Latent: l, Params: r.Params}}\n")
	if len(g.m.VarsWithRole(ir.RoleParam)) > 0 {
		f.p("\tu, err := t.withOwnParams(start)\n\tif err != nil {\n\t\treturn s, err\n\t}\n")
	} else {
		f.p("\tu := &t\n")
	}
	f.p("\tif q, err = u.newState(start); err != nil {\n\t\treturn s, err\n\t}\n")
	f.p("\tmix := make([]float64, u.%s*u.%s)\n", unitGo, kGo)
	mixArgs := f.args(p.MixInputs, "d")
	if mixArgs != "" {
		mixArgs += ", "
	}
	f.p("\tfor d := 0; d < u.%s; d++ {\n\t\tu.HeldoutMix(d, %smix[d*u.%s:(d+1)*u.%s])\n\t}\n", unitGo, mixArgs, kGo, kGo)
	topicArgs := f.args(p.TopicInputs, "")
	if topicArgs != "" {
		topicArgs += ", "
	}
	f.p("\ttopics := make([]float64, u.%s*u.%s)\n\tu.HeldoutTopics(%stopics)\n", kGo, vGo, topicArgs)
	f.p("\ts, err = runtime.HeldoutMixture(mix, topics, u.%s, held, seen)\n", kGo)
	f.p("\ts.Unsettled, s.Predictive = len(res.Unsettled), %q\n\treturn s, err\n}\n", label)

	mixParams := append(inputParams(p.MixInputs), kernelParam{Want: "mix", Tensor: "out:mix", Dims: []string{p.K.Size}, Out: true})
	f.sb.WriteString(g.emitKernel(kernelSpec{Name: "HeldoutMix", Unit: &p.Unit, Params: mixParams,
		Doc: []string{fmt.Sprintf("HeldoutMix adds into mix E_q[%s_k], k = 1..%s, for document %s, the", fmtIR(p.Mixer.Args[0]), p.K.Size, p.Unit.Name),
			fmt.Sprintf("mixture weights of the predictive of %s (Heldout). The caller zeroes mix.", w)},
		Outputs: []Output{{Target: "out:mix", Free: []derive.Index{p.K}, Expr: p.Mix, Origin: fmt.Sprintf("%s: %s", p.Mixer.Pos, fmtFactor(p.Mixer))}}}))
	topicParams := append(inputParams(p.TopicInputs), kernelParam{Want: "topics", Tensor: "out:topics", Dims: []string{p.K.Size, p.V.Size}, Out: true})
	f.sb.WriteString(g.emitKernel(kernelSpec{Name: "HeldoutTopics", Params: topicParams,
		Doc: []string{fmt.Sprintf("HeldoutTopics adds into topics row k the terms' E_q[%s_v | %s = k], the", fmtIR(p.Draw.Args[0]), p.Local.Name),
			fmt.Sprintf("topics of the predictive of %s (Heldout). The caller zeroes topics.", w)},
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
