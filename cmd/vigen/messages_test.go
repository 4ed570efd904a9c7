package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/derive"
	"github.com/vigen-go/vigen/spec/ir"
)

// compilerMessage is one error format of derive or codegen: the constant
// format of a fmt.Errorf or the text of an errors.New.
type compilerMessage struct {
	at     string // file:line in vigen's source
	format string
}

// positioned reports whether a message starts with its position, "%s: ".
func (m compilerMessage) positioned() bool { return strings.HasPrefix(m.format, "%s: ") }

// compilerMessages lists the error formats in the non-test Go files of
// derive/ and codegen/: every fmt.Errorf or errors.New whose first argument
// is a string literal. (Neither package wraps fmt.Errorf in a helper that
// takes the format as a parameter; the test fails if one appears.)
// notCompilerErrors are files of derive and codegen whose messages are not
// errors of the model: derive/predictive.go says why a valid model has no
// held-out evaluation, which vigen run prints when -heldout is given to
// such a model (derive's TestNoPredictive, TestRunHeldout), and
// derive/pointwise.go why it has no predictions of new rows, printed for
// -predict and -test (derive's TestPredictionsOfExamples and
// TestPointwiseForms, TestRunPredict), while vigen check accepts the
// model.
var notCompilerErrors = map[string]bool{"predictive.go": true, "pointwise.go": true}

func compilerMessages(t *testing.T) []compilerMessage {
	t.Helper()
	var out []compilerMessage
	for _, dir := range []string{"derive", "codegen"} {
		files, _ := filepath.Glob(filepath.Join("..", "..", dir, "*.go"))
		fset := token.NewFileSet()
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") || notCompilerErrors[filepath.Base(path)] {
				continue
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			at := func(p token.Pos) string {
				pos := fset.Position(p)
				return filepath.Join(dir, filepath.Base(pos.Filename)) + ":" + strconv.Itoa(pos.Line)
			}
			handled := map[ast.Node]bool{}
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.FuncDecl:
					// a helper taking a format would hide its callers' messages
					for _, p := range n.Type.Params.List {
						for _, name := range p.Names {
							if name.Name == "format" || name.Name == "msg" {
								if id, ok := p.Type.(*ast.Ident); ok && id.Name == "string" && n.Name.Name != "p" && n.Name.Name != "docf" {
									t.Errorf("%s: %s takes a message format: collect its callers' formats too", at(n.Pos()), n.Name.Name)
								}
							}
						}
					}
				case *ast.CallExpr:
					sel, ok := n.Fun.(*ast.SelectorExpr)
					if !ok || len(n.Args) == 0 {
						return true
					}
					if format, ok := irErrorf(t, n, handled); ok {
						out = append(out, compilerMessage{at: at(n.Pos()), format: format})
						return true
					}
					pkg, ok := sel.X.(*ast.Ident)
					if !ok || !(pkg.Name == "fmt" && sel.Sel.Name == "Errorf" || pkg.Name == "errors" && sel.Sel.Name == "New") {
						return true
					}
					lit, ok := n.Args[0].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						t.Errorf("%s: %s.%s with a format that is not a literal", at(n.Pos()), pkg.Name, sel.Sel.Name)
						return true
					}
					s, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, compilerMessage{at: at(lit.Pos()), format: s})
				}
				return true
			})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].at < out[j].at })
	return out
}

