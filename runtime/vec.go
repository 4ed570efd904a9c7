package runtime

import (
	"math"
	"strconv"
)

// Vector primitives for generated per-document kernels.
//
// Every function here has two implementations: a pure-Go reference (the
// *Go functions below, used on every architecture other than amd64, under
// the purego build tag, and on amd64 CPUs or operating systems without AVX2
// and FMA) and, on amd64, AVX2+FMA assembly (vec_amd64.s). The package-level
// switch useAVX2 chooses between them. The two give bit-identical results on
// every input: each output element is computed by the same sequence of
// correctly rounded operations (math.FMA in Go, VFMADD231SD/PD in assembly,
// never a separate multiply and add where an FMA is documented, and no
// reassociation). The one exception is NaN payloads: a result is NaN on one
// path exactly when it is NaN on the other, but when two operands of one
// operation are NaNs with different payloads (or signs), which one survives
// depends on operand order, which the Go compiler is free to swap in a
// multiply or an add (Go does not specify NaN payloads), so the sign and
// payload bits of a NaN result are unspecified.
//
// All matrices are flat, row-major slices: element (a, b) of an n×n matrix h
// is h[a*n+b]. Slices may be longer than needed; elements beyond the
// documented region are never read or written. Violated length preconditions
// panic before anything is written.

// SyrUpper applies the symmetric rank-1 update h += alpha·x·xᵀ to the upper
// triangle (row a, columns b ≥ a) of the n×n row-major matrix h:
//
//	for a := 0; a < n; a++ {
//		s := alpha * x[a]
//		for b := a; b < n; b++ {
//			h[a*n+b] = math.FMA(s, x[b], h[a*n+b])
//		}
//	}
//
// The strictly lower triangle and h[n*n:] are not touched. It requires
// n ≥ 0, len(h) ≥ n*n and len(x) ≥ n. Bit-identical on every platform.
func SyrUpper(h []float64, n int, alpha float64, x []float64) {
	if n <= 0 {
		return
	}
	if len(x) < n || len(h)/n < n {
		panic(vecLenError("SyrUpper", n))
	}
	h = h[:n*n]
	x = x[:n]
	if useAVX2 {
		syrUpperAVX2(h, n, alpha, x)
		return
	}
	syrUpperGo(h, n, alpha, x)
}

// SyrkUpper applies m = len(alpha) symmetric rank-1 updates to the upper
// triangle of the n×n row-major matrix h, one per row of the m×n row-major
// matrix xs, in order r = 0, 1, …, m-1:
//
//	for r := range alpha {
//		SyrUpper(h, n, alpha[r], xs[r*n:(r+1)*n])
//	}
//
// The result is bit-identical to that loop: each element of the triangle
// receives h = math.FMA(alpha[r]*xs[r*n+a], xs[r*n+b], h) for r in order.
// It is faster because it loads and stores each element of h once per 16
// rows of xs (on amd64 with AVX2; the pure-Go path passes over h once per
// four rows), keeping tiles of h in registers across the rows. The
// strictly lower triangle and h[n*n:] are not touched. It requires n ≥ 0,
// len(h) ≥ n*n and len(xs) ≥ len(alpha)*n.
func SyrkUpper(h []float64, n int, alpha []float64, xs []float64) {
	m := len(alpha)
	if n <= 0 || m == 0 {
		return
	}
	if len(h)/n < n || len(xs)/n < m {
		panic(vecLenError("SyrkUpper", n))
	}
	h = h[:n*n]
	xs = xs[:m*n]
	if useAVX2 {
		syrkUpperAVX2(h, n, alpha, xs)
		return
	}
	syrkUpperGo(h, n, alpha, xs)
}

// AxpyFMA sets y[i] = math.FMA(alpha, x[i], y[i]) for i < len(x). It requires
// len(y) ≥ len(x); y[len(x):] is not touched.
func AxpyFMA(alpha float64, x, y []float64) {
	if len(x) == 0 {
		return
	}
	if len(y) < len(x) {
		panic("runtime.AxpyFMA: len(y) < len(x)")
	}
	y = y[:len(x)]
	if useAVX2 {
		axpyFMAAVX2(alpha, x, y)
		return
	}
	axpyFMAGo(alpha, x, y)
}

// MulVec sets dst[i] = x[i] * y[i] for i < len(dst). It requires
// len(x) ≥ len(dst) and len(y) ≥ len(dst).
func MulVec(dst, x, y []float64) {
	if len(dst) == 0 {
		return
	}
	if len(x) < len(dst) || len(y) < len(dst) {
		panic("runtime.MulVec: len(x) or len(y) < len(dst)")
	}
	x = x[:len(dst)]
	y = y[:len(dst)]
	if useAVX2 {
		mulVecAVX2(dst, x, y)
		return
	}
	mulVecGo(dst, x, y)
}

// DotFMA returns the dot product of x and y[:len(x)]; it requires
// len(y) ≥ len(x). The accumulation order is fixed, so the result is the same
// bits on every platform. With n = len(x), n16 = n rounded down to a
// multiple of 16 and n4 = n rounded down to a multiple of 4:
//
//	var acc [16]float64 // all +0
//	for i := 0; i < n16; i++ {
//		acc[i%16] = math.FMA(x[i], y[i], acc[i%16])
//	}
//	for i := n16; i < n4; i++ {
//		acc[i%4] = math.FMA(x[i], y[i], acc[i%4])
//	}
//	var t [4]float64
//	for j := 0; j < 4; j++ {
//		t[j] = (acc[j] + acc[4+j]) + (acc[8+j] + acc[12+j])
//	}
//	s := (t[0] + t[2]) + (t[1] + t[3])
//	for i := n4; i < n; i++ {
//		s = math.FMA(x[i], y[i], s)
//	}
//	return s
//
// (Sixteen lanes are four 4-wide vector accumulators; the reduction is the
// vector one: add the accumulators pairwise, then the two 128-bit halves,
// then the two remaining lanes.) The result therefore generally differs in
// the last bits from a plain left-to-right sum.
func DotFMA(x, y []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	if len(y) < len(x) {
		panic("runtime.DotFMA: len(y) < len(x)")
	}
	y = y[:len(x)]
	if useAVX2 {
		return dotFMAAVX2(x, y)
	}
	return dotFMAGo(x, y)
}

