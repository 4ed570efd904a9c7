package derive_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/vigen-go/vigen/codegen"
	"github.com/vigen-go/vigen/derive"
	"github.com/vigen-go/vigen/golden"
	"github.com/vigen-go/vigen/spec"
	"github.com/vigen-go/vigen/spec/ir"
)

// The derivative corpus: every model in testdata/corpus is generated,
// compiled and run, and the gradient, Hessian and delta-method gradient its
// generated package returns for the nonconjugate latent are compared with
// central finite differences of the values it returns.
//
// All generated packages of one test live in a throwaway module in a
// temporary directory (tempModule: it requires this repository through a
// replace directive, so they can import the runtime) and are imported by
// one driver program, so there is a single `go build`.
// The driver reads jobs (data and evaluation points) as JSON on stdin and
// writes the kernels' results and its own finite differences as JSON.

// Tolerances, relative to max(1, |finite difference|).
const (
	gradTol   = 1e-6 // ∇f against differences of f
	secondTol = 1e-5 // ∇²f against differences of ∇f; ∇(f + ½Tr{∇²fΣ}) against differences of the value
	// consistTol bounds the disagreement between quantities both kernels
	// compute exactly (f, ∇²f), which differ only by rounding.
	consistTol = 1e-9
)

// pointsPerModel is the number of random points each model is evaluated at.
const pointsPerModel = 3

// fdCase is one model to check.
type fdCase struct {
	Name string // short name, used for the package and in messages
	File string // file name given to spec.Load
	Src  []byte
}

// prepared is a case that generated: its package, data and points.
type prepared struct {
	fdCase
	Pkg    string // package (and directory) name
	Latent string // name of the nonconjugate latent
	P      int    // its length
	Data   map[string]any
	Points []evalPoint
}

// evalPoint is where the kernels are evaluated: θ (or μ) and, for the delta
// objective, Σ (P×P, row-major).
type evalPoint struct {
	Theta []float64 `json:"theta"`
	Cov   []float64 `json:"cov"`
}

type driverJob struct {
	Name   string         `json:"name"`
	Data   map[string]any `json:"data"`
	Points []evalPoint    `json:"points"`
}

type driverResult struct {
	Name   string        `json:"name"`
	Error  string        `json:"error"`
	Points []pointResult `json:"points"`
}

// pointResult is what the driver reports for one point; matrices are
// row-major. FD* are finite differences: FDGrad of F, FDHess the Jacobian
// of Grad, FDDeltaGrad of Delta.
type pointResult struct {
	F           num   `json:"f"`
	Grad        []num `json:"grad"`
	Hess        []num `json:"hess"`
	FDGrad      []num `json:"fdGrad"`
	FDHess      []num `json:"fdHess"`
	Delta       num   `json:"delta"`
	DeltaGrad   []num `json:"deltaGrad"`
	DeltaHess   []num `json:"deltaHess"`
	FDDeltaGrad []num `json:"fdDeltaGrad"`
	FDDeltaHess []num `json:"fdDeltaHess"`
}

// num is a float64 whose JSON form may also be "NaN", "+Inf" or "-Inf"
// (the driver writes non-finite values that way).
type num float64

func (x *num) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		switch s {
		case "NaN":
			*x = num(math.NaN())
		case "+Inf":
			*x = num(math.Inf(1))
		case "-Inf":
			*x = num(math.Inf(-1))
		default:
			return fmt.Errorf("bad number %q", s)
		}
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*x = num(f)
	return nil
}

// fdReport is the outcome of a run of runFDCases.
type fdReport struct {
	Checked int
	Skipped []string // "file: error" of models whose generation is not supported yet
}

func TestCorpusDerivatives(t *testing.T) {
	golden.SlowTier(t)
	if testing.Short() {
		t.Skip("skipping the derivative corpus (generates, compiles and runs code) in -short mode")
	}
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "corpus", "*.vi"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 50 {
		t.Errorf("the corpus has %d models, want at least 50", len(files))
	}
	var cases []fdCase
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(src, []byte("#")) && !bytes.HasPrefix(src, []byte("//")) {
			t.Errorf("%s: the first line must be a comment saying what the model covers", f)
		}
		name := strings.TrimSuffix(filepath.Base(f), ".vi")
		cases = append(cases, fdCase{Name: name, File: filepath.Base(f), Src: src})
	}
	rep := runFDCases(t, "tmp-corpus-", "c_", cases, 1)
	t.Logf("corpus: %d models, %d checked, %d skipped", len(cases), rep.Checked, len(rep.Skipped))
}

