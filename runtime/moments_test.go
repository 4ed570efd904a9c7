package runtime

import (
	"math"
	"testing"
)

func TestExpToTransposed(t *testing.T) {
	const rows, cols = 3, 5
	src := make([]float64, rows*cols)
	for i := range src {
		src[i] = float64(i)/7 - 1
	}
	dst := make([]float64, rows*cols)
	ExpToTransposed(dst, src, rows)
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			if got, want := dst[j*rows+i], math.Exp(src[i*cols+j]); got != want {
				t.Errorf("dst[%d*%d+%d] = %v, want exp(src[%d, %d]) = %v", j, rows, i, got, i, j, want)
			}
		}
	}
}

func TestTranspose(t *testing.T) {
	src := []float64{1, 2, 3, 4, 5, 6} // 2×3
	got := Transpose(src, 2)
	want := []float64{1, 4, 2, 5, 3, 6}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Transpose = %v, want %v", got, want)
		}
	}
	if &got[0] == &src[0] {
		t.Error("Transpose did not allocate")
	}
}