// irErrorf reads a positioned diagnostic, ir.Errorf(pos, FORMAT, …) or
// ir.Errorf(pos, FORMAT, …).Hintf(HINT, …), as the format it prints:
// "%s: FORMAT" and "\n\thint: HINT". An ir.Errorf inside a Hintf is
// marked handled so that it is read once.
func irErrorf(t *testing.T, n *ast.CallExpr, handled map[ast.Node]bool) (string, bool) {
	lit := func(e ast.Expr) string {
		l, ok := e.(*ast.BasicLit)
		if !ok || l.Kind != token.STRING {
			t.Errorf("a diagnostic with a format that is not a literal: %T", e)
			return ""
		}
		s, err := strconv.Unquote(l.Value)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	isErrorf := func(c *ast.CallExpr) bool {
		sel, ok := c.Fun.(*ast.SelectorExpr)
		if !ok {
			return false
		}
		pkg, ok := sel.X.(*ast.Ident)
		return ok && pkg.Name == "ir" && sel.Sel.Name == "Errorf" && len(c.Args) >= 2
	}
	sel := n.Fun.(*ast.SelectorExpr)
	if inner, ok := sel.X.(*ast.CallExpr); ok && sel.Sel.Name == "Hintf" && isErrorf(inner) && len(n.Args) > 0 {
		handled[inner] = true
		return "%s: " + lit(inner.Args[1]) + "\n\thint: " + lit(n.Args[0]), true
	}
	if isErrorf(n) && !handled[n] {
		return "%s: " + lit(n.Args[1]), true
	}
	return "", false
}

// formatPattern turns a format into a regexp over one printed message:
// verbs match anything on the line.
func formatPattern(format string) *regexp.Regexp {
	verb := regexp.MustCompile(`%[-+# 0-9.]*[sdvqgfx]`)
	var sb strings.Builder
	last := 0
	for _, m := range verb.FindAllStringIndex(format, -1) {
		sb.WriteString(regexp.QuoteMeta(strings.ReplaceAll(format[last:m[0]], "%%", "%")))
		sb.WriteString(`.*?`)
		last = m[1]
	}
	sb.WriteString(regexp.QuoteMeta(strings.ReplaceAll(format[last:], "%%", "%")))
	return regexp.MustCompile(`(?m)^` + sb.String())
}

// Every positioned message derive and codegen can produce is shown by a
// golden bad model (spec/testdata/bad, run through vigen check by
// TestBadModels), and no message stops in the middle of a sentence.
func TestEveryCompilerMessageHasAGolden(t *testing.T) {
	msgs := compilerMessages(t)
	if len(msgs) < 30 {
		t.Fatalf("found only %d messages in derive and codegen", len(msgs))
	}
	goldens, _ := filepath.Glob(filepath.Join("..", "..", "spec", "testdata", "bad", "*.stderr"))
	var all strings.Builder
	for _, g := range goldens {
		b, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		all.Write(b)
	}
	text := all.String()
	seen := map[string]bool{}
	for _, m := range msgs {
		seen[m.format] = true
		for _, part := range strings.Split(m.format, "\n") {
			p := strings.TrimRight(part, " ")
			if strings.HasSuffix(p, ",") || strings.HasSuffix(p, ";") || part != p {
				t.Errorf("%s: message stops mid-sentence: %q", m.at, m.format)
			}
		}
		if !m.positioned() {
			if reason := unpositionedMessages[m.format]; reason == "" {
				t.Errorf("%s: message without a position, %q: start it with \"%%s: \" and the position, or list it in unpositionedMessages with the reason", m.at, m.format)
			}
			continue
		}
		if strings.HasPrefix(m.format, "%s: internal error in vigen") && !strings.Contains(m.format, "please report it") {
			t.Errorf("%s: an internal error must ask to report it: %q", m.at, m.format)
		}
		if reason, ok := unreachableMessages[m.format]; ok {
			if reason == "" {
				t.Errorf("%s: listed as unreachable without a reason", m.at)
			}
			continue
		}
		if _, ok := codegenWithoutHint[m.format]; ok {
			continue
		}
		if reason, ok := costlyMessages[m.format]; ok {
			if reason == "" {
				t.Errorf("%s: listed as costly without the test that shows it", m.at)
			}
			continue
		}
		if !formatPattern(m.format).MatchString(text) {
			t.Errorf("%s: no golden bad model in spec/testdata/bad shows %q", m.at, strings.SplitN(m.format, "\n", 2)[0])
		}
	}
	for _, list := range []map[string]string{unreachableMessages, codegenWithoutHint, unpositionedMessages, costlyMessages} {
		for f := range list {
			if !seen[f] {
				t.Errorf("listed message %q is no longer in derive or codegen: remove it from the list", f)
			}
		}
	}
}

// Each message of codegenWithoutHint is what `vigen check` prints for its
// model; it has no golden only because it has no hint yet.
func TestCodegenMessagesWithoutHint(t *testing.T) {
	for format, src := range codegenWithoutHint {
		path := filepath.Join(t.TempDir(), "m.vi")
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		var stdout, stderr strings.Builder
		if code := run([]string{"check", path}, &stdout, &stderr); code != 1 {
			t.Errorf("%q: exit %d, want 1", format, code)
		}
		if !formatPattern(format).MatchString(stderr.String()) {
			t.Errorf("%q: vigen check printed\n%s", format, stderr.String())
		}
		t.Logf("reachable, no hint yet (codegen): %s", strings.SplitN(stderr.String(), "\n", 2)[0])
	}
}

// The reason listed for the unreachable "distribution is not supported"
// message.
func TestFamiliesHaveDensities(t *testing.T) {
	for name := range ir.Families {
		if derive.Dists[name] == nil {
			t.Errorf("distribution %s has no density in derive.Dists", name)
		}
	}
}

// costlyMessages are positioned errors that only models taking half a
// minute or more to check reach, too slow for a golden bad model that
// TestBadModels checks in the fast tier, by format, with the tests that
// show them.
var costlyMessages = map[string]string{
	"%s: the model is too large for vigen's derivative code: deriving this statement's contribution built more than %d expression nodes\n\thint: its derivatives are written out as trees, which grow exponentially with the depth of an expression that reads a value more than once (a chain of lets each reading the previous one twice, a mixture of many components, many scalar latents read by one statement); vigen refuses it rather than run out of memory, until its derivative code grows linearly with the model (issue 39). Shorter chains, fewer components, or scalar latents gathered into one vector latent fit": "derive's TestDerivationNodeBudget (at a lowered budget); at the default budget a 20-link let chain is refused after 22 CPU-s and 2.7 GB",
	"%s: the model is too large for vigen's derivative code: the kernel %s of latent %s would be %d lines of Go (at most %d), from the statements at %s\n\thint: the derivatives of these statements (to the fourth, for the delta method with its Hessian) are written out in full, and code of this size takes Go's compiler minutes and gigabytes to build; vigen refuses it until its derivative code grows linearly with the model (issue 39)":                                                                                                                                                                                "codegen's TestKernelTooLargeIsPositioned (at a lowered limit) and TestMixlitIsRefusedAsTooLarge (slow tier: mixlit of issue 39, 31 CPU-s to check)",
}

// unreachableMessages are positioned errors no model the checker accepts
// can produce, by format, with the reason: the checker (spec) rejects every
// such model first, or the message guards an invariant of vigen itself.
var unreachableMessages = map[string]string{
	"%s: internal error in vigen: the generated package declares %s twice (please report it with the model)":                                                         "invariant: generate takes every clashing name from the model's names, so only two of the generator's own names can clash; FuzzGenerate looks for them",
	"%s: internal error in vigen: the generated package's names still clash after %d renamings (please report it with the model)":                                    "invariant: each repetition of generate takes at least one more name from the model's, and a model meets a handful of the generator's at most",
	"%s: internal error in vigen: the distribution %s read as a value (please report it with the model)":                                                             "invariant: a distribution argument (ir.DistArg) is read only through Val.Dist by the Mixture's log density, never as a value",
	"%s: the distribution %s is an argument of a distribution, not a value\n\thint: distributions are written on the right of ~, and as the components of a Mixture": "invariant: the checker puts an ir.DistArg only in a factor's argument for a Dist parameter, never inside an expression",
	"%s: internal error in vigen: component %d of a Mixture is not a distribution (please report it with the model)":                                                 "invariant: the checker (spec/mixture.go) makes every argument after a Mixture's weights an ir.DistArg",
	"%s: internal error in vigen: a scalar Mixture weight with %d components (please report it with the model)":                                                      "invariant: the checker rejects a scalar weight unless there are two components",
	"%s: codegen: the constraints of %s: %v": "invariant: TestDomainsParse keeps every constraint clause of derive's table readable",
	"%s: codegen: the support of %s: %v":     "invariant: TestDomainsParse keeps every support clause of derive's table readable",
	"%s: no update for latent %s":            "Derive returns an error for every latent that gets neither an objective nor an update, so codegen never sees one (codegen/fit.go)",
	"%s: internal error in vigen while generating code (please report it with the model): %v":                                                    "invariant: a panic inside codegen.Generate, recovered",
	"%s: internal error in vigen while deriving (please report it with the model): %v":                                                           "invariant: a panic inside derive.Derive, recovered",
	"%s: internal error in vigen: the ELBO reads the per-unit latent %s outside its units (please report it with the model)":                     "invariant: objective() has already run grouping() on every statement reading a per-unit Gaussian latent, which rejects reads outside its units (group.go)",
	"%s: internal error in vigen: the ELBO reads per-unit latents through both %s and %s (please report it with the model)":                      "invariant: objective() rejects a statement reading two per-unit Gaussian latents (perUnitReadError) and grouping() one read through two groupings, before the bound is derived",
	"%s: internal error in vigen: the entropy of q(%s) (%s) has no closed form in the table (please report it with the model)":                   "invariant: every family a variational factor can have (MvNormal and the conjugate families) has an entropy in derive/dist*.go",
	"%s: latent %s has no prior\n\thint: give it a distribution with `~`":                                                                        "spec: every latent is the target of exactly one ~ (graph.go checkPriors, golden no_prior)",
	"%s: the %s distribution is not supported by the code generator yet\n\thint: spec/README.md lists what each distribution supports":           "every family of ir.Families has a density in derive.Dists (TestFamiliesHaveDensities), and the checker rejects other names",
	"%s: internal error in vigen: the target of a %s prior lowers to %s, not an element of %s (please report it with the model)":                 "invariant: the target of a prior of an ordered or positive_ordered latent is a read of the latent (raw, untransformed), which Lower makes a Tensor indexed along the vector",
	"%s: internal error in vigen: %d indices for a rank-%d expression (please report it with the model)":                                         "invariant: Lower is called with one selector per dimension of the checked type",
	"%s: a bag is read as %s[d, n] inside `for n in %s[d]`\n\thint: loop over the document's tokens and read one term id at a time":              "spec: a bag is not a value and is indexed only down to a token, w[d, n], whose second index is a token loop's index (expr.go, golden bag_tokens)",
	"%s: internal error in vigen: unknown operator %c (please report it with the model)":                                                         "invariant: the parser produces only + - * / ^",
	"%s: %s is not supported by derive yet\n\thint: spec/README.md lists what each function supports":                                            "every function of ir.Funcs has a lowering in derive (lower.go init), and the checker rejects other names",
	"%s: internal error in vigen: cannot lower %T (please report it with the model)":                                                             "invariant: Lower handles every ir.Expr type",
	"%s: internal error in vigen: a product of ranks %d and %d (please report it with the model)":                                                "spec: the checker makes ir.OpMatMul only of ranks (2, 1), (1, 2) and (2, 2) (algebra.go matMul)",
	"%s: this element of %s cannot be selected yet\n\thint: select elements of a vector built in the model by a loop index or an int data value": "invariant: a vector is selected by fresh or plate indices, or by the int target of a Categorical (an int tensor); update derive/algebra.go position when literal indices reach selectors",
	"%s: eye() indexed indirectly\n\thint: index eye(P) by loop indices only":                                                                    "spec: only variables are indexed, so eye(P), of rank 2, is lowered only under elementwise operations, whose selectors are plate or fresh indices (MvNormal and Wishart arguments are rejected first by tensorOf)",
	"%s: %s must be indexed by its plate's index\n\thint: write it as x[d] inside `for d in 1:D`":                                                "spec: a target inside loops is indexed directly by every enclosing loop's index (stmt.go coverage), so a one-index target in one loop is indexed by it; other shapes get the error just before",
	"%s: param %s is never read, so it has no M-step\n\thint: remove it, or use it in a statement":                                               "spec: a param no statement reads is never used (graph.go checkUsage); one read only in a target's index is an int, which codegen rejects before it reports M-step errors",
	"%s: the prior of simplex param %s must be a Dirichlet for its closed-form M-step\n\thint: remove the prior, or make it a Dirichlet":         "spec: the target of a simplex distribution must be a simplex and Dirichlet is the only one (ir.Families)",
	"%s: internal error in vigen: the %s latent %s is read as a whole (please report it with the model)":                                         "invariant: Lower selects every dimension of a read (one selector per dimension of the checked type), so a transformed latent's tensor has its element index",
}

// codegenWithoutHint are positioned errors of the code generator that
// accepted models reach, with such a model; they have no golden yet because
// they have no hint (TestBadModels requires one). The code generator's
// messages are being reworked separately.
var codegenWithoutHint = map[string]string{
	"%s: latent %s has %d dimensions besides its unit; conjugate latents of rank above 2 are not supported by the code generator yet": `model m
size A, B, C
data y : int[A, B, C]
latent tau : real[A, B, C] conjugate
tau ~ Gamma(1, 1)
y ~ Poisson(tau)
`,
	"%s: integer constants are not supported by the code generator yet": `model m
size N
data y : real[N]
const k : int[N]
latent mu : real conjugate
mu ~ Normal(0, 10)
for n in 1:N {
  y[n] ~ Normal(mu + k[n], 1)
}
`,
	"%s: %s of type %s is not supported by the code generator yet": `model m
size N
data y : real[N]
const k : int
latent mu : real conjugate
mu ~ Normal(0, 10)
for n in 1:N {
  y[n] ~ Normal(mu + k, 1)
}
`,
}

// unpositionedMessages are error formats that do not start with a
// position, with the reason that is right.
var unpositionedMessages = map[string]string{
	"codegen: generated code does not parse (a bug in vigen): %v": "invariant: generate formats (parses) the code before declaredTwice reads it",
	"%w\n%v": "joins two errors that carry their own positions (mstep.go)",
	"codegen: generated driver does not parse (a bug in vigen): %v":   "invariant: generated code is checked before it is returned",
	"codegen: generated code does not parse (a bug in vigen): %v\n%s": "invariant: generated code is checked before it is returned",
	"no tempered normalizer": "a sentinel: FactorTemperedLogNorm replaces it by a positioned reason",
	"codegen: unknown method %q in Options.Methods (want %s; ncvmp kernels come with a latent's declaration)": "an error of the program calling codegen.Generate, not of the model: vigen gen refuses an unknown -methods as a bad command line",
}