// runFDCases generates, compiles and runs every case and checks its
// derivatives, reporting each case in a subtest. dirPrefix names the
// throwaway module's directory, pkgPrefix the generated packages.
// Models whose generation fails with "not supported" are logged as SKIP
// and counted; any other failure is an error.
func runFDCases(t *testing.T, dirPrefix, pkgPrefix string, cases []fdCase, seed uint64) fdReport {
	t.Helper()
	start := time.Now()
	var rep fdReport
	dir := tempModule(t, dirPrefix)

	var ready []*prepared
	for i, c := range cases {
		p, skip, err := prepare(c, fmt.Sprintf("%s%02d_%s", pkgPrefix, i, sanitize(c.Name)), dir, seed)
		switch {
		case skip:
			t.Logf("SKIP %s: %v", c.File, err)
			rep.Skipped = append(rep.Skipped, fmt.Sprintf("%s: %v", c.File, err))
		case err != nil:
			t.Errorf("%s: %v\n%s", c.File, err, c.Src)
		default:
			ready = append(ready, p)
		}
	}
	if len(ready) == 0 {
		return rep
	}

	// Build; a package that does not compile is reported and dropped, and
	// the rest is built again.
	bin := filepath.Join(t.TempDir(), "driver")
	for round := 0; ; round++ {
		if err := writeDriver(dir, ready); err != nil {
			t.Fatal(err)
		}
		out, err := goCommand(dir, "build", "-o", bin, ".").CombinedOutput()
		if err == nil {
			break
		}
		bad := attributeBuildErrors(string(out), ready)
		if len(bad) == 0 || round == 5 {
			t.Fatalf("go build: %v\n%s", err, out)
		}
		var keep []*prepared
		for _, p := range ready {
			if msg, ok := bad[p.Pkg]; ok {
				t.Errorf("%s: generated code does not compile:\n%s\nmodel:\n%s", p.File, msg, p.Src)
				continue
			}
			keep = append(keep, p)
		}
		ready = keep
		if len(ready) == 0 {
			return rep
		}
	}
	built := time.Now()

	var jobs []driverJob
	for _, p := range ready {
		jobs = append(jobs, driverJob{Name: p.Pkg, Data: p.Data, Points: p.Points})
	}
	in, err := json.Marshal(jobs)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("driver: %v\n%s", err, stderr.String())
	}
	var results []driverResult
	if err := json.Unmarshal(out, &results); err != nil {
		t.Fatalf("driver output: %v", err)
	}
	byName := map[string]driverResult{}
	for _, r := range results {
		byName[r.Name] = r
	}
	for _, p := range ready {
		t.Run(p.Name, func(t *testing.T) {
			r, ok := byName[p.Pkg]
			switch {
			case !ok:
				t.Fatalf("%s: no result from the driver", p.File)
			case r.Error != "":
				t.Fatalf("%s: %s\nmodel:\n%s", p.File, r.Error, p.Src)
			case len(r.Points) != len(p.Points):
				t.Fatalf("%s: %d results for %d points", p.File, len(r.Points), len(p.Points))
			}
			var msgs []string
			var worst [3]float64
			for k := range p.Points {
				msgs = append(msgs, checkPoint(p.Points[k], r.Points[k], p.P, fmt.Sprintf("point %d: ", k))...)
				for i, pair := range [3][2][]num{{r.Points[k].Grad, r.Points[k].FDGrad}, {r.Points[k].Hess, r.Points[k].FDHess}, {r.Points[k].DeltaGrad, r.Points[k].FDDeltaGrad}} {
					worst[i] = math.Max(worst[i], maxRelErr(pair[0], pair[1]))
				}
			}
			t.Logf("P = %d; largest relative errors: gradient %.2g, Hessian %.2g, delta gradient %.2g", p.P, worst[0], worst[1], worst[2])
			if len(msgs) > 0 {
				const maxShown = 12
				if len(msgs) > maxShown {
					msgs = append(msgs[:maxShown], fmt.Sprintf("... and %d more", len(msgs)-maxShown))
				}
				t.Errorf("%s: derivatives disagree with finite differences (or the two kernels with each other):\n\t%s\nmodel:\n%s", p.File, strings.Join(msgs, "\n\t"), p.Src)
			}
		})
		rep.Checked++
	}
	t.Logf("generated and built in %v, ran in %v", built.Sub(start).Round(time.Millisecond), time.Since(built).Round(time.Millisecond))
	return rep
}

