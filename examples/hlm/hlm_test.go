package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mathext"

	"github.com/vigen-go/vigen/examples/hlm/hlm"
	"github.com/vigen-go/vigen/golden"
	"github.com/vigen-go/vigen/runtime"
)

// consistencyData draws the data of TestConsistency: θ ~ N(0, I) over V = 10
// terms and 1000 documents of about 100 tokens; the fits at D = 10 and 100
// use the first D documents, so every D shares the same true θ.
func consistencyData() (*hlm.Data, []float64) {
	return Synthetic(20130101, 1000, 10, 100)
}

func firstDocs(d *hlm.Data, n int) *hlm.Data {
	return &hlm.Data{D: n, V: d.V, X: d.X[:n]}
}

func meanSD(g []float64) float64 {
	s := 0.0
	for _, v := range g {
		s += v / float64(len(g))
	}
	return s
}

// TestConsistency fits growing data sets drawn from one θ and checks that the
// posterior concentrates around it.
//
// The thresholds: under the exact posterior, E‖E[θ|x] − θ‖²/V is the mean
// posterior variance, so the RMSE is about the posterior sd. The variational
// posterior is mean-field (q(θ) q(z)) and its sd understates the exact one,
// and with ~100 tokens per document z_d is only loosely pinned down, so we
// allow 3 mean posterior sd at D = 1000 (and, since the sd shrinks like
// 1/√D, the RMSE at D = 1000 must be below that at D = 10). The sd itself
// must shrink with D: by at least a factor 2 per tenfold D (√10 ≈ 3.2 in
// the limit).
func TestConsistency(t *testing.T) {
	golden.SlowTier(t)
	all, truth := consistencyData()
	type row struct {
		d           int
		method      string
		rmse, sd    float64
		iter        int
		status      string
		converged   bool
		maxAbsError float64
	}
	var rows []row
	for _, method := range []string{"laplace", "delta"} {
		for _, d := range []int{10, 100, 1000} {
			res, err := hlm.Fit(context.Background(), firstDocs(all, d), hlm.Options{Method: method, MaxIter: 1000})
			if err != nil {
				t.Fatalf("D=%d %s: %v", d, method, err)
			}
			g := res.Latent.Theta
			r := row{d: d, method: method, rmse: RMSE(g.Mean, truth), sd: meanSD(g.SD()),
				iter: res.Iterations, status: res.Status, converged: res.Converged}
			for i, v := range truth {
				r.maxAbsError = math.Max(r.maxAbsError, math.Abs(g.Mean[i]-v))
			}
			rows = append(rows, r)
			if !res.Converged {
				t.Errorf("D=%d %s: not converged after %d iterations: %s", d, method, res.Iterations, res.Status)
			}
			for i, v := range g.Mean {
				if math.IsNaN(v) || math.IsNaN(g.Cov[i][i]) || g.Cov[i][i] <= 0 {
					t.Fatalf("D=%d %s: theta[%d] mean %v var %v", d, method, i+1, v, g.Cov[i][i])
				}
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "RMSE ‖E[θ] − θ_true‖/√V, V = 10, ~100 tokens/document (Poisson(100) lengths), data seed 20130101:\n")
	fmt.Fprintf(&b, "%-8s %6s %9s %12s %10s %11s %6s  %s\n", "method", "D", "RMSE", "max|error|", "mean sd", "RMSE/sd", "iter", "status")
	for _, r := range rows {
		fmt.Fprintf(&b, "%-8s %6d %9.4f %12.4f %10.4f %11.2f %6d  %s\n", r.method, r.d, r.rmse, r.maxAbsError, r.sd, r.rmse/r.sd, r.iter, r.status)
	}
	t.Log("\n" + b.String())

	for k := 0; k < len(rows); k += 3 {
		r10, r100, r1000 := rows[k], rows[k+1], rows[k+2]
		m := r10.method
		if !(r1000.rmse < r10.rmse) {
			t.Errorf("%s: RMSE at D=1000 (%.4f) is not below that at D=10 (%.4f)", m, r1000.rmse, r10.rmse)
		}
		if r1000.rmse > 3*r1000.sd {
			t.Errorf("%s: RMSE at D=1000 %.4f exceeds 3 × mean posterior sd %.4f", m, r1000.rmse, r1000.sd)
		}
		if !(r100.sd < r10.sd/2 && r1000.sd < r100.sd/2) {
			t.Errorf("%s: mean posterior sd does not shrink with D: %.4f, %.4f, %.4f at D = 10, 100, 1000", m, r10.sd, r100.sd, r1000.sd)
		}
	}
}

// randomPoint returns a θ ~ N(0, I) and a valid zParam: D×V positive
// Dirichlet parameters, exp(N(0, 1)) plus a few counts, as a fit would hold.
func randomPoint(rng *rand.Rand, d, v int) (theta, zParam []float64) {
	theta = make([]float64, v)
	for i := range theta {
		theta[i] = rng.NormFloat64()
	}
	zParam = make([]float64, d*v)
	for i := range zParam {
		zParam[i] = math.Exp(rng.NormFloat64()) + float64(rng.IntN(5))
	}
	return theta, zParam
}

// kernelModel is a small model for the kernel checks; its counts do not
// enter ThetaF (f reads the data only through q(z), as E_q[log z]) but NewModel
// needs them.
func kernelModel(t *testing.T, rng *rand.Rand, d, v int) *hlm.Model {
	t.Helper()
	x := make([][]int, d)
	for i := range x {
		x[i] = make([]int, v)
		for j := range x[i] {
			x[i][j] = rng.IntN(10)
		}
	}
	m, err := hlm.NewModel(&hlm.Data{X: x})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// fdGrad is the fourth-order central difference of f:
// [−f(x+2h) + 8f(x+h) − 8f(x−h) + f(x−2h)]/(12h).
func fdGrad(f func([]float64) float64, x []float64, h float64) []float64 {
	g := make([]float64, len(x))
	y := append([]float64(nil), x...)
	at := func(i int, s float64) float64 {
		y[i] = x[i] + s
		v := f(y)
		y[i] = x[i]
		return v
	}
	for i := range x {
		g[i] = (-at(i, 2*h) + 8*at(i, h) - 8*at(i, -h) + at(i, -2*h)) / (12 * h)
	}
	return g
}

// fdHess is the central second difference of f,
// [f(x+h_i+h_j) − f(x+h_i−h_j) − f(x−h_i+h_j) + f(x−h_i−h_j)]/(4h²) (its
// diagonal the same with h_i = h_j), Richardson-extrapolated from steps h
// and h/2 to fourth order: (4 H(h/2) − H(h))/3.
func fdHess(f func([]float64) float64, x []float64, h float64) []float64 {
	n := len(x)
	y := append([]float64(nil), x...)
	at := func(i int, si float64, j int, sj float64) float64 {
		y[i] += si
		y[j] += sj
		v := f(y)
		copy(y, x)
		return v
	}
	second := func(i, j int, h float64) float64 {
		return (at(i, h, j, h) - at(i, h, j, -h) - at(i, -h, j, h) + at(i, -h, j, -h)) / (4 * h * h)
	}
	out := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			v := (4*second(i, j, h/2) - second(i, j, h)) / 3
			out[i*n+j], out[j*n+i] = v, v
		}
	}
	return out
}

// relErr is the largest |got − want| relative to max(|want_i|, floor·max|want|).
func relErr(got, want []float64, floor float64) (worst float64, at int) {
	scale := 0.0
	for _, w := range want {
		scale = math.Max(scale, math.Abs(w))
	}
	for i := range want {
		e := math.Abs(got[i]-want[i]) / math.Max(math.Abs(want[i]), floor*scale)
		if e > worst {
			worst, at = e, i
		}
	}
	return worst, at
}

// TestKernelDerivatives checks the gradients and Hessians of ThetaF and
// ThetaDelta against finite differences of their values.
//
// Tolerances: f is O(10²) here, so rounding in one evaluation is about
// ε|f| ≈ 1e-14. The fourth-order gradient stencil with h = 1e-3 has
// truncation error ~h⁴ f⁽⁵⁾ ≈ 1e-12·|f⁽⁵⁾| and rounding ~ε|f|/h ≈ 1e-11,
// far below 1e-6 relative. The extrapolated Hessian with h = 2e-3 has
// truncation ~h⁴ f⁽⁶⁾ ≈ 1e-11·|f⁽⁶⁾| and rounding ~ε|f|/h² ≈ 1e-8, so 1e-5
// relative (entries are O(1) to O(10²)) leaves a wide margin while still
// catching any wrong term (a dropped factor changes entries by O(1)).
// Entries are compared relative to max(|entry|, 1e-3·max|entry|).
func TestKernelDerivatives(t *testing.T) {
	const D, V = 5, 6
	rng := rand.New(rand.NewPCG(7, 8))
	m := kernelModel(t, rng, D, V)
	grad, hess := make([]float64, V), make([]float64, V*V)
	g2, h2 := make([]float64, V), make([]float64, V*V)
	var worstG, worstH, worstDG, worstDH, worstTr float64
	for trial := 0; trial < 5; trial++ {
		theta, zParam := randomPoint(rng, D, V)
		f := func(x []float64) float64 { return m.ThetaF(x, elogOf(zParam, V), g2, h2) }
		fv := m.ThetaF(theta, elogOf(zParam, V), grad, hess)
		if math.IsNaN(fv) || math.IsInf(fv, 0) {
			t.Fatalf("trial %d: ThetaF = %v", trial, fv)
		}
		if e, i := relErr(grad, fdGrad(f, theta, 1e-3), 1e-3); e > 1e-6 {
			t.Errorf("trial %d: ThetaF gradient[%d] = %.12g, finite differences differ by %.2g relative", trial, i+1, grad[i], e)
		} else {
			worstG = math.Max(worstG, e)
		}
		fdH := fdHess(f, theta, 2e-3)
		if e, k := relErr(hess, fdH, 1e-3); e > 1e-5 {
			t.Errorf("trial %d: ThetaF Hessian[%d, %d] = %.12g, finite differences %.12g (%.2g relative)", trial, k/V+1, k%V+1, hess[k], fdH[k], e)
		} else {
			worstH = math.Max(worstH, e)
		}
		for i := 0; i < V; i++ {
			for j := 0; j < i; j++ {
				if hess[i*V+j] != hess[j*V+i] {
					t.Errorf("trial %d: ThetaF Hessian not symmetric at [%d, %d]: %v vs %v", trial, i+1, j+1, hess[i*V+j], hess[j*V+i])
				}
			}
		}

		// ThetaDelta with a fixed SPD cov: A Aᵀ/V + 0.1 I, A standard normal.
		cov := randomSPD(rng, V)
		fd := func(x []float64) float64 { return m.ThetaDelta(x, cov, elogOf(zParam, V), g2, h2) }
		dv := m.ThetaDelta(theta, cov, elogOf(zParam, V), grad, hess)
		if e, i := relErr(grad, fdGrad(fd, theta, 1e-3), 1e-3); e > 1e-6 {
			t.Errorf("trial %d: ThetaDelta gradient[%d] = %.12g, finite differences differ by %.2g relative", trial, i+1, grad[i], e)
		} else {
			worstDG = math.Max(worstDG, e)
		}
		// ThetaDelta's hess is the Hessian of the delta objective (with
		// third and fourth derivatives of f): finite differences of its value.
		if e, k := relErr(hess, fdHess(fd, theta, 2e-3), 1e-3); e > 1e-5 {
			t.Errorf("trial %d: ThetaDelta Hessian[%d, %d] = %.12g, finite differences differ by %.2g relative", trial, k/V+1, k%V+1, hess[k], e)
		} else {
			worstDH = math.Max(worstDH, e)
		}
		// The delta objective is f(μ) + ½Tr{∇²f(μ)Σ} (Eq. 17): check its
		// value against ThetaF.
		fHess := make([]float64, V*V)
		fv = m.ThetaF(theta, elogOf(zParam, V), g2, fHess)
		tr := 0.0
		for i := 0; i < V; i++ {
			for j := 0; j < V; j++ {
				tr += fHess[i*V+j] * cov[j*V+i]
			}
		}
		want := fv + tr/2
		e := math.Abs(dv-want) / math.Max(math.Abs(want), 1)
		worstTr = math.Max(worstTr, e)
		if e > 1e-10 {
			t.Errorf("trial %d: ThetaDelta = %.15g, f + ½Tr{∇²f Σ} = %.15g", trial, dv, want)
		}
	}
	t.Logf("worst relative errors over 5 points: ThetaF gradient %.2g, ThetaF Hessian %.2g, ThetaDelta gradient %.2g, ThetaDelta Hessian %.2g; ThetaDelta vs f + ½Tr{∇²f Σ} %.2g",
		worstG, worstH, worstDG, worstDH, worstTr)
}

func randomSPD(rng *rand.Rand, n int) []float64 {
	a := make([]float64, n*n)
	for i := range a {
		a[i] = rng.NormFloat64()
	}
	c := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			s := 0.0
			for k := 0; k < n; k++ {
				s += a[i*n+k] * a[j*n+k]
			}
			c[i*n+j] = s / float64(n)
		}
		c[i*n+i] += 0.1
	}
	return c
}

