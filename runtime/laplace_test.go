package runtime

import (
	"math"
	"testing"
)

// quadraticFactor is f(x) = −½(x−a)ᵀA(x−a) with A = [[2, 1], [1, 3]]: its
// Laplace and delta approximations are both N(a, A⁻¹).
func quadraticFactor(a []float64) GaussianFactor {
	A := []float64{2, 1, 1, 3}
	f := func(x, g, h []float64) float64 {
		d := []float64{x[0] - a[0], x[1] - a[1]}
		v := 0.0
		for i := 0; i < 2; i++ {
			g[i] = 0
			for j := 0; j < 2; j++ {
				g[i] -= A[i*2+j] * d[j]
				h[i*2+j] = -A[i*2+j]
				v -= 0.5 * d[i] * A[i*2+j] * d[j]
			}
		}
		return v
	}
	return GaussianFactor{Mean: []float64{5, -5}, Cov: []float64{1, 0, 0, 1}, F: f,
		DeltaF: func(x, cov, g, h []float64) float64 {
			v := f(x, g, h)
			for i := range cov {
				v -= 0.5 * A[i] * cov[i] // ½Tr{∇²f Σ}, both symmetric
			}
			return v
		}}
}

func TestGaussianUpdateQuadratic(t *testing.T) {
	a := []float64{1, -2}
	// A⁻¹ = [[3, −1], [−1, 2]]/5
	wantCov := []float64{0.6, -0.2, -0.2, 0.4}
	for _, delta := range []bool{false, true} {
		for _, local := range []bool{false, true} {
			var w GaussianWork
			q := quadraticFactor(a)
			q.Delta = delta
			started := false
			if local {
				q.Started = &started
			}
			tr := Trouble{}
			change := w.Step(tr, "x", q, NewtonSettings{})
			if len(tr) != 0 {
				t.Errorf("delta=%v local=%v: trouble %v", delta, local, tr)
			}
			if change == 0 {
				t.Errorf("delta=%v local=%v: Step reported no change", delta, local)
			}
			for i := range a {
				if math.Abs(q.Mean[i]-a[i]) > 1e-9 {
					t.Errorf("delta=%v local=%v: mean %v, want %v", delta, local, q.Mean, a)
				}
			}
			for i := range wantCov {
				if math.Abs(q.Cov[i]-wantCov[i]) > 1e-12 {
					t.Errorf("delta=%v local=%v: cov %v, want %v", delta, local, q.Cov, wantCov)
				}
			}
			if local && !started {
				t.Errorf("delta=%v: Started not set", delta)
			}
		}
	}
}

// TestGaussianUpdateIndefinite: where ∇²f at the maximum is not negative
// definite (f = −x⁴ at 0), the covariance is regularized and Step records
// the trouble under the factor's name.
func TestGaussianUpdateIndefinite(t *testing.T) {
	q := GaussianFactor{Mean: []float64{0}, Cov: []float64{1},
		F: func(x, g, h []float64) float64 {
			g[0], h[0] = -4*x[0]*x[0]*x[0], -12*x[0]*x[0]
			return -x[0] * x[0] * x[0] * x[0]
		}}
	var w GaussianWork
	tr := Trouble{}
	w.Step(tr, "theta", q, NewtonSettings{})
	if tr["theta: "+string(StatusIndefinite)] != 1 {
		t.Errorf("trouble %v, want theta: %s", tr, StatusIndefinite)
	}
	if !(q.Cov[0] > 0) || math.IsInf(q.Cov[0], 0) {
		t.Errorf("cov %v, want a positive finite variance", q.Cov)
	}
}

// The closed-form update of a quadratic f is exact after one evaluation of
// F (one Newton step), from any start, and reports converged; a convex f
// (an improper q) is reported and leaves q as it was.
func TestGaussianUpdateClosed(t *testing.T) {
	a := []float64{1, -2}
	wantCov := []float64{0.6, -0.2, -0.2, 0.4} // A⁻¹
	var w GaussianWork
	q := quadraticFactor(a)
	q.Closed, q.Delta = true, true // Closed overrides Delta
	calls := 0
	f := q.F
	q.F = func(x, g, h []float64) float64 { calls++; return f(x, g, h) }
	q.DeltaF = nil
	if st := w.Update(q, NewtonSettings{}); st != StatusConverged {
		t.Errorf("status %s, want converged", st)
	}
	if calls != 1 {
		t.Errorf("F evaluated %d times, want 1", calls)
	}
	for i := range a {
		if math.Abs(q.Mean[i]-a[i]) > 1e-14 {
			t.Errorf("mean %v, want %v", q.Mean, a)
		}
	}
	for i := range wantCov {
		if math.Abs(q.Cov[i]-wantCov[i]) > 1e-15 {
			t.Errorf("cov %v, want %v", q.Cov, wantCov)
		}
	}
	convex := GaussianFactor{Mean: []float64{3}, Cov: []float64{2}, Closed: true,
		F: func(x, g, h []float64) float64 { g[0], h[0] = x[0], 1; return x[0] * x[0] / 2 }}
	if st := w.Update(convex, NewtonSettings{}); st != StatusIndefinite || convex.Mean[0] != 3 || convex.Cov[0] != 2 {
		t.Errorf("convex f: status %s, q = N(%v, %v); want indefinite_hessian and q unchanged", st, convex.Mean, convex.Cov)
	}
}
