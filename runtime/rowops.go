package runtime

import "math"

// Row primitives for generated per-document kernels: element-wise
// multiply-add and scaling, and reductions (sum, squared distance, sum of
// squares) in a fixed order.
//
// Like the primitives of vec.go, each has a pure-Go reference (the *Go
// functions below; used on every architecture other than amd64, under the
// purego build tag, and on amd64 without AVX2 and FMA) and, on amd64, an
// AVX2+FMA assembly kernel (rowops_amd64.s), chosen by the same switch
// useAVX2. Both compute every result by the same sequence of correctly
// rounded operations, so they are bit-identical on every input, up to the
// sign and payload of NaN results (see vec.go). None of them allocates.
// Only slices too short for the documented region make them panic, before
// anything is written; elements beyond the region are never read or
// written.
//
// The reductions SumVec and SqDist use DotFMA's order: sixteen lanes (four
// 4-wide vector accumulators, all starting at +0) over the first n16
// elements, n16 = n rounded down to a multiple of 16; then four lanes over
// the elements up to n4 = n rounded down to a multiple of 4; then the fixed
// pairwise reduction of the lanes; then the last n-n4 elements one at a
// time, in order. Their results therefore generally differ in the last bits
// from a plain left-to-right loop, but are the same bits on every platform.

// MulAddFMA sets dst[i] = math.FMA(x[i], y[i], dst[i]) for i < len(dst): one
// fused multiply-add, a single rounding, per element. It requires
// len(x) ≥ len(dst) and len(y) ≥ len(dst). dst may be the same slice as x or
// y, but must not otherwise overlap them.
func MulAddFMA(dst, x, y []float64) {
	if len(dst) == 0 {
		return
	}
	if len(x) < len(dst) || len(y) < len(dst) {
		panic("runtime.MulAddFMA: len(x) or len(y) < len(dst)")
	}
	x = x[:len(dst)]
	y = y[:len(dst)]
	if useAVX2 {
		mulAddFMAAVX2(dst, x, y)
		return
	}
	mulAddFMAGo(dst, x, y)
}

// SumVec returns the sum of the elements of x, added in DotFMA's fixed
// order with additions in place of the FMAs. With n = len(x), n16 = n
// rounded down to a multiple of 16 and n4 = n rounded down to a multiple
// of 4:
//
//	var acc [16]float64 // all +0
//	for i := 0; i < n16; i++ {
//		acc[i%16] = acc[i%16] + x[i]
//	}
//	for i := n16; i < n4; i++ {
//		acc[i%4] = acc[i%4] + x[i]
//	}
//	var t [4]float64
//	for j := 0; j < 4; j++ {
//		t[j] = (acc[j] + acc[4+j]) + (acc[8+j] + acc[12+j])
//	}
//	s := (t[0] + t[2]) + (t[1] + t[3])
//	for i := n4; i < n; i++ {
//		s = s + x[i]
//	}
//	return s
//
// Since every accumulator starts at +0, the result is never -0 (the sum of
// an empty or all-zero x is +0). A NaN element gives NaN; a partial sum
// that overflows becomes ±Inf (and NaN if it meets the opposite infinity).
func SumVec(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	if useAVX2 {
		return sumVecAVX2(x)
	}
	return sumVecGo(x)
}

// ScaleVec sets x[i] = x[i] * a for every i < len(x).
func ScaleVec(x []float64, a float64) {
	if len(x) == 0 {
		return
	}
	if useAVX2 {
		scaleVecAVX2(x, a)
		return
	}
	scaleVecGo(x, a)
}

// SqDist returns the squared Euclidean distance Σ (x[i]-y[i])² between x and
// y[:len(x)]; it requires len(y) ≥ len(x). Each difference d = x[i] - y[i]
// is rounded, then accumulated as math.FMA(d, d, acc) in DotFMA's fixed
// order. With n = len(x), n16 and n4 as in SumVec:
//
//	var acc [16]float64 // all +0
//	for i := 0; i < n16; i++ {
//		d := x[i] - y[i]
//		acc[i%16] = math.FMA(d, d, acc[i%16])
//	}
//	for i := n16; i < n4; i++ {
//		d := x[i] - y[i]
//		acc[i%4] = math.FMA(d, d, acc[i%4])
//	}
//	var t [4]float64
//	for j := 0; j < 4; j++ {
//		t[j] = (acc[j] + acc[4+j]) + (acc[8+j] + acc[12+j])
//	}
//	s := (t[0] + t[2]) + (t[1] + t[3])
//	for i := n4; i < n; i++ {
//		d := x[i] - y[i]
//		s = math.FMA(d, d, s)
//	}
//	return s
//
// The result is never -0. A difference that overflows (or is Inf) makes the
// result +Inf; a NaN element, or equal infinities (Inf - Inf), makes it NaN.
func SqDist(x, y []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	if len(y) < len(x) {
		panic("runtime.SqDist: len(y) < len(x)")
	}
	y = y[:len(x)]
	if useAVX2 {
		return sqDistAVX2(x, y)
	}
	return sqDistGo(x, y)
}

