package derive

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// This file prints expressions in LaTeX (amsmath, amssymb), for derivation
// reports such as `vigen explain`. It mirrors String's precedence handling
// and is driven by three tables: how primitives are laid out (latexCalls,
// with Prim.Latex naming the rest), which identifiers are Greek letters
// (latexGreek), and how the tensors derive makes up for variational
// parameters, moments and auxiliary quantities are written (latexSuffixes).
//
// Tensor elements are subscripts (x[n,p] is x_{n,p}; a name's trailing
// digits are a subscript too, so mu0[i] is (\mu_{0})_{i}), Σ_n is \sum_{n},
// a sum over the entries of a bag document is \sum_{n \in w_{d}}, δ(a,b) is
// \delta_{a b}, and factors x^(-k) of a product go to the denominator of a
// \frac.

// LaTeX prints e in LaTeX math notation, e.g.
// `-\sum_{n} \operatorname{softplus}\left(\sum_{i} \theta_{i} \cdot x_{n,i}\right)`.
// The result is meant for math mode and uses only ASCII.
func LaTeX(e Expr) string {
	var p latexPrinter
	p.write(e, 0)
	return p.String()
}

// LaTeXPieces prints e like LaTeX, cut where a displayed equation may
// break its line (amsmath's aligned): between the terms of e's top-level
// sum, one slice of pieces per term, the terms after the first starting
// with their operator; and within a term, between the terms of every
// parenthesized sum and the factors of every product wider than width
// (LaTeXWidth), a factor starting with \cdot. Parentheses around content
// that wide are \Biggl( and \Biggr) rather than \left( and \right), so that
// they may span lines. Every piece has balanced braces and \left/\right
// pairs. A width of 0 cuts only between terms.
func LaTeXPieces(e Expr, width int) [][]string {
	p := latexPrinter{wide: width, cut: true}
	p.write(e, 0)
	var terms [][]string
	var pieces []string
	depth, start := 0, 0
	s := p.String()
	for k := 0; k < len(s); k++ {
		switch {
		case s[k] == '\\' && k+1 < len(s) && (s[k+1] == '{' || s[k+1] == '}'):
			k++
		case s[k] == '{':
			depth++
		case s[k] == '}':
			depth--
		case strings.HasPrefix(s[k:], `\left`):
			depth++
		case strings.HasPrefix(s[k:], `\right`):
			depth--
		case (s[k] == latexCutTerm || s[k] == latexCut) && depth == 0:
			pieces = append(pieces, latexUncut(s[start:k]))
			if s[k] == latexCutTerm {
				terms, pieces = append(terms, pieces), nil
			}
			start = k + 1
		}
	}
	return append(terms, append(pieces, latexUncut(s[start:])))
}

func latexUncut(s string) string {
	return strings.TrimSpace(strings.NewReplacer(string(latexCutTerm), "", string(latexCut), "").Replace(s))
}

// LaTeXWidth estimates how wide the formula s is typeset, in characters of
// text: a command counts as one symbol (\cdot as two, and the ones that
// only size or style what follows as none), a sub- or superscript as half
// its length, and the space around a binary + or - as one more.
func LaTeXWidth(s string) int {
	scripts := 0
	for _, m := range latexScript.FindAllString(s, -1) {
		scripts += len(m) / 2
	}
	s = latexScript.ReplaceAllString(s, "")
	s = latexCommand.ReplaceAllStringFunc(s, func(c string) string {
		switch c {
		case `\left`, `\right`, `\Biggl`, `\Biggr`, `\tfrac`, `\frac`, `\mathrm`, `\mathbb`, `\mathbf`, `\operatorname`:
			return ""
		case `\cdot`:
			return "xx"
		}
		return "x"
	})
	s = strings.NewReplacer("{", "", "}", "", " ", "").Replace(s)
	return len(s) + scripts + strings.Count(s, "+") + strings.Count(s, "-")
}