// handF is f(θ) of Eq. 15 for the hierarchical language model, written by
// hand: log N(θ; 0, I) + Σ_d [log Γ(Σ_v e^θ_v) − Σ_v log Γ(e^θ_v)
// + Σ_v (e^θ_v − 1)(ψ(γ_dv) − ψ(Σ_v γ_dv))], γ_d the rows of zParam.
func handF(theta, zParam []float64) float64 {
	v := len(theta)
	f := -0.5 * float64(v) * math.Log(2*math.Pi)
	for _, t := range theta {
		f -= t * t / 2
	}
	s, lg := 0.0, 0.0
	for _, t := range theta {
		s += math.Exp(t)
		l, _ := math.Lgamma(math.Exp(t))
		lg += l
	}
	ls, _ := math.Lgamma(s)
	for d := 0; d < len(zParam)/v; d++ {
		g := zParam[d*v : (d+1)*v]
		sum := 0.0
		for _, x := range g {
			sum += x
		}
		f += ls - lg
		for i, x := range g {
			f += (math.Exp(theta[i]) - 1) * (mathext.Digamma(x) - mathext.Digamma(sum))
		}
	}
	return f
}

// TestThetaFIsEq15 compares ThetaF's value with the hand-written f(θ) up to
// a constant: differences f(θ1) − f(θ2) at random pairs must agree to 1e-9
// relative (rounding in sums of O(10²) terms is ~1e-13 relative).
func TestThetaFIsEq15(t *testing.T) {
	const D, V = 7, 5
	rng := rand.New(rand.NewPCG(11, 12))
	m := kernelModel(t, rng, D, V)
	grad, hess := make([]float64, V), make([]float64, V*V)
	worst, offset := 0.0, 0.0
	for trial := 0; trial < 10; trial++ {
		th1, zParam := randomPoint(rng, D, V)
		th2, _ := randomPoint(rng, D, V)
		got := m.ThetaF(th1, elogOf(zParam, V), grad, hess) - m.ThetaF(th2, elogOf(zParam, V), grad, hess)
		want := handF(th1, zParam) - handF(th2, zParam)
		e := math.Abs(got-want) / math.Max(math.Abs(want), 1e-3)
		worst = math.Max(worst, e)
		if e > 1e-9 {
			t.Errorf("trial %d: ThetaF(θ1) − ThetaF(θ2) = %.15g, Eq. 15 by hand %.15g", trial, got, want)
		}
		offset = math.Max(offset, math.Abs(m.ThetaF(th1, elogOf(zParam, V), grad, hess)-handF(th1, zParam)))
	}
	t.Logf("worst relative difference of f(θ1) − f(θ2): %.2g; largest |ThetaF − Eq. 15| (the constant, expected 0): %.2g", worst, offset)
}

