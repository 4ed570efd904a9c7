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

// Transpose returns a new slice holding the transpose of the matrix src of
// rows rows stored row-major: element [i, j] at j·rows + i.
func Transpose(src []float64, rows int) []float64 {
	dst := make([]float64, len(src))
	if rows <= 0 {
		return dst
	}
	cols := len(src) / rows
	for i := 0; i < rows; i++ {
		for j, x := range src[i*cols : (i+1)*cols] {
			dst[j*rows+i] = x
		}
	}
	return dst
}

// LogOf returns a new slice holding log(x) elementwise.
func LogOf(x []float64) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = math.Log(v)
	}
	return out
}