var (
	latexCommand = regexp.MustCompile(`\\[A-Za-z]+`)
	latexScript  = regexp.MustCompile(`[_^]\{[^{}]*\}`)
)

// latexCutTerm and latexCut mark, in the printer's output, where
// LaTeXPieces may cut: between terms of the top-level sum, and within them.
const (
	latexCutTerm = '\x00'
	latexCut     = '\x01'
)

// LaTeXGlossary explains the notation of the made-up tensors and sums that
// occur in es (the covariance of a Gaussian factor, the probabilities of a
// categorical one, the counts of a bag, ...), one sentence each with
// inline math in $…$, in a deterministic order (by symbol).
func LaTeXGlossary(es ...Expr) []string {
	seen := map[string]string{}
	note := func(key, text string) {
		if text != "" {
			seen[key] = text
		}
	}
	for _, e := range es {
		Visit(e, func(x Expr) {
			switch x := x.(type) {
			case *Tensor:
				v, suffix, ok := strings.Cut(x.Name, ".")
				if !ok || strings.HasPrefix(x.Name, "#") {
					return
				}
				if s, ok := latexSuffixes[suffix]; ok && s.doc != nil {
					note(x.Name, s.doc(latexIdentOf(v)))
				}
			case *SumNode:
				for _, i := range x.Idx {
					if bag, parent, ok := i.Ragged(); ok {
						note("@"+i.Size, raggedDoc(i, bag, parent))
					}
				}
			}
		})
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []string
	for _, key := range keys {
		if text := seen[key]; !slices.Contains(out, text) {
			out = append(out, text)
		}
	}
	return out
}

// ---- tables ----

// latexCalls lays out the primitives whose notation is not their name
// followed by their arguments in parentheses: #1 and #2 stand for the
// arguments. Every other primitive prints as its Prim.Latex name (\exp,
// \log, \psi, \sigma, \operatorname{softplus}, ...) applied to them, and
// pow, whose layout depends on its exponent, is latexPrinter.pow.
var latexCalls = map[string]string{
	"sqrt": `\sqrt{#1}`,
	// group(x) is x, a product kept as one factor
	"group": `\left(#1\right)`,
	// eq(x, y) is the indicator that two integer values are equal
	"eq": `\mathbf{1}\left[#1 = #2\right]`,
	// le(x, y) is the step [x ≤ y] of two integer values
	"le": `\mathbf{1}\left[#1 \le #2\right]`,
}

// latexGreek maps the identifiers written as Greek letters to their LaTeX
// commands (capitals only where LaTeX has a distinct letter).
var latexGreek = map[string]string{
	"alpha": `\alpha`, "beta": `\beta`, "gamma": `\gamma`, "delta": `\delta`,
	"epsilon": `\epsilon`, "varepsilon": `\varepsilon`, "zeta": `\zeta`, "eta": `\eta`,
	"theta": `\theta`, "vartheta": `\vartheta`, "iota": `\iota`, "kappa": `\kappa`,
	"lambda": `\lambda`, "mu": `\mu`, "nu": `\nu`, "xi": `\xi`, "pi": `\pi`,
	"rho": `\rho`, "sigma": `\sigma`, "tau": `\tau`, "upsilon": `\upsilon`,
	"phi": `\phi`, "varphi": `\varphi`, "chi": `\chi`, "psi": `\psi`, "omega": `\omega`,
	"Gamma": `\Gamma`, "Delta": `\Delta`, "Theta": `\Theta`, "Lambda": `\Lambda`,
	"Xi": `\Xi`, "Pi": `\Pi`, "Sigma": `\Sigma`, "Upsilon": `\Upsilon`,
	"Phi": `\Phi`, "Psi": `\Psi`, "Omega": `\Omega`,
}

// latexSuffix is how a tensor v.suffix that derive makes up is written:
// form prints it with the identifier v and its element's subscript idx (""
// for none); safe says the result can take a superscript as it is
// (otherwise a power braces it); doc, if set, explains it for a glossary.
type latexSuffix struct {
	form func(v latexIdent, idx string) string
	safe bool
	doc  func(v latexIdent) string
}

// latexSuffixes is keyed by the part of a tensor's name after the dot: the
// parameters and moments of variational factors (QFactor, TableQ), the
// inverses and log-determinants of matrices (Aux), and bag entries.
var latexSuffixes = map[string]latexSuffix{
	"": {form: func(v latexIdent, idx string) string { return v.sub(idx) }, safe: true},
	"inv": {form: func(v latexIdent, idx string) string {
		if idx == "" {
			return v.String() + "^{-1}"
		}
		return `\left(` + v.String() + `^{-1}\right)_{` + idx + "}"
	}, safe: true},
	"logdet": {form: func(v latexIdent, idx string) string { return `\log\lvert ` + v.String() + `\rvert` }},
	"mean": {form: func(v latexIdent, idx string) string { return `\mathbb{E}[` + v.sub(idx) + "]" }, safe: true,
		doc: docf(`$\mathbb{E}[%s]$ is the mean of $%[1]s$ under its variational factor $q(%[1]s)$.`)},
	"cov": {form: supForm(`\Sigma`), doc: docf(`$\Sigma^{%s}$ is the covariance of the Gaussian factor $q(%[1]s)$.`)},
	"prob": {form: supForm(`\phi`),
		doc: docf(`$\phi^{%s}$ are the probabilities of the categorical factor $q(%[1]s)$.`)},
	"param": {form: supForm(`\lambda`),
		doc: docf(`$\lambda^{%s}$ are the parameters of the Dirichlet factor $q(%[1]s)$.`)},
	"shape": {form: supForm("a"), doc: docf(`$a^{%s}$ is the shape of the factor $q(%[1]s)$.`)},
	"rate":  {form: supForm("b"), doc: docf(`$b^{%s}$ is the rate of the factor $q(%[1]s)$.`)},
	"scale": {form: supForm("b"), doc: docf(`$b^{%s}$ is the scale of the factor $q(%[1]s)$.`)},
	"a":     {form: supForm("a"), doc: docf(`$a^{%s}, b^{%[1]s}$ are the shapes of the Beta factor $q(%[1]s)$.`)},
	"b":     {form: supForm("b"), doc: docf(`$a^{%s}, b^{%[1]s}$ are the shapes of the Beta factor $q(%[1]s)$.`)},
	"sd":    {form: supForm("s"), doc: docf(`$s^{%s}$ is the standard deviation of the Normal factor $q(%[1]s)$.`)},
	"elog": {form: func(v latexIdent, idx string) string { return `\mathbb{E}[\log ` + v.sub(idx) + "]" }, safe: true,
		doc: docf(`$\mathbb{E}[\log %s]$ is taken under $q(%[1]s)$, from its parameters.`)},
	"elog1m": {form: func(v latexIdent, idx string) string { return `\mathbb{E}[\log(1 - ` + v.sub(idx) + ")]" }, safe: true,
		doc: docf(`$\mathbb{E}[\log(1 - %s)]$ is taken under $q(%[1]s)$, from its parameters.`)},
	"einv": {form: func(v latexIdent, idx string) string { return `\mathbb{E}[` + v.sub(idx) + "^{-1}]" }, safe: true,
		doc: docf(`$\mathbb{E}[%s^{-1}]$ is taken under $q(%[1]s)$, from its parameters.`)},
	"esq": {form: func(v latexIdent, idx string) string { return `\mathbb{E}[` + v.sub(idx) + "^{2}]" }, safe: true,
		doc: docf(`$\mathbb{E}[%s^{2}]$ is taken under $q(%[1]s)$, from its parameters.`)},
	"count": {form: supForm("c"),
		doc: docf(`$c^{%s}_{n}$ is the count of entry $n$ of the bag $%[1]s$: its term occurs that many times in the document.`)},
	"term": {form: func(v latexIdent, idx string) string { return v.sub(idx) }, safe: true,
		doc: func(v latexIdent) string {
			return fmt.Sprintf(`$%s$ is the term of entry $n$ of the bag $%s$.`, v.sub("n"), v)
		}},
	// Unit m's data points are listed one after the other (group.go);
	// inside the unit, listed point rows[n] is written n itself, and the
	// sum over the list as the sum over the unit's points (raggedDoc).
	"rows": {form: func(v latexIdent, idx string) string {
		if idx == "" {
			return v.String()
		}
		return idx
	}, safe: true},
}

// docf is a glossary entry with the variable for %s.
func docf(format string) func(v latexIdent) string {
	return func(v latexIdent) string { return fmt.Sprintf(format, v.String()) }
}

// supForm writes a made-up tensor as sym with the variable as superscript.
func supForm(sym string) func(v latexIdent, idx string) string {
	return func(v latexIdent, idx string) string {
		s := sym + "^{" + v.String() + "}"
		if idx != "" {
			s += "_{" + idx + "}"
		}
		return s
	}
}

// latexConstants are the irrational constants recognized in numbers.
var latexConstants = []struct {
	v   float64
	tex string
}{
	{math.Pi, `\pi`},
	{log2Pi, `\log 2\pi`},
	{0.5 * log2Pi, `\tfrac{1}{2}\log 2\pi`},
	{math.Ln2, `\log 2`},
	{0.5 * math.Ln2, `\tfrac{1}{2}\log 2`},
	{math.Log(math.Pi), `\log\pi`},
	{0.5 * math.Log(math.Pi), `\tfrac{1}{2}\log\pi`},
	{eulerGamma, `\gamma`},
}

// latexDenominators are the denominators of the fractions numbers are
// written as (others print as decimals).
var latexDenominators = []float64{2, 3, 4, 6, 8, 9}

// ---- identifiers ----

// latexIdent is an identifier in mathematical notation: a base (x, \theta,
// \mathrm{zero}) and the subscript its trailing digits give ("0" in mu0).
type latexIdent struct{ base, subscript string }

func (v latexIdent) String() string { return v.sub("") }

// sub writes v with the subscript idx; an identifier with a subscript of
// its own is parenthesized first: mu0 with "i" is (\mu_{0})_{i}.
func (v latexIdent) sub(idx string) string {
	switch {
	case idx == "":
		if v.subscript == "" {
			return v.base
		}
		return v.base + "_{" + v.subscript + "}"
	case v.subscript != "":
		return "(" + v.String() + ")_{" + idx + "}"
	}
	return v.base + "_{" + idx + "}"
}

// latexIdentOf writes a model identifier: Greek names as letters, a single
// letter as itself, other names upright (\mathrm); trailing digits are a
// subscript (Sigma0 is \Sigma_{0}, x1 is x_{1}).
func latexIdentOf(name string) latexIdent {
	stem := strings.TrimRight(name, "0123456789")
	digits := name[len(stem):]
	if stem == "" || strings.ContainsRune(stem, '_') || !isLetters(stem) {
		stem, digits = name, ""
	}
	if g, ok := latexGreek[stem]; ok {
		return latexIdent{g, digits}
	}
	if len(stem) == 1 && isLetters(stem) {
		return latexIdent{stem, digits}
	}
	return latexIdent{`\mathrm{` + latexEscape(stem) + "}", digits}
}

func isLetters(s string) bool {
	for _, r := range s {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') {
			return false
		}
	}
	return s != ""
}

