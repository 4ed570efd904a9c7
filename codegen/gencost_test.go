package codegen

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/golden"
	"github.com/vigen-go/vigen/spec"
	"gonum.org/v1/gonum/mat"
)

// Models whose generation cost issue 17 bounds: deep nesting of one
// primitive, many statements, and an approximate GP with eight coupled
// latents. They are built as .vi source so that the whole pipeline (check,
// derive, schedule, print) is measured.

// nestedModel is a regression whose linear predictor goes through fn
// nested depth times: logistic feeds a Bernoulli, anything else a Normal.
func nestedModel(fn string, depth int) string {
	pred := "dot(x[n], theta)"
	for k := 0; k < depth; k++ {
		pred = fn + "(" + pred + ")"
	}
	ytype, stmt := "real[N]", fmt.Sprintf("y[n] ~ Normal(%s, 1)", pred)
	if fn == "logistic" {
		ytype, stmt = "int[N] in 0..1", fmt.Sprintf("y[n] ~ Bernoulli(%s)", pred)
	}
	return fmt.Sprintf(`model nested_%s_%d

size N, P
data x : real[N, P]
data y : %s
latent theta : real[P] nonconjugate laplace

theta ~ Normal(0, 1)
for n in 1:N {
  %s
}
`, fn, depth, ytype, stmt)
}

// manyStatementsModel has k observed vectors, each a Normal regression on
// the same latent coefficients: k+1 `~` statements.
func manyStatementsModel(k int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "model stmts_%d\n\nsize N, P\ndata x : real[N, P]\n", k)
	for i := 1; i <= k; i++ {
		fmt.Fprintf(&b, "data y%d : real[N]\n", i)
	}
	b.WriteString("latent theta : real[P] nonconjugate laplace\n\ntheta ~ Normal(0, 1)\nfor n in 1:N {\n")
	for i := 1; i <= k; i++ {
		fmt.Fprintf(&b, "  y%d[n] ~ Normal(dot(x[n], theta), %g)\n", i, 1+float64(i)/1000)
	}
	b.WriteString("}\n")
	return b.String()
}

// gpModel is issue 17's basis-function approximate GP: y regressed on two
// basis expansions X1, X2 (weights z1, z2 scaled by a squared-exponential
// spectral density with log sd lsd and log length-scale lls), with a
// heteroscedastic sd; the scalars are real[One] latents read as sum(.).
const gpModel = `model gp

size N, One, K1, K2
data X1 : real[N, K1]
data X2 : real[N, K2]
data sl1 : real[K1]
data sl2 : real[K2]
data Y : real[N]
latent a : real[One] nonconjugate laplace
latent as : real[One] nonconjugate laplace
latent lsd1 : real[One] nonconjugate laplace
latent lls1 : real[One] nonconjugate laplace
latent z1 : real[K1] nonconjugate laplace
latent lsd2 : real[One] nonconjugate laplace
latent lls2 : real[One] nonconjugate laplace
latent z2 : real[K2] nonconjugate laplace

a ~ Normal(0, 1)
as ~ Normal(0, 1)
lsd1 ~ Normal(0, 1)
lls1 ~ Normal(0, 1)
z1 ~ Normal(0, 1)
lsd2 ~ Normal(0, 1)
lls2 ~ Normal(0, 1)
z2 ~ Normal(0, 1)
for n in 1:N {
  Y[n] ~ Normal(sum(a) + dot(X1[n], 1.58 * exp(sum(lsd1) + 0.5 * sum(lls1) - 0.25 * exp(2 * sum(lls1)) * sl1) * z1),
                exp(sum(as) + dot(X2[n], 1.58 * exp(sum(lsd2) + 0.5 * sum(lls2) - 0.25 * exp(2 * sum(lls2)) * sl2) * z2)))
}
`

// genCostModels are the benchmark's models, by name.
var genCostModels = []struct{ name, src string }{
	{"logistic12", nestedModel("logistic", 12)},
	{"log100", nestedModel("log", 100)},
	{"stmts1000", manyStatementsModel(1000)},
	{"gp", gpModel},
}

func generateSrc(tb testing.TB, name, src string) []File {
	tb.Helper()
	m, err := spec.Load(name+".vi", []byte(src))
	if err != nil {
		tb.Fatal(err)
	}
	files, err := generateModel(m, Options{Methods: []string{"delta"}}) // the cost with every kernel
	if err != nil {
		tb.Fatal(err)
	}
	return files
}

func countLines(files []File) int {
	n := 0
	for _, f := range files {
		n += strings.Count(string(f.Src), "\n")
	}
	return n
}

