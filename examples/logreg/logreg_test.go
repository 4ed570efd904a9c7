package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"

	"github.com/vigen-go/vigen/examples/logreg/logreg"
	"github.com/vigen-go/vigen/golden"
	"github.com/vigen-go/vigen/runtime"
)

// sharedData returns the path of ../shared/data/<rel> next to the module,
// or skips the test with a message when it is absent (a fresh clone).
func sharedData(t testing.TB, rel string) string {
	t.Helper()
	dir, _ := os.Getwd()
	for d := dir; d != filepath.Dir(d); d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			p := filepath.Join(d, "..", "shared", "data", rel)
			if _, err := os.Stat(p); err != nil {
				t.Skipf("skipping: %s not found (the shared data sets are not in a fresh clone)", p)
			}
			return p
		}
	}
	t.Skip("skipping: module root not found")
	return ""
}

// logPost is the log posterior of logistic regression with a N(0, I) prior,
// up to a constant, written by hand (independent of vigen), with its
// gradient.
func logPost(x [][]float64, y []int, theta, grad []float64) float64 {
	f := 0.0
	for i := range grad {
		grad[i] = -theta[i]
		f -= 0.5 * theta[i] * theta[i]
	}
	for n, row := range x {
		u := 0.0
		for j, v := range row {
			u += v * theta[j]
		}
		z := float64(y[n])
		f += z*u - math.Log1p(math.Exp(-math.Abs(u))) - math.Max(u, 0)
		s := 1 / (1 + math.Exp(-u))
		for j, v := range row {
			grad[j] += (z - s) * v
		}
	}
	return f
}

// classicalLaplace computes the Laplace approximation independently: the
// mode by gonum's Newton method on the hand-written log posterior, the covariance as
// the inverse of a central finite-difference Hessian (of the gradient).
func classicalLaplace(t *testing.T, d *logreg.Data) ([]float64, *mat.SymDense) {
	p := len(d.X[0])
	grad := func(g, th []float64) { logPost(d.X, d.Y, th, g) }
	// The Hessian gonum's Newton method needs is a central finite-difference
	// Jacobian of the hand-written gradient.
	fdHess := func(th []float64) *mat.SymDense {
		jac := mat.NewDense(p, p, nil)
		fd.Jacobian(jac, grad, th, &fd.JacobianSettings{Formula: fd.Central, Step: 1e-5})
		h := mat.NewSymDense(p, nil)
		for i := 0; i < p; i++ {
			for j := i; j < p; j++ {
				h.SetSym(i, j, (jac.At(i, j)+jac.At(j, i))/2)
			}
		}
		return h
	}
	prob := optimize.Problem{
		Func: func(th []float64) float64 {
			g := make([]float64, p)
			return -logPost(d.X, d.Y, th, g)
		},
		Grad: func(g, th []float64) {
			grad(g, th)
			for i := range g {
				g[i] = -g[i]
			}
		},
		Hess: func(h *mat.SymDense, th []float64) {
			h.ScaleSym(-1, fdHess(th))
		},
	}
	res, err := optimize.Minimize(prob, make([]float64, p), &optimize.Settings{GradientThreshold: 1e-10, Converger: optimize.NeverTerminate{}}, &optimize.Newton{})
	if err != nil && res == nil {
		t.Fatal(err)
	}
	mode := res.X
	g := make([]float64, p)
	logPost(d.X, d.Y, mode, g)
	t.Logf("classical Laplace: gonum Newton %v after %d iterations, |gradient| ≤ %.2g", res.Status, res.Stats.MajorIterations, maxAbs(g))
	h := fdHess(mode)
	h.ScaleSym(-1, h)
	var ch mat.Cholesky
	if !ch.Factorize(h) {
		t.Fatal("finite-difference Hessian is not negative definite")
	}
	cov := mat.NewSymDense(p, nil)
	if err := ch.InverseTo(cov); err != nil {
		t.Fatal(err)
	}
	return mode, cov
}