// latexEscape escapes the characters of a name that are special in LaTeX.
func latexEscape(s string) string {
	return strings.NewReplacer(`_`, `\_`, `#`, `\#`, `$`, `\$`, `%`, `\%`, `&`, `\&`, `{`, `\{`, `}`, `\}`).Replace(s)
}

// latexIndex writes an index name: i3 is i_{3}, and the primes derive adds
// to keep bound indices apart stay primes (i2' is i_{2}').
func latexIndex(name string) string {
	stem := strings.TrimRight(name, "'")
	return latexIdentOf(stem).String() + name[len(stem):]
}

// latexSumIndex writes the range of one summation index: the index itself,
// or for an index over the entries of a bag document "n \in w_{d}" (ragged
// reports true), or over the points of a unit "n :\, g_{n} = m".
func latexSumIndex(i Index) (string, bool) {
	bag, parent, ok := i.Ragged()
	if !ok {
		return latexIndex(i.Name), false
	}
	n, d := latexIndex(i.Name), latexIndex(parent.Name)
	if g, ok := strings.CutSuffix(bag, ".rows"); ok {
		return n + `:\, ` + latexIdentOf(g).sub(n) + " = " + d, true
	}
	return n + ` \in ` + latexIdentOf(bag).sub(d), true
}

// raggedDoc explains the sum over a ragged index, for LaTeXGlossary.
func raggedDoc(i Index, bag string, parent Index) string {
	r, _ := latexSumIndex(i)
	d := latexIndex(parent.Name)
	if g, ok := strings.CutSuffix(bag, ".rows"); ok {
		return fmt.Sprintf(`$\sum_{%s}$ runs over the data points $%s$ of unit $%s$, those with $%s = %s$.`, r, latexIndex(i.Name), d, latexIdentOf(g).sub(latexIndex(i.Name)), d)
	}
	return fmt.Sprintf(`$\sum_{%s}$ runs over the entries of document $%s$ of the bag $%s$.`, r, d, latexIdentOf(bag).String())
}

