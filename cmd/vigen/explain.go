package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/vigen-go/vigen/derive"
	"github.com/vigen-go/vigen/spec/ir"
)

// `vigen explain` prints a derivation report: for each latent of a model,
// what derive built (f, its gradient and Hessian for a nonconjugate
// latent; the natural parameters and the closed-form update for a
// conjugate one), how each expectation under q was taken, and what the
// generated code does with it; then the M-steps of the params. Equation
// numbers are those of Wang & Blei (2013). The report is Markdown with
// LaTeX math, or a standalone LaTeX document.

// explainFormats are the output formats of `vigen explain`.
var explainFormats = map[string]bool{"md": true, "tex": true}

// cmdExplain is `vigen explain [-format md|tex] model.vi`: it prints the
// model's derivation report on stdout, or positioned errors on stderr and
// exits 1; a usage error (such as an unknown format) exits 2.
func cmdExplain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("explain", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := "md"
	fs.Func("format", "output format: md (Markdown with LaTeX math, the default) or tex (a standalone LaTeX document)", func(s string) error {
		if !explainFormats[s] {
			return fmt.Errorf("unknown format %q: want md or tex", s)
		}
		format = s
		return nil
	})
	d, code := parseAndDerive(fs, args, stderr)
	if d == nil {
		return code
	}
	src, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	r := &report{tex: format == "tex", src: strings.Split(string(src), "\n")}
	r.explain(d)
	if _, err := io.WriteString(stdout, r.b.String()); err != nil {
		fmt.Fprintln(stderr, "vigen:", err)
		return 1
	}
	return 0
}

// report builds the derivation report of one model in one format. Text
// passed to its methods is a small Markdown subset: `code`, **bold** and
// inline math in $…$; the LaTeX writer translates it.
type report struct {
	tex bool
	src []string // the model's source lines, for quoting statements
	eta string   // the symbol of natural parameters: \eta unless the model has an eta
	b   strings.Builder
}

// ---- the report's content ----

func (r *report) explain(d *derive.Derivation) {
	m := d.Model
	r.eta = `\eta`
	for _, v := range m.Vars {
		if strings.TrimRight(v.Name, "0123456789") == "eta" {
			r.eta = `\tilde{\eta}`
		}
	}
	r.begin(m)
	r.para(fmt.Sprintf("What `vigen` derived from the model `%s` in `%s`, and what the code it generates computes. "+
		"Equation numbers refer to Wang & Blei (2013), *Variational inference in nonconjugate models*, JMLR 14. "+
		"The variational distribution is mean-field, one factor $q$ per latent; "+
		"the updates below are applied in turn until they converge (Fig. 1).", m.Name, m.File))
	var items []string
	for _, v := range m.VarsWithRole(ir.RoleLatent) {
		items = append(items, fmt.Sprintf("latent `%s` (`%s`): %s", v.Name, v.TypeString(), treatmentDoc[v.Treatment.String()]))
	}
	// An M-step or ELBO that could not be derived is shown at the end;
	// the M-steps that could be are shown all the same.
	steps, mstepErr := d.MSteps()
	_, boundErr := d.Bound()
	stepOf := map[*ir.Var]*derive.MStep{}
	for _, s := range steps {
		for _, p := range s.Params {
			stepOf[p] = s
		}
	}
	for _, p := range m.VarsWithRole(ir.RoleParam) {
		if s := stepOf[p]; s != nil {
			items = append(items, fmt.Sprintf("param `%s` (`%s`): M-step, %s", p.Name, p.Type, derive.MStepKinds[s.Kind]))
		} else {
			items = append(items, fmt.Sprintf("param `%s` (`%s`): no M-step (see the end of this report)", p.Name, p.Type))
		}
	}
	r.list(items)
	if len(m.Lets) > 0 {
		var defs []string
		for _, l := range m.Lets {
			name := l.Name
			if l.Index != nil {
				name += "[" + strings.Join(l.Index, ", ") + "]"
			}
			defs = append(defs, fmt.Sprintf("`%s` (`%s`)", name, l.Pos))
		}
		r.para("The model's `let` definitions are substituted where they are used, so the formulas below show their expanded expressions: " + strings.Join(defs, ", ") + ".")
	}
	r.notation(d)

	objs := map[*ir.Var]*derive.Objective{}
	for _, o := range d.Objectives {
		objs[o.Latent] = o
	}
	upds := map[*ir.Var]*derive.Update{}
	for _, u := range d.Updates {
		upds[u.Latent] = u
	}
	for _, v := range m.VarsWithRole(ir.RoleLatent) {
		if o := objs[v]; o != nil {
			r.nonconjugate(o)
		} else if u := upds[v]; u != nil {
			r.conjugate(u)
		}
	}
	if len(steps) > 0 {
		r.heading(2, "Params: M-steps")
		r.para("Params are point estimates (variational EM): after the variational updates, each M-step sets its params " +
			"to the maximum of the expected complete log likelihood $\\mathbb{E}_q[\\log p]$ with $q$ held fixed, " +
			"plus the log prior of a param that has one (a MAP estimate).")
		for _, s := range steps {
			r.mstep(s)
		}
	}
	if mstepErr != nil || boundErr != nil {
		r.heading(2, "Not supported yet")
		r.para("`vigen gen` generates the derivative kernels of this model but not its `Fit`:")
		for _, err := range []error{mstepErr, boundErr} {
			if err != nil {
				r.code(err.Error())
			}
		}
	}
	r.end()
}

// notation explains the symbols the report's formulas use.
func (r *report) notation(d *derive.Derivation) {
	r.heading(2, "Notation")
	r.para("Formulas are in index notation: $x_{n,p}$ is element $(n, p)$ of `x`, sums are written out, " +
		"and $\\delta_{a b}$ is 1 when $a = b$ and 0 otherwise. " +
		"Indices $a$ and $b$ are the components of the latent being updated; the other indices of a formula are summed over, " +
		"or in a closed-form update name the element being updated. " +
		"$\\mathbb{E}$ is the expectation under the variational factor of the latent it reads. " +
		"Where an update reads another latent, it takes the expectation under $q$ of each term exactly if a rule applies " +
		"(a polynomial of degree at most two in each factor it reads is always exact, from the factors' means and covariances), " +
		"and otherwise by the second-order Taylor expansion of Eq. 19 in the Gaussian factors, " +
		"$\\mathbb{E}[g(\\theta)] \\approx g(\\mu) + \\tfrac{1}{2}\\operatorname{Tr}\\{\\nabla^{2} g(\\mu)\\Sigma\\}$, " +
		"with the means of any other factors substituted; " +
		"each section lists these terms in the text notation of `vigen check -derive` and says which rule took each.")
	r.list(derive.LaTeXGlossary(reportExprs(d)...))
}

