package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/vigen-go/vigen/derive"
	"github.com/vigen-go/vigen/spec/ir"
)

// Models that exercise what the examples do not: the delta method with a
// conjugate Gamma latent whose update takes a Taylor expectation, a param
// with a numeric (Newton) M-step, one with none, and conjugate
// InverseGamma and Normal latents.
var explainModels = map[string]string{
	"nomstep.vi": `model nomstep
size N, P
data x : real[N, P]
data r : real[N]
const zero : real[P] = 0
const I : cov[P] = eye(P)
param s : real
latent theta : real[P] nonconjugate laplace
theta ~ MvNormal(zero, I)
for n in 1:N {
  r[n] ~ Normal(dot(x[n], theta), s)
}
`,
	"conjugate.vi": `model normalvar
size N
data r : real[N]
latent s2 : real conjugate
latent m : real conjugate
s2 ~ InverseGamma(2, 1)
m ~ Normal(0, 10)
for n in 1:N {
  r[n] ~ Normal(m, sqrt(s2))
}
`,
	"taylor.vi": `model taylor
size N, P
data x : real[N, P]
data y : real[N]
const zero : real[P] = 0
const I : cov[P] = eye(P)
latent theta : real[P] nonconjugate delta
latent tau : real conjugate
theta ~ MvNormal(zero, I)
tau ~ Gamma(2, 1)
for n in 1:N {
  y[n] ~ Normal(logistic(dot(x[n], theta)), 1 / sqrt(tau))
}
`,
	"numeric.vi": `model numeric
size N, P
data x : real[N, P]
data y : int[N] in 0..1
const zero : real[P] = 0
const I : cov[P] = eye(P)
param w : real[P]
latent u : real[P] nonconjugate laplace
u ~ MvNormal(zero, I)
w ~ MvNormal(zero, I)
for n in 1:N {
  y[n] ~ Bernoulli(logistic(dot(x[n], u) + dot(x[n], w)))  # w: no closed form
}
`,
}

// exampleModels returns the example models, as TestCheckTableGolden finds
// them.
func exampleModels(t *testing.T) []string {
	t.Helper()
	models, err := filepath.Glob(filepath.Join("..", "..", "examples", "*", "*.vi"))
	if err != nil || len(models) < 5 {
		t.Fatalf("found %d example models (%v)", len(models), err)
	}
	return models
}

// explainModelFiles writes explainModels to a temporary directory.
func explainModelFiles(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	var out []string
	for _, name := range []string{"conjugate.vi", "nomstep.vi", "numeric.vi", "taylor.vi"} {
		out = append(out, write(t, dir, name, explainModels[name]))
	}
	return out
}

func explain(t *testing.T, format, vi string) string {
	t.Helper()
	code, stdout, stderr := runCLI("explain", "-format", format, vi)
	if code != 0 {
		t.Fatalf("explain -format %s %s: exit %d: %s", format, vi, code, stderr)
	}
	if stderr != "" {
		t.Errorf("explain %s wrote to stderr: %s", vi, stderr)
	}
	return stdout
}

// `vigen explain` of every example model in both formats; testdata/explain
// holds the expected reports (rewrite with -update).
func TestExplainGolden(t *testing.T) {
	for _, vi := range exampleModels(t) {
		name := strings.TrimSuffix(filepath.Base(vi), ".vi")
		for _, format := range []string{"md", "tex"} {
			t.Run(name+"."+format, func(t *testing.T) {
				got := explain(t, format, vi)
				if again := explain(t, format, vi); again != got {
					t.Fatal("two runs over the same model printed different reports")
				}
				golden := filepath.Join("testdata", "explain", name+"."+format)
				if *update {
					os.MkdirAll(filepath.Dir(golden), 0o755)
					if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run go test ./cmd/vigen -run TestExplainGolden -update)", err)
				}
				if got != string(want) {
					t.Errorf("explain output differs from %s:\n--- got\n%s--- want\n%s", golden, got, want)
				}
			})
		}
	}
}