// ---- numbers ----

// latexNumber writes a non-negative number: an integer, a constant of
// latexConstants, a simple fraction, or else a decimal with 12 significant
// digits (the rounding of derive's constant folding is not shown).
func latexNumber(v float64) string {
	close := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }
	if r := math.Round(v); close(v, r) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(r, 'f', -1, 64)
	}
	for _, c := range latexConstants {
		if close(v, c.v) {
			return c.tex
		}
	}
	for _, d := range latexDenominators {
		if n := math.Round(v * d); close(v*d, n) && n < 100 {
			return fmt.Sprintf(`\tfrac{%d}{%d}`, int(n), int(d))
		}
	}
	s := strconv.FormatFloat(v, 'g', 12, 64)
	if m, exp, ok := strings.Cut(s, "e"); ok {
		e, _ := strconv.Atoi(exp)
		return m + ` \times 10^{` + strconv.Itoa(e) + "}"
	}
	return s
}

// ---- the printer ----

// latexPrinter prints expressions. With cut set it marks where
// LaTeXPieces may cut (latexCut): before each term of the top-level sum
// and of a parenthesized sum wider than wide.
type latexPrinter struct {
	strings.Builder
	wide int
	cut  bool
}

// isWide reports whether e, printed at ctx, is wider than p.wide.
func (p *latexPrinter) isWide(e Expr, ctx int) bool {
	if !p.cut || p.wide <= 0 {
		return false
	}
	var q latexPrinter
	q.write(e, ctx)
	return LaTeXWidth(q.String()) > p.wide
}

