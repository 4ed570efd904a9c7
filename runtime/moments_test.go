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