// vecLenError is the panic message of SyrUpper and SyrkUpper for slices too
// short for n.
func vecLenError(fn string, n int) string {
	return "runtime." + fn + ": slice too short for n = " + strconv.Itoa(n)
}

// syrUpperGo is the reference SyrUpper. len(h) == n*n, len(x) == n.
func syrUpperGo(h []float64, n int, alpha float64, x []float64) {
	for a := 0; a < n; a++ {
		s := alpha * x[a]
		row := h[a*n+a : a*n+n]
		xb := x[a:n]
		xb = xb[:len(row)]
		for b, v := range xb {
			row[b] = math.FMA(s, v, row[b])
		}
	}
}

// syrkUpperGo is the reference SyrkUpper: four rows of xs per pass over the
// triangle, each element updated by the rows in order, then the remaining
// rows one at a time. len(h) == n*n, len(xs) == len(alpha)*n.
func syrkUpperGo(h []float64, n int, alpha []float64, xs []float64) {
	m := len(alpha)
	r := 0
	for ; r+4 <= m; r += 4 {
		x0 := xs[r*n : r*n+n]
		x1 := xs[(r+1)*n : (r+1)*n+n]
		x2 := xs[(r+2)*n : (r+2)*n+n]
		x3 := xs[(r+3)*n : (r+3)*n+n]
		a0, a1, a2, a3 := alpha[r], alpha[r+1], alpha[r+2], alpha[r+3]
		for a := 0; a < n; a++ {
			s0 := a0 * x0[a]
			s1 := a1 * x1[a]
			s2 := a2 * x2[a]
			s3 := a3 * x3[a]
			row := h[a*n+a : a*n+n]
			y0 := x0[a:n]
			y0 = y0[:len(row)]
			y1 := x1[a:n]
			y1 = y1[:len(row)]
			y2 := x2[a:n]
			y2 = y2[:len(row)]
			y3 := x3[a:n]
			y3 = y3[:len(row)]
			for b, v := range row {
				v = math.FMA(s0, y0[b], v)
				v = math.FMA(s1, y1[b], v)
				v = math.FMA(s2, y2[b], v)
				v = math.FMA(s3, y3[b], v)
				row[b] = v
			}
		}
	}
	for ; r < m; r++ {
		syrUpperGo(h, n, alpha[r], xs[r*n:r*n+n])
	}
}

// axpyFMAGo is the reference AxpyFMA. len(y) == len(x).
func axpyFMAGo(alpha float64, x, y []float64) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] = math.FMA(alpha, v, y[i])
	}
}

// mulVecGo is the reference MulVec. len(x) == len(y) == len(dst).
func mulVecGo(dst, x, y []float64) {
	x = x[:len(dst)]
	y = y[:len(dst)]
	for i := range dst {
		dst[i] = x[i] * y[i]
	}
}

// dotFMAGo is the reference DotFMA, in exactly the documented order.
// len(y) == len(x).
func dotFMAGo(x, y []float64) float64 {
	n := len(x)
	y = y[:n]
	n16 := n &^ 15
	n4 := n &^ 3
	var a0, a1, a2, a3, a4, a5, a6, a7 float64
	var a8, a9, a10, a11, a12, a13, a14, a15 float64
	for i := 0; i < n16; i += 16 {
		xs := x[i : i+16 : i+16]
		ys := y[i : i+16 : i+16]
		a0 = math.FMA(xs[0], ys[0], a0)
		a1 = math.FMA(xs[1], ys[1], a1)
		a2 = math.FMA(xs[2], ys[2], a2)
		a3 = math.FMA(xs[3], ys[3], a3)
		a4 = math.FMA(xs[4], ys[4], a4)
		a5 = math.FMA(xs[5], ys[5], a5)
		a6 = math.FMA(xs[6], ys[6], a6)
		a7 = math.FMA(xs[7], ys[7], a7)
		a8 = math.FMA(xs[8], ys[8], a8)
		a9 = math.FMA(xs[9], ys[9], a9)
		a10 = math.FMA(xs[10], ys[10], a10)
		a11 = math.FMA(xs[11], ys[11], a11)
		a12 = math.FMA(xs[12], ys[12], a12)
		a13 = math.FMA(xs[13], ys[13], a13)
		a14 = math.FMA(xs[14], ys[14], a14)
		a15 = math.FMA(xs[15], ys[15], a15)
	}
	for i := n16; i < n4; i += 4 {
		xs := x[i : i+4 : i+4]
		ys := y[i : i+4 : i+4]
		a0 = math.FMA(xs[0], ys[0], a0)
		a1 = math.FMA(xs[1], ys[1], a1)
		a2 = math.FMA(xs[2], ys[2], a2)
		a3 = math.FMA(xs[3], ys[3], a3)
	}
	t0 := (a0 + a4) + (a8 + a12)
	t1 := (a1 + a5) + (a9 + a13)
	t2 := (a2 + a6) + (a10 + a14)
	t3 := (a3 + a7) + (a11 + a15)
	s := (t0 + t2) + (t1 + t3)
	for i := n4; i < n; i++ {
		s = math.FMA(x[i], y[i], s)
	}
	return s
}
