package main

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vigen-go/vigen/runtime"
)

// synthSoftmax draws a small softmax regression from the model: W with iid
// N(0, 1) entries, x_n = (1, z_n) with z_n ~ N(0, I), y_n ~ softmax(W x_n).
func synthSoftmax(seed uint64, n, p, k int) (x []float64, y []int, w []float64) {
	r := rand.New(rand.NewPCG(seed, 0x736f66746d6178))
	w = make([]float64, k*p)
	for i := range w {
		w[i] = r.NormFloat64()
	}
	x, y = make([]float64, n*p), make([]int, n)
	g := make([]float64, k)
	for i := 0; i < n; i++ {
		xi := x[i*p : (i+1)*p]
		xi[0] = 1
		for d := 1; d < p; d++ {
			xi[d] = r.NormFloat64()
		}
		for c := 0; c < k; c++ {
			g[c] = 0
			for d := 0; d < p; d++ {
				g[c] += w[c*p+d] * xi[d]
			}
		}
		lse := runtime.LogSumExp(g)
		u := r.Float64()
		y[i] = k - 1
		for c := 0; c < k; c++ {
			u -= math.Exp(g[c] - lse)
			if u < 0 {
				y[i] = c
				break
			}
		}
	}
	return x, y, w
}

// randomSPD returns a random d×d covariance A Aᵀ/d + 0.1 I.
func randomSPD(r *rand.Rand, d int) []float64 {
	a := make([]float64, d*d)
	for i := range a {
		a[i] = r.NormFloat64()
	}
	s := make([]float64, d*d)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			var v float64
			for l := 0; l < d; l++ {
				v += a[i*d+l] * a[j*d+l]
			}
			s[i*d+j] = v / float64(d)
		}
		s[i*d+i] += 0.1
	}
	return s
}

// checkKernelFD compares the gradient of obj with central differences of
// its value, and its Hessian with central differences of its gradient, at
// x, and fails the test when a relative error exceeds tol.
func checkKernelFD(t *testing.T, name string, obj func(x, g, h []float64) float64, x []float64, tol float64) {
	t.Helper()
	D := len(x)
	g, h := make([]float64, D), make([]float64, D*D)
	obj(x, g, h)
	gp, gm := make([]float64, D), make([]float64, D)
	hs := make([]float64, D*D)
	xt := append([]float64(nil), x...)
	var worstG, worstH float64
	for i := 0; i < D; i++ {
		step := 1e-5 * math.Max(1, math.Abs(x[i]))
		xt[i] = x[i] + step
		fp := obj(xt, gp, hs)
		xt[i] = x[i] - step
		fm := obj(xt, gm, hs)
		xt[i] = x[i]
		fdG := (fp - fm) / (2 * step)
		worstG = math.Max(worstG, math.Abs(fdG-g[i])/math.Max(1, math.Abs(g[i])))
		for j := 0; j < D; j++ {
			fdH := (gp[j] - gm[j]) / (2 * step)
			worstH = math.Max(worstH, math.Abs(fdH-h[j*D+i])/math.Max(1, math.Abs(h[j*D+i])))
		}
	}
	t.Logf("%s: largest relative error of the gradient %.2g, of the Hessian %.2g", name, worstG, worstH)
	if !(worstG < tol) || !(worstH < tol) {
		t.Errorf("%s: gradient error %.3g, Hessian error %.3g, want < %g", name, worstG, worstH, tol)
	}
}

// TestSoftmaxKernelsFD checks the hand-written kernels of softmax
// regression by central differences: the gradient of f = log p(y, W)
// against differences of f, its Hessian against differences of the
// gradient, and the same for the delta objective f(μ) + ½Tr{∇²f(μ)Σ} at a
// random Σ; and that the delta objective minus f is ½Tr{∇²f(μ)Σ} computed
// from F's Hessian.
func TestSoftmaxKernelsFD(t *testing.T) {
	for _, c := range []struct{ n, p, k int }{{12, 3, 2}, {20, 3, 4}} {
		x, y, _ := synthSoftmax(3, c.n, c.p, c.k)
		m := newSoftmaxModel(x, y, c.n, c.p, c.k)
		D := c.k * c.p
		r := rand.New(rand.NewPCG(5, uint64(D)))
		mu := make([]float64, D)
		for i := range mu {
			mu[i] = 0.7 * r.NormFloat64()
		}
		cov := randomSPD(r, D)
		checkKernelFD(t, "F", m.logJoint, mu, 1e-6)
		checkKernelFD(t, "DeltaF", func(x, g, h []float64) float64 { return m.deltaObjective(x, cov, g, h) }, mu, 1e-6)
		g, h := make([]float64, D), make([]float64, D*D)
		f := m.logJoint(mu, g, h)
		var tr float64
		for i := 0; i < D; i++ {
			for j := 0; j < D; j++ {
				tr += h[i*D+j] * cov[j*D+i]
			}
		}
		fd := m.deltaObjective(mu, cov, g, h)
		if math.Abs(fd-(f+tr/2)) > 1e-10*math.Max(1, math.Abs(fd)) {
			t.Errorf("K=%d: DeltaF %.12g, f + ½Tr{∇²f Σ} = %.12g", c.k, fd, f+tr/2)
		}
		// f against a direct evaluation of the log joint.
		want := -0.5 * float64(D) * math.Log(2*math.Pi)
		for _, v := range mu {
			want -= 0.5 * v * v
		}
		gk := make([]float64, c.k)
		for i := 0; i < c.n; i++ {
			for k := 0; k < c.k; k++ {
				gk[k] = 0
				for d := 0; d < c.p; d++ {
					gk[k] += mu[k*c.p+d] * x[i*c.p+d]
				}
			}
			want += gk[y[i]] - runtime.LogSumExp(gk)
		}
		if math.Abs(f-want) > 1e-10*math.Abs(want) {
			t.Errorf("K=%d: f = %.12g, direct log joint %.12g", c.k, f, want)
		}
	}
}