// Every latent of every model has a section naming its treatment, with
// the formulas that treatment needs; every estimated param has its M-step.
func TestExplainCoversLatentsAndParams(t *testing.T) {
	heads := map[string]*regexp.Regexp{
		"md":  regexp.MustCompile("(?m)^## Latent `([A-Za-z0-9_]+)`: (.*)$"),
		"tex": regexp.MustCompile(`(?m)^\\section\*\{Latent \\texttt\{([A-Za-z0-9_\\]+)\}: (.*)\}$`),
	}
	treatments := map[string]string{
		"laplace":   "nonconjugate, Laplace (Eq. 14)",
		"delta":     "nonconjugate, delta method (Eq. 17)",
		"ncvmp":     "nonconjugate, non-conjugate variational message passing (Knowles and Minka 2011)",
		"conjugate": "conjugate, closed-form update (Eq. 18)",
	}
	models := append(exampleModels(t), explainModelFiles(t)...)
	for _, vi := range models {
		m, err := load(vi)
		if err != nil {
			t.Fatal(err)
		}
		for _, format := range []string{"md", "tex"} {
			out := explain(t, format, vi)
			found := map[string]string{}
			sections := map[string]string{} // latent → its section
			next := map[string]string{"md": "\n## ", "tex": "\n\\section*{"}[format]
			for _, h := range heads[format].FindAllStringSubmatchIndex(out, -1) {
				name := strings.ReplaceAll(out[h[2]:h[3]], `\_`, "_")
				found[name] = out[h[4]:h[5]]
				rest := out[h[1]:]
				if end := strings.Index(rest, next); end >= 0 {
					rest = rest[:end]
				}
				sections[name] = rest
			}
			for _, v := range m.VarsWithRole(ir.RoleLatent) {
				want := treatments[v.Treatment.String()]
				if got, ok := found[v.Name]; !ok || got != want {
					t.Errorf("%s (%s): latent %s: section %q, want %q", m.File, format, v.Name, got, want)
				}
				section := sections[v.Name]
				var needs []string
				switch v.Treatment {
				case ir.Laplace:
					needs = []string{`\frac{\partial f}{\partial`, `\frac{\partial^{2} f}{\partial`, "Update (Laplace, Eq. 14)", "Expectations"}
				case ir.Delta:
					needs = []string{`\frac{\partial f}{\partial`, `\frac{\partial^{2} f}{\partial`, `\operatorname{Tr}\{\nabla^{2} f`, "Update (delta method, Eq. 17)", "Expectations"}
				case ir.NCVMP:
					needs = []string{`\frac{\partial f}{\partial`, "Update (NCVMP", "NCVMP projections", "g(u)", "Expectations"}
				default:
					needs = []string{"Natural parameter of", "Update.", "Expectations"}
				}
				for _, s := range needs {
					if !strings.Contains(section, s) {
						t.Errorf("%s (%s): the section of latent %s lacks %q", m.File, format, v.Name, s)
					}
				}
			}
			for _, v := range m.VarsWithRole(ir.RoleParam) {
				step := regexp.MustCompile(`(?m)^(### |\\subsection\*\{).*` + regexp.QuoteMeta(code(format, v.Name))).MatchString(out)
				none := strings.Contains(out, "param "+code(format, v.Name)+" ("+code(format, v.Type.String())+"): no M-step") &&
					strings.Contains(out, "Not supported yet") && strings.Contains(out, "param "+v.Name+" has no closed-form M-step")
				if !strings.Contains(out, "param "+code(format, v.Name)) || !step && !none {
					t.Errorf("%s (%s): param %s has neither an M-step section nor the reason it has none", m.File, format, v.Name)
				}
			}
		}
	}
	// What the extra models are there for.
	for _, vi := range explainModelFiles(t) {
		out := explain(t, "md", vi)
		for _, want := range map[string][]string{
			"taylor.vi":  {"Taylor (Eq. 19) in theta", "exact: E[log x] of Gamma", `a^{\tau} = `, `\mathbb{E}[\log \tau] = `},
			"numeric.vi": {"### `w`: Newton's method", `\frac{\partial f}{\partial w_{`, "Taylor (Eq. 19) in u"},
			"conjugate.vi": {`q(s_{2}) = \operatorname{InvGamma}(a^{s_{2}}, b^{s_{2}})`, `t(s_{2}) = s_{2}^{-1}`,
				`q(m) = \mathcal{N}(\mathbb{E}[m], s^{m})`, `t(m) = m^{2}`, "exact: Normal moments up to second order"},
		}[filepath.Base(vi)] {
			if !strings.Contains(out, want) {
				t.Errorf("explain %s lacks %q:\n%s", filepath.Base(vi), want, out)
			}
		}
	}
}

// Every sufficient statistic of a conjugate family has a LaTeX form.
func TestExplainStatistics(t *testing.T) {
	for _, f := range derive.ConjugateFamilies() {
		d := derive.Dists[f]
		if f == "Categorical" {
			continue // its statistic is the indicator of the category
		}
		if d == nil || d.ExpFam == nil {
			t.Errorf("conjugate family %s has no exponential-family form", f)
			continue
		}
		for _, st := range d.ExpFam.Stats {
			if _, ok := statLaTeX[st.Name]; !ok {
				t.Errorf("statLaTeX has no form for the statistic %q of %s", st.Name, f)
			}
		}
	}
}

// code is a name in code font in the given format.
func code(format, name string) string {
	if format == "tex" {
		return `\texttt{` + strings.ReplaceAll(name, "_", `\_`) + "}"
	}
	return "`" + name + "`"
}