// TestZUpdate checks q(z)'s closed form (Eq. 18): given q(θ) = N(μ, Σ),
// the optimal q(z_d) is Dirichlet(E[exp θ] + x_d) with E[exp θ_v] =
// exp(μ_v + Σ_vv/2) exactly.
//
// Within an iteration every unit's z_d is updated first and then θ, so a
// result's z was computed from q(θ) before the last θ update, and does not
// match the result's own q(θ) exactly: even when the last update left μ
// unchanged (the usual way the fit stops), Σ was recomputed from the new z.
// The exact check is one more iteration from the result (Start: res,
// MaxIter: 1): its z is computed from res's q(θ), and must match to 1e-9
// relative. The result's own z must match only as well as the fit has
// settled: 1e-6 relative.
func TestZUpdate(t *testing.T) {
	data, _ := Synthetic(5, 50, 8, 100)
	for _, method := range []string{"laplace", "delta"} {
		var lastChange float64
		res, err := hlm.Fit(context.Background(), data, hlm.Options{Method: method, Progress: func(p runtime.Progress) { lastChange = p.MeanChange }})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Converged {
			t.Errorf("%s: not converged: %s", method, res.Status)
		}
		next, err := hlm.Fit(context.Background(), data, hlm.Options{Method: method, Start: res, MaxIter: 1})
		if err != nil {
			t.Fatal(err)
		}
		e := zError(t, data, res.Latent.Theta.Mean, res.Latent.Theta.Cov, next.Latent.Z.Params["param"])
		if e > 1e-9 {
			t.Errorf("%s: z after one iteration from the result differs from exp(μ + Σ_vv/2) + x by %.2g relative", method, e)
		}
		own := zError(t, data, res.Latent.Theta.Mean, res.Latent.Theta.Cov, res.Latent.Z.Params["param"])
		if own > 1e-6 {
			t.Errorf("%s: the result's z differs from exp(μ + Σ_vv/2) + x of its own q(θ) by %.2g relative", method, own)
		}
		t.Logf("%s: %d iterations, last relative change of μ %.2g; z vs exp(μ + Σ_vv/2) + x: one iteration from the result %.2g, the result's own %.2g",
			method, res.Iterations, lastChange, e, own)
	}
}