// supNorm is the largest |v_i|.
func supNorm(v []float64) float64 {
	var m float64
	for _, x := range v {
		m = math.Max(m, math.Abs(x))
	}
	return m
}

// TestSoftmaxLaplaceDelta fits a small synthetic softmax regression
// (N = 40, P = 3 with the intercept, K = 3) by both methods and checks:
// Laplace's mean is the MAP (|∇f| ≤ 1e-8 there) and its covariance is
// −∇²f⁻¹ at it; the delta method's mean is a stationary point of Eq. 17 at
// its own Σ (|∇(f + ½Tr{∇²f Σ})| ≤ 1e-8) and its Σ is −∇²f(μ)⁻¹ (the
// fixed point of the alternation); the two differ (the mean by more than
// 1e-3); both converge; and the approximate objective is finite.
func TestSoftmaxLaplaceDelta(t *testing.T) {
	const n, p, k = 40, 3, 3
	x, y, _ := synthSoftmax(11, n, p, k)
	m := newSoftmaxModel(x, y, n, p, k)
	D := k * p
	g, h, negInv := make([]float64, D), make([]float64, D*D), make([]float64, D*D)
	lap, err := fitSoftmaxLaplace(x, y, n, p, k, false)
	if err != nil {
		t.Fatal(err)
	}
	del, err := fitSoftmaxLaplace(x, y, n, p, k, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		q    softmaxPosterior
	}{{"laplace", lap}, {"delta", del}} {
		if !c.q.Converged || c.q.K != k || c.q.P != p || len(c.q.Mean) != D || len(c.q.Cov) != D*D {
			t.Errorf("%s: converged %v, K %d, P %d, %d means, %d covariances", c.name, c.q.Converged, c.q.K, c.q.P, len(c.q.Mean), len(c.q.Cov))
		}
		if math.IsNaN(c.q.ELBO) || math.IsInf(c.q.ELBO, 0) {
			t.Errorf("%s: objective %v", c.name, c.q.ELBO)
		}
		m.logJoint(c.q.Mean, g, h)
		if c.name == "laplace" {
			if gm := supNorm(g); gm > 1e-8 {
				t.Errorf("laplace: |∇f|∞ = %.3g at the mean, not the MAP", gm)
			}
		} else {
			gd, hd := make([]float64, D), make([]float64, D*D)
			m.deltaObjective(c.q.Mean, c.q.Cov, gd, hd)
			if gm := supNorm(gd); gm > 1e-8 {
				t.Errorf("delta: |∇ Eq. 17|∞ = %.3g at the mean", gm)
			}
		}
		if !runtime.NegInvSPD(negInv, h, D) {
			t.Fatalf("%s: ∇²f not negative definite at the mean", c.name)
		}
		for i := range negInv {
			if math.Abs(negInv[i]-c.q.Cov[i]) > 1e-8*math.Max(1, math.Abs(negInv[i])) {
				t.Errorf("%s: Cov[%d] = %.12g, −∇²f⁻¹ = %.12g", c.name, i, c.q.Cov[i], negInv[i])
				break
			}
		}
		t.Logf("%s: %d updates, objective %.6f, mean %.4f", c.name, c.q.Iter, c.q.ELBO, c.q.Mean)
	}
	diff := make([]float64, D)
	for i := range diff {
		diff[i] = del.Mean[i] - lap.Mean[i]
	}
	if supNorm(diff) < 1e-3 {
		t.Errorf("delta mean equals Laplace's to %.3g", supNorm(diff))
	}
	t.Logf("|μ_delta − μ_Laplace|∞ = %.4f", supNorm(diff))
}

// TestSoftmaxLaplaceErrors checks that inconsistent inputs are refused.
func TestSoftmaxLaplaceErrors(t *testing.T) {
	x := []float64{1, 0, 1, 1}
	if _, err := fitSoftmaxLaplace(x, []int{0, 2}, 2, 2, 2, false); err == nil {
		t.Error("label 2 with K = 2 accepted")
	}
	if _, err := fitSoftmaxLaplace(x, []int{0, 1}, 2, 3, 2, false); err == nil {
		t.Error("len(x) ≠ n·p accepted")
	}
	if _, err := fitSoftmaxLaplace(x, []int{0, 1}, 2, 2, 1, false); err == nil {
		t.Error("K = 1 accepted")
	}
}