// reportExprs lists the expressions the report prints, for its glossary.
func reportExprs(d *derive.Derivation) []derive.Expr {
	var out []derive.Expr
	obj := func(o *derive.Objective) {
		out = append(out, o.F, o.Grad, o.Hess)
		if o.Latent.Treatment == ir.Delta {
			out = append(out, o.TraceGrad())
		}
	}
	upd := func(u *derive.Update) {
		out = append(append(append(append(out, u.Natural...), u.Dropped...), u.Params...), u.Moments...)
	}
	for _, o := range d.Objectives {
		obj(o)
		out = append(out, derive.T(o.Latent.Name+".mean"), derive.T(o.CovName))
	}
	for _, u := range d.Updates {
		upd(u)
		for _, t := range u.Q.Tensors() {
			out = append(out, derive.T(t.Tensor))
		}
	}
	steps, _ := d.MSteps()
	for _, s := range steps {
		if s.Counts != nil {
			upd(s.Counts)
		}
		if s.Numeric != nil {
			obj(s.Numeric)
		}
	}
	return out
}

// updateProse says what the generated code does to update a nonconjugate
// latent, by treatment (Wang & Blei §3.1–3.2, runtime.Maximize).
var updateProse = map[string]string{
	"laplace": "**Update (Laplace, Eq. 14).** The generated code finds $\\hat{%[1]s} = \\arg\\max_{%[1]s} f(%[1]s)$ by Newton's method " +
		"from the current mean, using the gradient and Hessian above: each step solves $(-\\nabla^{2} f + \\lambda I)\\, s = \\nabla f$ by Cholesky, " +
		"with damping $\\lambda > 0$ only where $-\\nabla^{2} f$ is not positive definite, and a backtracking (Armijo) line search. " +
		"It then sets $q(%[1]s) = \\mathcal{N}\\bigl(\\hat{%[1]s}, -\\nabla^{2} f(\\hat{%[1]s})^{-1}\\bigr)$, the Laplace approximation of $q(%[1]s) \\propto \\exp f(%[1]s)$. " +
		"Where $\\nabla^{2} f(\\hat{%[1]s})$ is not negative definite, the covariance is regularized to $(-\\nabla^{2} f(\\hat{%[1]s}) + \\lambda I)^{-1}$ and the fit reports it.",
	"delta": "**Update (delta method, Eq. 17).** With $q(%[1]s) = \\mathcal{N}(\\mu, \\Sigma)$, the generated code maximizes " +
		"$f(\\mu) + \\tfrac{1}{2}\\operatorname{Tr}\\{\\nabla^{2} f(\\mu)\\, \\Sigma\\}$ over $\\mu$ with $\\Sigma$ held at its current value " +
		"(the term $\\tfrac{1}{2}\\log\\lvert\\Sigma\\rvert$ of Eq. 17 does not depend on $\\mu$), by Newton's method with the gradient of the trace term above; " +
		"its Newton matrix holds the third and fourth derivatives of $f$. Steps are damped and searched as for Laplace. " +
		"It then sets $\\Sigma = -\\nabla^{2} f(\\mu)^{-1}$, the optimum of Eq. 17 in $\\Sigma$ (regularized to $(-\\nabla^{2} f(\\mu) + \\lambda I)^{-1}$ where $\\nabla^{2} f(\\mu)$ is not negative definite). " +
		"The first update starts from $\\Sigma = -\\nabla^{2} f^{-1}$ at the current mean, or the identity if that is not a covariance.",
	"ncvmp": "**Update (NCVMP, Knowles & Minka 2011, Algorithm 1).** With $q(%[1]s) = \\mathcal{N}(\\mu, \\Sigma)$ (full covariance, the family of Laplace and delta), " +
		"$f$ is split into the part quadratic in $%[1]s$, whose Gaussian message is exact (VMP), and statements that read $%[1]s$ through one linear form " +
		"$u_n = x_n^{\\top} %[1]s$ per data point (listed below with their log factors $g_n(u)$). Each sends the Gaussian message of Eq. 7, " +
		"$K_n = -2\\,\\partial S_n/\\partial v_n\\, x_n x_n^{\\top}$ and $h_n = (\\partial S_n/\\partial m_n - 2\\,\\partial S_n/\\partial v_n\\, m_n)\\, x_n$, " +
		"where $S_n(m_n, v_n) = \\mathbb{E}[g_n(u_n)]$ under $u_n \\sim \\mathcal{N}(x_n^{\\top}\\mu, x_n^{\\top}\\Sigma x_n)$ is computed by Gauss–Hermite quadrature (Section 5.1; " +
		"$\\partial S/\\partial m = \\mathbb{E}[g']$, $\\partial S/\\partial v = \\tfrac{1}{2}\\mathbb{E}[g'']$), and $q$'s natural parameters become the sum of the messages. " +
		"The messages are iterated to their fixed point, the stationary point of the ELBO over Gaussians (Theorem 1), with damping (Section 7) only when oscillation is detected.",
}