func zError(t *testing.T, data *hlm.Data, mean []float64, cov [][]float64, z []float64) float64 {
	t.Helper()
	v := len(mean)
	if len(z) != len(data.X)*v {
		t.Fatalf("z has %d parameters, want %d", len(z), len(data.X)*v)
	}
	worst := 0.0
	for d, row := range data.X {
		for i, x := range row {
			want := math.Exp(mean[i]+cov[i][i]/2) + float64(x)
			worst = math.Max(worst, math.Abs(z[d*v+i]-want)/want)
		}
	}
	return worst
}

// TestBadData: bad counts and shapes are errors naming the variable and the
// (1-based) index, from the Go API, from JSON and from the command; nothing
// panics.
func TestBadData(t *testing.T) {
	short := &hlm.Data{X: [][]int{{1, 2, 3}, {4, 5}, {6, 7, 8}}}
	if _, err := hlm.Fit(context.Background(), short, hlm.Options{}); err == nil || !strings.Contains(err.Error(), `"x"[2]`) {
		t.Errorf("row 2 of length 2: Fit error %v, want one naming \"x\"[2]", err)
	}
	neg := &hlm.Data{X: [][]int{{1, 2, 3}, {4, 5, 6}, {7, -1, 8}}}
	if err := CheckData(neg); err == nil || !strings.Contains(err.Error(), `"x"[3, 2]`) {
		t.Errorf("negative count at [3, 2]: CheckData error %v, want one naming \"x\"[3, 2]", err)
	}
	// The generated package does not check the sign of counts (x is int[D, V]
	// with no range); record what it does so a change is noticed.
	if _, err := hlm.NewModel(neg); err != nil {
		t.Logf("hlm.NewModel now rejects a negative count itself: %v", err)
	} else {
		t.Logf("hlm.NewModel accepts a negative count; the command rejects it with CheckData")
	}

	dir := t.TempDir()
	cases := []struct{ name, json, want string }{
		{"negative", `{"x": [[1, 2, 3], [4, -1, 2]]}`, `"x"[2, 2]`},
		{"short row", `{"x": [[1, 2, 3], [4, 2], [0, 0, 5]]}`, `"x"[2]`},
		{"long row", `{"x": [[1, 2, 3], [4, 2, 1, 1]]}`, `"x"[2]`},
		{"real count", `{"x": [[1, 2, 3], [4, 2.5, 1]]}`, `"x"`},
		{"wrong V", `{"V": 4, "x": [[1, 2, 3]]}`, `x`},
		{"missing x", `{"D": 2, "V": 3}`, `"x"`},
		{"empty rows", `{"x": [[], []]}`, `size "V" = 0: it is the length of the simplex z`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".json")
			if err := os.WriteFile(path, []byte(c.json), 0o644); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			err := run([]string{"-q", "-data", path}, &stdout, &stderr)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %s", err, c.want)
			} else {
				t.Logf("%s", err)
			}
		})
	}
	var stdout, stderr bytes.Buffer
	if err := run([]string{"-q", "-method", "newton", "-D", "5"}, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), "newton") {
		t.Errorf("-method newton: error %v", err)
	}
	if err := run([]string{"-q", "-D", "0"}, &stdout, &stderr); err == nil {
		t.Errorf("-D 0: no error")
	}
}

