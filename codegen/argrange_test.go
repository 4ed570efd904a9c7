package codegen

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/derive"
	"github.com/vigen-go/vigen/spec"
)

// numericArg is a number as generated code prints one (goFloat).
const numericArg = `-?(?:[0-9][0-9.]*(?:e[-+]?[0-9]+)?|math\.Inf\(-?1\)|math\.NaN\(\))`

var (
	// numericCall is a call of a function on numbers alone
	numericCall = regexp.MustCompile(`\b((?:math|runtime)\.[A-Z][A-Za-z0-9]*)\(` + numericArg + `(?:, ` + numericArg + `)*\)`)
	// nonFiniteOperand is an infinity or NaN that arithmetic reads
	nonFiniteOperand = regexp.MustCompile(`[-+*/] math\.(?:Inf\(-?1\)|NaN\(\))|math\.(?:Inf\(-?1\)|NaN\(\)) [-+*/]`)
)

// nonFiniteConstants lists what generated code computes from numbers
// alone that is not finite: a primitive of derive's (math.Pow,
// runtime.Lgamma, …) called on numbers only, which derive folds to a
// number whenever the result is finite, and an infinity or NaN that
// arithmetic reads (goFloat prints a fold that is not finite so). The
// accumulators of maxima (t := math.Inf(-1)) and the open ends of the
// domain table (Hi: math.Inf(1)) are no arithmetic. Each is a model
// whose fit computes ±Inf or NaN from its numbers alone, and ends
// not_finite (the precision of Normal(0, 1e-170) once did, issue 38).
func nonFiniteConstants(files []File) []string {
	prims := map[string]bool{}
	for _, name := range []string{"exp", "log", "log1p", "expm1", "sqrt", "logistic", "logit", "softplus", "lgamma", "digamma", "trigamma", "Phi", "logPhi", "invmills", "logdiffPhi", "logaddexp", "xlogx", "pow"} {
		prims[derive.MustPrim(name).Go] = true
	}
	var out []string
	for _, f := range files {
		for i, line := range strings.Split(string(f.Src), "\n") {
			bad := nonFiniteOperand.MatchString(line)
			for _, m := range numericCall.FindAllStringSubmatch(line, -1) {
				bad = bad || prims[m[1]]
			}
			if bad {
				out = append(out, fmt.Sprintf("%s:%d: %s", f.Name, i+1, strings.TrimSpace(line)))
			}
		}
	}
	return out
}

