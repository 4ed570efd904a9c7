package runtime

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// recorder wraps an Objective and remembers the x of its last call.
type recorder struct {
	obj   Objective
	lastX []float64
	calls int
}

func (r *recorder) f(x, grad, curv []float64) float64 {
	r.lastX = append(r.lastX[:0], x...)
	r.calls++
	return r.obj(x, grad, curv)
}

// checkLastCall verifies the contract that the last evaluation was at the
// returned x and the evaluation count is right.
func checkLastCall(t *testing.T, r *recorder, x []float64, res NewtonResult) {
	t.Helper()
	for i := range x {
		if r.lastX[i] != x[i] {
			t.Fatalf("last call to obj at %v, but returned x = %v", r.lastX, x)
		}
	}
	if r.calls != res.Evaluations {
		t.Errorf("Evaluations = %d, obj called %d times", res.Evaluations, r.calls)
	}
}

// quadratic is f(x) = −½xᵀAx + bᵀx, maximized at x* = A⁻¹b.
func quadratic(a, b []float64, n int) Objective {
	return func(x, grad, curv []float64) float64 {
		f := 0.0
		for i := 0; i < n; i++ {
			ax := 0.0
			for j := 0; j < n; j++ {
				ax += a[i*n+j] * x[j]
				curv[i*n+j] = -a[i*n+j]
			}
			grad[i] = b[i] - ax
			f += -0.5*x[i]*ax + b[i]*x[i]
		}
		return f
	}
}

func TestMaximizeQuadraticOneStep(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	const n = 6
	a, _ := randomSPD(rng, n)
	MirrorUpper(a, n)
	b := make([]float64, n)
	for i := range b {
		b[i] = rng.NormFloat64()
	}
	want := make([]float64, n)
	if !SolveSPD(want, a, b, n) {
		t.Fatal("SolveSPD")
	}
	// One Newton iteration lands on the maximum.
	x := make([]float64, n)
	r := &recorder{obj: quadratic(a, b, n)}
	res := Maximize(r.f, x, NewtonSettings{MaxIter: 1})
	if res.Status != StatusMaxIterations || res.Iterations != 1 || res.Damping != 0 {
		t.Errorf("one iteration: %+v", res)
	}
	if d := L2Change(x, want); d > 1e-12 {
		t.Errorf("after one step x = %v, want %v (rel %g)", x, want, d)
	}
	checkLastCall(t, r, x, res)

	// Run to convergence: the second iteration sees a zero decrement.
	x = make([]float64, n)
	r = &recorder{obj: quadratic(a, b, n)}
	res = Maximize(r.f, x, NewtonSettings{})
	if res.Status != StatusConverged || res.Iterations > 2 || res.Decrement > 1e-20 {
		t.Errorf("to convergence: %+v", res)
	}
	if d := L2Change(x, want); d > 1e-12 {
		t.Errorf("x = %v, want %v", x, want)
	}
	checkLastCall(t, r, x, res)
}

// logisticData makes a synthetic logistic-regression data set.
func logisticData(rng *rand.Rand, nobs, p int) (xs []float64, ys []float64) {
	beta := make([]float64, p)
	for j := range beta {
		beta[j] = rng.NormFloat64()
	}
	xs = make([]float64, nobs*p)
	ys = make([]float64, nobs)
	for i := 0; i < nobs; i++ {
		eta := 0.0
		for j := 0; j < p; j++ {
			xs[i*p+j] = rng.NormFloat64()
			eta += xs[i*p+j] * beta[j]
		}
		if rng.Float64() < Logistic(eta) {
			ys[i] = 1
		}
	}
	return xs, ys
}

// logPosterior is f(θ) = Σ_n [y_n η_n − softplus(η_n)] − θᵀθ/(2σ²), η = Xθ,
// with ∇f = Σ (y_n − σ(η_n)) x_n − θ/σ² and ∇²f = −Σ σ(1−σ) x_n x_nᵀ − I/σ².
// With bohning set, curv is Böhning's fixed bound −XᵀX/4 − I/σ² instead.
func logPosterior(xs, ys []float64, p int, sigma2 float64, bohning bool) Objective {
	return func(theta, grad, curv []float64) float64 {
		f := 0.0
		for j := 0; j < p; j++ {
			f -= theta[j] * theta[j] / (2 * sigma2)
			grad[j] = -theta[j] / sigma2
			for k := 0; k < p; k++ {
				curv[j*p+k] = 0
			}
			curv[j*p+j] = -1 / sigma2
		}
		for n := range ys {
			row := xs[n*p : n*p+p]
			eta := dot(row, theta)
			f += ys[n]*eta - Softplus(eta)
			s := Logistic(eta)
			w := s * (1 - s)
			if bohning {
				w = 0.25
			}
			for j := 0; j < p; j++ {
				grad[j] += (ys[n] - s) * row[j]
				for k := 0; k < p; k++ {
					curv[j*p+k] -= w * row[j] * row[k]
				}
			}
		}
		return f
	}
}

