package derive

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/golden"
	"github.com/vigen-go/vigen/spec"
)

// Hand-built expressions and the exact LaTeX they print as.
func TestLaTeXExamples(t *testing.T) {
	n := Index{Name: "n", Size: "N", Plate: true}
	p := Index{Name: "p", Size: "P"}
	i := Index{Name: "i3", Size: "P"}
	a := Index{Name: "a", Size: "P"}
	b := Index{Name: "b", Size: "P"}
	d := Index{Name: "d", Size: "D", Plate: true}
	e := Index{Name: "n", Size: RaggedSize("w", d), Plate: true}
	k := Index{Name: "k", Size: "K"}
	m := Index{Name: "m", Size: "M", Plate: true}
	g := Index{Name: "n", Size: RaggedSize(GroupRows("group"), m), Plate: true}
	u := Sum([]Index{i}, Mul(T("theta", IxE(i)), T("x", IxE(n), IxE(i))))
	cases := []struct {
		e    Expr
		want string
	}{
		{T("x", IxE(n), IxE(p)), `x_{n,p}`},
		{T("mu0", IxE(i)), `(\mu_{0})_{i_{3}}`},
		{TSym("Sigma0.inv", IxE(a), IxE(b)), `\left(\Sigma_{0}^{-1}\right)_{a,b}`},
		{T("Sigma0.logdet"), `\log\lvert \Sigma_{0}\rvert`},
		{TSym(CovTensor("theta"), IxE(a), IxE(b)), `\Sigma^{\theta}_{a,b}`},
		{T("z.elog", IxE(d), IxE(k)), `\mathbb{E}[\log z_{d,k}]`},
		{Mul(N(-0.5), SizeE("K")), `-\tfrac{1}{2}\, K`},
		{Mul(N(-0.5*log2Pi), SizeE("P")), `-\tfrac{1}{2}\log 2\pi \cdot P`},
		{Dlt(a, b), `\delta_{a b}`},
		{IDlt(TInt("z", IxE(n)), IxE(k)), `\delta_{z_{n}, k}`},
		{CallE(MustPrim("eq"), TInt("z", IxE(n)), TInt("y", IxE(n))), `\mathbf{1}\left[z_{n} = y_{n}\right]`},
		{Call1("lgamma", T("alpha")), `\log\Gamma(\alpha)`},
		{Call1("digamma", Add(T("alpha"), N(1))), `\psi\left(\alpha + 1\right)`},
		{Call1("sqrt", T("s2")), `\sqrt{s_{2}}`},
		{Pow(T("x", IxE(n)), N(2)), `x_{n}^{2}`},
		{Pow(TSym(CovTensor("theta"), IxE(a), IxE(a)), N(3)), `{\Sigma^{\theta}_{a,a}}^{3}`},
		{Div(T("x"), Add(T("y"), N(1))), `\frac{x}{y + 1}`},
		{Mul(N(2), Pow(T("y"), N(-2))), `\frac{2}{y^{2}}`},
		{Mul(Call1("exp", T("u")), Call1("exp", T("u")), T("c")), `c \cdot \exp(u)^{2}`},
		{Sum([]Index{n}, Sub(Mul(T("y", IxE(n)), u), Call1("softplus", u))),
			`-\sum_{n} \operatorname{softplus}\left(\sum_{i_{3}} \theta_{i_{3}} \cdot x_{n,i_{3}}\right) + \sum_{n, i_{3}} \theta_{i_{3}} \cdot x_{n,i_{3}} \cdot y_{n}`},
		// a negated sum keeps its parentheses
		{Add(SizeE("N"), Neg(Add(T("b"), Call1("exp", T("c"))))), `N - \left(b + \exp(c)\right)`},
		{Neg(Sum([]Index{n}, Call1("logistic", T("x", IxE(n))))), `-\sum_{n} \sigma(x_{n})`},
		{Sum([]Index{e}, Mul(T("w.count", IxE(e)), T("z.prob", IxE(e), IxE(k)))), `\sum_{n \in w_{d}} c^{w}_{n} \cdot \phi^{z}_{n,k}`},
		{Sum([]Index{g}, T("x", TInt(GroupRows("group"), IxE(g)), IxE(p))), `\sum_{n:\, \mathrm{group}_{n} = m} x_{n,p}`},
		{Max([]Index{k}, T("theta", IxE(k))), `\max_{k} \theta_{k}`},
		{Sum([]Index{Index{Name: "i2'", Size: "P"}}, T("my_var", IxE(Index{Name: "i2'", Size: "P"}))), `\sum_{i_{2}'} \mathrm{my\_var}_{i_{2}'}`},
	}
	for _, c := range cases {
		if got := LaTeX(c.e); got != c.want {
			t.Errorf("LaTeX(%s)\n got  %s\n want %s", String(c.e), got, c.want)
		}
	}
}