// BenchmarkGenerate measures generating each model of genCostModels
// (issue 17's targets: the nested models < 1 s, 1,000 statements < 2 s,
// the GP < 10,000 lines, reported as the lines metric).
func BenchmarkGenerate(b *testing.B) {
	for _, m := range genCostModels {
		b.Run(m.name, func(b *testing.B) {
			var files []File
			for i := 0; i < b.N; i++ {
				files = generateSrc(b, m.name, m.src)
			}
			b.ReportMetric(float64(countLines(files)), "lines")
		})
	}
}

// The deep and wide models generate type-correct code, the same bytes
// every time (whatever the order of map iteration in derive and the
// scheduler), and deep chains stay small: group(…) factors print as
// parenthesized products, shared by every derivative.
func TestGenerateCostModels(t *testing.T) {
	golden.SlowTier(t)
	for _, m := range []struct {
		name, src string
		maxLines  int
	}{
		{"logistic12", nestedModel("logistic", 12), 2000},
		{"log30", nestedModel("log", 30), 3000},
		{"exp_softplus6", strings.Replace(nestedModel("softplus", 6), "dot(x[n], theta)", "exp(0.1 * dot(x[n], theta))", 1), 3000},
		{"stmts50", manyStatementsModel(50), 5000},
	} {
		t.Run(m.name, func(t *testing.T) {
			files := generateChecked(t, m.name, m.src)
			again := generateSrc(t, m.name, m.src)
			if len(again) != len(files) {
				t.Fatalf("%d files, then %d", len(files), len(again))
			}
			for k := range files {
				if string(files[k].Src) != string(again[k].Src) {
					t.Fatalf("%s: two generations differ", files[k].Name)
				}
			}
			if n := countLines(files); n > m.maxLines {
				t.Errorf("%d lines generated, want at most %d", n, m.maxLines)
			}
		})
	}
}

var splitKernelCase = slowTest("TestSplitKernelExactPosterior").fits("split", manyStatementsModel(70), ", Tol: 1e-12")

// A model of more statements than one kernel function holds (kernelChunk
// outputs) gets kernels split into parts that accumulate into grad and
// hess; its fit must still be the exact posterior of the linear-Gaussian
// model: precision I + Σ_i XᵀX/s_i², mean precision⁻¹·Σ_i Xᵀy_i/s_i².
func TestSplitKernelExactPosterior(t *testing.T) {
	golden.SlowTier(t)
	const k, n, p = 70, 12, 3
	src := manyStatementsModel(k)
	files := generateSrc(t, "split", src)
	if s := string(files[0].Src); !strings.Contains(s, "func (m *Model) thetaFPart1(") || !strings.Contains(s, "f += m.thetaDeltaPart1(") {
		t.Fatal("the kernels of 70 statements were not split")
	}
	rng := rand.New(rand.NewPCG(5, 17))
	x := make([][]float64, n)
	for i := range x {
		x[i] = []float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
	}
	data := map[string]any{"x": x}
	prec := mat.NewSymDense(p, nil)
	for a := 0; a < p; a++ {
		prec.SetSym(a, a, 1)
	}
	rhs := mat.NewVecDense(p, nil)
	for i := 1; i <= k; i++ {
		s := 1 + float64(i)/1000
		y := make([]float64, n)
		for r := range y {
			y[r] = 0.5*x[r][0] - x[r][2] + s*rng.NormFloat64()
			for a := 0; a < p; a++ {
				rhs.SetVec(a, rhs.AtVec(a)+x[r][a]*y[r]/(s*s))
				for b := a; b < p; b++ {
					prec.SetSym(a, b, prec.At(a, b)+x[r][a]*x[r][b]/(s*s))
				}
			}
		}
		data[fmt.Sprintf("y%d", i)] = y
	}
	var chol mat.Cholesky
	if !chol.Factorize(prec) {
		t.Fatal("precision not positive definite")
	}
	var mean mat.VecDense
	var cov mat.SymDense
	if err := chol.SolveVecTo(&mean, rhs); err != nil {
		t.Fatal(err)
	}
	if err := chol.InverseTo(&cov); err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range splitKernelCase.results(t, raw) {
		q := r.Latent["theta"]
		for a := 0; a < p; a++ {
			if d := math.Abs(q.Mean[a] - mean.AtVec(a)); d > 1e-8 {
				t.Errorf("%s: mean[%d] = %g, exact %g", r.Method, a, q.Mean[a], mean.AtVec(a))
			}
			for b := 0; b < p; b++ {
				if d := math.Abs(q.Cov[a][b] - cov.At(a, b)); d > 1e-10 {
					t.Errorf("%s: cov[%d][%d] = %g, exact %g", r.Method, a, b, q.Cov[a][b], cov.At(a, b))
				}
			}
		}
	}
}