func TestMaximizeLogisticRegression(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	const p, nobs, sigma2 = 5, 300, 4.0
	xs, ys := logisticData(rng, nobs, p)
	obj := logPosterior(xs, ys, p, sigma2, false)

	// Independent reference: a textbook BFGS that uses only f and ∇f.
	// (gonum's optimize package cannot be imported here: it pulls in
	// gonum/stat/distmv, whose golang.org/x/tools dependency is not in go.sum.)
	refX, refF, refIters := bfgsMaximize(obj, p, 1e-7)

	x := make([]float64, p)
	r := &recorder{obj: obj}
	res := Maximize(r.f, x, NewtonSettings{})
	t.Logf("Newton: %+v; BFGS: %d iterations", res, refIters)
	if res.Status != StatusConverged {
		t.Fatalf("status %s", res.Status)
	}
	for j := range x {
		if !close(x[j], refX[j], 1e-6, 1e-9) {
			t.Errorf("θ[%d] = %.12g, BFGS %.12g", j, x[j], refX[j])
		}
	}
	if res.Value < refF-1e-9 {
		t.Errorf("Newton value %.15g below BFGS %.15g", res.Value, refF)
	}
	// Certificate: f is strictly concave, so ∇f = 0 identifies the maximum.
	gx := make([]float64, p)
	obj(x, gx, make([]float64, p*p))
	if gmax := floats.Norm(gx, math.Inf(1)); gmax > 1e-10 {
		t.Errorf("‖∇f‖∞ = %g at the Newton mode", gmax)
	}
	checkLastCall(t, r, x, res)

	// The final curvature is available for the Laplace covariance Σ = −C⁻¹:
	// check that −C is the Hessian at x by comparing with a fresh evaluation.
	c := make([]float64, p*p)
	g := make([]float64, p)
	obj(x, g, c)
	for i := range c {
		c[i] = -c[i]
	}
	if _, ok := LogDetSPD(c, p); !ok {
		t.Error("−C at the mode is not positive definite")
	}

	// Quasi-Newton with Böhning's bound (an approximate curvature, as in the
	// delta method) reaches the same mode, more slowly. Convergence is
	// linear, so the distance to the mode at a given decrement is larger than
	// for Newton: tighten Tol.
	xq := make([]float64, p)
	resq := Maximize(logPosterior(xs, ys, p, sigma2, true), xq, NewtonSettings{Tol: 1e-15})
	t.Logf("Böhning: %+v", resq)
	if resq.Status != StatusConverged {
		t.Fatalf("Böhning status %s", resq.Status)
	}
	for j := range xq {
		if !close(xq[j], x[j], 1e-6, 1e-9) {
			t.Errorf("Böhning θ[%d] = %.12g, Newton %.12g", j, xq[j], x[j])
		}
	}
}

// doubleWell is f(x, y) = −x⁴/4 + x²/2 − (y−x)²/2, with maxima at ±(1, 1)
// and a saddle at 0. Its Hessian [[1−3x²−1, 1], [1, −1]] is indefinite for
// small x.
func doubleWell(x, grad, curv []float64) float64 {
	a, b := x[0], x[1]
	grad[0] = -a*a*a + a + (b - a)
	grad[1] = -(b - a)
	curv[0], curv[1] = -3*a*a+1-1, 1
	curv[2], curv[3] = 1, -1
	return -a*a*a*a/4 + a*a/2 - (b-a)*(b-a)/2
}

func TestMaximizeIndefiniteStart(t *testing.T) {
	x := []float64{0.1, 0}
	c := make([]float64, 4)
	doubleWell(x, make([]float64, 2), c)
	if _, ok := LogDetSPD([]float64{-c[0], -c[1], -c[2], -c[3]}, 2); ok {
		t.Fatal("test setup: Hessian should be indefinite at the start")
	}
	r := &recorder{obj: doubleWell}
	res := Maximize(r.f, x, NewtonSettings{})
	t.Logf("%+v, x = %v", res, x)
	if res.Status != StatusConverged || res.Damping <= 0 {
		t.Errorf("want converged with damping, got %+v", res)
	}
	if math.Abs(x[0]-1) > 1e-10 || math.Abs(x[1]-1) > 1e-10 {
		t.Errorf("x = %v, want (1, 1)", x)
	}
	if math.Abs(res.Value-0.25) > 1e-14 {
		t.Errorf("value %g, want 1/4", res.Value)
	}
	checkLastCall(t, r, x, res)
}