// LaTeXPieces cuts between the terms of the top-level sum, and within a
// term only where it is wider than asked, with parentheses that may span
// lines.
func TestLaTeXPieces(t *testing.T) {
	n := Index{Name: "n", Size: "N", Plate: true}
	e := Add(T("a"), Neg(Sum([]Index{n}, T("x", IxE(n)))), T("c"))
	want := [][]string{{`a`}, {`+ c`}, {`- \sum_{n} x_{n}`}}
	if got := LaTeXPieces(e, 0); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("LaTeXPieces(%s, 0) = %q, want %q", String(e), got, want)
	}
	long := Add(Call1("exp", T("alpha")), Call1("exp", T("beta")), Call1("exp", T("gamma")))
	e = Add(T("a"), Mul(T("y"), long))
	if got, want := LaTeXPieces(e, 100), [][]string{{`\left(\exp(\alpha) + \exp(\beta) + \exp(\gamma)\right) \cdot y`}, {`+ a`}}; !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("LaTeXPieces(%s, 100) = %q, want %q", String(e), got, want)
	}
	want = [][]string{{`\Biggl(\exp(\alpha)`, `+ \exp(\beta)`, `+ \exp(\gamma)\Biggr)`, `\cdot y`}, {`+ a`}}
	if got := LaTeXPieces(e, 10); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("LaTeXPieces(%s, 10) = %q, want %q", String(e), got, want)
	}
}

func TestLaTeXIdentifiersAndNumbers(t *testing.T) {
	for name, want := range map[string]string{
		"theta": `\theta`, "mu0": `\mu_{0}`, "Sigma0": `\Sigma_{0}`, "Lambda0": `\Lambda_{0}`,
		"beta12": `\beta_{12}`, "x": `x`, "K": `K`, "x1": `x_{1}`, "zero": `\mathrm{zero}`,
		"my_var": `\mathrm{my\_var}`, "Alpha": `\mathrm{Alpha}`, "group": `\mathrm{group}`,
	} {
		if got := latexIdentOf(name).String(); got != want {
			t.Errorf("identifier %s: got %s, want %s", name, got, want)
		}
	}
	for v, want := range map[float64]string{
		3: "3", 0.5: `\tfrac{1}{2}`, 1.5: `\tfrac{3}{2}`, 0.1: "0.1", 0.2 * 0.2 * 0.2: "0.008",
		1e-8: `1 \times 10^{-8}`, 0.5 * log2Pi: `\tfrac{1}{2}\log 2\pi`, 2.0 / 9: `\tfrac{2}{9}`,
	} {
		if got := latexNumber(v); got != want {
			t.Errorf("number %v: got %s, want %s", v, got, want)
		}
	}
}

// Every primitive has a LaTeX form: a layout in latexCalls, pow's own, or
// its Prim.Latex name; none prints under its Go-ish name.
func TestLaTeXCoversPrimitives(t *testing.T) {
	for _, name := range PrimNames() {
		p := MustPrim(name)
		_, laid := latexCalls[name]
		if !laid && name != "pow" && p.Latex == "" {
			t.Errorf("primitive %s has no LaTeX form (give it a Latex name or a latexCalls layout)", name)
			continue
		}
		args := []Expr{T("x"), T("y")}[:p.Arity]
		s := LaTeX(&Call{base: base{key: name}, Prim: p, Args: args})
		if strings.Contains(latexCommandArg.ReplaceAllString(s, ""), name) {
			t.Errorf("primitive %s prints as %s", name, s)
		}
		checkLaTeX(t, name, s)
	}
	for name := range latexCalls {
		if _, ok := LookupPrim(name); !ok {
			t.Errorf("latexCalls lays out %s, which is not a primitive", name)
		}
	}
}