// checkPoint compares one point's kernel results with finite differences
// and with each other, returning a message per disagreement.
func checkPoint(pt evalPoint, r pointResult, p int, prefix string) []string {
	var msgs []string
	bad := func(format string, args ...any) { msgs = append(msgs, prefix+fmt.Sprintf(format, args...)) }
	lens := []struct {
		what string
		got  int
		want int
	}{
		{"grad", len(r.Grad), p}, {"fdGrad", len(r.FDGrad), p}, {"hess", len(r.Hess), p * p},
		{"fdHess", len(r.FDHess), p * p}, {"deltaGrad", len(r.DeltaGrad), p},
		{"deltaHess", len(r.DeltaHess), p * p}, {"fdDeltaGrad", len(r.FDDeltaGrad), p},
		{"fdDeltaHess", len(r.FDDeltaHess), p * p},
	}
	for _, l := range lens {
		if l.got != l.want {
			bad("%s has %d entries, want %d", l.what, l.got, l.want)
		}
	}
	if len(msgs) > 0 {
		return msgs
	}
	finite := func(what string, xs ...num) bool {
		for i, x := range xs {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				bad("%s[%d] = %v (a domain error at θ = %.4g)", what, i, float64(x), pt.Theta)
				return false
			}
		}
		return true
	}
	if !finite("f", r.F) || !finite("grad", r.Grad...) || !finite("hess", r.Hess...) ||
		!finite("delta", r.Delta) || !finite("deltaGrad", r.DeltaGrad...) || !finite("deltaHess", r.DeltaHess...) {
		return msgs
	}
	// cmp compares got with the reference want, described by ref.
	cmp := func(what string, got, want []num, tol float64, ref string) {
		for i := range got {
			g, w := float64(got[i]), float64(want[i])
			if d := math.Abs(g - w); !(d <= tol*math.Max(1, math.Abs(w))) {
				at := ""
				switch {
				case len(got) == p*p && p > 1:
					at = fmt.Sprintf("[%d,%d]", i/p, i%p)
				case len(got) > 1 || p > 1:
					at = fmt.Sprintf("[%d]", i)
				}
				bad("%s%s = %.12g, %s %.12g (error %.3g)", what, at, g, ref, w, d)
			}
		}
	}
	const byFD = "finite differences give"
	cmp("grad", r.Grad, r.FDGrad, gradTol, byFD)
	cmp("hess", r.Hess, r.FDHess, secondTol, byFD)
	cmp("delta grad", r.DeltaGrad, r.FDDeltaGrad, secondTol, byFD)
	// The delta kernel's Hessian is that of f + ½Tr{∇²fΣ} (with third and
	// fourth derivatives of f), and its value is f + ½Tr{∇²fΣ}.
	cmp("delta hess", r.DeltaHess, r.FDDeltaHess, secondTol, byFD)
	want := float64(r.F)
	for i := range r.Hess {
		want += 0.5 * float64(r.Hess[i]) * pt.Cov[i]
	}
	cmp("delta value", []num{r.Delta}, []num{num(want)}, consistTol, "f + ½Tr{∇²fΣ} from ThetaF is")
	return msgs
}

// maxRelErr is the largest |got − fd| / max(1, |fd|).
func maxRelErr(got, fd []num) float64 {
	m := 0.0
	for i := range got {
		if i < len(fd) {
			m = math.Max(m, math.Abs(float64(got[i]-fd[i]))/math.Max(1, math.Abs(float64(fd[i]))))
		}
	}
	return m
}

// prepare loads and generates one case into dir/pkg and draws its data and
// points. skip is set when generation reports something not supported yet.
func prepare(c fdCase, pkg, dir string, seed uint64) (p *prepared, skip bool, err error) {
	m, err := spec.Load(c.File, c.Src)
	if err != nil {
		return nil, false, fmt.Errorf("load: %v", err)
	}
	files, err := generate(m, pkg)
	if err != nil {
		if strings.Contains(err.Error(), "not supported") {
			return nil, true, err
		}
		return nil, false, fmt.Errorf("generate: %v", err)
	}
	var latent *ir.Var
	for _, v := range m.VarsWithRole(ir.RoleLatent) {
		if v.Treatment.Nonconjugate() {
			if latent != nil {
				return nil, false, fmt.Errorf("the harness handles one nonconjugate latent, found %s and %s", latent.Name, v.Name)
			}
			latent = v
		}
	}
	if latent == nil || latent.Type.Rank() != 1 {
		return nil, false, fmt.Errorf("the harness needs one nonconjugate latent vector real[P]")
	}
	h := fnv.New64a()
	h.Write([]byte(c.Name))
	rng := rand.New(rand.NewPCG(seed, h.Sum64()))
	data, sizes, err := randomData(m, rng)
	if err != nil {
		return nil, false, err
	}
	p = &prepared{fdCase: c, Pkg: pkg, Latent: latent.Name, P: sizes[latent.Type.Dims[0]], Data: data}
	for k := 0; k < pointsPerModel; k++ {
		p.Points = append(p.Points, randomPoint(rng, p.P))
	}
	pkgDir := filepath.Join(dir, pkg)
	if err := os.MkdirAll(pkgDir, 0o755); err != nil {
		return nil, false, err
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(pkgDir, f.Name), f.Src, 0o644); err != nil {
			return nil, false, err
		}
	}
	return p, false, nil
}

