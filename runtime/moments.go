package runtime

import "math"

// ExpTo sets dst[i] = exp(src[i]).
func ExpTo(dst, src []float64) {
	for i, x := range src {
		dst[i] = math.Exp(x)
	}
}

// ExpToTransposed sets dst to the transpose of exp(src), where src is a
// matrix of rows rows stored row-major: dst[j·rows+i] = exp(src[i·cols+j]).
func ExpToTransposed(dst, src []float64, rows int) {
	if rows <= 0 {
		return
	}
	cols := len(src) / rows
	for i := 0; i < rows; i++ {
		row := src[i*cols : (i+1)*cols]
		for j, x := range row {
			dst[j*rows+i] = math.Exp(x)
		}
	}
}