// closedGaussianProse says what the generated code does to update a latent
// declared conjugate with a Gaussian prior (derive.Objective.Conjugate).
const closedGaussianProse = "**Update (closed form, Eq. 18).** `vigen` has checked that the Hessian above does not depend on $%[1]s$: " +
	"$f$ is quadratic, $f(%[1]s) = f(0) + \\eta_1^\\top %[1]s + %[1]s^\\top \\eta_2 %[1]s$, linear in the sufficient statistics $(%[1]s, %[1]s %[1]s^\\top)$ " +
	"with natural parameters $\\eta_1 = \\nabla f(0)$ and $\\eta_2 = \\tfrac{1}{2}\\nabla^{2} f$. " +
	"So $q(%[1]s) \\propto \\exp f(%[1]s)$ is exactly $\\mathcal{N}(m, \\Sigma)$ with $\\Sigma = -(\\nabla^{2} f)^{-1}$ and $m = \\Sigma\\, \\nabla f(0)$. " +
	"The generated code computes it as one Newton step from the current mean, $m = m_0 - (\\nabla^{2} f)^{-1} \\nabla f(m_0)$, which is exact for a quadratic; " +
	"`Options.Method` does not apply to it."

// nonconjugate reports the Laplace or delta update of a latent, or the
// closed-form update of a conjugate one with a Gaussian factor.
func (r *report) nonconjugate(o *derive.Objective) {
	v := o.Latent
	t := v.Treatment.String()
	theta := derive.LaTeX(derive.T(v.Name))
	if o.Conjugate {
		r.heading(2, fmt.Sprintf("Latent `%s`: conjugate, closed form (Eq. 18)", v.Name))
	} else {
		r.heading(2, fmt.Sprintf("Latent `%s`: nonconjugate, %s", v.Name, map[string]string{"laplace": "Laplace (Eq. 14)", "delta": "delta method (Eq. 17)", "ncvmp": "non-conjugate variational message passing (Knowles and Minka 2011)"}[t]))
	}
	mean, cov := derive.LaTeX(derive.T(v.Name+".mean")), derive.LaTeX(derive.T(o.CovName))
	what := fmt.Sprintf("a vector $%s \\in \\mathbb{R}^{%s}$ with the Gaussian factor $q(%s) = \\mathcal{N}(%s, %s)$",
		theta, derive.LaTeX(derive.SizeE(o.Dim)), theta, mean, cov)
	if derive.ScalarGaussian(v) {
		what = fmt.Sprintf("a scalar $%s \\in \\mathbb{R}$ with the Gaussian factor $q(%s) = \\mathcal{N}(%s, %s)$ ($%s$ is its variance)",
			theta, theta, mean, cov, cov)
	}
	if o.Unit != nil {
		u := derive.IxE(*o.Unit)
		td := derive.LaTeX(derive.T(v.Name, u))
		what = fmt.Sprintf("one vector $%s \\in \\mathbb{R}^{%s}$ per unit $%s$ of the plate over `%s`, each with its own Gaussian factor "+
			"$q(%s) = \\mathcal{N}(%s, %s)$; below, $%s$ stands for the unit's vector $%s$ and $%s$ is fixed",
			td, derive.LaTeX(derive.SizeE(o.Dim)), derive.LaTeX(u), o.Unit.Name,
			td, derive.LaTeX(derive.T(v.Name+".mean", u)), derive.LaTeX(derive.T(o.CovName, u)), theta, td, derive.LaTeX(u))
	}
	r.para(fmt.Sprintf("Declared at `%s` as `%s`: %s.", v.Pos, v.TypeString(), what))
	if derive.Transformed(v) {
		if tr, ok := derive.Transforms[v.Transform.Kind]; ok {
			r.para(fmt.Sprintf("It is constrained (`%s`), so it is fitted on the unconstrained scale, as Stan does: $%s$ below is the unconstrained u, "+
				"every read of `%s` is the constrained value (%s), and its prior's statement includes the log-Jacobian (%s). "+
				"The result reports q on u and the mean, sd and quantiles of the constrained value; the inverse map is %s.",
				v.Transform.Text, theta, v.Name, tr.Text, tr.JacText, tr.InverseText))
		}
	}
	flat := true // no `~` of v among the statements of f
	for _, f := range o.Factors {
		if f.Target != nil && f.Target.Var == v && f.Dist != derive.FlatDist {
			flat = false
		}
	}
	if flat {
		r.para(fmt.Sprintf("It has no `~`: its prior is Stan's implicit improper flat prior on the constrained scale (a log density of 0 on `%s`; on the unconstrained scale, the log-Jacobian alone). The statements reading it must make the posterior proper, and the ELBO is then defined only up to a constant: it is not a bound on the log evidence.", v.Name))
	}
	r.para(fmt.Sprintf("Its objective $f(%s)$ (Eq. 12) is the log joint restricted to the statements that read `%s`, "+
		"with the expectation under $q$ of every other latent it reads. It is built from:", theta, v.Name))
	r.statements(o.Factors)
	for _, g := range o.Groups {
		r.para(fmt.Sprintf("The statements over `%s` reach unit $%s$ through `%s`: their sums run over the points with $%s$.",
			g.Plate, derive.LaTeX(derive.IxE(*o.Unit)), g.By.Name,
			derive.LaTeX(derive.T(g.By.Name, derive.IxE(derive.Index{Name: g.Plate})))+" = "+derive.LaTeX(derive.IxE(*o.Unit))))
	}
	r.objectiveFormulas(o, theta, "Objective (Eq. 12)", v.Treatment == ir.Delta)
	if o.Conjugate {
		r.para(fmt.Sprintf(closedGaussianProse, theta))
		r.expectations(o.Expectations, nil, "$f$ reads no other latent, so it takes no expectation: it is exact.")
		return
	}
	r.para(fmt.Sprintf(updateProse[t], theta))
	if pr := o.NCVMP; pr != nil {
		r.para("**NCVMP projections:**")
		for _, pt := range pr.Terms {
			r.para(fmt.Sprintf("The statement at %s: for each $%s$, $u = \\sum_a %s\\, %s$ and", pt.Factor.Pos, derive.LaTeX(derive.IxE(pt.Idx)),
				derive.LaTeX(pt.Row), derive.LaTeX(derive.T(v.Name, derive.IxE(o.A)))))
			r.equation("g(u)", "=", pt.GAt("u"))
		}
	}
	if c := o.Collapsed; c != nil && o.Unit != nil {
		r.para(fmt.Sprintf("**Collapsed start.** For each unit the code first moves the mean of $q(%s)$ to the maximum of the collapsed objective "+
			"$g(%[1]s) = \\max_{q(%s)} f(%[1]s)$, in which the unit's categorical `%[3]s` is maximized out (`derive/collapse.go`): "+
			"the fixed point of the alternation between $q(%[1]s)$ and $q(%[2]s)$, found by Newton's method. "+
			"The update above then confirms it (Laplace) or refines it (delta).", theta, derive.LaTeX(derive.T(c.Z.Name)), c.Z.Name))
	}
	if o.NCVMP != nil {
		r.para("The run-time option `Options.Method` (`laplace`, `delta` or `ncvmp`) overrides the declared treatment of every nonconjugate latent; `ncvmp` is available only for latents declared so, whose projections the compiler derived.")
	} else {
		r.para("The run-time option `Options.Method` (`laplace` or `delta`) overrides the declared treatment of every nonconjugate latent.")
	}
	r.expectations(o.Expectations, nil, "$f$ reads no other latent, so it takes no expectation: it is exact.")
}

