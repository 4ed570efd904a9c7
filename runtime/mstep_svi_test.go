package runtime

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Online EM keeps GaussStats flat among other statistics: AddGaussFlat must
// do Add's arithmetic, so that units added in the same order give the same
// bits, and FlatGaussStats must read them back.
func TestFlatGaussStatsAreGaussStats(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const p = 3
	ref := NewGaussStats(p)
	flat := make([]float64, 2+GaussStatsLen(p)) // with a neighbour on each side
	for u := range 7 {
		m := []float64{rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64()}
		var cov []float64
		if u%2 == 0 {
			cov = make([]float64, p*p)
			for i := range cov {
				cov[i] = rng.Float64()
			}
		}
		ref.Add(m, cov)
		AddGaussFlat(flat[1:], p, m, cov)
	}
	if flat[0] != 0 || flat[len(flat)-1] != 0 {
		t.Errorf("AddGaussFlat wrote outside its %d numbers: %v", GaussStatsLen(p), flat)
	}
	got := FlatGaussStats(flat[1:], p)
	same := func(what string, a, b []float64) {
		for i := range a {
			if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
				t.Errorf("%s[%d] = %v, Add gives %v", what, i, a[i], b[i])
			}
		}
	}
	if got.N != 7 || got.P != p {
		t.Errorf("N = %v, P = %d", got.N, got.P)
	}
	same("Sum", got.Sum, ref.Sum)
	same("Outer", got.Outer, ref.Outer)
	mu1, s1 := make([]float64, p), make([]float64, p*p)
	mu2, s2 := make([]float64, p), make([]float64, p*p)
	Identity(s1, p)
	Identity(s2, p)
	step := GaussMStep{EstimateMean: true, EstimateCov: true, Shrinkage: 0.1}
	if err := step.Solve(ref, mu1, s1); err != nil {
		t.Fatal(err)
	}
	if err := step.Solve(got, mu2, s2); err != nil {
		t.Fatal(err)
	}
	same("mean", mu2, mu1)
	same("cov", s2, s1)
}