// generate derives m and runs codegen.Generate, turning a panic into an
// error.
func generate(m *ir.Model, pkg string) (files []codegen.File, err error) {
	defer func() {
		if e := recover(); e != nil {
			err = fmt.Errorf("panic: %v", e)
		}
	}()
	d, err := derive.Derive(m)
	if err != nil {
		return nil, err
	}
	return codegen.Generate(d, codegen.Options{Package: pkg, Methods: []string{"delta"}}) // drivers call the delta kernels
}

// randomPoint draws θ ~ N(0, 0.5²) and a small random SPD Σ = BBᵀ + 0.01 I
// with B ~ N(0, 0.1²).
func randomPoint(rng *rand.Rand, p int) evalPoint {
	pt := evalPoint{Theta: make([]float64, p), Cov: make([]float64, p*p)}
	for i := range pt.Theta {
		pt.Theta[i] = 0.5 * rng.NormFloat64()
	}
	b := make([]float64, p*p)
	for i := range b {
		b[i] = 0.1 * rng.NormFloat64()
	}
	for i := 0; i < p; i++ {
		for j := 0; j < p; j++ {
			s := 0.0
			for k := 0; k < p; k++ {
				s += b[i*p+k] * b[j*p+k]
			}
			if i == j {
				s += 0.01
			}
			pt.Cov[i*p+j] = s
		}
	}
	return pt
}

// domain is the set of values a real data or const variable may take, as
// far as the model's statements tell.
type domain int

const (
	anyReal  domain = iota // N(0, 1)
	positive               // uniform on (0.5, 2)
	unit                   // uniform on (0.1, 0.9)
)

func (d domain) merge(e domain) domain {
	if d == unit || e == unit {
		return unit
	}
	if d == positive || e == positive {
		return positive
	}
	return anyReal
}

// valueDomain is the support of each family's (real) value; paramDomain
// the domain of each parameter, by position. Families not listed take any
// real value and have unconstrained (or class-constrained) parameters.
var (
	valueDomain = map[string]domain{
		"Gamma": positive, "InverseGamma": positive, "Exponential": positive, "LogNormal": positive, "Beta": unit,
	}
	paramDomain = map[string][]domain{
		"Normal":       {anyReal, positive},
		"Bernoulli":    {unit},
		"Gamma":        {positive, positive},
		"InverseGamma": {positive, positive},
		"Beta":         {positive, positive},
		"Binomial":     {positive, unit},
		"Poisson":      {positive},
		"Exponential":  {positive},
		"LogNormal":    {anyReal, positive},
		"StudentT":     {positive, anyReal, positive},
		"Dirichlet":    {positive},
	}
	// positiveFuncs need a positive argument.
	positiveFuncs = map[string]bool{"log": true, "log1p": true, "sqrt": true, "lgamma": true, "digamma": true}
)

// domains infers the domain of every real data and const variable from how
// the model uses it: as the target of a family with restricted support, as
// a bare argument in a restricted parameter position, directly under a
// function needing a positive argument, as a divisor or as the base of a
// non-integer power. Anything else is drawn from N(0, 1), so corpus models
// keep other uses of data domain-safe by construction.
func domains(m *ir.Model) map[string]domain {
	out := map[string]domain{}
	mark := func(e ir.Expr, d domain) {
		if r, ok := e.(*ir.Ref); ok && d != anyReal {
			out[r.Var.Name] = out[r.Var.Name].merge(d)
		}
	}
	for _, f := range m.Factors {
		d := valueDomain[f.Dist]
		if fam := ir.Families[f.Dist]; fam != nil && fam.Support == ir.SupportPositive {
			d = positive // HalfNormal, Weibull, …: the table's support
		}
		mark(f.Target, d)
		for k, a := range f.Args {
			if ds := paramDomain[f.Dist]; k < len(ds) {
				mark(a, ds[k])
			}
			ir.Walk(a, func(e ir.Expr) {
				switch e := e.(type) {
				case *ir.Call:
					if positiveFuncs[e.Func] {
						mark(e.Args[0], positive)
					}
				case *ir.Binary:
					if e.Op == '/' {
						mark(e.Y, positive)
					}
					if n, ok := e.Y.(*ir.Num); e.Op == '^' && (!ok || n.Value != math.Trunc(n.Value)) {
						mark(e.X, positive)
					}
				}
			})
		}
	}
	return out
}