// objectiveFormulas prints f, ∇f, ∇²f and, for the delta method, the
// gradient of the trace term.
func (r *report) objectiveFormulas(o *derive.Objective, theta, label string, delta bool) {
	ta := derive.LaTeX(derive.T(o.Latent.Name, derive.IxE(o.A)))
	tb := derive.LaTeX(derive.T(o.Latent.Name, derive.IxE(o.B)))
	r.para("**" + label + ":**")
	r.equation(fmt.Sprintf("f(%s)", theta), "=", o.F)
	r.para("**Gradient:**")
	r.equation(fmt.Sprintf("\\frac{\\partial f}{\\partial %s}", ta), "=", o.Grad)
	r.para("**Hessian:**")
	r.equation(fmt.Sprintf("\\frac{\\partial^{2} f}{\\partial %s\\, \\partial %s}", ta, tb), "=", o.Hess)
	if delta {
		cov := derive.LaTeX(derive.T(o.CovName))
		r.para(fmt.Sprintf("**Gradient of the trace term** of Eq. 17, "+
			"$\\operatorname{Tr}\\{\\nabla^{2} f\\, %s\\} = \\sum_{a, b} \\frac{\\partial^{2} f}{\\partial %s\\, \\partial %s} %s_{a,b}$ "+
			"(third derivatives of $f$, contracted with the covariance):", cov, ta, tb, cov))
		r.equation(fmt.Sprintf("\\frac{\\partial}{\\partial %s} \\operatorname{Tr}\\{\\nabla^{2} f\\, %s\\}", ta, cov), "=", o.TraceGrad())
	}
}

// conjugate reports the closed-form update of a conjugate latent.
func (r *report) conjugate(u *derive.Update) {
	v, q := u.Latent, u.Q
	r.heading(2, fmt.Sprintf("Latent `%s`: conjugate, closed-form update (Eq. 18)", v.Name))
	at, rename := r.niceIndices(u)
	u = renamedUpdate(u, at)
	z := derive.LaTeX(derive.T(v.Name))
	var params []string
	for _, p := range q.Params {
		params = append(params, derive.LaTeX(derive.T(p.Tensor)))
	}
	family := derive.Dists[q.Family].Latex
	per := "one for each element of `" + v.Name + "`"
	switch {
	case strings.HasPrefix(firstDim(q.Dims), "@"):
		per = "one for each entry of the bag `" + firstDim(q.Dims)[1:] + "`"
	case q.IsSimplex() && len(q.Dims) > 1:
		per = "one for each row of `" + v.Name + "`"
	case q.IsSimplex() || len(q.Dims) == 0:
		per = "a single factor"
	}
	unit := ""
	if u.Unit != nil {
		unit = fmt.Sprintf(", updated unit by unit over `%s`", u.Unit.Name)
	}
	of := "the family of its prior"
	if len(u.Factors) > 0 && u.Factors[0].Dist != q.Family {
		of = "the family its prior `" + u.Factors[0].Dist + "` is a special case of" // Exponential(r) = Gamma(1, r)
	}
	r.para(fmt.Sprintf("Declared at `%s` as `%s`. Its factor is in %s, $q(%s) = %s(%s)$, %s%s.",
		v.Pos, v.Type, of, z, family, strings.Join(params, ", "), per, unit))
	r.para(fmt.Sprintf("The log joint restricted to the statements that read `%s` is linear in the sufficient statistics of the family; "+
		"their coefficients are the natural parameters $"+r.eta+"$. The statements:", v.Name))
	r.statements(u.Factors)

	elem, stats := statistics(u)
	for k, eta := range u.Natural {
		lhs := r.eta
		if len(u.Natural) > 1 {
			lhs = fmt.Sprintf("%s^{(%d)}", r.eta, k+1)
		}
		if len(u.At) > 0 {
			lhs += "_{" + strings.Join(latexIndices(u.At), ",") + "}"
		}
		r.para(fmt.Sprintf("Natural parameter of $t(%s) = %s$:", elem, stats[k]))
		r.equation(lhs, "=", eta)
	}
	if len(u.Dropped) > 0 {
		r.para(fmt.Sprintf("Terms constant in the category $%s$ cancel when $q$ is normalized, and are dropped:", latexIndices(u.At)[len(u.At)-1]))
		for _, e := range u.Dropped {
			r.equation("", "", e)
		}
	}
	if u.Normalize {
		k := latexIndices(u.At)[len(u.At)-1]
		r.para(fmt.Sprintf("**Update.** Eq. 18 sets $q(%s)$ to the family with natural parameter $\\mathbb{E}_q["+r.eta+"]$, "+
			"the expectation under the factors of the other latents; for a categorical the probabilities are its softmax over $%s$:", z, k))
		r.equation(derive.LaTeX(derive.T(q.Params[0].Tensor, ixs(u.At)...)), "\\propto", derive.Call1("exp", u.Params[0]))
	} else {
		r.para(fmt.Sprintf("**Update.** Eq. 18 sets $q(%s)$ to the family with natural parameter $\\mathbb{E}_q["+r.eta+"]$, "+
			"the expectation under the factors of the other latents, that is:", z))
		for j, p := range u.Params {
			r.equation(derive.LaTeX(derive.T(q.Params[j].Tensor, ixs(u.At)...)), "=", p)
		}
	}
	var moments []int // the moments that are not parameters themselves
	for j := range u.Moments {
		if !slices.ContainsFunc(q.Params, func(p derive.Val) bool { return p.Tensor == q.Moments[q.MomentStats[j]].Tensor }) {
			moments = append(moments, j)
		}
	}
	if len(moments) > 0 {
		r.para("After the update the code recomputes the moments that other updates read:")
		for _, j := range moments {
			r.equation(derive.LaTeX(derive.T(q.Moments[q.MomentStats[j]].Tensor, ixs(u.At)...)), "=", u.Moments[j])
		}
	}
	r.expectations(u.Expectations, rename, "$"+r.eta+"$ reads no other latent, so the update takes no expectation: it is exact.")
}