// open and shut print the parentheses around e: sized ones, or for wide
// content fixed-size ones that may span lines.
func (p *latexPrinter) open(wide bool) {
	if wide {
		p.s(`\Biggl(`)
	} else {
		p.s(`\left(`)
	}
}

func (p *latexPrinter) shut(wide bool) {
	if wide {
		p.s(`\Biggr)`)
	} else {
		p.s(`\right)`)
	}
}

func (p *latexPrinter) s(s string) { p.WriteString(s) }

// write prints e at precedence ctx, as String does: 0 top, 1 term of a
// sum, 2 factor of a product, 3 atom (base of a power).
func (p *latexPrinter) write(e Expr, ctx int) {
	switch e := e.(type) {
	case *Num:
		if e.V < 0 {
			if ctx > 1 {
				p.s(`\left(-` + latexNumber(-e.V) + `\right)`)
				return
			}
			p.s("-" + latexNumber(-e.V))
			return
		}
		p.s(latexNumber(e.V))
	case *Ix:
		p.s(latexIndex(e.I.Name))
	case *Shift:
		p.s(latexIndex(e.I.Name) + fmt.Sprintf("%+d", e.Off))
	case *Delta:
		p.s(`\delta_{` + latexIndex(e.A.Name) + " " + latexIndex(e.B.Name) + "}")
	case *IDelta:
		p.s(`\delta_{`)
		p.write(e.X, 0)
		p.s(", " + latexIndex(e.I.Name) + "}")
	case *Tensor:
		s, _ := p.tensor(e)
		p.s(s)
	case *Call:
		if e.Prim.Name == "pow" {
			p.pow(e.Args)
			return
		}
		if lay, ok := latexCalls[e.Prim.Name]; ok {
			p.layout(lay, e.Args)
			return
		}
		// plain parentheses around plain arguments, sized ones otherwise
		plain, wide := true, false
		for _, a := range e.Args {
			plain = plain && latexPlain(a)
			wide = wide || p.isWide(a, 0)
		}
		p.s(e.Prim.Latex)
		if plain {
			p.s("(")
		} else {
			p.open(wide)
		}
		for k, a := range e.Args {
			if k > 0 {
				p.s(", ")
			}
			p.write(a, 0)
		}
		if plain {
			p.s(")")
		} else {
			p.shut(wide)
		}
	case *AddNode:
		wide := ctx > 1 && p.isWide(e, 0)
		if ctx > 1 {
			p.open(wide)
		}
		for k, t := range e.Terms {
			switch {
			case k == 0 || !p.cut:
			case ctx <= 1:
				p.WriteByte(latexCutTerm)
			case wide:
				p.WriteByte(latexCut)
			}
			p.term(t, k == 0)
		}
		if ctx > 1 {
			p.shut(wide)
		}
	case *MulNode:
		p.mul(e, ctx)
	case *SumNode:
		if scalarSum(e) {
			p.write(e.Body, ctx) // a scalar latent's read Σ_i mu[i]: mu
			return
		}
		wide := ctx > 1 && p.isWide(e, 1)
		if ctx > 1 {
			p.open(wide)
		}
		p.sums(e.Idx)
		p.s(" ")
		p.write(e.Body, 2)
		if ctx > 1 {
			p.shut(wide)
		}
	case *MaxNode:
		wide := ctx > 2 && p.isWide(e, 2)
		if ctx > 2 {
			p.open(wide)
		}
		p.s(`\max_{`)
		for k, i := range e.Idx {
			if k > 0 {
				p.s(", ")
			}
			p.s(latexIndex(i.Name))
		}
		p.s("} ")
		p.write(e.Body, 3)
		if ctx > 2 {
			p.shut(wide)
		}
	default:
		panic(fmt.Sprintf("derive: LaTeX of %T", e))
	}
}

