package codegen

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/vigen-go/vigen/derive"
	"github.com/vigen-go/vigen/golden"
	"github.com/vigen-go/vigen/spec"
	"github.com/vigen-go/vigen/spec/ir"
)

// End-to-end: generate a package from a model, compile it with a small
// driver, run it on data, and compare the posterior with an independent
// computation. Bayesian linear regression with known noise is Gaussian, so
// Laplace VI and the delta method must both return the exact posterior
//
//	Σ = (Σ0⁻¹ + XᵀX/s²)⁻¹,   μ = Σ (Σ0⁻¹μ0 + Xᵀy/s²).

const linregVI = `model linreg
size N, P
data x : real[N, P]
data y : real[N]
const s : real = 0.5
const mu0 : real[P] = 0.25
const Sigma0 : cov[P] = 2 * eye(P)
latent beta : real[P] nonconjugate laplace
beta ~ MvNormal(mu0, Sigma0)
for n in 1:N {
  y[n] ~ Normal(dot(x[n], beta), s)
}
`

// The same posterior written with an elementwise prior and an offset.
const linreg2VI = `model linreg2
size N, P
data x : real[N, P]
data y : real[N]
const s : real = 0.5
const b0 : real = 0
latent beta : real[P] nonconjugate delta
beta ~ Normal(0.25, sqrt(2))
for n in 1:N {
  y[n] ~ Normal(b0 + dot(x[n], beta), s)
}
`

type gaussianJSON struct {
	Mean   []float64            `json:"mean"`
	Cov    [][]float64          `json:"cov"`
	Params map[string][]float64 `json:"params"` // conjugate factors
	Units  []gaussianJSON       `json:"-"`      // a per-unit latent: one Gaussian per unit
	// Constrained is a constrained latent's summary on its own scale.
	Constrained *struct {
		Method                  string
		Mean, SD, Q05, Q50, Q95 []float64
	} `json:"constrained"`
}

// UnmarshalJSON reads one factor, or a per-unit latent's list of them
// into Units.
func (g *gaussianJSON) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '[' {
		return json.Unmarshal(b, &g.Units)
	}
	type plain gaussianJSON
	return json.Unmarshal(b, (*plain)(g))
}

type resultJSON struct {
	Method    string                  `json:"method"`
	Converged bool                    `json:"converged"`
	Status    string                  `json:"status"`
	ELBO      []float64               `json:"elbo"`
	Latent    map[string]gaussianJSON `json:"latent"`
	Params    map[string][]float64    `json:"params"` // vector params (variational EM)
}

// driverSource is drv, which imports the generated package as tmpe2e/PKG,
// with PKG replaced by the package's name in a tempModule.
func driverSource(drv, name string) string {
	return strings.ReplaceAll(drv, "PKG", name)
}

// The helpers below build one program with `go run`, for a test whose
// model is only known when it runs; registered cases (e2ebuild_test.go)
// are built together, once.

// buildAndRun generates src into a throwaway package in a tempModule, runs
// fit_laplace_delta.go on data and returns its decoded output.
func buildAndRun(t *testing.T, name, src string, data []byte) []resultJSON {
	t.Helper()
	return buildAndRunWith(t, name, src, data, "")
}

// buildAndRunWith is buildAndRun with more fields of Options, as Go source
// starting with a comma.
func buildAndRunWith(t *testing.T, name, src string, data []byte, opts string) []resultJSON {
	t.Helper()
	drv, err := driverText("fit_laplace_delta.go", "/* OPTS */", opts)
	if err != nil {
		t.Fatal(err)
	}
	out := buildAndRunDriver(t, name, src, data, drv)
	var res []resultJSON
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("driver output: %v\n%s", err, out)
	}
	return res
}

// buildAndRunDriver generates src into a throwaway package in a
// tempModule, runs drv (a main package importing it as tmpe2e/PKG) on data and
// returns its stdout.
func buildAndRunDriver(t *testing.T, name, src string, data []byte, drv string) []byte {
	t.Helper()
	return buildAndRunFiles(t, name, src, data, drv, nil)
}

