package codegen

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/golden"
)

// gpMaxLines bounds the generated GP (issue 17's target is 10,000): 6,400
// lines, and 7,900 since each nonconjugate factor also has its Target
// kernel (f alone, for the approximation diagnostic), and 8,172 since the
// package has Predict (each observation's log density and mean) and
// LogJoint (the joint diagnostic).
const gpMaxLines = 8250

// gpCase runs every F and Delta kernel of the GP (gpKernelCalls) at a
// random point and prints the largest relative error of each check.
var gpCase = slowTest("TestGenerateGP").driver("gp", gpModel, "gp_kernel_checks.go").options(Options{Methods: []string{"delta"}}).
	substGenerated(func(files []File) ([]string, error) {
		return []string{"/* CALLS */", strings.Join(gpKernelCalls(files), "\n\t\t")}, nil
	})

// gpKernelCalls are the kernels and their parameters, read off the
// generated source, as entries of gp_kernel_checks.go's kernels, sorted.
func gpKernelCalls(files []File) []string {
	sig := regexp.MustCompile(`func \(m \*Model\) (\w+)(F|Delta)\(([^)]*)\)`)
	var calls []string
	for _, f := range files {
		for _, mt := range sig.FindAllStringSubmatch(string(f.Src), -1) {
			params := strings.Split(strings.TrimSuffix(mt[3], " []float64"), ", ")
			args := make([]string, len(params))
			for k := range params {
				args[k] = fmt.Sprintf("a[%d]", k)
			}
			calls = append(calls, fmt.Sprintf("{%q, %q, %q, func(a [][]float64) float64 { return m.%s%s(%s) }},", strings.ToLower(mt[1][:1])+mt[1][1:], mt[2], strings.Join(params, ","), mt[1], mt[2], strings.Join(args, ", ")))
		}
	}
	sort.Strings(calls)
	return calls
}

// TestGenerateGP generates issue 17's eight-latent GP, bounds its size,
// compiles it and checks every F and Delta kernel's gradient and Hessian
// against central differences of its value and gradient, and every Delta
// value against f(μ) + ½Tr{∇²f(μ)Σ} from the F kernel, on small random
// data.
func TestGenerateGP(t *testing.T) {
	golden.SlowTier(t)
	if testing.Short() {
		t.Skip("skipping the GP's generate-compile-run test in -short mode")
	}
	files := gpCase.generated(t)
	n := countLines(files)
	t.Logf("%d lines", n)
	if n > gpMaxLines {
		t.Errorf("%d lines generated, want at most %d", n, gpMaxLines)
	}
	if calls := gpKernelCalls(files); len(calls) != 16 {
		t.Fatalf("found %d F and Delta kernels, want 16", len(calls))
	}
	rng := rand.New(rand.NewSource(7))
	const N, K1, K2 = 20, 3, 3
	mat := func(r, c int, s float64) [][]float64 {
		x := make([][]float64, r)
		for i := range x {
			x[i] = make([]float64, c)
			for j := range x[i] {
				x[i][j] = s * rng.NormFloat64()
			}
		}
		return x
	}
	vec := func(k int, s, off float64) []float64 {
		x := make([]float64, k)
		for i := range x {
			x[i] = off + s*rng.NormFloat64()
		}
		return x
	}
	data, _ := json.Marshal(map[string]any{"N": N, "One": 1, "K1": K1, "K2": K2,
		"X1": mat(N, K1, 1), "X2": mat(N, K2, 1), "sl1": vec(K1, 0.3, 1), "sl2": vec(K2, 0.3, 1), "Y": vec(N, 1, 0)})
	out := gpCase.run(t, data)
	var res map[string]float64
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("driver output: %v\n%s", err, out)
	}
	if len(res) != 16*3-8 {
		t.Errorf("%d checks, want %d: %v", len(res), 16*3-8, res)
	}
	for k, e := range res {
		if !(e < 1e-5) {
			t.Errorf("%s: relative error %.3g", k, e)
		}
	}
}