func TestMaximizeSaddleIsIndefinite(t *testing.T) {
	// At the saddle the gradient is zero: the decrement is 0 at once, but the
	// curvature is not negative definite.
	x := []float64{0, 0}
	r := &recorder{obj: doubleWell}
	res := Maximize(r.f, x, NewtonSettings{})
	if res.Status != StatusIndefinite || x[0] != 0 || x[1] != 0 {
		t.Errorf("got %+v at %v, want %s at the origin", res, x, StatusIndefinite)
	}
	checkLastCall(t, r, x, res)
}

func TestMaximizeLinearUnbounded(t *testing.T) {
	// f = aᵀx has zero curvature: every step is damped and f is unbounded.
	a := []float64{1, -2, 0.5}
	obj := func(x, grad, curv []float64) float64 {
		copy(grad, a)
		clear(curv)
		return dot(a, x)
	}
	x := make([]float64, 3)
	r := &recorder{obj: obj}
	res := Maximize(r.f, x, NewtonSettings{MaxIter: 50})
	t.Logf("%+v, x = %v", res, x)
	if res.Status != StatusMaxIterations && res.Status != StatusLineSearchFailed {
		t.Errorf("status %s", res.Status)
	}
	if !allFinite(x) || !isFinite(res.Value) || res.Damping == 0 {
		t.Errorf("x = %v, result %+v", x, res)
	}
	checkLastCall(t, r, x, res)
}

func TestMaximizeNotFinite(t *testing.T) {
	nan := func(x, grad, curv []float64) float64 { return math.NaN() }
	x := []float64{1, 2}
	res := Maximize(nan, x, NewtonSettings{})
	if res.Status != StatusNotFinite || res.Evaluations != 1 || x[0] != 1 || x[1] != 2 {
		t.Errorf("NaN objective: %+v, x = %v", res, x)
	}
	infGrad := func(x, grad, curv []float64) float64 {
		grad[0] = math.Inf(1)
		return 0
	}
	if res := Maximize(infGrad, []float64{0}, NewtonSettings{}); res.Status != StatusNotFinite {
		t.Errorf("Inf gradient: %+v", res)
	}
	nanCurv := func(x, grad, curv []float64) float64 {
		grad[0], curv[0] = 1, math.NaN()
		return 0
	}
	if res := Maximize(nanCurv, []float64{0}, NewtonSettings{}); res.Status != StatusNotFinite {
		t.Errorf("NaN curvature: %+v", res)
	}
}

func TestMaximizeNonFiniteTrialPoints(t *testing.T) {
	// f(x) = log x − x, maximum at 1. From x = 10 the first full Newton step
	// (d = −90) leaves the domain, where f is NaN; the step must shrink.
	obj := func(x, grad, curv []float64) float64 {
		grad[0] = 1/x[0] - 1
		curv[0] = -1 / (x[0] * x[0])
		return math.Log(x[0]) - x[0]
	}
	x := []float64{10}
	r := &recorder{obj: obj}
	res := Maximize(r.f, x, NewtonSettings{})
	if res.Status != StatusConverged || math.Abs(x[0]-1) > 1e-10 {
		t.Errorf("%+v, x = %v", res, x)
	}
	checkLastCall(t, r, x, res)
}

func TestMaximizeLineSearchFails(t *testing.T) {
	// A wrong-signed gradient for f = −x² makes the Newton direction descend.
	obj := func(x, grad, curv []float64) float64 {
		grad[0] = 2 * x[0]
		curv[0] = -2
		return -x[0] * x[0]
	}
	x := []float64{1}
	r := &recorder{obj: obj}
	res := Maximize(r.f, x, NewtonSettings{})
	if res.Status != StatusLineSearchFailed || x[0] != 1 || res.Value != -1 {
		t.Errorf("%+v, x = %v", res, x)
	}
	checkLastCall(t, r, x, res)
}

func TestMaximizeEmpty(t *testing.T) {
	res := Maximize(func(x, g, c []float64) float64 { return 3 }, nil, NewtonSettings{})
	if res.Status != StatusConverged || res.Value != 3 {
		t.Errorf("%+v", res)
	}
}

func TestMaximizeAllocations(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	const p = 4
	xs, ys := logisticData(rng, 100, p)
	obj := logPosterior(xs, ys, p, 1, false)
	x := make([]float64, p)
	var iters int
	allocs := testing.AllocsPerRun(10, func() {
		clear(x)
		iters = Maximize(obj, x, NewtonSettings{}).Iterations
	})
	if allocs > 1 || iters < 3 {
		t.Errorf("%v allocations per call over %d iterations, want 1", allocs, iters)
	}
}