func yeastLabel(t testing.TB, file, label string) *logreg.Data {
	d, err := readLabeled(sharedData(t, filepath.Join("yeast", file)), label, `^f[0-9]+$`)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestLaplaceIsClassicalLaplaceOnYeast(t *testing.T) {
	d := yeastLabel(t, "train.csv", "Class1")
	res, err := logreg.Fit(context.Background(), d, logreg.Options{Method: "laplace"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Converged {
		t.Fatalf("not converged: %s", res.Status)
	}
	mode, cov := classicalLaplace(t, d)
	g := res.Latent.Theta
	scale := 0.0
	for _, v := range mode {
		scale = math.Max(scale, math.Abs(v))
	}
	worstMean := 0.0
	for i, v := range mode {
		rel := math.Abs(g.Mean[i]-v) / math.Max(math.Abs(v), 1e-3*scale)
		worstMean = math.Max(worstMean, rel)
		if rel > 1e-6 {
			t.Errorf("mean[%d] = %.10g, classical Laplace %.10g", i, g.Mean[i], v)
		}
	}
	t.Logf("largest relative mean difference %.2g", worstMean)
	cscale := 0.0
	for i := range mode {
		cscale = math.Max(cscale, cov.At(i, i))
	}
	worst := 0.0
	for i := range mode {
		for j := range mode {
			worst = math.Max(worst, math.Abs(g.Cov[i][j]-cov.At(i, j))/cscale)
		}
	}
	if worst > 1e-4 {
		t.Errorf("covariance differs by %.3g relative to its largest variance", worst)
	}
	t.Logf("Yeast Class1: %d iterations, max covariance difference %.2g (relative)", res.Iterations, worst)
}

// deltaObjective is Eq. 17 for logistic regression with a N(0, I) prior,
// written by hand: f(μ) + ½Tr{∇²f(μ)Σ} with ∇²f(μ) = −Σ_n σ(1−σ) t tᵀ − I.
func deltaObjective(x [][]float64, y []int, sigma [][]float64, mu []float64) float64 {
	g := make([]float64, len(mu))
	f := logPost(x, y, mu, g)
	tr := 0.0
	for i := range mu {
		tr -= sigma[i][i]
	}
	for _, row := range x {
		u, q := 0.0, 0.0
		for j, v := range row {
			u += v * mu[j]
		}
		for i, a := range row {
			for j, b := range row {
				q += a * sigma[i][j] * b
			}
		}
		s := 1 / (1 + math.Exp(-u))
		tr -= s * (1 - s) * q
	}
	return f + 0.5*tr
}

func fdNorm(f func([]float64) float64, at []float64) float64 {
	g := fd.Gradient(nil, f, at, &fd.Settings{Formula: fd.Central, Step: 1e-6})
	n := 0.0
	for _, v := range g {
		n += v * v
	}
	return math.Sqrt(n)
}

func TestDeltaIsStationaryOnYeast(t *testing.T) {
	golden.SlowTier(t)
	d := yeastLabel(t, "train.csv", "Class1")
	res, err := logreg.Fit(context.Background(), d, logreg.Options{Method: "delta"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Converged {
		t.Fatalf("delta fit did not converge: %s after %d iterations", res.Status, res.Iterations)
	}
	g := res.Latent.Theta
	obj := func(mu []float64) float64 { return deltaObjective(d.X, d.Y, g.Cov, mu) }
	atEnd := fdNorm(obj, g.Mean)
	atStart := fdNorm(obj, make([]float64, len(g.Mean)))
	t.Logf("‖∇ Eq.17‖ at the fit %.3g, at μ=0 %.3g (%d iterations)", atEnd, atStart, res.Iterations)
	if atEnd > 1e-6*atStart {
		t.Errorf("gradient of the Eq. 17 objective at the returned μ is %.3g, %.3g relative to the start", atEnd, atEnd/atStart)
	}
}

// The generated derivatives against central finite differences of the
// generated function values, at random points.
func TestGeneratedDerivativesMatchFiniteDifferences(t *testing.T) {
	d, _ := Synthetic(7, 60, 5)
	m, err := logreg.NewModel(d)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	p := 5
	cov := make([]float64, p*p)
	for i := 0; i < p; i++ {
		for j := 0; j <= i; j++ {
			v := 0.1 * rng.NormFloat64()
			if i == j {
				v = 0.5 + rng.Float64()
			}
			cov[i*p+j], cov[j*p+i] = v, v
		}
	}
	for trial := 0; trial < 5; trial++ {
		theta := make([]float64, p)
		for i := range theta {
			theta[i] = rng.NormFloat64()
		}
		for _, k := range []struct {
			name string
			eval func(x, g, h []float64) float64
		}{
			{"ThetaF", m.ThetaF},
			{"ThetaDelta", func(x, g, h []float64) float64 { return m.ThetaDelta(x, cov, g, h) }},
		} {
			grad := make([]float64, p)
			hess := make([]float64, p*p)
			k.eval(theta, grad, hess)
			value := func(x []float64) float64 { return k.eval(x, make([]float64, p), make([]float64, p*p)) }
			want := fd.Gradient(nil, value, theta, &fd.Settings{Formula: fd.Central, Step: 1e-5})
			for i := range want {
				if math.Abs(grad[i]-want[i]) > 1e-6*math.Max(1, math.Abs(want[i])) {
					t.Errorf("%s gradient[%d] = %.10g, finite differences %.10g", k.name, i, grad[i], want[i])
				}
			}
			// ThetaF's hess is ∇²f; ThetaDelta's is the Hessian of the delta
			// objective: both are the Jacobian of the kernel's gradient.
			jac := mat.NewDense(p, p, nil)
			fd.Jacobian(jac, func(g, x []float64) { k.eval(x, g, make([]float64, p*p)) }, theta, &fd.JacobianSettings{Formula: fd.Central, Step: 1e-5})
			for i := 0; i < p; i++ {
				for j := 0; j < p; j++ {
					w := jac.At(i, j)
					if math.Abs(hess[i*p+j]-w) > 1e-5*math.Max(1, math.Abs(w)) {
						t.Errorf("%s Hessian[%d,%d] = %.10g, finite differences %.10g", k.name, i, j, hess[i*p+j], w)
					}
				}
			}
		}
	}
}

// Wang & Blei's Table 1, Yeast: Laplace inference with a N(0, I) prior on the
// 103 raw features plus an intercept, 14 independent labels.
func TestTable1Yeast(t *testing.T) {
	golden.SlowTier(t)
	if testing.Short() {
		t.Skip("skipping the 14-label Yeast run in -short mode")
	}
	train := sharedData(t, "yeast/train.csv")
	test := sharedData(t, "yeast/test.csv")
	for _, method := range []string{"laplace", "delta"} {
		var out bytes.Buffer
		err := run([]string{"-csv", train, "-test", test, "-label", "all", "-method", method, "-q"}, &out, os.Stderr)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		last := strings.Fields(lines[len(lines)-1])
		t.Logf("%s: %s", method, strings.Join(last, " "))
		if method != "laplace" {
			continue
		}
		acc, ll := last[1], last[2]
		// An independent exact Laplace computation gives 80.13% and −0.4490.
		if acc != "0.8013" || ll != "-0.4490" {
			t.Errorf("Laplace mean accuracy %s, loglik %s; want 0.8013 and -0.4490", acc, ll)
		}
	}
}

func TestBadDataNamesTheField(t *testing.T) {
	for _, c := range []struct{ json, want string }{
		{`{"x": [[1, 2], [3]], "y": [0, 1]}`, `"x"`},
		{`{"x": [[1, 2], [3, 4]], "y": [0, 2]}`, `"y"[2]: 2 is outside 0..1`},
		{`{"x": [[1, 2], [3, 4]], "y": [0, 1, 1]}`, `"y"`},
		{`{"x": [[1, 2], [3, 4]]}`, `"y" is missing`},
		{`{"x": "no", "y": [0, 1]}`, `"x"`},
		{`{"x": [[1, 2], [3, 4]], "y": [0, 1], "Sigma0": [[1, 2], [2, 1]]}`, `"Sigma0"`},
	} {
		_, err := logreg.LoadData(strings.NewReader(c.json))
		if err == nil {
			t.Errorf("%s: no error", c.json)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q does not mention %s", c.json, err, c.want)
		}
	}
}

func TestSyntheticRecoversCoefficients(t *testing.T) {
	d, truth := Synthetic(3, 4000, 4)
	res, err := logreg.Fit(context.Background(), d, logreg.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sd := res.Latent.Theta.SD()
	for i, v := range truth {
		if math.Abs(res.Latent.Theta.Mean[i]-v) > 4*sd[i] {
			t.Errorf("theta[%d] = %.3f ± %.3f, true %.3f", i, res.Latent.Theta.Mean[i], sd[i], v)
		}
	}
	for _, e := range res.ELBO {
		if math.IsNaN(e) || math.IsInf(e, 0) {
			t.Fatalf("ELBO trace has %v", e)
		}
	}
	_ = runtime.Version
}

func maxAbs(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = math.Max(m, math.Abs(x))
	}
	return m
}

// Fit checks its data before doing any work; each kind of bad value is an
// error naming the variable and the (1-based) index, never a panic or a
// NaN in the result.
func TestFitValidatesData(t *testing.T) {
	x := func() [][]float64 { return [][]float64{{1, 2}, {3, 4}, {5, 6}} }
	y := []int{0, 1, 1}
	withX := func(i, j int, v float64) [][]float64 { m := x(); m[i][j] = v; return m }
	for _, c := range []struct {
		name string
		data logreg.Data
		want string
	}{
		{"NaN", logreg.Data{X: withX(1, 1, math.NaN()), Y: y}, `data "x"[2, 2]: NaN is not a finite number`},
		{"+Inf", logreg.Data{X: withX(2, 0, math.Inf(1)), Y: y}, `data "x"[3, 1]: +Inf is not a finite number`},
		{"-Inf", logreg.Data{X: withX(0, 1, math.Inf(-1)), Y: y}, `data "x"[1, 2]: -Inf is not a finite number`},
		{"ragged row", logreg.Data{X: [][]float64{{1, 2}, {3}, {5, 6}}, Y: y}, `data "x"[2]: has 1 entries, want 2`},
		{"lengths disagree", logreg.Data{X: x(), Y: []int{0, 1}}, `size "N": "x" has 3 entries but "y" has 2 entries`},
		{"N given wrong", logreg.Data{N: 4, X: x(), Y: y}, `"N"`},
		{"label above range", logreg.Data{X: x(), Y: []int{0, 2, 1}}, `data "y"[2]: 2 is outside 0..1`},
		{"label below range", logreg.Data{X: x(), Y: []int{0, 1, -1}}, `data "y"[3]: -1 is outside 0..1`},
		{"prior mean NaN", logreg.Data{X: x(), Y: y, Mu0: []float64{0, math.NaN()}}, `data "mu0"[2]: NaN is not a finite number`},
		{"prior mean length", logreg.Data{X: x(), Y: y, Mu0: []float64{0, 0, 0}}, `"mu0"`},
		{"covariance indefinite", logreg.Data{X: x(), Y: y, Sigma0: [][]float64{{1, 2}, {2, 1}}},
			`data "Sigma0": not positive definite: Cholesky pivot 2 is -3, so the leading 2×2 block`},
		{"covariance singular", logreg.Data{X: x(), Y: y, Sigma0: [][]float64{{1, 1}, {1, 1}}}, `data "Sigma0": not positive definite: Cholesky pivot 2 is 0`},
		{"covariance asymmetric", logreg.Data{X: x(), Y: y, Sigma0: [][]float64{{1, 0.5}, {0.4, 1}}}, `data "Sigma0": not symmetric: entry [1, 2] is 0.5 but [2, 1] is 0.4`},
		{"covariance NaN", logreg.Data{X: x(), Y: y, Sigma0: [][]float64{{1, 0}, {0, math.NaN()}}}, `data "Sigma0"[2, 2]: NaN`},
		{"covariance shape", logreg.Data{X: x(), Y: y, Sigma0: [][]float64{{1, 0}}}, `"Sigma0"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var calls int
			res, err := logreg.Fit(context.Background(), &c.data, logreg.Options{Progress: func(runtime.Progress) { calls++ }})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %s", err, c.want)
			}
			if res != nil || calls > 0 {
				t.Errorf("Fit ran (%d iterations) before rejecting the data", calls)
			}
		})
	}
	// JSON input: what JSON can express beyond Go's types.
	for _, c := range []struct{ name, json, want string }{
		{"non-integer label", `{"x": [[1, 2], [3, 4]], "y": [0, 0.5]}`, `data "y"[2]: 0.5 is not an integer`},
		{"null entry", `{"x": [[1, 2], [3, null]], "y": [0, 1]}`, `"x"[2, 2]`},
		{"number too large", `{"x": [[1, 2], [3, 1e999]], "y": [0, 1]}`, `"x"[2, 2]`},
	} {
		if _, err := logreg.LoadData(strings.NewReader(c.json)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %s", c.name, err, c.want)
		}
	}
}

// Perfectly separable data: the likelihood alone has no maximum (it grows
// as the slope does), so only the prior keeps the posterior mode finite.
// With a wide prior the slope must come out large and positive, and with a
// nearly flat one Fit must still report finite numbers and say in Status
// how the optimization ended.
func TestSeparableData(t *testing.T) {
	const n = 40
	d := &logreg.Data{}
	for i := range n {
		x := -1 + 2*(float64(i)+0.5)/n
		d.X = append(d.X, []float64{1, x})
		y := 0
		if x > 0 {
			y = 1
		}
		d.Y = append(d.Y, y)
	}
	for _, c := range []struct {
		variance float64
		method   string
	}{{100, "laplace"}, {100, "delta"}, {1e12, "laplace"}, {1e12, "delta"}} {
		d.Sigma0 = [][]float64{{c.variance, 0}, {0, c.variance}}
		res, err := logreg.Fit(context.Background(), d, logreg.Options{Method: c.method})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := json.Marshal(res); err != nil {
			t.Fatalf("variance %g, %s: result has a NaN or Inf (status %q): %v", c.variance, c.method, res.Status, err)
		}
		mean := res.Latent.Theta.Mean
		if !(mean[1] > 10) {
			t.Errorf("variance %g, %s: slope %g, want a large positive slope", c.variance, c.method, mean[1])
		}
		if res.Status == "" || !res.Converged && res.Status == "converged" {
			t.Errorf("status %q, converged %v", res.Status, res.Converged)
		}
		t.Logf("variance %g, %s: status %s after %d iterations, slope %.4g ± %.3g", c.variance, c.method, res.Status, res.Iterations, mean[1], math.Sqrt(res.Latent.Theta.Cov[1][1]))
	}
}

// Covariates so large that the log joint's curvature overflows: Fit must
// not report a NaN or an infinity; it says in Status what happened and
// returns the last state whose numbers were finite.
func TestOverflowIsReportedNotReturned(t *testing.T) {
	d := &logreg.Data{X: [][]float64{{1e200, 1}, {-1e200, 1}, {3e199, -1}}, Y: []int{1, 0, 0}}
	for _, method := range []string{"laplace", "delta"} {
		res, err := logreg.Fit(context.Background(), d, logreg.Options{Method: method})
		if err != nil {
			t.Logf("%s: error %v", method, err)
			continue
		}
		if _, err := json.Marshal(res); err != nil {
			t.Fatalf("%s: result holds a NaN or Inf (status %q): %v", method, res.Status, err)
		}
		if res.Converged {
			t.Errorf("%s: converged with an overflowing Hessian", method)
		}
		t.Logf("%s: status %q after %d iterations", method, res.Status, res.Iterations)
	}
}

// A key the model does not declare is ignored with a note naming it (as
// CmdStan does), not an error; a close name gets a suggestion.
func TestUnknownDataKeyIsANote(t *testing.T) {
	var notes []string
	old := runtime.Notes
	runtime.Notes = func(msg string) { notes = append(notes, msg) }
	defer func() { runtime.Notes = old }()
	if _, err := logreg.LoadData(strings.NewReader(`{"x": [[1, 2], [3, 4]], "y": [0, 1], "z": 1, "Mu0": [0, 0]}`)); err != nil {
		t.Fatal(err)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], `"z"`) || !strings.Contains(notes[0], `did you mean "mu0"`) {
		t.Errorf("notes %q, want one naming \"z\" and suggesting mu0 for Mu0", notes)
	}
}