// latexPlain reports whether e prints as one symbol with subscripts, which
// needs no sized parentheses.
func latexPlain(e Expr) bool {
	switch e := e.(type) {
	case *Tensor, *Ix, *Shift:
		return true
	case *Num:
		return e.V >= 0
	}
	return false
}

// term prints one term of a sum with its operator (none for the first).
func (p *latexPrinter) term(t Expr, first bool) {
	if !first {
		if c, _ := coefRest(t); c < 0 {
			p.s(" - ")
			t = scaleAny(-1, t)
		} else {
			p.s(" + ")
		}
	}
	ctx := 1
	if _, ok := t.(*AddNode); ok && !first {
		ctx = 2 // −(a + b): the negated term is itself a sum
	}
	p.write(t, ctx)
}

// sums prints the summation signs over idx: one \sum for each run of
// plain indices, one for each ragged index.
func (p *latexPrinter) sums(idx []Index) {
	var signs, run []string
	flush := func() {
		if len(run) > 0 {
			signs = append(signs, `\sum_{`+strings.Join(run, ", ")+"}")
			run = nil
		}
	}
	for _, i := range idx {
		if i.Size == ScalarSize {
			continue // a scalar latent's one element
		}
		s, ragged := latexSumIndex(i)
		if !ragged {
			run = append(run, s)
			continue
		}
		flush()
		signs = append(signs, `\sum_{`+s+"}")
	}
	flush()
	p.s(strings.Join(signs, " "))
}