// TestMaximizeLaplaceCovariance checks the use in a Laplace update: the mode
// and −C⁻¹ there equal the exact posterior for a Gaussian model.
func TestMaximizeLaplaceCovariance(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	const n = 4
	a, full := randomSPD(rng, n)
	MirrorUpper(a, n)
	b := []float64{1, -1, 2, 0.5}
	var lastCurv []float64
	obj := func(x, grad, curv []float64) float64 {
		f := quadratic(a, b, n)(x, grad, curv)
		lastCurv = curv
		return f
	}
	x := make([]float64, n)
	if res := Maximize(obj, x, NewtonSettings{}); res.Status != StatusConverged {
		t.Fatalf("%+v", res)
	}
	sigma := make([]float64, n*n)
	for i := range sigma {
		sigma[i] = -lastCurv[i]
	}
	if !InvSPD(sigma, sigma, n) {
		t.Fatal("−C not positive definite")
	}
	var want mat.Dense
	if err := want.Inverse(full); err != nil {
		t.Fatal(err)
	}
	if d := maxAbsDiff(sigma, &want); d > 1e-10*mat.Norm(&want, math.Inf(1)) {
		t.Errorf("Σ differs from A⁻¹ by %g", d)
	}
}

// bfgsMaximize maximizes obj using only its value and gradient, by BFGS
// (Nocedal & Wright, Algorithm 6.1) with a backtracking line search, until
// ‖∇f‖∞ ≤ gtol. It returns the maximizer, the maximum and the iterations.
func bfgsMaximize(obj Objective, n int, gtol float64) ([]float64, float64, int) {
	curv := make([]float64, n*n) // ignored
	x, g := make([]float64, n), make([]float64, n)
	xn, gn := make([]float64, n), make([]float64, n)
	s, y, p, hy := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	h := identity(n) // inverse Hessian approximation of −f
	f := obj(x, g, curv)
	iter := 0
	for ; iter < 1000 && floats.Norm(g, math.Inf(1)) > gtol; iter++ {
		// Ascent direction p = H∇f.
		for i := 0; i < n; i++ {
			p[i] = dot(h[i*n:i*n+n], g)
		}
		t, fn := 1.0, 0.0
		for k := 0; k < 60; k++ {
			for i := range xn {
				xn[i] = x[i] + t*p[i]
			}
			if fn = obj(xn, gn, curv); fn >= f+1e-4*t*dot(g, p) {
				break
			}
			t /= 2
		}
		if t < 1e-15 {
			break // no progress above rounding error
		}
		for i := range s {
			s[i], y[i] = xn[i]-x[i], -(gn[i] - g[i]) // y is the change in ∇(−f)
		}
		copy(x, xn)
		copy(g, gn)
		f = fn
		sy := dot(s, y)
		if sy <= 1e-300 {
			continue
		}
		if iter == 0 {
			// Scale H₀ = (sᵀy / yᵀy) I.
			scale := sy / dot(y, y)
			for i := range h {
				h[i] *= scale
			}
		}
		// H ← (I − ρ s yᵀ) H (I − ρ y sᵀ) + ρ s sᵀ, ρ = 1/sᵀy, expanded as
		// H − ρ(s (Hy)ᵀ + (Hy) sᵀ) + (ρ² yᵀHy + ρ) s sᵀ for symmetric H.
		rho := 1 / sy
		for i := 0; i < n; i++ {
			hy[i] = dot(h[i*n:i*n+n], y)
		}
		c := rho*rho*dot(y, hy) + rho
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				h[i*n+j] += -rho*(s[i]*hy[j]+hy[i]*s[j]) + c*s[i]*s[j]
			}
		}
	}
	return x, f, iter
}

// TestMaximizeValueLastStep: with the value alone for the last step
// (Collapse's use, where no derivatives are needed at the end), Newton
// takes the same iterates and returns the same mode as with full
// evaluations, with one full evaluation fewer.
func TestMaximizeValueLastStep(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	const p, nobs, sigma2 = 6, 400, 4.0
	xs, ys := logisticData(rng, nobs, p)
	obj := logPosterior(xs, ys, p, sigma2, false)
	full, values := 0, 0
	counted := func(x, g, c []float64) float64 { full++; return obj(x, g, c) }
	value := func(x []float64) float64 {
		values++
		return obj(x, make([]float64, p), make([]float64, p*p))
	}
	want := make([]float64, p)
	ref := Maximize(obj, want, NewtonSettings{})
	x := make([]float64, p)
	var buf []float64
	res := maximize(counted, value, x, NewtonSettings{}, &buf)
	if res.Status != StatusConverged || ref.Status != StatusConverged {
		t.Fatalf("status %s, with full evaluations %s", res.Status, ref.Status)
	}
	for j := range x {
		if x[j] != want[j] {
			t.Errorf("θ[%d] = %.17g, with full evaluations %.17g", j, x[j], want[j])
		}
	}
	if values != 1 || full != ref.Evaluations-1 {
		t.Errorf("%d full evaluations and %d of the value, want %d and 1", full, values, ref.Evaluations-1)
	}
}
