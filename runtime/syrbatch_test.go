package runtime

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSyrBatchIsSequentialSyr: any number of Adds, with the caller
// overwriting x between them, then Flush, gives bit for bit what SyrUpper
// applied in the same order gives; nothing below the diagonal is touched.
func TestSyrBatchIsSequentialSyr(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 3, 7, 50, 70} {
		for _, m := range []int{0, 1, 3, 4, 5, 9, 16} {
			want := make([]float64, n*n)
			got := make([]float64, n*n)
			for i := range want {
				want[i] = rng.NormFloat64()
				got[i] = want[i]
			}
			var stack [4 * 64]float64
			b := NewSyrBatch(got, n, stack[:])
			x := make([]float64, n)
			for r := 0; r < m; r++ {
				for i := range x {
					x[i] = rng.NormFloat64()
				}
				a := rng.NormFloat64()
				SyrUpper(want, n, a, x)
				b.Add(a, x)
			}
			b.Flush()
			for i := range want {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("n=%d m=%d: element %d = %v, sequential SyrUpper %v", n, m, i, got[i], want[i])
				}
			}
		}
	}
}