// TestCommand runs the command on small synthetic data, as text and JSON.
func TestCommand(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := run([]string{"-D", "30", "-V", "5", "-seed", "2"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	out := stdout.String()
	for _, want := range []string{"status converged", "theta[5]", "RMSE"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(stderr.String(), "iter   1") {
		t.Errorf("no progress on stderr: %q", stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	if err := run([]string{"-D", "30", "-V", "5", "-seed", "2", "-method", "delta", "-json"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	var r struct {
		Method    string    `json:"method"`
		Converged bool      `json:"converged"`
		Truth     []float64 `json:"truth"`
		RMSE      float64   `json:"rmse"`
		Latent    struct {
			Theta struct {
				Mean []float64 `json:"mean"`
			} `json:"theta"`
		} `json:"latent"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	if r.Method != "delta,conjugate" || !r.Converged || len(r.Truth) != 5 || len(r.Latent.Theta.Mean) != 5 || r.RMSE <= 0 {
		t.Errorf("unexpected JSON result: %+v", r)
	}
	if stderr.Len() != 0 {
		t.Errorf("-json wrote to stderr: %q", stderr.String())
	}
}

// elogOf is E[log z_dv] = ψ(γ_dv) − ψ(Σ_v γ_dv) for Dirichlet parameters γ
// (rows of length v): the moments the generated kernels read alongside γ.
func elogOf(gamma []float64, v int) []float64 {
	out := make([]float64, len(gamma))
	for off := 0; off < len(gamma); off += v {
		s := 0.0
		for _, g := range gamma[off : off+v] {
			s += g
		}
		for i, g := range gamma[off : off+v] {
			out[off+i] = mathext.Digamma(g) - mathext.Digamma(s)
		}
	}
	return out
}