// tensor writes an element of a tensor, and whether it can take a
// superscript as it is.
func (p *latexPrinter) tensor(t *Tensor) (string, bool) {
	if size, ok := strings.CutPrefix(t.Name, "#"); ok {
		if whole, lo, hi, ok := SizeRange(size); ok {
			// the number of values of a loop over part of a size
			return fmt.Sprintf(`(%s %s %d)`, latexIdentOf(whole), map[bool]string{true: "+", false: "-"}[hi-lo > 0], abs(hi-lo)), false
		}
		return latexIdentOf(size).String(), true
	}
	name, shift, _ := Shifted(t.Name)
	var idx []string
	for k, x := range t.Idx {
		if scalarIx(x) {
			continue // a scalar latent's one-element vector (and its cov)
		}
		var q latexPrinter
		q.write(x, 0)
		ix := q.String()
		if k < len(shift) && shift[k] != 0 {
			ix += fmt.Sprintf("%+d", shift[k]) // y_{t-1}
		}
		idx = append(idx, ix)
	}
	v, suffix, _ := strings.Cut(name, ".")
	s, ok := latexSuffixes[suffix]
	if !ok {
		// a tensor no entry describes: v with the suffix as superscript
		s = latexSuffix{form: supForm(`\mathrm{` + latexEscape(suffix) + "}")}
	}
	return s.form(latexIdentOf(v), strings.Join(idx, ",")), s.safe
}

// mul prints a product: its numeric factors as one coefficient, then the
// other factors separated by \cdot, with negative powers as the
// denominator of a \frac.
func (p *latexPrinter) mul(e *MulNode, ctx int) {
	c := 1.0
	var num, den []Expr
	for _, f := range e.Factors {
		if n, ok := f.(*Num); ok {
			c *= n.V
			continue
		}
		if k, ok := f.(*Call); ok && k.Prim.Name == "pow" {
			if y, ok := k.Args[1].(*Num); ok && y.V < 0 {
				den = append(den, Pow(k.Args[0], N(-y.V)))
				continue
			}
		}
		num = append(num, f)
	}
	wide := ctx > 2 && p.isWide(e, 2)
	if ctx > 2 {
		p.open(wide)
	}
	if c < 0 {
		p.s("-")
		c = -c
	}
	coef := ""
	if c != 1 {
		coef = latexNumber(c)
	}
	if len(den) > 0 && p.cut && p.isWide(e, 0) {
		// too wide for a \frac, which cannot be broken across lines: the
		// denominator's factors are written as negative powers instead
		den, num = nil, e.Factors
		if _, ok := num[0].(*Num); ok {
			num = num[1:]
		}
	}
	switch {
	case len(den) > 0 && len(num) == 0 && c == math.Trunc(c):
		// an integer over the denominator
		if coef == "" {
			coef = "1"
		}
		p.s(`\frac{` + coef + "}{")
		p.factors(den, 0)
		p.s("}")
	case len(den) > 0:
		if coef != "" {
			p.s(coef + p.coefSep(coef))
		}
		p.s(`\frac{`)
		if len(num) == 0 {
			p.s("1")
		} else {
			p.factors(num, 0)
		}
		p.s("}{")
		p.factors(den, 0)
		p.s("}")
	default:
		if coef != "" {
			p.s(coef)
			switch {
			case len(num) == 1 && isSum(num[0]):
				p.s(" ")
			case len(num) > 0:
				p.s(p.coefSep(coef))
			}
		}
		switch {
		case len(num) == 0:
		case len(num) == 1 && isSum(num[0]):
			// −Σ_n x and ½Σ_n x need no parentheses: the sum is the
			// product's only factor
			p.write(num[0], 1)
		default:
			p.factors(num, 2)
		}
	}
	if ctx > 2 {
		p.shut(wide)
	}
}

