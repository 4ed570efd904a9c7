//go:build !amd64 || purego

package runtime

// Without the amd64 assembly every vector primitive uses its pure-Go
// reference implementation in vec.go.

const hasAVX2FMA = false

var useAVX2 = false

func syrUpperAVX2(h []float64, n int, alpha float64, x []float64) {
	syrUpperGo(h, n, alpha, x)
}

func syrkUpperAVX2(h []float64, n int, alpha []float64, xs []float64) {
	syrkUpperGo(h, n, alpha, xs)
}

func syrkUpper4AVX2(h []float64, n int, alpha []float64, xs []float64) {
	syrkUpperGo(h, n, alpha, xs)
}

func axpyFMAAVX2(alpha float64, x, y []float64) { axpyFMAGo(alpha, x, y) }

func mulVecAVX2(dst, x, y []float64) { mulVecGo(dst, x, y) }

func dotFMAAVX2(x, y []float64) float64 { return dotFMAGo(x, y) }