// randomData draws a JSON data object for m: every size uniformly in 2..5
// (or the length of the vector built in the model it was matched with),
// every data variable and every const without a default according to its
// type (reals by domains; ints uniformly in their declared range, 0..5 if
// unbounded; cov random SPD; simplex random points; bags random documents
// of [term, count] pairs). It returns the data and the sizes.
func randomData(m *ir.Model, rng *rand.Rand) (map[string]any, map[string]int, error) {
	data := map[string]any{}
	sizes := map[string]int{}
	for _, v := range m.VarsWithRole(ir.RoleSize) {
		sizes[v.Name] = 2 + rng.IntN(4)
		data[v.Name] = sizes[v.Name]
	}
	// A size matched with the length of a vector built in the model is
	// that length.
	for _, sc := range m.SizeChecks {
		n := sc.Const
		for _, s := range sc.Sizes {
			n += sizes[s]
		}
		sizes[sc.Size] = n
		data[sc.Size] = n
	}
	// Bags come first: a dimension naming a bag has one entry per token,
	// that is per (term, count) entry, of each document.
	tokens := map[string]func(sel []int) int{}
	for _, v := range m.Vars {
		if v.Type.Class != ir.Bag || v.Role != ir.RoleData {
			continue
		}
		hi, err := bound(v.Type.Range[1], sizes)
		if err != nil {
			return nil, nil, err
		}
		docs := make([][][2]int, sizes[v.Type.Dims[0]])
		for d := range docs {
			for _, term := range rng.Perm(hi)[:1+rng.IntN(min(hi, 4))] {
				docs[d] = append(docs[d], [2]int{term + 1, 1 + rng.IntN(3)})
			}
		}
		data[v.Name] = docs
		tokens[v.Name] = func(sel []int) int { return len(docs[sel[0]]) }
	}
	doms := domains(m)
	for _, v := range m.Vars {
		if v.Type.Class == ir.Bag || v.Role != ir.RoleData && !(v.Role == ir.RoleConst && v.Default == nil) {
			continue
		}
		t := v.Type
		// length(k, sel) is the length of dimension k given the indices
		// sel of the dimensions before it.
		length := func(k int, sel []int) int { return sizes[t.Dims[k]] }
		for _, d := range t.Dims {
			if _, ok := sizes[d]; ok {
				continue
			}
			if tokens[d] == nil {
				return nil, nil, fmt.Errorf("%s: the harness cannot generate data with dimension %s", v.Name, d)
			}
			length = func(k int, sel []int) int {
				if n, ok := sizes[t.Dims[k]]; ok {
					return n
				}
				return tokens[t.Dims[k]](sel)
			}
		}
		rank := len(t.Dims)
		var leaf func() any
		switch {
		case t.Class == ir.Cov:
			k := sizes[t.Dims[rank-1]]
			rank -= 2
			leaf = func() any { return randomSPD(rng, k) }
		case t.Class == ir.Simplex:
			k := sizes[t.Dims[rank-1]]
			rank--
			leaf = func() any {
				x := make([]float64, k)
				s := 0.0
				for i := range x {
					x[i] = 0.2 + rng.Float64()
					s += x[i]
				}
				for i := range x {
					x[i] /= s
				}
				return x
			}
		case t.Kind == ir.Int:
			lo, hi := 0, 5
			if t.Range != nil {
				var err error
				if lo, err = bound(t.Range[0], sizes); err != nil {
					return nil, nil, err
				}
				if hi, err = bound(t.Range[1], sizes); err != nil {
					return nil, nil, err
				}
			}
			leaf = func() any { return lo + rng.IntN(hi-lo+1) }
		default:
			d := doms[v.Name]
			leaf = func() any {
				switch d {
				case positive:
					return 0.5 + 1.5*rng.Float64()
				case unit:
					return 0.1 + 0.8*rng.Float64()
				}
				return rng.NormFloat64()
			}
		}
		data[v.Name] = array(rank, length, nil, leaf)
	}
	return data, sizes, nil
}

