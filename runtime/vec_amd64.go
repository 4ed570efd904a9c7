//go:build amd64 && !purego

package runtime

import "golang.org/x/sys/cpu"

// hasAVX2FMA reports whether the CPU and the operating system support AVX2
// and FMA (x/sys/cpu checks CPUID and that the OS saves the YMM state).
var hasAVX2FMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// useAVX2 chooses the assembly kernels of vec_amd64.s over the pure-Go
// reference ones in vec.go. Both give bit-identical results.
var useAVX2 = hasAVX2FMA

// The kernels below are implemented in vec_amd64.s. Their callers in vec.go
// have already checked the lengths: every slice holds exactly the elements
// the kernel reads or writes (n > 0, len(h) == n*n, len(x) == n, …).

// syrUpperAVX2 is SyrUpper. len(h) == n*n, len(x) == n, n > 0.
//
//go:noescape
func syrUpperAVX2(h []float64, n int, alpha float64, x []float64)

// syrk4AVX2 is SyrkUpper for len(alpha) a positive multiple of 4: four rows
// of xs per pass over the triangle. len(h) == n*n, len(xs) ≥ len(alpha)*n.
//
//go:noescape
func syrk4AVX2(h []float64, n int, alpha []float64, xs []float64)

// axpyFMAAVX2 is AxpyFMA. len(y) == len(x) > 0.
//
//go:noescape
func axpyFMAAVX2(alpha float64, x, y []float64)

// mulVecAVX2 is MulVec. len(x) == len(y) == len(dst) > 0.
//
//go:noescape
func mulVecAVX2(dst, x, y []float64)

// dotFMAAVX2 is DotFMA. len(y) == len(x).
//
//go:noescape
func dotFMAAVX2(x, y []float64) float64

// syrkTileRows is the most rows of xs syrkTileAVX2 takes in one call (its
// frame holds their 4×syrkTileRows weighted values s = alpha[r]*xs[r*n+a]).
const syrkTileRows = 16

// syrkTileAVX2 is SyrkUpper, register-blocked, for n ≥ 4 and
// 1 ≤ len(alpha) ≤ syrkTileRows: tiles of h are loaded once, receive every
// row of xs in order and are stored once. len(h) == n*n,
// len(xs) ≥ len(alpha)*n.
//
//go:noescape
func syrkTileAVX2(h []float64, n int, alpha []float64, xs []float64)

// syrkUpperAVX2 is SyrkUpper: syrkTileAVX2 on the rows of xs
// syrkTileRows at a time (for n < 4, the reference). Every element
// receives the rows of xs in order, one FMA each, as in syrkUpperGo.
// len(h) == n*n, len(xs) == len(alpha)*n, n > 0.
func syrkUpperAVX2(h []float64, n int, alpha []float64, xs []float64) {
	m := len(alpha)
	if n < 4 {
		syrkUpperGo(h, n, alpha, xs)
		return
	}
	for r := 0; r < m; r += syrkTileRows {
		e := min(r+syrkTileRows, m)
		syrkTileAVX2(h, n, alpha[r:e], xs[r*n:e*n])
	}
}

// syrkUpper4AVX2 is the SyrkUpper of before syrkTileAVX2, kept for tests
// and as the benchmarks' baseline: one pass over the triangle per four rows
// of xs (syrk4AVX2), then the remaining rows one at a time.
func syrkUpper4AVX2(h []float64, n int, alpha []float64, xs []float64) {
	m := len(alpha)
	m4 := m &^ 3
	if m4 > 0 {
		syrk4AVX2(h, n, alpha[:m4], xs[:m4*n])
	}
	for r := m4; r < m; r++ {
		syrUpperAVX2(h, n, alpha[r], xs[r*n:r*n+n])
	}
}