// statistics returns the element of u's latent its statistics are taken of
// and each statistic t(z), in LaTeX.
func statistics(u *derive.Update) (string, []string) {
	v := u.Latent.Name
	if u.Normalize {
		elem := derive.LaTeX(derive.T(v, ixs(u.At[:len(u.At)-1])...))
		return elem, []string{"\\mathbf{1}[" + elem + " = " + derive.LaTeX(derive.IxE(u.At[len(u.At)-1])) + "]"}
	}
	elem := derive.LaTeX(derive.T(v, ixs(u.At)...))
	var stats []string
	for _, s := range derive.Dists[u.Q.Family].ExpFam.Stats {
		stats = append(stats, fmt.Sprintf(statLaTeX[s.Name], elem)) // TestExplainStatistics: every statistic has a form
	}
	return elem, stats
}

// statLaTeX writes the sufficient statistics of the conjugate families
// (Dist.ExpFam), %s standing for the latent's element.
var statLaTeX = map[string]string{
	"x":         "%s",
	"x^2":       "%s^{2}",
	"log x":     "\\log %s",
	"log(1-x)":  "\\log(1 - %s)",
	"1/x":       "%s^{-1}",
	"(log x)^2": "(\\log %s)^{2}",
	"xx":        "%[1]s %[1]s^\\top", // MvNormal: the outer product
}

// mstep reports one M-step.
func (r *report) mstep(s *derive.MStep) {
	var names []string
	for _, p := range s.Params {
		names = append(names, "`"+p.Name+"`")
	}
	who := strings.Join(names, ", ")
	switch s.Kind {
	case "counts":
		r.countsStep(s, who)
	case "gaussian":
		r.gaussStep(s, who)
	case "numeric":
		r.heading(3, who+": Newton's method")
		o := s.Numeric
		p := derive.LaTeX(derive.T(o.Latent.Name))
		r.para(fmt.Sprintf("Declared at `%s` as `%s`. No closed form applies, so the code maximizes the expected complete log likelihood "+
			"$f(%s)$ of the statements that read it by Newton's method from its current value (damped and searched as for a Laplace update). It is built from:",
			o.Latent.Pos, o.Latent.Type, p))
		r.statements(o.Factors)
		r.objectiveFormulas(o, p, "Objective", false)
		r.expectations(o.Expectations, nil, "$f$ reads no latent, so it takes no expectation.")
	default:
		r.heading(3, who+": "+s.Kind)
		r.para(derive.MStepKinds[s.Kind])
	}
}

// countsStep reports the M-step of a simplex param read through the log
// of its entries (runtime.SimplexRows).
func (r *report) countsStep(s *derive.MStep, who string) {
	r.heading(3, who+": expected counts (closed form)")
	v := s.Params[0]
	at, rename := r.niceIndices(s.Counts)
	u := renamedUpdate(s.Counts, at)
	idx := strings.Join(latexIndices(u.At), ",")
	last := latexIndices(u.At)[len(u.At)-1]
	prior := ""
	if len(u.Factors) > 0 && !u.Factors[0].IsTerm() && u.Factors[0].Target.Var.Name == v.Name {
		prior = " (they include $\\alpha - 1$ from its Dirichlet prior: a MAP estimate)"
	}
	r.para(fmt.Sprintf("Declared at `%s` as `%s`. It is read only through the log of its entries, so the objective is linear in "+
		"$\\log %s$ and each row is proportional to its expected counts $"+r.eta+"$%s, computed as the natural parameter of a conjugate "+
		"Dirichlet update would be (Eq. 18). The statements:", v.Pos, v.Type, derive.LaTeX(derive.T(v.Name)), prior))
	r.statements(u.Factors)
	r.equation(r.eta+"_{"+idx+"}", "=", u.Params[0])
	r.para(fmt.Sprintf("The code sets $%s \\propto \\max("+r.eta+"_{%s} + s, 0)$, normalized over $%s$, with $s$ the smoothing `Options.Smoothing` "+
		"(0, maximum likelihood, by default). A row with no counts becomes uniform, and probabilities are floored at $10^{-300}$ so that their logs stay finite.",
		derive.LaTeX(derive.T(v.Name, ixs(u.At)...)), idx, last))
	r.expectations(s.Counts.Expectations, rename, "The counts read no latent, so they take no expectation.")
}