// Every expression of every derivation of the model corpus (the examples
// and testdata/corpus) prints as well-formed LaTeX with no trace of the
// text notation.
func TestLaTeXCorpus(t *testing.T) {
	golden.SlowTier(t)
	files, _ := filepath.Glob(filepath.Join("testdata", "corpus", "*.vi"))
	examples, _ := filepath.Glob(filepath.Join("..", "examples", "*", "*.vi"))
	if len(files) < 50 || len(examples) < 5 {
		t.Fatalf("found %d corpus models and %d examples", len(files), len(examples))
	}
	count := 0
	for _, f := range append(files, examples...) {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m, err := spec.Load(filepath.Base(f), src)
		if err != nil {
			t.Fatal(err)
		}
		d, err := Derive(m)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, e := range derivationExprs(d) {
			s := LaTeX(e)
			checkLaTeX(t, f+": "+String(e), s)
			for _, width := range []int{0, 40} {
				var pieces []string
				for _, term := range LaTeXPieces(e, width) {
					for _, p := range term {
						checkPiece(t, f, p)
					}
					pieces = append(pieces, term...)
				}
				joined := strings.Join(pieces, " ")
				checkLaTeX(t, f+": pieces of "+String(e), joined)
				if width == 0 && joined != s {
					// cut only between the terms of the top-level sum
					t.Errorf("%s: the pieces of\n%s\njoin to\n%s", f, s, joined)
				}
			}
			count++
		}
		for _, g := range LaTeXGlossary(derivationExprs(d)...) {
			checkLaTeX(t, f+": glossary", g)
		}
	}
	t.Logf("%d expressions", count)
}

// derivationExprs lists every expression a derivation holds.
func derivationExprs(d *Derivation) []Expr {
	var out []Expr
	obj := func(o *Objective) {
		out = append(out, o.F, o.Grad, o.Hess, o.Trace(), o.TraceGrad())
		if c := o.Collapsed; c != nil {
			out = append(out, c.F, c.Grad, c.Hess)
		}
	}
	for _, o := range d.Objectives {
		obj(o)
	}
	upd := func(u *Update) {
		out = append(append(append(append(out, u.Params...), u.Natural...), u.Dropped...), u.Moments...)
	}
	for _, u := range d.Updates {
		upd(u)
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
	if b, _ := d.Bound(); b != nil {
		out = append(out, b.Local, b.Global)
	}
	return out
}

var (
	latexCommandArg = regexp.MustCompile(`\\[A-Za-z]+(\{[^{}]*\})?`) // \exp, \operatorname{softplus}
	rawIndexing     = regexp.MustCompile(`[A-Za-z0-9]\[`)            // x[n] (\mathbb{E}[ and \left[ are fine)
	dottedName      = regexp.MustCompile(`[A-Za-z0-9]\.[A-Za-z]`)
)

// checkPiece fails unless a piece of a broken equation can stand on its
// own line: balanced braces and \left/\right pairs.
func checkPiece(t *testing.T, what, s string) {
	t.Helper()
	if d := braceDepth(s); d != 0 {
		t.Errorf("%s: piece with unbalanced braces: %s", what, s)
	}
	if strings.Count(s, `\left`) != strings.Count(s, `\right`) {
		t.Errorf("%s: piece with unbalanced \\left/\\right: %s", what, s)
	}
	if s == "" {
		t.Errorf("%s: empty piece", what)
	}
}

// braceDepth is the number of { left open at the end of s (negative if a }
// closes nothing), escaped braces aside.
func braceDepth(s string) int {
	depth := 0
	for k := 0; k < len(s); k++ {
		switch c := s[k]; {
		case c == '\\' && k+1 < len(s) && strings.ContainsRune(`{}[]()|`, rune(s[k+1])):
			k++ // an escaped or literal delimiter
		case c == '{':
			depth++
		case c == '}':
			depth--
		}
		if depth < 0 {
			return depth
		}
	}
	return depth
}

// checkLaTeX fails unless s is balanced and free of the text notation.
func checkLaTeX(t *testing.T, what, s string) {
	t.Helper()
	depth := braceDepth(s)
	left := strings.Count(s, `\left`) - strings.Count(s, `\right`)
	switch {
	case depth != 0:
		t.Errorf("%s: unbalanced braces in %s", what, s)
	case left != 0:
		t.Errorf("%s: unbalanced \\left/\\right in %s", what, s)
	case strings.Count(s, "(") != strings.Count(s, ")") || strings.Count(s, "[") != strings.Count(s, "]"):
		t.Errorf("%s: unbalanced parentheses or brackets in %s", what, s)
	case rawIndexing.MatchString(strings.ReplaceAll(s, `\left[`, "")):
		t.Errorf("%s: raw [-indexing in %s", what, s)
	case dottedName.MatchString(s) && !strings.Contains(s, "$"):
		t.Errorf("%s: a dotted tensor name in %s", what, s)
	case strings.ContainsAny(s, "#"):
		t.Errorf("%s: a size marker # in %s", what, s)
	}
	for _, r := range s {
		if r > 127 {
			t.Errorf("%s: non-ASCII %q (Σ, δ, · or −?) in %s", what, r, s)
			break
		}
	}
}