// buildAndRunFiles is buildAndRunDriver with extra files (name → source,
// PKG replaced by the package name) written into the generated package.
func buildAndRunFiles(t *testing.T, name, src string, data []byte, drv string, extra map[string]string) []byte {
	t.Helper()
	if testing.Short() {
		t.Skip("skipping compile-and-run test in -short mode")
	}
	m, err := spec.Load(name+".vi", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	files, err := generateModel(m, Options{Methods: []string{"delta"}}) // drivers fit by laplace and delta
	if err != nil {
		t.Fatal(err)
	}
	dir := tempModule(t)
	pkgDir := writePackage(t, dir, name, files)
	for fn, s := range extra {
		if err := os.WriteFile(filepath.Join(pkgDir, fn), []byte(strings.ReplaceAll(s, "PKG", name)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(driverSource(drv, name)), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := goCommand(dir, "run", ".")
	cmd.Stdin = bytes.NewReader(data)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go run: %v\n%s", err, stderr.String())
	}
	return out
}

func linregData(rng *rand.Rand, n, p int) ([][]float64, []float64, []byte) {
	x := make([][]float64, n)
	y := make([]float64, n)
	for i := range x {
		x[i] = make([]float64, p)
		u := 0.3
		for j := range x[i] {
			x[i][j] = rng.NormFloat64()
			u += x[i][j] * float64(j-1)
		}
		y[i] = u + 0.5*rng.NormFloat64()
	}
	b, _ := json.Marshal(map[string]any{"x": x, "y": y})
	return x, y, b
}

func exactPosterior(x [][]float64, y []float64, s, mu0, v0 float64) (*mat.VecDense, *mat.SymDense) {
	p := len(x[0])
	prec := mat.NewSymDense(p, nil)
	rhs := mat.NewVecDense(p, nil)
	for i := 0; i < p; i++ {
		prec.SetSym(i, i, 1/v0)
		rhs.SetVec(i, mu0/v0)
	}
	for n, row := range x {
		for i := 0; i < p; i++ {
			rhs.SetVec(i, rhs.AtVec(i)+row[i]*y[n]/(s*s))
			for j := i; j < p; j++ {
				prec.SetSym(i, j, prec.At(i, j)+row[i]*row[j]/(s*s))
			}
		}
	}
	var ch mat.Cholesky
	ch.Factorize(prec)
	cov := mat.NewSymDense(p, nil)
	ch.InverseTo(cov)
	mean := mat.NewVecDense(p, nil)
	mean.MulVec(cov, rhs)
	return mean, cov
}

var linregExact = fastTest("TestEndToEndLinearRegressionIsExact")

var linregExactCases = []struct {
	name string
	c    *e2eCase
}{{"linreg", linregExact.fits("linreg", linregVI, "")}, {"linreg2", linregExact.fits("linreg2", linreg2VI, "")}}

func TestEndToEndLinearRegressionIsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	x, y, data := linregData(rng, 80, 4)
	mean, cov := exactPosterior(x, y, 0.5, 0.25, 2)
	for _, c := range linregExactCases {
		t.Run(c.name, func(t *testing.T) {
			res := c.c.results(t, data)
			if len(res) != 2 {
				t.Fatalf("driver returned %d results, want 2", len(res))
			}
			for _, r := range res {
				if !r.Converged {
					t.Errorf("%s: not converged: %s", r.Method, r.Status)
				}
				g := r.Latent["beta"]
				for i := range g.Mean {
					if d := math.Abs(g.Mean[i] - mean.AtVec(i)); d > 1e-9 {
						t.Errorf("%s: mean[%d] = %.12g, exact %.12g", r.Method, i, g.Mean[i], mean.AtVec(i))
					}
					for j := range g.Mean {
						if d := math.Abs(g.Cov[i][j] - cov.At(i, j)); d > 1e-9 {
							t.Errorf("%s: cov[%d][%d] = %.12g, exact %.12g", r.Method, i, j, g.Cov[i][j], cov.At(i, j))
						}
					}
				}
				// The posterior is Gaussian, so Eq. 21 is the exact log
				// evidence; check it against the closed form.
				want := logEvidence(x, y, 0.5, 0.25, 2)
				if got := r.ELBO[len(r.ELBO)-1]; math.Abs(got-want) > 1e-8*math.Abs(want) {
					t.Errorf("%s: ELBO %.10g, exact log evidence %.10g", r.Method, got, want)
				}
			}
		})
	}
}

// logEvidence is log N(y; X m0, s²I + v0 XXᵀ), computed directly.
func logEvidence(x [][]float64, y []float64, s, mu0, v0 float64) float64 {
	n := len(x)
	c := mat.NewSymDense(n, nil)
	r := mat.NewVecDense(n, nil)
	for i := 0; i < n; i++ {
		m := 0.0
		for _, v := range x[i] {
			m += v * mu0
		}
		r.SetVec(i, y[i]-m)
		for j := i; j < n; j++ {
			d := 0.0
			for k := range x[i] {
				d += x[i][k] * x[j][k] * v0
			}
			if i == j {
				d += s * s
			}
			c.SetSym(i, j, d)
		}
	}
	var ch mat.Cholesky
	ch.Factorize(c)
	z := mat.NewVecDense(n, nil)
	ch.SolveVecTo(z, r)
	return -0.5*float64(n)*math.Log(2*math.Pi) - 0.5*ch.LogDet() - 0.5*mat.Dot(r, z)
}

// Loop indices named like Go keywords or like the scheduler's temporaries,
// and sizes named like Go builtins, still give code that compiles and is
// exact.
const awkwardVI = `model awkward
size len, P
data x : real[len, P]
data y : real[len]
const s : real = 0.5
const mu0 : real[P] = 0.25
const Sigma0 : cov[P] = 2 * eye(P)
latent beta : real[P] nonconjugate laplace
beta ~ MvNormal(mu0, Sigma0)
for range in 1:len {
  y[range] ~ Normal(dot(x[range], beta), s)
}
`

var awkward = slowTest("TestEndToEndAwkwardNames")

var awkwardCases = [2]*e2eCase{
	awkward.fits("awkward", strings.ReplaceAll(awkwardVI, "range", "t3"), ""),
	awkward.fits("awkward", awkwardVI, ""),
}

func TestEndToEndAwkwardNames(t *testing.T) {
	golden.SlowTier(t)
	rng := rand.New(rand.NewPCG(13, 14))
	x, y, data := linregData(rng, 30, 3)
	mean, _ := exactPosterior(x, y, 0.5, 0.25, 2)
	res := awkwardCases[0].results(t, data)
	res = append(res, awkwardCases[1].results(t, data)...)
	for _, r := range res {
		for i, v := range r.Latent["beta"].Mean {
			if math.Abs(v-mean.AtVec(i)) > 1e-9 {
				t.Errorf("%s: mean[%d] = %g, exact %g", r.Method, i, v, mean.AtVec(i))
			}
		}
	}
}

func TestBadPackageName(t *testing.T) {
	for _, name := range []string{"main", "func"} {
		m, err := spec.Load("m.vi", []byte(strings.Replace(linregVI, "model linreg", "model "+name, 1)))
		if err != nil {
			t.Fatal(err)
		}
		_, err = generateModel(m, Options{})
		if err == nil || !strings.Contains(err.Error(), "cannot be the name of a Go package") {
			t.Errorf("model %s: error %v", name, err)
		}
	}
}

// Conjugate updates: a Normal mean and a Gamma precision, each the only
// latent, are fitted exactly by one closed-form update (Eq. 18):
//
//	mu | y ~ N((m0/v0 + Σy/s²)/P, 1/P),  P = 1/v0 + N/s²
//	tau | y ~ Gamma(a + N/2, b + Σy²/2)
//
// and the ELBO of the Normal model equals the log evidence.
const normalMeanVI = `model nmean
size N
data y : real[N]
const s : real = 0.5
latent mu : real conjugate
mu ~ Normal(1, 2)
for n in 1:N {
  y[n] ~ Normal(mu, s)
}
`

const gammaPrecVI = `model gprec
size N
data y : real[N]
latent tau : real conjugate
tau ~ Gamma(2, 3)
for n in 1:N {
  y[n] ~ Normal(0, 1 / sqrt(tau))
}
`

var (
	conjExact      = fastTest("TestEndToEndConjugateUpdatesAreExact")
	normalMeanCase = conjExact.fits("nmean", normalMeanVI, "")
	gammaPrecCase  = conjExact.fits("gprec", gammaPrecVI, "")
)

func TestEndToEndConjugateUpdatesAreExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const n = 40
	y := make([]float64, n)
	sum, sum2 := 0.0, 0.0
	for i := range y {
		y[i] = 0.7 + 0.5*rng.NormFloat64()
		sum += y[i]
		sum2 += y[i] * y[i]
	}
	data, _ := json.Marshal(map[string]any{"y": y})

	res := normalMeanCase.results(t, data)[0]
	prec := 1/4.0 + n/0.25
	mean := (1/4.0 + sum/0.25) / prec
	q := res.Latent["mu"].Params
	if !res.Converged || math.Abs(q["mean"][0]-mean) > 1e-12*math.Abs(mean) || math.Abs(q["sd"][0]-1/math.Sqrt(prec)) > 1e-12 {
		t.Errorf("Normal mean: got %v (%s), want mean %.15g sd %.15g", q, res.Status, mean, 1/math.Sqrt(prec))
	}
	// log evidence: y ~ N(1, s²I + v0·11ᵀ)
	cov := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			v := 4.0
			if i == j {
				v += 0.25
			}
			cov.SetSym(i, j, v)
		}
	}
	var ch mat.Cholesky
	ch.Factorize(cov)
	r := mat.NewVecDense(n, nil)
	for i := range y {
		r.SetVec(i, y[i]-1)
	}
	var sol mat.VecDense
	ch.SolveVecTo(&sol, r)
	logEv := -0.5*float64(n)*math.Log(2*math.Pi) - 0.5*ch.LogDet() - 0.5*mat.Dot(r, &sol)
	if elbo := res.ELBO[len(res.ELBO)-1]; math.Abs(elbo-logEv) > 1e-9*math.Abs(logEv) {
		t.Errorf("Normal mean: ELBO %.12g, log evidence %.12g", elbo, logEv)
	}

	res = gammaPrecCase.results(t, data)[0]
	q = res.Latent["tau"].Params
	shape, rate := 2+n/2.0, 3+sum2/2
	if math.Abs(q["shape"][0]-shape) > 1e-12*shape || math.Abs(q["rate"][0]-rate) > 1e-12*rate {
		t.Errorf("Gamma precision: got %v, want shape %.15g rate %.15g", q, shape, rate)
	}
}