// gaussStep reports the M-step of the mean and covariance (or precision)
// of one MvNormal statement over a plate (runtime.GaussMStep, App. C).
func (r *report) gaussStep(s *derive.MStep, who string) {
	g := s.Gauss
	r.heading(3, who+": Gaussian mean and covariance (closed form, App. C)")
	n := derive.LaTeX(derive.SizeE(g.Unit.Size))
	d := derive.LaTeX(derive.IxE(g.Unit))
	x := derive.LaTeX(derive.T(g.Target.Name, derive.IxE(g.Unit)))
	latent := g.Target.Role == ir.RoleLatent
	ex, outer := x, x+" "+x+"^{\\top}"
	if latent {
		ex = derive.LaTeX(derive.T(g.Target.Name+".mean", derive.IxE(g.Unit)))
		outer = fmt.Sprintf("\\Sigma^{%s}_{%s} + %s %s^{\\top}", derive.LaTeX(derive.T(g.Target.Name)), d, ex, ex)
	}
	incl := ""
	if latent {
		incl = " (each unit's covariance included)"
	}
	r.para(fmt.Sprintf("The statement `%s` (`%s`; for `%s`) draws one vector per unit. Its expected log likelihood depends on $q$ only through ",
		r.statement(g.Stmt.Pos), g.Stmt.Pos, platesString(g.Stmt.Plates)) +
		"the number of units $" + n + "$, $\\sum_{" + d + "} " + ex + "$ and $\\sum_{" + d + "} \\mathbb{E}[" + x + " " + x + "^{\\top}] = \\sum_{" + d + "} (" + outer + ")$" +
		incl + ", so its maximum has a closed form:")
	mu := derive.LaTeX(derive.T(g.Mean.Name))
	cov := derive.LaTeX(derive.T(g.Cov.Name))
	sigma := cov // the covariance, estimated or not
	if g.Precision {
		sigma = cov + "^{-1}"
	}
	var items []string
	estMean, estCov := g.Mean.Role == ir.RoleParam, g.Cov.Role == ir.RoleParam
	if estMean {
		if g.MeanPrior == nil {
			r.para("The mean is the average of the expected vectors:")
			r.display(fmt.Sprintf("%s = \\frac{1}{%s} \\sum_{%s} %s", hat(mu), n, d, ex))
		} else {
			m, c := derive.LaTeX(derive.T(g.MeanPrior[0].Name)), derive.LaTeX(derive.T(g.MeanPrior[1].Name))
			lam := cov
			if !g.Precision {
				lam = cov + "^{-1}"
			}
			r.para(fmt.Sprintf("Under the prior $%s \\sim \\mathcal{N}(%s, %s)$ the mean is the MAP estimate:", mu, m, c))
			r.display(fmt.Sprintf("%s = \\left(%s\\, %s + %s^{-1}\\right)^{-1} \\left(%s \\sum_{%s} %s + %s^{-1} %s\\right)", hat(mu), n, lam, c, lam, d, ex, c, m))
		}
	}
	if estCov {
		mean := mu
		if estMean {
			mean = hat(mu)
		}
		scatter := "\\sum_{" + d + "} \\mathbb{E}\\left[(" + x + " - " + mean + ")(" + x + " - " + mean + ")^{\\top}\\right]"
		lhs := hat(sigma)
		if g.Precision {
			lhs = hat(cov) + "^{-1}"
		}
		if g.CovPrior == nil {
			r.para("The covariance is the expected scatter about the mean:")
			r.display(fmt.Sprintf("%s = \\frac{1}{%s} %s", lhs, n, scatter))
		} else {
			nu, w := derive.LaTeX(derive.T(g.CovPrior[0].Name)), derive.LaTeX(derive.T(g.CovPrior[1].Name))
			r.para(fmt.Sprintf("Under the prior $%s \\sim \\mathcal{W}(%s, %s)$ on the precision, the covariance is the MAP estimate:", cov, nu, w))
			r.display(fmt.Sprintf("%s = \\frac{%s^{-1} + %s}{%s + %s - %s - 1}", lhs, w, scatter, n, nu, derive.LaTeX(derive.SizeE(g.Dim))))
		}
		if g.Precision {
			items = append(items, fmt.Sprintf("The precision `%s` is the inverse of that covariance.", g.Cov.Name))
		}
		items = append(items, "`Options.Shrinkage` $\\in [0, 1]$ optionally pulls the estimate toward a scaled identity, "+
			"$(1 - \\rho)\\hat{\\Sigma} + \\rho\\, (\\operatorname{tr}\\hat{\\Sigma} / "+derive.LaTeX(derive.SizeE(g.Dim))+") I$ (0, none, by default).")
	}
	if estMean && estCov && g.MeanPrior != nil {
		items = append(items, "With both estimated under priors, the two depend on each other and are iterated to a fixed point.")
	}
	if !estMean {
		items = append(items, fmt.Sprintf("The mean `%s` is a const: its value in the data is used.", g.Mean.Name))
	}
	if !estCov {
		items = append(items, fmt.Sprintf("`%s` is a const: its value in the data is used.", g.Cov.Name))
	}
	r.list(items)
}

var subscripted = regexp.MustCompile(`^(\\[A-Za-z]+|[A-Za-z])(_\{.*\})$`)

// hat puts a hat on a symbol, over its base only: \hat{\mu}_{0}.
func hat(s string) string {
	if m := subscripted.FindStringSubmatch(s); m != nil {
		return "\\hat{" + m[1] + "}" + m[2]
	}
	return "\\hat{" + s + "}"
}

// latexIndices writes indices as subscripts.
func latexIndices(at []derive.Index) []string {
	out := make([]string, len(at))
	for k, i := range at {
		out[k] = derive.LaTeX(derive.IxE(i))
	}
	return out
}

func ixs(at []derive.Index) []derive.Expr {
	out := make([]derive.Expr, len(at))
	for k, i := range at {
		out[k] = derive.IxE(i)
	}
	return out
}

func firstDim(dims []string) string {
	if len(dims) == 0 {
		return ""
	}
	return dims[0]
}

// ---- shared pieces ----

// statements lists the statements an update is built from, quoted from
// the source with their positions and plates.
func (r *report) statements(fs []*ir.Factor) {
	var items []string
	for _, f := range fs {
		item := fmt.Sprintf("`%s` (`%s`", r.statement(f.Pos), f.Pos)
		if len(f.Plates) > 0 {
			item += fmt.Sprintf("; for `%s`", platesString(f.Plates))
		}
		items = append(items, item+")")
	}
	r.list(items)
}

// statement quotes the statement at pos from the source: from its start
// to the end of the line (or of its bracketed arguments), without a
// comment or a closing brace of an enclosing block.
func (r *report) statement(pos ir.Pos) string {
	if pos.Line < 1 || pos.Line > len(r.src) {
		return "?"
	}
	var sb strings.Builder
	depth := 0
	for l := pos.Line - 1; l < len(r.src); l++ {
		line := r.src[l]
		if l == pos.Line-1 {
			line = skipRunes(line, pos.Col-1)
		} else {
			sb.WriteByte(' ')
			line = strings.TrimSpace(line)
		}
		for _, c := range line {
			switch {
			case c == '#' || c == '}' && depth == 0:
				return strings.TrimSpace(sb.String())
			case c == '(' || c == '[':
				depth++
			case c == ')' || c == ']':
				depth--
			}
			sb.WriteRune(c)
		}
		if depth <= 0 {
			break
		}
	}
	return strings.TrimSpace(sb.String())
}

