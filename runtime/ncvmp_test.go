package runtime

import (
	"fmt"
	"math"
	"testing"
)

// accuracyGrid is the grid of (m, v) of TestHermiteAccuracyTable.
func accuracyGrid() (ms, vs []float64) {
	for m := -20.0; m <= 20; m += 1 {
		ms = append(ms, m)
	}
	for e := -4.0; e <= 2.0001; e += 0.5 {
		vs = append(vs, math.Pow(10, e))
	}
	return
}

// TestHermiteAccuracyTable measures the largest absolute error of S, ∂S/∂m
// and ∂S/∂v of the logistic factor (labels 0 and 1) over the grid, per
// number of Hermite points and per range of v, against the Legendre
// reference, logs the table, and asserts the accuracy of the default.
func TestHermiteAccuracyTable(t *testing.T) {
	ms, vs := accuracyGrid()
	type ref struct{ s, dm, dv float64 }
	refs := map[[3]float64]ref{}
	for _, s := range []float64{0, 1} {
		for _, m := range ms {
			for _, v := range vs {
				a, b, c := refExpect(logisticFactor(s), m, v)
				refs[[3]float64{s, m, v}] = ref{a, b, c}
			}
		}
	}
	bands := []struct {
		name   string
		lo, hi float64
	}{{"v ≤ 1", 0, 1.0001}, {"1 < v ≤ 10", 1.0001, 10.0001}, {"10 < v ≤ 100", 10.0001, 100.0001}}
	var defaultErr float64
	t.Logf("max |error| over m ∈ [−20,20] (step 1), v ∈ 10^[−4:0.5:2], labels 0 and 1")
	t.Logf("%5s  %-13s %10s %10s %10s", "n", "v range", "S", "∂S/∂m", "∂S/∂v")
	for _, n := range []int{8, 16, 32, 48, 64, 96, 128, 200, 400, 1000} {
		r := Hermite(n)
		for _, b := range bands {
			var es, em, ev float64
			for k, want := range refs {
				s, m, v := k[0], k[1], k[2]
				if v <= b.lo || v > b.hi {
					continue
				}
				S, dm, dv := r.ExpectLogistic(s, m, v)
				es = math.Max(es, math.Abs(S-want.s))
				em = math.Max(em, math.Abs(dm-want.dm))
				ev = math.Max(ev, math.Abs(dv-want.dv))
			}
			t.Logf("%5d  %-13s %10.2e %10.2e %10.2e", n, b.name, es, em, ev)
			if n == DefaultHermitePoints && b.hi < 11 {
				defaultErr = math.Max(defaultErr, math.Max(es, math.Max(em, ev)))
			}
		}
	}
	if defaultErr > 1e-8 {
		t.Errorf("default %d points: max error %.3g > 1e-8 for v ≤ 10", DefaultHermitePoints, defaultErr)
	}
}

// TestHermiteExpectMatchesReference checks Expect with a generic factor
// (so the closure path and ExpectLogistic agree) and the ½ of ∂S/∂v on a
// factor where quadrature is exact: g(x) = x³ − 2x², for which S = m³ + 3mv
// − 2(m² + v), ∂S/∂m = 3m² + 3v − 4m, ∂S/∂v = 3m − 2.
func TestHermiteExpectMatchesReference(t *testing.T) {
	r := Hermite(0)
	cubic := func(x float64) (float64, float64, float64) { return x*x*x - 2*x*x, 3*x*x - 4*x, 6*x - 4 }
	for _, mv := range [][2]float64{{0, 1}, {1.5, 0.3}, {-2, 7}, {3, 1e-4}} {
		m, v := mv[0], mv[1]
		S, dm, dv := r.Expect(cubic, m, v)
		wS, wm, wv := m*m*m+3*m*v-2*(m*m+v), 3*m*m+3*v-4*m, 3*m-2
		if !nclose(S, wS, 1e-12) || !nclose(dm, wm, 1e-12) || !nclose(dv, wv, 1e-12) {
			t.Errorf("cubic at (%g,%g): got %g %g %g, want %g %g %g", m, v, S, dm, dv, wS, wm, wv)
		}
		for _, s := range []float64{0, 1} {
			a1, b1, c1 := r.Expect(logisticFactor(s), m, v)
			a2, b2, c2 := r.ExpectLogistic(s, m, v)
			if a1 != a2 || b1 != b2 || c1 != c2 {
				t.Errorf("Expect and ExpectLogistic differ at s=%g (%g,%g)", s, m, v)
			}
		}
	}
	// ∂S/∂m and ∂S/∂v against central differences of S itself (1000
	// points, so that the quadrature error stays below the tolerance at v = 100).
	r = Hermite(1000)
	for _, mv := range [][2]float64{{0, 1}, {2, 0.5}, {-3, 20}, {0.5, 100}} {
		m, v := mv[0], mv[1]
		for _, s := range []float64{0, 1} {
			f := func(m, v float64) float64 { S, _, _ := refExpect(logisticFactor(s), m, v); return S }
			_, dm, dv := r.ExpectLogistic(s, m, v)
			hm, hv := 1e-4, 1e-4*v
			fm := (f(m+hm, v) - f(m-hm, v)) / (2 * hm)
			fv := (f(m, v+hv) - f(m, v-hv)) / (2 * hv)
			if !nclose(dm, fm, 1e-6) || !nclose(dv, fv, 1e-6) {
				t.Errorf("s=%g (%g,%g): ∂S/∂m %g vs fd %g, ∂S/∂v %g vs fd %g", s, m, v, dm, fm, dv, fv)
			}
		}
	}
}

func TestHermiteNoAlloc(t *testing.T) {
	r := Hermite(0)
	Hermite(0)
	var sink float64
	n := testing.AllocsPerRun(100, func() {
		S, a, b := r.ExpectLogistic(1, 0.3, 2)
		sink += S + a + b
		S, a, b = r.Expect(logisticOne, 0.3, 2)
		sink += S + a + b
		sink += Hermite(0).W[0]
	})
	if n != 0 {
		t.Errorf("%v allocations per call", n)
	}
	_ = fmt.Sprint(sink)
}

func logisticOne(x float64) (float64, float64, float64) { return LogisticLogFactor(1, x) }

// nclose reports |a−b| ≤ tol·max(1, |b|).
func nclose(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b))
}