// A param without a closed-form M-step is maximized by Newton's method on
// its derived objective. Fixed effects w next to Bayesian coefficients β in
// linear regression, y ~ N(Tw + Xβ, s²I), β ~ N(μ0, Σ0): the E-step is
// exact, so variational EM converges to the maximum of the marginal
// likelihood N(y; Tw + Xμ0, C), C = s²I + XΣ0Xᵀ, which is generalized
// least squares: w = (TᵀC⁻¹T)⁻¹ TᵀC⁻¹ (y − Xμ0).
const fixedEffVI = `model fixedeff
size N, P, Q
data x : real[N, P]
data t : real[N, Q]
data y : real[N]
const s : real = 0.5
const mu0 : real[P] = 0.25
const Sigma0 : cov[P] = 2 * eye(P)
param w : real[Q]
latent beta : real[P] nonconjugate laplace
beta ~ MvNormal(mu0, Sigma0)
for n in 1:N {
  y[n] ~ Normal(dot(t[n], w) + dot(x[n], beta), s)
}
`

var fixedEffCase = fastTest("TestEndToEndNumericMStepIsGLS").fits("fixedeff", fixedEffVI, ", Tol: 1e-15, MeanTol: 1e-12, MaxIter: 20000")

func TestEndToEndNumericMStepIsGLS(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	const n, p, q = 60, 3, 2
	x, y, _ := linregData(rng, n, p)
	tt := make([][]float64, n)
	for i := range tt {
		tt[i] = []float64{1, rng.NormFloat64()}
		y[i] += 1.5*tt[i][0] - 0.7*tt[i][1]
	}
	data, _ := json.Marshal(map[string]any{"x": x, "t": tt, "y": y})
	// GLS by hand
	X, T := mat.NewDense(n, p, nil), mat.NewDense(n, q, nil)
	r := mat.NewVecDense(n, nil)
	for i := range n {
		X.SetRow(i, x[i])
		T.SetRow(i, tt[i])
		u := y[i]
		for j := range p {
			u -= 0.25 * x[i][j]
		}
		r.SetVec(i, u)
	}
	var C mat.Dense
	C.Mul(X, X.T())
	C.Scale(2, &C)
	for i := range n {
		C.Set(i, i, C.At(i, i)+0.25)
	}
	var Ci mat.Dense
	if err := Ci.Inverse(&C); err != nil {
		t.Fatal(err)
	}
	var TtCi, A mat.Dense
	TtCi.Mul(T.T(), &Ci)
	A.Mul(&TtCi, T)
	var b, want mat.VecDense
	b.MulVec(&TtCi, r)
	if err := want.SolveVec(&A, &b); err != nil {
		t.Fatal(err)
	}
	res := fixedEffCase.results(t, data)
	for _, rr := range res {
		if !rr.Converged {
			t.Errorf("%s: not converged: %s", rr.Method, rr.Status)
		}
		w := rr.Params["w"]
		if len(w) != q {
			t.Fatalf("%s: params %v, want w of length %d", rr.Method, rr.Params, q)
		}
		// EM's fixed point to Tol 1e-15 on an ELBO of order 10²: w within 1e-6
		for i := range q {
			if math.Abs(w[i]-want.AtVec(i)) > 1e-6 {
				t.Errorf("%s: w[%d] = %.10g, GLS %.10g", rr.Method, i, w[i], want.AtVec(i))
			}
		}
	}
}