func isSum(e Expr) bool { _, ok := e.(*SumNode); return ok }

// coefSep separates a coefficient from the factor after it: a thin space, or
// \cdot after a constant such as \log 2\pi that would otherwise run into it.
func (p *latexPrinter) coefSep(coef string) string {
	if strings.Contains(coef, `\log`) || strings.Contains(coef, `\pi`) || strings.Contains(coef, `\times`) || strings.Contains(coef, `\gamma`) {
		return ` \cdot `
	}
	return `\, `
}

// factors prints factors separated by \cdot, equal neighbours (the
// normal form sorts equal factors together) as one power; a single factor
// is printed at precedence one (0 in a numerator or denominator, which
// needs no parentheses), several as factors. A line may be cut before a
// \cdot of a product wider than p.wide.
func (p *latexPrinter) factors(fs []Expr, one int) {
	cut := false
	if p.cut && p.wide > 0 && len(fs) > 1 {
		var q latexPrinter
		q.factors(fs, one)
		cut = LaTeXWidth(q.String()) > p.wide
	}
	if len(fs) == 1 {
		p.write(fs[0], one)
		return
	}
	for k := 0; k < len(fs); {
		n := 1
		for k+n < len(fs) && fs[k+n].Key() == fs[k].Key() {
			n++
		}
		if k > 0 {
			if cut {
				p.WriteByte(latexCut)
			}
			p.s(` \cdot `)
		}
		switch {
		case n > 1:
			p.pow([]Expr{fs[k], N(float64(n))})
		case isNegPow(fs[k]):
			// a negative power left in a product (see mul): x^{-k}
			p.powRaw(fs[k].(*Call).Args)
		default:
			p.write(fs[k], 2)
		}
		k += n
	}
}

// layout prints a call by its latexCalls template.
func (p *latexPrinter) layout(lay string, args []Expr) {
	for {
		k := strings.IndexByte(lay, '#')
		if k < 0 || k+1 >= len(lay) || lay[k+1] < '1' || lay[k+1] > '9' {
			p.s(lay)
			return
		}
		p.s(lay[:k])
		p.write(args[lay[k+1]-'1'], 0)
		lay = lay[k+2:]
	}
}

// isNegPow reports whether e is x^(−k) for a number k.
func isNegPow(e Expr) bool {
	if c, ok := e.(*Call); ok && c.Prim.Name == "pow" {
		if n, ok := c.Args[1].(*Num); ok && n.V < 0 {
			return true
		}
	}
	return false
}

// pow prints x^y: 1/x and x^(−k) as fractions, x^½ as a root, and braces or
// parentheses around a base that cannot take a superscript as it is.
func (p *latexPrinter) pow(a []Expr) {
	x, y := a[0], a[1]
	if n, ok := y.(*Num); ok {
		switch {
		case n.V < 0:
			p.s(`\frac{1}{`)
			p.write(Pow(x, N(-n.V)), 0)
			p.s("}")
			return
		case n.V == 0.5:
			p.layout(latexCalls["sqrt"], []Expr{x})
			return
		}
	}
	p.powRaw(a)
}

// powRaw prints x^{y} as it is.
func (p *latexPrinter) powRaw(a []Expr) {
	x, y := a[0], a[1]
	switch b := x.(type) {
	case *Tensor:
		s, safe := p.tensor(b)
		if !safe {
			s = "{" + s + "}"
		}
		p.s(s)
	case *Call:
		if b.Prim.Name == "pow" || b.Prim.Name == "sqrt" {
			wide := p.isWide(b, 0)
			p.open(wide)
			p.write(b, 0)
			p.shut(wide)
		} else {
			p.write(b, 3)
		}
	default:
		p.write(x, 3)
	}
	p.s("^{")
	p.write(y, 0)
	p.s("}")
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