func skipRunes(s string, n int) string {
	for ; n > 0 && s != ""; n-- {
		_, size := utf8.DecodeRuneInString(s)
		s = s[size:]
	}
	return s
}

// expectations lists how an update took each expectation under q, as
// `vigen check` does (approxHow). rename maps derive's index names to the
// report's; none is the sentence for an update that takes none.
func (r *report) expectations(es []derive.Approx, rename map[string]string, none string) {
	if len(es) == 0 {
		r.para("**Expectations.** " + none)
		return
	}
	r.para("**Expectations** under $q$, and how each is taken:")
	var items []string
	for _, e := range es {
		items = append(items, fmt.Sprintf("`E_q[%s]`: %s", renameIndices(e.Term, rename), approxHow(e)))
	}
	r.list(items)
}

// niceIndices renames the indices an update is written at (derive's fresh
// i5, n2, ...) after the sizes they run over (k over K, n over a bag's
// entries), avoiding every index name the update's expressions use. It
// returns the new indices and the renaming.
func (r *report) niceIndices(u *derive.Update) ([]derive.Index, map[string]string) {
	used := map[string]bool{}
	var exprs []derive.Expr
	exprs = append(append(append(append(exprs, u.Params...), u.Natural...), u.Dropped...), u.Moments...)
	for _, e := range exprs {
		derive.Visit(e, func(x derive.Expr) {
			for _, i := range x.Free() {
				used[i.Name] = true
			}
			switch x := x.(type) {
			case *derive.SumNode:
				for _, i := range x.Idx {
					used[i.Name] = true
				}
			case *derive.MaxNode:
				for _, i := range x.Idx {
					used[i.Name] = true
				}
			}
		})
	}
	for _, i := range u.At {
		used[i.Name] = true
	}
	rename := map[string]string{}
	at := make([]derive.Index, len(u.At))
	for k, i := range u.At {
		at[k] = i
		if u.Unit != nil && i.Name == u.Unit.Name {
			continue
		}
		var cands []string
		if _, _, ok := i.Ragged(); ok {
			cands = []string{"n", "e"}
		} else if len(i.Size) == 1 && i.Size[0] >= 'A' && i.Size[0] <= 'Z' {
			cands = []string{strings.ToLower(i.Size)}
		}
		cands = append(cands, "i", "j", "l", "r", "s", "t")
		for _, c := range cands {
			if c == i.Name {
				break
			}
			if !used[c] {
				used[c] = true
				rename[i.Name] = c
				at[k] = derive.Index{Name: c, Size: i.Size, Plate: i.Plate}
				break
			}
		}
	}
	return at, rename
}

// renamedUpdate is u with its indices At renamed to at.
func renamedUpdate(u *derive.Update, at []derive.Index) *derive.Update {
	c := *u
	subst := func(es []derive.Expr) []derive.Expr {
		out := make([]derive.Expr, len(es))
		for k, e := range es {
			for j, i := range u.At {
				if at[j].Name != i.Name {
					e = derive.Subst(e, i, at[j])
				}
			}
			out[k] = e
		}
		return out
	}
	c.At = at
	c.Params, c.Natural, c.Dropped, c.Moments = subst(u.Params), subst(u.Natural), subst(u.Dropped), subst(u.Moments)
	return &c
}

var wordRE = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*'*`)

// renameIndices applies an index renaming to a term in text notation.
func renameIndices(term string, rename map[string]string) string {
	if len(rename) == 0 {
		return term
	}
	return wordRE.ReplaceAllStringFunc(term, func(w string) string {
		if n, ok := rename[w]; ok {
			return n
		}
		return w
	})
}

// ---- the two formats ----

// begin starts the document: a title naming the model and its file.
func (r *report) begin(m *ir.Model) {
	if !r.tex {
		fmt.Fprintf(&r.b, "# Derivation report: model `%s`\n\n", m.Name)
		return
	}
	r.b.WriteString(`\documentclass{article}
\usepackage{amsmath,amssymb}
\usepackage[margin=2cm]{geometry}
\allowdisplaybreaks
\setlength{\parindent}{0pt}
\setlength{\parskip}{0.6em}
`)
	fmt.Fprintf(&r.b, "\\title{Derivation report: model %s}\n\\author{\\texttt{vigen explain} %s}\n\\date{}\n\\begin{document}\n\\maketitle\n\\sloppy\n\n",
		r.inline("`"+m.Name+"`"), r.inline("`"+m.File+"`"))
}

func (r *report) end() {
	if r.tex {
		r.b.WriteString("\\end{document}\n")
	}
}

// heading starts a section (level 2) or subsection (level 3).
func (r *report) heading(level int, text string) {
	if !r.tex {
		fmt.Fprintf(&r.b, "%s %s\n\n", strings.Repeat("#", level), text)
		return
	}
	cmd := map[int]string{2: "section*", 3: "subsection*"}[level]
	fmt.Fprintf(&r.b, "\\%s{%s}\n\n", cmd, r.inline(text))
}

func (r *report) para(text string) {
	r.b.WriteString(r.inline(text))
	r.b.WriteString("\n\n")
}

func (r *report) list(items []string) {
	if len(items) == 0 {
		return
	}
	if r.tex {
		r.b.WriteString("\\begin{itemize}\n")
	}
	for _, it := range items {
		if r.tex {
			fmt.Fprintf(&r.b, "\\item %s\n", r.inline(it))
		} else {
			fmt.Fprintf(&r.b, "- %s\n", it)
		}
	}
	if r.tex {
		r.b.WriteString("\\end{itemize}\n")
	}
	r.b.WriteString("\n")
}

// code prints text verbatim (error messages); LaTeX gets it with long
// lines wrapped, as verbatim does not break them.
func (r *report) code(text string) {
	if r.tex {
		fmt.Fprintf(&r.b, "\\begin{verbatim}\n%s\n\\end{verbatim}\n\n", wrap(texASCII(text), 90))
		return
	}
	fmt.Fprintf(&r.b, "```\n%s\n```\n\n", text)
}

