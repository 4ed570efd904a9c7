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
	for _, n := range []int{1, 3, 4, 7, 50, 64, 70, 104} {
		for _, m := range []int{0, 1, 3, 4, 5, 9, 15, 16, 17, 31, 32, 33, 50} {
			want := make([]float64, n*n)
			got := make([]float64, n*n)
			for i := range want {
				want[i] = rng.NormFloat64()
				got[i] = want[i]
			}
			var stack [SyrBatchRows * StackVec]float64
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

// TestSyrBatchNoAlloc: with the generated kernels' stack buffer, Add and
// Flush allocate nothing.
func TestSyrBatchNoAlloc(t *testing.T) {
	const n = 50
	h := make([]float64, n*n)
	x := make([]float64, n)
	for i := range x {
		x[i] = float64(i) * 1e-3
	}
	allocs := testing.AllocsPerRun(10, func() {
		var buf [SyrBatchRows * StackVec]float64
		b := NewSyrBatch(h, n, buf[:])
		for r := 0; r < 2*SyrBatchRows+3; r++ {
			b.Add(1e-3, x)
		}
		b.Flush()
	})
	if allocs != 0 {
		t.Fatalf("%v allocations", allocs)
	}
}