func bound(b ir.Bound, sizes map[string]int) (int, error) {
	if b.Size == "" {
		return b.Value, nil
	}
	n, ok := sizes[b.Size]
	if !ok {
		return 0, fmt.Errorf("unknown size %s in a range", b.Size)
	}
	return n, nil
}

// array builds a nested JSON array of the given rank, outermost dimension
// first, whose dimension k has length(k, sel) entries for the indices sel
// of the dimensions before it, with elements from leaf.
func array(rank int, length func(k int, sel []int) int, sel []int, leaf func() any) any {
	if len(sel) == rank {
		return leaf()
	}
	out := make([]any, length(len(sel), sel))
	for i := range out {
		out[i] = array(rank, length, append(sel, i), leaf)
	}
	return out
}

// randomSPD returns AAᵀ/k + ½I with A ~ N(0, 1), as rows.
func randomSPD(rng *rand.Rand, k int) [][]float64 {
	a := make([]float64, k*k)
	for i := range a {
		a[i] = rng.NormFloat64()
	}
	out := make([][]float64, k)
	for i := range out {
		out[i] = make([]float64, k)
		for j := range out[i] {
			s := 0.0
			for l := 0; l < k; l++ {
				s += a[i*k+l] * a[j*k+l]
			}
			out[i][j] = s / float64(k)
			if i == j {
				out[i][j] += 0.5
			}
		}
	}
	return out
}

// sanitize makes a name usable in a Go package name.
func sanitize(s string) string {
	var sb strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			sb.WriteRune(r)
		} else {
			sb.WriteByte('_')
		}
	}
	return sb.String()
}

// exported is the Go name generated code uses for a model name in method
// names (theta → Theta).
func exported(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// attributeBuildErrors maps the packages named in go build's output
// ("# import/path" headers) to their error text. Errors in the driver
// itself are attributed to the package whose alias they mention.
func attributeBuildErrors(out string, ready []*prepared) map[string]string {
	bad := map[string]string{}
	var cur string
	var driverLines []string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "# ") {
			path := strings.TrimPrefix(line, "# ")
			cur = ""
			if pkg, ok := strings.CutPrefix(path, tempModulePath+"/"); ok {
				cur = pkg
			} else if path == tempModulePath {
				cur = "main"
			}
			continue
		}
		switch cur {
		case "":
		case "main":
			driverLines = append(driverLines, line)
		default:
			bad[cur] += line + "\n"
		}
	}
	for _, line := range driverLines {
		for _, p := range ready {
			if regexp.MustCompile(`\b` + p.Pkg + `\b`).MatchString(line) {
				bad[p.Pkg] += line + "\n"
			}
		}
	}
	return bad
}

// writeDriver writes dir/main.go, the driver testdata/drivers/fd_kernels.go,
// and dir/models.go, which imports every package of ready.
func writeDriver(dir string, ready []*prepared) error {
	drv, err := os.ReadFile(filepath.Join("testdata", "drivers", "fd_kernels.go"))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), drv, 0o644); err != nil {
		return err
	}
	type imp struct{ Name, Path, F, Delta string }
	var imps []imp
	for _, p := range ready {
		imps = append(imps, imp{Name: p.Pkg, Path: tempModulePath + "/" + p.Pkg,
			F: exported(p.Latent) + "F", Delta: exported(p.Latent) + "Delta"})
	}
	sort.Slice(imps, func(i, j int) bool { return imps[i].Name < imps[j].Name })
	var buf bytes.Buffer
	if err := modelsTmpl.Execute(&buf, imps); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "models.go"), buf.Bytes(), 0o644)
}

// modelsTmpl is models.go of fd_kernels.go: the kernels of every package.
var modelsTmpl = template.Must(template.New("models").Delims("«", "»").Parse(`package main

import (
	"bytes"
«range .»
	«.Name» "«.Path»"
«- end»
)

var models = map[string]func([]byte) (kernels, error){
«- range .»
	"«.Name»": func(b []byte) (kernels, error) {
		d, err := «.Name».LoadData(bytes.NewReader(b))
		if err != nil {
			return kernels{}, err
		}
		m, err := «.Name».NewModel(d)
		if err != nil {
			return kernels{}, err
		}
		return kernels{m.«.F», m.«.Delta»}, nil
	},
«- end»
}
`))