// lineWidth is the width, in characters of text (derive.LaTeXWidth), at
// which an equation is broken, and indent that of the indentation of its
// continuation lines.
const (
	lineWidth = 80
	indent    = 8
)

// equation prints "lhs rel e" as displayed math, broken where it is long
// between the pieces derive.LaTeXPieces cuts it into (the terms of sums);
// an empty lhs prints e alone.
func (r *report) equation(lhs, rel string, e derive.Expr) {
	head := lhs
	if lhs != "" {
		head += " " + rel
	}
	var lines []string
	cur, width := "", derive.LaTeXWidth(head)+2
	flush := func() {
		if cur != "" {
			lines = append(lines, cur)
			cur, width = "", indent
		}
	}
	add := func(piece string) {
		w := derive.LaTeXWidth(piece)
		if width+w > lineWidth {
			flush()
		}
		if cur != "" {
			cur += " "
		}
		cur += piece
		width += w
	}
	// A term goes on the current line if it fits, else on the next; a term
	// wider than a line (or than the first line's room) is broken within,
	// and ends its last line.
	for _, pieces := range derive.LaTeXPieces(e, lineWidth-indent) {
		term := strings.Join(pieces, " ")
		w := derive.LaTeXWidth(term)
		if width+w <= lineWidth || cur != "" && indent+w <= lineWidth {
			add(term)
			continue
		}
		for _, piece := range pieces {
			add(piece)
		}
		flush()
	}
	flush()
	if len(lines) == 1 {
		r.display(strings.TrimSpace(head + " " + lines[0]))
		return
	}
	// LaTeX breaks align* between pages, Markdown renderers know aligned
	env := "aligned"
	if r.tex {
		env = "align*"
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "\\begin{%s}\n", env)
	for k, l := range lines {
		if k == 0 {
			fmt.Fprintf(&sb, "%s {}& %s", head, l)
		} else {
			fmt.Fprintf(&sb, " \\\\\n&\\quad %s", l)
		}
	}
	fmt.Fprintf(&sb, "\n\\end{%s}", env)
	if r.tex {
		r.b.WriteString(sb.String() + "\n\n")
		return
	}
	r.display(sb.String())
}

// display prints one displayed formula.
func (r *report) display(math string) {
	if r.tex {
		fmt.Fprintf(&r.b, "\\begin{equation*}\n%s\n\\end{equation*}\n\n", math)
		return
	}
	fmt.Fprintf(&r.b, "$$\n%s\n$$\n\n", math)
}

// inline translates the report's text markup for the output format:
// Markdown keeps it; LaTeX gets \texttt for `code`, \textbf for **bold**,
// \emph for *emphasis*, math as it is, and escaped text.
func (r *report) inline(text string) string {
	if !r.tex {
		return text
	}
	var sb strings.Builder
	for text != "" {
		switch {
		case text[0] == '`':
			end := strings.IndexByte(text[1:], '`')
			if end < 0 {
				end = len(text) - 1
			}
			sb.WriteString("\\texttt{" + texText(text[1:1+end]) + "}")
			text = text[min(len(text), end+2):]
		case text[0] == '$':
			end := strings.IndexByte(text[1:], '$')
			if end < 0 {
				end = len(text) - 1
			}
			sb.WriteString(text[:min(len(text), end+2)])
			text = text[min(len(text), end+2):]
		case strings.HasPrefix(text, "**"):
			end := strings.Index(text[2:], "**")
			if end < 0 {
				end = len(text) - 2
			}
			sb.WriteString("\\textbf{" + r.inline(text[2:2+end]) + "}")
			text = text[min(len(text), end+4):]
		case text[0] == '*':
			end := strings.IndexByte(text[1:], '*')
			if end < 0 {
				end = len(text) - 1
			}
			sb.WriteString("\\emph{" + r.inline(text[1:1+end]) + "}")
			text = text[min(len(text), end+2):]
		default:
			end := strings.IndexAny(text, "`$*")
			if end < 0 {
				end = len(text)
			}
			sb.WriteString(texText(text[:end]))
			text = text[end:]
		}
	}
	return sb.String()
}

// texText escapes text for LaTeX, writing the Unicode of derive's text
// notation (Σ, ·, −, δ, ...) in ASCII LaTeX.
var texText = strings.NewReplacer(
	`\`, `\textbackslash{}`, `{`, `\{`, `}`, `\}`, `_`, `\_`, `#`, `\#`, `%`, `\%`, `&`, `\&`,
	`$`, `\$`, `^`, `\^{}`, `~`, `\textasciitilde{}`, `"`, `''`, `<`, `\textless{}`, `>`, `\textgreater{}`,
	"—", "---", "–", "--", "Σ", `$\Sigma$`, "·", `$\cdot$`, "−", "-", "δ", `$\delta$`,
	"∇", `$\nabla$`, "²", `$^2$`, "⁻¹", `$^{-1}$`, "½", `$\frac{1}{2}$`, "θ", `$\theta$`, "μ", `$\mu$`,
	"α", `$\alpha$`, "η", `$\eta$`, "∂", `$\partial$`, "≥", `$\geq$`, "…", `\dots{}`, "ψ", `$\psi$`,
).Replace

// wrap breaks the lines of s longer than width at spaces, indenting the
// continuations.
func wrap(s string, width int) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		for len(line) > width {
			cut := strings.LastIndexByte(line[:width], ' ')
			if cut <= 8 {
				break
			}
			out = append(out, strings.TrimRight(line[:cut], " "))
			line = "        " + strings.TrimLeft(line[cut:], " ")
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// texASCII escapes nothing but replaces the non-ASCII characters of
// derive's messages, for verbatim blocks.
func texASCII(s string) string {
	s = strings.NewReplacer("Σ", "Sum", "·", "*", "−", "-", "δ", "delta", "—", "--", "…", "...").Replace(s)
	return strings.Map(func(c rune) rune {
		if c > 127 {
			return '?'
		}
		return c
	}, s)
}
