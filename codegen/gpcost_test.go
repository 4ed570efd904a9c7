package codegen

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/golden"
	"github.com/vigen-go/vigen/spec"
)

// gpMaxLines bounds the generated GP (issue 17's target is 10,000): 6,400
// lines, and 7,900 since each nonconjugate factor also has its Target
// kernel (f alone, for the approximation diagnostic), and 8,172 since the
// package has Predict (each observation's log density and mean) and
// LogJoint (the joint diagnostic).
const gpMaxLines = 8250

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
	m, err := spec.Load("gp.vi", []byte(gpModel))
	if err != nil {
		t.Fatal(err)
	}
	files, err := generateModel(m, Options{Methods: []string{"delta"}}) // its F and Delta kernels are checked
	if err != nil {
		t.Fatal(err)
	}
	n := countLines(files)
	t.Logf("%d lines", n)
	if n > gpMaxLines {
		t.Errorf("%d lines generated, want at most %d", n, gpMaxLines)
	}
	// The kernels and their parameters, read off the generated source.
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
	if len(calls) != 16 {
		t.Fatalf("found %d F and Delta kernels, want 16", len(calls))
	}
	sort.Strings(calls)
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
	drv := strings.Replace(gpDriver, "CALLS", strings.Join(calls, "\n\t\t"), 1)
	dir := tempModule(t)
	pkgDir := filepath.Join(dir, "gp")
	if err := os.MkdirAll(pkgDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(pkgDir, f.Name), f.Src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(strings.ReplaceAll(drv, "PKG", tempModulePath+"/gp")), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := goCommand(dir, "run", ".")
	cmd.Stdin = strings.NewReader(string(data))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go run: %v\n%s", err, out)
	}
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

// gpDriver runs every kernel of the GP at a random point and prints the
// largest relative error of each check.
const gpDriver = `package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"os"
	"strings"

	model "PKG"
)

type kernel struct {
	latent, kind, params string
	call                 func([][]float64) float64
}

func main() {
	d, err := model.LoadData(os.Stdin)
	if err != nil {
		panic(err)
	}
	m, err := model.NewModel(d)
	if err != nil {
		panic(err)
	}
	dims := map[string]int{"z1": d.K1, "z2": d.K2}
	dim := func(v string) int {
		if k, ok := dims[v]; ok {
			return k
		}
		return 1
	}
	rng := rand.New(rand.NewSource(1))
	// every latent's mean and a covariance, shared by all kernels
	vals := map[string][]float64{}
	for _, v := range []string{"a", "as", "lsd1", "lls1", "z1", "lsd2", "lls2", "z2"} {
		k := dim(v)
		mean := make([]float64, k)
		for i := range mean {
			mean[i] = 0.3 * rng.NormFloat64()
		}
		cov := make([]float64, k*k)
		for i := 0; i < k; i++ {
			for j := 0; j < k; j++ {
				c := 0.01 * rng.NormFloat64()
				cov[i*k+j] += c
				cov[j*k+i] += c
			}
			cov[i*k+i] += 0.05
		}
		vals[v+"Mean"], vals[v+"Cov"] = mean, cov
	}
	kernels := []kernel{
		CALLS
	}
	rel := func(a, b float64) float64 { return math.Abs(a-b) / math.Max(1, math.Abs(b)) }
	res := map[string]float64{}
	eval := func(k kernel, x []float64, g, h []float64) float64 {
		var args [][]float64
		for _, p := range strings.Split(k.params, ",") {
			switch {
			case p == k.latent:
				args = append(args, x)
			case p == "cov":
				args = append(args, vals[k.latent+"Cov"])
			case p == "grad":
				args = append(args, g)
			case p == "hess":
				args = append(args, h)
			default:
				v, ok := vals[p]
				if !ok {
					panic("unknown parameter " + p)
				}
				args = append(args, v)
			}
		}
		return k.call(args)
	}
	fOf := map[string]kernel{}
	for _, k := range kernels {
		if k.kind == "F" {
			fOf[k.latent] = k
		}
	}
	for _, k := range kernels {
		p := dim(k.latent)
		x := vals[k.latent+"Mean"]
		g, h := make([]float64, p), make([]float64, p*p)
		eval(k, x, g, h)
		const step = 1e-5
		eg, eh := 0.0, 0.0
		for i := 0; i < p; i++ {
			xp, xm := append([]float64(nil), x...), append([]float64(nil), x...)
			xp[i] += step
			xm[i] -= step
			gp, gm := make([]float64, p), make([]float64, p)
			fp := eval(k, xp, gp, make([]float64, p*p))
			fm := eval(k, xm, gm, make([]float64, p*p))
			eg = math.Max(eg, rel(g[i], (fp-fm)/(2*step)))
			for j := 0; j < p; j++ {
				eh = math.Max(eh, rel(h[j*p+i], (gp[j]-gm[j])/(2*step)))
			}
		}
		res[k.latent+k.kind+".grad"] = eg
		res[k.latent+k.kind+".hess"] = eh
		if k.kind == "Delta" {
			// Eq. 17: f(μ) + ½Tr{∇²f(μ)Σ}
			fg, fh := make([]float64, p), make([]float64, p*p)
			f := eval(fOf[k.latent], x, fg, fh)
			cov := vals[k.latent+"Cov"]
			for i := range fh {
				f += 0.5 * fh[i] * cov[i]
			}
			res[k.latent+"Delta.value"] = rel(eval(k, x, g, h), f)
		}
	}
	out, _ := json.Marshal(res)
	fmt.Println(string(out))
}
`