// f is not concave everywhere: for y[n] ~ Normal(exp(θ), 1) its second
// derivative Σ_n (y_n e^θ − 2e^{2θ}) − 1/v0 is positive at the start θ = 0
// when the y are large, so the first Newton steps meet an indefinite
// Hessian. The generated Laplace update must damp its way to the mode and
// report convergence; the mode and −1/f″ there are checked against a
// scalar Newton iteration written here.
var expMeanCase = fastTest("TestEndToEndIndefiniteStartReachesTheMode").fits("expmean", `model expmean
size N, P
data y : real[N]
latent theta : real[P] nonconjugate laplace
theta ~ Normal(0, sqrt(10))
for n in 1:N {
  y[n] ~ Normal(sum(exp(theta)), 1)
}
`, "")

func TestEndToEndIndefiniteStartReachesTheMode(t *testing.T) {
	y := []float64{9.5, 10, 10.5, 11}
	data, _ := json.Marshal(map[string]any{"y": y, "P": 1})
	fp := func(th float64) (g, h float64) {
		e := math.Exp(th)
		g, h = -th/10, -1.0/10
		for _, v := range y {
			g += (v - e) * e
			h += v*e - 2*e*e
		}
		return g, h
	}
	if _, h := fp(0); h <= 0 {
		t.Fatalf("test data do not make the start indefinite: f″(0) = %g", h)
	}
	mode := math.Log(10) // Newton from near the mode, where f is concave
	for range 100 {
		g, h := fp(mode)
		mode -= g / h
	}
	_, h := fp(mode)
	for _, r := range expMeanCase.results(t, data)[:1] { // the Laplace run
		g := r.Latent["theta"]
		if !r.Converged {
			t.Errorf("not converged: %s", r.Status)
		}
		if d := math.Abs(g.Mean[0] - mode); d > 1e-9 {
			t.Errorf("mean %.12g, mode %.12g", g.Mean[0], mode)
		}
		if d := math.Abs(g.Cov[0][0] + 1/h); d > 1e-9 {
			t.Errorf("variance %.12g, −1/f″ = %.12g", g.Cov[0][0], -1/h)
		}
	}
}

// generateModel derives m and generates its package, as vigen gen does.
// generatedSource loads the model src (as NAME.vi) and returns the code
// generated for it, every file concatenated.
func generatedSource(t *testing.T, name, src string) string {
	t.Helper()
	m, err := spec.Load(name+".vi", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	files, err := generateModel(m, Options{Methods: []string{"delta"}})
	if err != nil {
		t.Fatal(err)
	}
	var code strings.Builder
	for _, f := range files {
		code.Write(f.Src)
	}
	return code.String()
}

func generateModel(m *ir.Model, opts Options) ([]File, error) {
	d, err := derive.Derive(m)
	if err != nil {
		return nil, err
	}
	return Generate(d, opts)
}
