package runtime

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// randomSPD returns a random SPD matrix BᵀB + 0.1·I with a NaN-filled lower
// triangle (which the functions under test must not read), and the full
// symmetric matrix as a gonum Dense.
func randomSPD(rng *rand.Rand, n int) ([]float64, *mat.Dense) {
	b := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			b.Set(i, j, rng.NormFloat64())
		}
	}
	var full mat.Dense
	full.Mul(b.T(), b)
	for i := 0; i < n; i++ {
		full.Set(i, i, full.At(i, i)+0.1)
	}
	a := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if j >= i {
				a[i*n+j] = full.At(i, j)
			} else {
				a[i*n+j] = math.NaN()
			}
		}
	}
	return a, &full
}

func maxAbsDiff(a []float64, b mat.Matrix) float64 {
	r, c := b.Dims()
	d := 0.0
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			d = math.Max(d, math.Abs(a[i*c+j]-b.At(i, j)))
		}
	}
	return d
}

func TestSPDAgainstGonum(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, n := range []int{1, 2, 3, 7, 20, 60} {
		a, full := randomSPD(rng, n)
		orig := append([]float64(nil), a...)

		// Inverse against gonum's LU-based mat.Inverse, and A·A⁻¹ = I.
		inv := make([]float64, n*n)
		if !InvSPD(inv, a, n) {
			t.Fatalf("n=%d: InvSPD reported not positive definite", n)
		}
		var want mat.Dense
		if err := want.Inverse(full); err != nil {
			t.Fatal(err)
		}
		scale := mat.Norm(&want, math.Inf(1))
		if d := maxAbsDiff(inv, &want); d > 1e-10*scale {
			t.Errorf("n=%d: InvSPD differs from mat.Inverse by %g (scale %g)", n, d, scale)
		}
		var prod mat.Dense
		prod.Mul(full, mat.NewDense(n, n, inv))
		if d := maxAbsDiff(identity(n), &prod); d > 1e-10 {
			t.Errorf("n=%d: A·InvSPD(A) differs from I by %g", n, d)
		}
		for i := range a {
			if a[i] != orig[i] && !math.IsNaN(orig[i]) {
				t.Fatalf("n=%d: InvSPD modified its input", n)
			}
		}

		// In place: dst aliases a.
		inplace := append([]float64(nil), a...)
		if !InvSPD(inplace, inplace, n) {
			t.Fatalf("n=%d: in-place InvSPD failed", n)
		}
		if d := maxAbsDiff(inplace, mat.NewDense(n, n, inv)); d > 1e-12*scale {
			t.Errorf("n=%d: in-place InvSPD differs by %g", n, d)
		}

		// Log-determinant against gonum's LU mat.LogDet.
		ld, ok := LogDetSPD(a, n)
		wantLD, sign := mat.LogDet(full)
		if !ok || sign != 1 || math.Abs(ld-wantLD) > 1e-10*math.Max(1, math.Abs(wantLD)) {
			t.Errorf("n=%d: LogDetSPD = %g, %v; mat.LogDet = %g (sign %g)", n, ld, ok, wantLD, sign)
		}

		// Solve against gonum's general mat.Dense.Solve.
		b := make([]float64, n)
		for i := range b {
			b[i] = rng.NormFloat64()
		}
		x := make([]float64, n)
		if !SolveSPD(x, a, b, n) {
			t.Fatalf("n=%d: SolveSPD failed", n)
		}
		var wantX mat.VecDense
		if err := wantX.SolveVec(full, mat.NewVecDense(n, append([]float64(nil), b...))); err != nil {
			t.Fatal(err)
		}
		if d := maxAbsDiff(x, &wantX); d > 1e-10*mat.Norm(&wantX, math.Inf(1)) {
			t.Errorf("n=%d: SolveSPD differs from mat.SolveVec by %g", n, d)
		}
		// dst aliasing b.
		bb := append([]float64(nil), b...)
		if !SolveSPD(bb, a, bb, n) || maxAbsDiff(bb, mat.NewDense(n, 1, x)) > 1e-14*mat.Norm(&wantX, math.Inf(1)) {
			t.Errorf("n=%d: SolveSPD with dst aliasing b differs", n)
		}
	}
}

func identity(n int) []float64 {
	id := make([]float64, n*n)
	for i := 0; i < n; i++ {
		id[i*n+i] = 1
	}
	return id
}

func TestSPDFailures(t *testing.T) {
	bad := map[string][]float64{
		"indefinite":  {1, 2, 2, 1},
		"negative":    {-1, 0, 0, -1},
		"singular":    {1, 1, 1, 1},
		"NaN":         {1, math.NaN(), 0, 1},
		"NaNdiagonal": {math.NaN(), 0, 0, 1},
		"Inf":         {math.Inf(1), 0, 0, 1},
	}
	for name, a := range bad {
		dst := make([]float64, 4)
		if InvSPD(dst, append([]float64(nil), a...), 2) {
			t.Errorf("%s: InvSPD reported success", name)
		}
		if _, ok := LogDetSPD(a, 2); ok {
			t.Errorf("%s: LogDetSPD reported success", name)
		}
		if SolveSPD(dst[:2], a, []float64{1, 1}, 2) {
			t.Errorf("%s: SolveSPD reported success", name)
		}
	}
	// Empty matrices are trivially positive definite.
	if !InvSPD(nil, nil, 0) || !SolveSPD(nil, nil, nil, 0) {
		t.Error("0×0 should succeed")
	}
	if ld, ok := LogDetSPD(nil, 0); !ok || ld != 0 {
		t.Error("LogDetSPD of 0×0 should be 0")
	}
}

func TestMirrorUpper(t *testing.T) {
	a := []float64{1, 2, 3, 0, 4, 5, 0, 0, 6}
	MirrorUpper(a, 3)
	want := []float64{1, 2, 3, 2, 4, 5, 3, 5, 6}
	for i := range a {
		if a[i] != want[i] {
			t.Fatalf("MirrorUpper = %v, want %v", a, want)
		}
	}
}

func TestNegInvSPDDamped(t *testing.T) {
	// h = −diag(2, −1): not negative definite; the damped inverse exists.
	h := []float64{-2, 0, 0, 1}
	dst := make([]float64, 4)
	lam, ok := NegInvSPDDamped(dst, h, 2)
	if !ok || lam <= 1 {
		t.Fatalf("λ = %g, ok = %v; want λ > 1", lam, ok)
	}
	if want := 1 / (2 + lam); math.Abs(dst[0]-want) > 1e-12 {
		t.Errorf("dst[0] = %g, want %g", dst[0], want)
	}
	// A negative-definite h needs no damping.
	if lam, ok := NegInvSPDDamped(dst, []float64{-4, 0, 0, -1}, 2); !ok || lam != 0 || dst[0] != 0.25 {
		t.Errorf("λ = %g, ok = %v, dst = %v", lam, ok, dst)
	}
	if _, ok := NegInvSPDDamped(dst, []float64{math.NaN(), 0, 0, -1}, 2); ok {
		t.Error("NaN accepted")
	}
}