// SumSq returns Σ x[i]², accumulated as math.FMA(x[i], x[i], acc) in
// DotFMA's fixed order: it is DotFMA(x, x), bit for bit (the order written
// out at SqDist, with d = x[i]). The result is never -0.
func SumSq(x []float64) float64 {
	return DotFMA(x, x)
}

// mulAddFMAGo is the reference MulAddFMA. len(x) == len(y) == len(dst).
func mulAddFMAGo(dst, x, y []float64) {
	x = x[:len(dst)]
	y = y[:len(dst)]
	for i := range dst {
		dst[i] = math.FMA(x[i], y[i], dst[i])
	}
}

// scaleVecGo is the reference ScaleVec.
func scaleVecGo(x []float64, a float64) {
	for i := range x {
		x[i] *= a
	}
}

// sumVecGo is the reference SumVec, in exactly the documented order.
func sumVecGo(x []float64) float64 {
	n := len(x)
	n16 := n &^ 15
	n4 := n &^ 3
	var a0, a1, a2, a3, a4, a5, a6, a7 float64
	var a8, a9, a10, a11, a12, a13, a14, a15 float64
	for i := 0; i < n16; i += 16 {
		xs := x[i : i+16 : i+16]
		a0 += xs[0]
		a1 += xs[1]
		a2 += xs[2]
		a3 += xs[3]
		a4 += xs[4]
		a5 += xs[5]
		a6 += xs[6]
		a7 += xs[7]
		a8 += xs[8]
		a9 += xs[9]
		a10 += xs[10]
		a11 += xs[11]
		a12 += xs[12]
		a13 += xs[13]
		a14 += xs[14]
		a15 += xs[15]
	}
	for i := n16; i < n4; i += 4 {
		xs := x[i : i+4 : i+4]
		a0 += xs[0]
		a1 += xs[1]
		a2 += xs[2]
		a3 += xs[3]
	}
	t0 := (a0 + a4) + (a8 + a12)
	t1 := (a1 + a5) + (a9 + a13)
	t2 := (a2 + a6) + (a10 + a14)
	t3 := (a3 + a7) + (a11 + a15)
	s := (t0 + t2) + (t1 + t3)
	for _, v := range x[n4:] {
		s += v
	}
	return s
}

// sqDistGo is the reference SqDist, in exactly the documented order.
// len(y) == len(x).
func sqDistGo(x, y []float64) float64 {
	n := len(x)
	y = y[:n]
	n16 := n &^ 15
	n4 := n &^ 3
	var a0, a1, a2, a3, a4, a5, a6, a7 float64
	var a8, a9, a10, a11, a12, a13, a14, a15 float64
	var d float64
	for i := 0; i < n16; i += 16 {
		xs := x[i : i+16 : i+16]
		ys := y[i : i+16 : i+16]
		d = xs[0] - ys[0]
		a0 = math.FMA(d, d, a0)
		d = xs[1] - ys[1]
		a1 = math.FMA(d, d, a1)
		d = xs[2] - ys[2]
		a2 = math.FMA(d, d, a2)
		d = xs[3] - ys[3]
		a3 = math.FMA(d, d, a3)
		d = xs[4] - ys[4]
		a4 = math.FMA(d, d, a4)
		d = xs[5] - ys[5]
		a5 = math.FMA(d, d, a5)
		d = xs[6] - ys[6]
		a6 = math.FMA(d, d, a6)
		d = xs[7] - ys[7]
		a7 = math.FMA(d, d, a7)
		d = xs[8] - ys[8]
		a8 = math.FMA(d, d, a8)
		d = xs[9] - ys[9]
		a9 = math.FMA(d, d, a9)
		d = xs[10] - ys[10]
		a10 = math.FMA(d, d, a10)
		d = xs[11] - ys[11]
		a11 = math.FMA(d, d, a11)
		d = xs[12] - ys[12]
		a12 = math.FMA(d, d, a12)
		d = xs[13] - ys[13]
		a13 = math.FMA(d, d, a13)
		d = xs[14] - ys[14]
		a14 = math.FMA(d, d, a14)
		d = xs[15] - ys[15]
		a15 = math.FMA(d, d, a15)
	}
	for i := n16; i < n4; i += 4 {
		xs := x[i : i+4 : i+4]
		ys := y[i : i+4 : i+4]
		d = xs[0] - ys[0]
		a0 = math.FMA(d, d, a0)
		d = xs[1] - ys[1]
		a1 = math.FMA(d, d, a1)
		d = xs[2] - ys[2]
		a2 = math.FMA(d, d, a2)
		d = xs[3] - ys[3]
		a3 = math.FMA(d, d, a3)
	}
	t0 := (a0 + a4) + (a8 + a12)
	t1 := (a1 + a5) + (a9 + a13)
	t2 := (a2 + a6) + (a10 + a14)
	t3 := (a3 + a7) + (a11 + a15)
	s := (t0 + t2) + (t1 + t3)
	for i := n4; i < n; i++ {
		d = x[i] - y[i]
		s = math.FMA(d, d, s)
	}
	return s
}