// generated is the package generated from src, or the error.
func generated(t *testing.T, name, src string) ([]File, error) {
	t.Helper()
	m, err := spec.Load(name+".vi", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	d, err := derive.Derive(m)
	if err != nil {
		return nil, err
	}
	return Generate(d, Options{})
}

// A distribution's argument written as a number whose derived quantities
// float64 cannot hold is refused at the argument: Normal(0, 1e-170)
// passed vigen check and generated code that computed its precision
// 1/(1e-170)² = +Inf at run time, and the fit ended not_finite (issue
// 38). Extreme arguments whose quantities fit generate code that
// computes nothing infinite from numbers.
func TestNumericArgumentsInRange(t *testing.T) {
	model := func(latent, prior, stmt string) string {
		data := "data y : real[N]"
		if strings.HasPrefix(stmt, "c[n]") {
			data = "data c : int[N]"
		}
		return "model m\nsize N\n" + data + "\nlatent " + latent + "\n" + prior + "\nfor n in 1:N {\n  " + stmt + "\n}\n"
	}
	for _, c := range []struct {
		name, src, want string // want: the error's start; "" for none
	}{
		{"precision overflows", model("mu : real nonconjugate laplace", "mu ~ Normal(0, 1e-170)", "y[n] ~ Normal(mu, 1)"),
			"m.vi:5:16: Normal computes sd^(-2) from its sd 1e-170 (for its log density), which is +Inf in float64"},
		{"conjugate prior", model("mu : real conjugate", "mu ~ Normal(0, 1e-170)", "y[n] ~ Normal(mu, 1)"),
			"m.vi:5:16: Normal computes sd^(-2) from its sd 1e-170"},
		{"likelihood", model("mu : real nonconjugate laplace", "mu ~ Normal(0, 1)", "y[n] ~ Normal(mu, 1e-170)"),
			"m.vi:7:21: Normal computes sd^(-2) from its sd 1e-170"},
		{"folded argument", model("mu : real nonconjugate laplace", "mu ~ Normal(0, 1e-100 * 1e-70)", "y[n] ~ Normal(mu, 1)"),
			"m.vi:5:23: Normal computes sd^(-2) from its sd 1e-170"},
		{"precision underflows", model("mu : real conjugate", "mu ~ Normal(0, 1e170)", "y[n] ~ Normal(mu, 1)"),
			"m.vi:5:16: Normal computes sd^(-2) from its sd 1e+170 (for its log density), which underflows to 0 in float64, though it is positive"},
		{"mean over sd", model("mu : real nonconjugate laplace", "mu ~ Normal(1e200, 1e-100)", "y[n] ~ Normal(mu, 1)"),
			"m.vi:5:13: Normal computes (-0.5)·mean·mean·sd^(-2) from its mean 1e+200 and sd 1e-100"},
		{"StudentT scale", model("mu : real nonconjugate laplace", "mu ~ StudentT(3, 0, 1e-170)", "y[n] ~ Normal(mu, 1)"),
			"m.vi:5:21: StudentT computes scale^(-2) from its scale 1e-170"},
		{"mixture component", model("mu : real nonconjugate laplace", "mu ~ Mixture(0.5, Normal(0, 1), Normal(0, 1e-170))", "y[n] ~ Normal(mu, 1)"),
			"m.vi:5:43: Normal computes sd^(-2) from its sd 1e-170"},
		// in range, however extreme
		{"tiny Gamma shape", model("s : real conjugate", "s ~ Gamma(1e-320, 1)", "c[n] ~ Poisson(s)"), ""},
		{"tiny Gamma shape, Laplace", model("s : real<lower=0> nonconjugate laplace", "s ~ Gamma(1e-320, 1)", "y[n] ~ Normal(0, s)"), ""},
		{"huge Exponential rate", model("s : real conjugate", "s ~ Exponential(1e308)", "c[n] ~ Poisson(s)"), ""},
		{"tiny mean", model("mu : real nonconjugate laplace", "mu ~ Normal(1e-200, 1)", "y[n] ~ Normal(mu, 1)"), ""},
		{"precision 1e300", model("mu : real conjugate", "mu ~ Normal(0, 1e-150)", "y[n] ~ Normal(mu, 1)"), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			files, err := generated(t, "m", c.src)
			if c.want != "" {
				if err == nil || !strings.HasPrefix(err.Error(), c.want) {
					t.Fatalf("error %v;\n want %q…", err, c.want)
				}
				if !strings.Contains(err.Error(), "\n\thint: float64 holds non-zero magnitudes") {
					t.Errorf("no hint: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if bad := nonFiniteConstants(files); len(bad) > 0 {
				t.Errorf("generated code computes what is not finite from numbers:\n%s", strings.Join(bad, "\n"))
			}
		})
	}
}

// nonFiniteConstants finds nothing in the generated packages of the
// examples, and finds what the code generated for Normal(0, 1e-170) and
// Normal(1e200, 1e-100) computed before they were refused.
func TestNonFiniteConstantsPattern(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("..", "examples", "*", "*", "*.go"))
	more, _ := filepath.Glob(filepath.Join("..", "examples", "*", "*.go"))
	var files []File
	for _, p := range append(paths, more...) {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(src), "// Code generated by vigen") {
			files = append(files, File{Name: p, Src: src})
		}
	}
	if len(files) < 5 {
		t.Fatalf("only %d generated files among the examples", len(files))
	}
	if bad := nonFiniteConstants(files); len(bad) > 0 {
		t.Errorf("found in the examples:\n%s", strings.Join(bad, "\n"))
	}
	for _, line := range []string{
		"\tt1 := math.Pow(1e-170, -2.0)",
		"\tt9 := t3 + t4 + t7 + math.Inf(1)",
		"\tv := runtime.Lgamma(math.Inf(1)) * x",
	} {
		if len(nonFiniteConstants([]File{{Name: "x.go", Src: []byte(line)}})) != 1 {
			t.Errorf("not found: %q", line)
		}
	}
	for _, line := range []string{
		"\tt1 := math.Inf(-1)",
		"\t{Role: \"data\", Domain: runtime.Domain{Lo: 0, Hi: math.Inf(1), LoOpen: true}},",
		"\tt2 := math.Pow(t1, -2.0)",
		"\tq := runtime.NewExactVec(1)",
	} {
		if bad := nonFiniteConstants([]File{{Name: "x.go", Src: []byte(line)}}); len(bad) != 0 {
			t.Errorf("found in %q: %v", line, bad)
		}
	}
}