// The LaTeX report is plain ASCII with balanced math, and its displays
// are as Markdown's; the Markdown report's $ and $$ pair up.
func TestExplainWellFormed(t *testing.T) {
	for _, vi := range append(exampleModels(t), explainModelFiles(t)...) {
		tex := explain(t, "tex", vi)
		for i, c := range tex {
			if c > 127 {
				t.Errorf("%s: non-ASCII %q in the LaTeX report at %d: %q", vi, c, i, tex[max(0, i-40):i])
				break
			}
		}
		if !strings.HasPrefix(tex, `\documentclass{article}`) || !strings.HasSuffix(tex, "\\end{document}\n") {
			t.Errorf("%s: the LaTeX report is not a whole document", vi)
		}
		for _, env := range []string{"document", "itemize", "equation*", "align*"} {
			if b, e := strings.Count(tex, `\begin{`+env+"}"), strings.Count(tex, `\end{`+env+"}"); b != e {
				t.Errorf("%s: %d \\begin{%s} and %d \\end", vi, b, env, e)
			}
		}
		md := explain(t, "md", vi)
		if n := strings.Count(md, "$$\n"); n%2 != 0 {
			t.Errorf("%s: odd number of $$ lines in the Markdown report", vi)
		}
		for _, line := range strings.Split(md, "\n") {
			if line != "$$" && strings.Count(line, "$")%2 != 0 {
				t.Errorf("%s: unpaired $ in %q", vi, line)
			}
		}
	}
}

// The LaTeX report of every example (and of the extra models) compiles
// with pdflatex, when it is installed.
func TestExplainCompilesWithPDFLaTeX(t *testing.T) {
	pdflatex, err := exec.LookPath("pdflatex")
	if err != nil {
		t.Skip("pdflatex is not on PATH; install TeX Live (texlive-latex-base, texlive-latex-recommended) to check that explain -format tex compiles")
	}
	dir := t.TempDir()
	for _, vi := range append(exampleModels(t), explainModelFiles(t)...) {
		name := strings.TrimSuffix(filepath.Base(vi), ".vi")
		t.Run(name, func(t *testing.T) {
			tex := filepath.Join(dir, name+".tex")
			if err := os.WriteFile(tex, []byte(explain(t, "tex", vi)), 0o644); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, pdflatex, "-interaction=nonstopmode", "-halt-on-error", "-no-shell-escape", name+".tex")
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("pdflatex %s.tex: %v\n%s", name, err, tail(string(out), 3000))
			}
			if _, err := os.Stat(filepath.Join(dir, name+".pdf")); err != nil {
				t.Fatalf("no PDF: %v", err)
			}
			if log, _ := os.ReadFile(filepath.Join(dir, name+".log")); bytes.Contains(log, []byte("Overfull \\hbox")) {
				t.Logf("%s.tex: pdflatex reports overfull lines", name)
			}
		})
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

func TestExplainErrors(t *testing.T) {
	dir := t.TempDir()
	bad := write(t, dir, "bad.vi", strings.Replace(good, "dot(x[n], w)", "dot(z[n], w)", 1))
	ok := write(t, dir, "tiny.vi", good)
	for _, c := range []struct {
		args []string
		code int
		want string // a regexp stderr must match
	}{
		{[]string{"explain", bad}, 1, `(?m)^bad\.vi:\d+:\d+: `},
		{[]string{"explain", "-format", "tex", bad}, 1, `(?m)^bad\.vi:\d+:\d+: `},
		{[]string{"explain", "-format", "html", ok}, 2, `unknown format "html": want md or tex`},
		{[]string{"explain"}, 2, `usage:`},
		{[]string{"explain", ok, ok}, 2, `usage:`},
		{[]string{"explain", filepath.Join(dir, "missing.vi")}, 1, `missing\.vi`},
	} {
		code, stdout, stderr := runCLI(c.args...)
		if code != c.code {
			t.Errorf("%v: exit %d, want %d (stderr %q)", c.args[1:], code, c.code, stderr)
		}
		if !regexp.MustCompile(c.want).MatchString(stderr) {
			t.Errorf("%v: stderr %q does not match %q", c.args[1:], stderr, c.want)
		}
		if code != 0 && stdout != "" {
			t.Errorf("%v: failed but printed a report", c.args[1:])
		}
	}
}

// vigen explain names the let definitions it shows expanded.
func TestExplainListsLets(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"explain", filepath.Join("..", "..", "spec", "testdata", "good", "letfactor.vi")}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, want := range []string{"`eta[n]` (`letfactor.vi:19:7`), `rate` (`letfactor.vi:22:7`)", "`factor -0.5 * u[j]^2"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("the report does not contain %q", want)
		}
	}
}
