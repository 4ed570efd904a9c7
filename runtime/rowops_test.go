package runtime

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"
)

// The tests of rowops.go compare, bit for bit, up to four computations of
// every primitive: a literal transcription of its documented definition, the
// pure-Go reference (the *Go function), the assembly kernel where the CPU
// has AVX2 and FMA, and the exported function (which dispatches on
// useAVX2). Inputs cover every length up to 70 (all unroll remainders and
// tails) and 100, 1000, 1023; slice starts at offsets 0, 1 and 3 of the
// backing array (unaligned vector loads and stores); negatives, signed
// zeros, subnormals, values whose products or sums underflow or overflow,
// infinities and NaNs with several payloads. Any NaN result matches any NaN
// (payloads are unspecified, see vec.go); every other result must have the
// same bits. Every element outside the written region, and every input,
// must keep its exact bits, NaN payloads included.
//
// The helpers are separate from vec_test.go's (prefix rowops) so that the
// two files can change independently.

var rowopsSizes = func() []int {
	var s []int
	for n := 0; n <= 70; n++ {
		s = append(s, n)
	}
	return append(s, 100, 1000, 1023)
}()

var rowopsOffsets = []int{0, 1, 3}

const rowopsGuard = 5 // elements after the region that must stay untouched

var rowopsNaNs = []float64{
	math.NaN(),
	math.Float64frombits(0x7ff8000000000000),
	math.Float64frombits(0xfff8000000000000),
	math.Float64frombits(0x7ff8dead0000beef),
	math.Float64frombits(0xfff0000000000123), // signalling
	math.Float64frombits(0x7ff4000000000001), // signalling
}

// rowopsValue draws one value: with special set, infinities and NaNs too.
func rowopsValue(rng *rand.Rand, special bool) float64 {
	sign := 1.0
	if rng.Intn(2) == 0 {
		sign = -1
	}
	k := rng.Intn(100)
	switch {
	case k < 8:
		return math.Copysign(0, sign)
	case k < 16: // subnormal
		return sign * math.Float64frombits(uint64(rng.Int63n(1<<52-1)+1))
	case k < 20: // near the underflow threshold: products round to subnormals or 0
		return sign * math.Ldexp(1+rng.Float64(), -540+rng.Intn(40))
	case k < 23: // huge: products (squares of differences) overflow
		return sign * math.Ldexp(1+rng.Float64(), 500+rng.Intn(30))
	case k < 26: // near MaxFloat64: sums and differences overflow
		return sign * math.Ldexp(1+rng.Float64(), 1020+rng.Intn(4))
	case special && k < 30:
		return math.Inf(int(sign))
	case special && k < 34:
		return rowopsNaNs[rng.Intn(len(rowopsNaNs))]
	}
	return sign * math.Ldexp(rng.Float64()+0.5, rng.Intn(41)-20)
}

func rowopsFill(rng *rand.Rand, s []float64, special bool) {
	for i := range s {
		s[i] = rowopsValue(rng, special)
	}
}

func rowopsClone(s []float64) []float64 { return append([]float64(nil), s...) }

// rowopsNaNDiffs counts NaN results whose sign or payload differ (allowed);
// rowopsLogNaNs logs it at the end of a test.
var rowopsNaNDiffs int

func rowopsLogNaNs(t *testing.T) {
	rowopsNaNDiffs = 0
	t.Cleanup(func() {
		if rowopsNaNDiffs > 0 {
			t.Logf("%d NaN results differ in sign or payload (allowed)", rowopsNaNDiffs)
		}
	})
}

// rowopsSame reports whether got and want are the same result: the same
// bits, or both NaN.
func rowopsSame(got, want float64) bool {
	if math.IsNaN(got) && math.IsNaN(want) {
		if math.Float64bits(got) != math.Float64bits(want) {
			rowopsNaNDiffs++
		}
		return true
	}
	return math.Float64bits(got) == math.Float64bits(want)
}

// rowopsCheck fails unless got[lo:hi] matches want[lo:hi] (rowopsSame) and
// every other element has exactly the bits of want.
func rowopsCheck(t *testing.T, what string, got, want []float64, lo, hi int) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: len %d, want %d", what, len(got), len(want))
	}
	bad := 0
	for i := range got {
		ok := false
		if lo <= i && i < hi {
			ok = rowopsSame(got[i], want[i])
		} else {
			ok = math.Float64bits(got[i]) == math.Float64bits(want[i])
		}
		if !ok {
			if bad < 5 {
				where := "outside the region"
				if lo <= i && i < hi {
					where = "in the region"
				}
				t.Errorf("%s: [%d] (%s) = %v (%#016x), want %v (%#016x)", what, i, where,
					got[i], math.Float64bits(got[i]), want[i], math.Float64bits(want[i]))
			}
			bad++
		}
	}
	if bad > 0 {
		t.Fatalf("%s: %d of %d elements differ", what, bad, len(got))
	}
}

// rowopsCheckUnchanged fails unless buf still has exactly the bits of orig.
func rowopsCheckUnchanged(t *testing.T, what string, buf, orig []float64) {
	t.Helper()
	rowopsCheck(t, what, buf, orig, 0, 0)
}

func rowopsCheckScalar(t *testing.T, what string, got, want float64) {
	t.Helper()
	if !rowopsSame(got, want) {
		t.Fatalf("%s = %v (%#016x), want %v (%#016x)", what,
			got, math.Float64bits(got), want, math.Float64bits(want))
	}
}

// rowopsImpls runs f once per implementation: the pure-Go reference, the
// assembly kernel (if the CPU has it) and the exported function.
func rowopsImpls(f func(name string, asm, exported bool)) {
	f("go", false, false)
	if hasAVX2FMA {
		f("asm", true, false)
	}
	f("exported", false, true)
}

// The documented definitions, literally.

func rowopsSpecSum(x []float64) float64 {
	n := len(x)
	n16, n4 := n/16*16, n/4*4
	var acc [16]float64
	for i := 0; i < n16; i++ {
		acc[i%16] = acc[i%16] + x[i]
	}
	for i := n16; i < n4; i++ {
		acc[i%4] = acc[i%4] + x[i]
	}
	var t [4]float64
	for j := 0; j < 4; j++ {
		t[j] = (acc[j] + acc[4+j]) + (acc[8+j] + acc[12+j])
	}
	s := (t[0] + t[2]) + (t[1] + t[3])
	for i := n4; i < n; i++ {
		s = s + x[i]
	}
	return s
}

func rowopsSpecSqDist(x, y []float64) float64 {
	n := len(x)
	n16, n4 := n/16*16, n/4*4
	var acc [16]float64
	for i := 0; i < n16; i++ {
		d := x[i] - y[i]
		acc[i%16] = math.FMA(d, d, acc[i%16])
	}
	for i := n16; i < n4; i++ {
		d := x[i] - y[i]
		acc[i%4] = math.FMA(d, d, acc[i%4])
	}
	var t [4]float64
	for j := 0; j < 4; j++ {
		t[j] = (acc[j] + acc[4+j]) + (acc[8+j] + acc[12+j])
	}
	s := (t[0] + t[2]) + (t[1] + t[3])
	for i := n4; i < n; i++ {
		d := x[i] - y[i]
		s = math.FMA(d, d, s)
	}
	return s
}

func rowopsSpecSumSq(x []float64) float64 {
	n := len(x)
	n16, n4 := n/16*16, n/4*4
	var acc [16]float64
	for i := 0; i < n16; i++ {
		acc[i%16] = math.FMA(x[i], x[i], acc[i%16])
	}
	for i := n16; i < n4; i++ {
		acc[i%4] = math.FMA(x[i], x[i], acc[i%4])
	}
	var t [4]float64
	for j := 0; j < 4; j++ {
		t[j] = (acc[j] + acc[4+j]) + (acc[8+j] + acc[12+j])
	}
	s := (t[0] + t[2]) + (t[1] + t[3])
	for i := n4; i < n; i++ {
		s = math.FMA(x[i], x[i], s)
	}
	return s
}

// rowopsCases runs f for every size, offset and value class with fresh
// buffers xbuf, ybuf, dbuf of length off+n+rowopsGuard.
func rowopsCases(t *testing.T, seed int64, f func(n, off int, special bool, xbuf, ybuf, dbuf []float64, a float64)) {
	rng := rand.New(rand.NewSource(seed))
	for _, special := range []bool{false, true} {
		for _, n := range rowopsSizes {
			for _, off := range rowopsOffsets {
				xbuf := make([]float64, off+n+rowopsGuard)
				ybuf := make([]float64, off+n+rowopsGuard)
				dbuf := make([]float64, off+n+rowopsGuard)
				rowopsFill(rng, xbuf, special)
				rowopsFill(rng, ybuf, special)
				rowopsFill(rng, dbuf, special)
				if n > 0 && rng.Intn(3) == 0 {
					// Some rows of ordinary values only, whose sums and
					// distances are finite and sensitive to the order.
					for i := off; i < off+n; i++ {
						xbuf[i] = rng.NormFloat64()
						ybuf[i] = rng.NormFloat64()
					}
				}
				a := rowopsValue(rng, special)
				f(n, off, special, xbuf, ybuf, dbuf, a)
			}
		}
	}
}

func TestMulAddFMA(t *testing.T) {
	rowopsLogNaNs(t)
	rowopsCases(t, 11, func(n, off int, special bool, xbuf, ybuf, dbuf []float64, _ float64) {
		x, y := xbuf[off:off+n], ybuf[off:off+n]
		xorig, yorig := rowopsClone(xbuf), rowopsClone(ybuf)
		want := rowopsClone(dbuf)
		for i := 0; i < n; i++ {
			want[off+i] = math.FMA(x[i], y[i], want[off+i])
		}
		rowopsImpls(func(name string, asm, exported bool) {
			got := rowopsClone(dbuf)
			dst := got[off : off+n]
			switch {
			case exported:
				MulAddFMA(dst, xbuf[off:], ybuf[off:]) // x, y longer than dst
			case asm:
				if n > 0 {
					mulAddFMAAVX2(dst, x, y)
				}
			default:
				mulAddFMAGo(dst, x, y)
			}
			what := fmt.Sprintf("MulAddFMA %s n=%d off=%d special=%v", name, n, off, special)
			rowopsCheck(t, what, got, want, off, off+n)
			rowopsCheckUnchanged(t, what+" x", xbuf, xorig)
			rowopsCheckUnchanged(t, what+" y", ybuf, yorig)
		})

		// dst the same slice as x, as y, and as both.
		for _, alias := range []string{"x", "y", "xy"} {
			var want []float64
			switch alias {
			case "x":
				want = rowopsClone(xbuf)
				for i := 0; i < n; i++ {
					want[off+i] = math.FMA(want[off+i], y[i], want[off+i])
				}
			case "y":
				want = rowopsClone(ybuf)
				for i := 0; i < n; i++ {
					want[off+i] = math.FMA(x[i], want[off+i], want[off+i])
				}
			case "xy":
				want = rowopsClone(xbuf)
				for i := 0; i < n; i++ {
					want[off+i] = math.FMA(want[off+i], want[off+i], want[off+i])
				}
			}
			rowopsImpls(func(name string, asm, exported bool) {
				var got []float64
				if alias == "y" {
					got = rowopsClone(ybuf)
				} else {
					got = rowopsClone(xbuf)
				}
				d := got[off : off+n]
				xs, ys := x, y
				switch alias {
				case "x":
					xs = d
				case "y":
					ys = d
				case "xy":
					xs, ys = d, d
				}
				switch {
				case exported:
					MulAddFMA(d, xs, ys)
				case asm:
					if n > 0 {
						mulAddFMAAVX2(d, xs, ys)
					}
				default:
					mulAddFMAGo(d, xs, ys)
				}
				what := fmt.Sprintf("MulAddFMA dst=%s %s n=%d off=%d special=%v", alias, name, n, off, special)
				rowopsCheck(t, what, got, want, off, off+n)
			})
		}
	})
}

func TestScaleVec(t *testing.T) {
	rowopsLogNaNs(t)
	specials := []float64{0, math.Copysign(0, -1), 1, -1, 0.5, math.Inf(1), math.Inf(-1), math.NaN(),
		math.SmallestNonzeroFloat64, math.MaxFloat64, 3}
	k := 0
	rowopsCases(t, 12, func(n, off int, special bool, xbuf, _, _ []float64, a float64) {
		if k++; k%3 == 0 {
			a = specials[(k/3)%len(specials)]
		}
		want := rowopsClone(xbuf)
		for i := off; i < off+n; i++ {
			want[i] *= a
		}
		rowopsImpls(func(name string, asm, exported bool) {
			got := rowopsClone(xbuf)
			x := got[off : off+n]
			switch {
			case exported:
				ScaleVec(x, a)
			case asm:
				if n > 0 {
					scaleVecAVX2(x, a)
				}
			default:
				scaleVecGo(x, a)
			}
			rowopsCheck(t, fmt.Sprintf("ScaleVec %s n=%d off=%d special=%v a=%v", name, n, off, special, a),
				got, want, off, off+n)
		})
	})
}

func TestSumVec(t *testing.T) {
	rowopsLogNaNs(t)
	rowopsCases(t, 13, func(n, off int, special bool, xbuf, _, _ []float64, _ float64) {
		x := xbuf[off : off+n]
		orig := rowopsClone(xbuf)
		want := rowopsSpecSum(x)
		rowopsImpls(func(name string, asm, exported bool) {
			var got float64
			switch {
			case exported:
				got = SumVec(x)
			case asm:
				got = sumVecAVX2(x)
			default:
				got = sumVecGo(x)
			}
			what := fmt.Sprintf("SumVec %s n=%d off=%d special=%v", name, n, off, special)
			rowopsCheckScalar(t, what, got, want)
			rowopsCheckUnchanged(t, what+" x", xbuf, orig)
		})
	})
}

func TestSqDist(t *testing.T) {
	rowopsLogNaNs(t)
	rowopsCases(t, 14, func(n, off int, special bool, xbuf, ybuf, _ []float64, _ float64) {
		x, y := xbuf[off:off+n], ybuf[off:off+n]
		if n > 0 && n%5 == 0 {
			// Close rows: differences that cancel exactly or nearly.
			for i := range x {
				if i%2 == 0 {
					y[i] = x[i]
				} else if !math.IsInf(x[i], 0) && !math.IsNaN(x[i]) {
					y[i] = math.Nextafter(x[i], 0)
				}
			}
		}
		xorig, yorig := rowopsClone(xbuf), rowopsClone(ybuf)
		want := rowopsSpecSqDist(x, y)
		rowopsImpls(func(name string, asm, exported bool) {
			var got float64
			switch {
			case exported:
				got = SqDist(x, ybuf[off:]) // y longer than x
			case asm:
				got = sqDistAVX2(x, y)
			default:
				got = sqDistGo(x, y)
			}
			what := fmt.Sprintf("SqDist %s n=%d off=%d special=%v", name, n, off, special)
			rowopsCheckScalar(t, what, got, want)
			rowopsCheckUnchanged(t, what+" x", xbuf, xorig)
			rowopsCheckUnchanged(t, what+" y", ybuf, yorig)
		})
	})
}

func TestSumSq(t *testing.T) {
	rowopsLogNaNs(t)
	rowopsCases(t, 15, func(n, off int, special bool, xbuf, _, _ []float64, _ float64) {
		x := xbuf[off : off+n]
		orig := rowopsClone(xbuf)
		want := rowopsSpecSumSq(x)
		// SumSq is SqDist against zeros, in the same order, except that
		// x - (+0) turns -0 into +0, which does not change d*d.
		rowopsCheckScalar(t, fmt.Sprintf("SumSq spec vs SqDist spec n=%d", n), rowopsSpecSqDist(x, make([]float64, n)), want)
		for _, impl := range []string{"go", "exported"} {
			var got float64
			if impl == "go" {
				got = dotFMAGo(x, x)
			} else {
				got = SumSq(x)
			}
			what := fmt.Sprintf("SumSq %s n=%d off=%d special=%v", impl, n, off, special)
			rowopsCheckScalar(t, what, got, want)
			rowopsCheckUnchanged(t, what+" x", xbuf, orig)
		}
		if hasAVX2FMA {
			rowopsCheckScalar(t, fmt.Sprintf("SumSq asm n=%d off=%d special=%v", n, off, special), dotFMAAVX2(x, x), want)
		}
	})
}

// TestSumVecOrder pins SumVec's order: 1e16 and -1e16 cancel exactly only
// where the documented reduction combines them, and the ones are absorbed
// or not depending on the lane they land in. The expected values are worked
// out by hand, not from the definition.
func TestSumVecOrder(t *testing.T) {
	plainSum := func(x []float64) float64 {
		s := 0.0
		for _, v := range x {
			s += v
		}
		return s
	}
	ones := func(n int) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[i] = 1
		}
		return x
	}
	cases := []struct {
		x    []float64
		want float64
	}{}
	// n = 19: lanes 0 and 4 hold 1e16 and -1e16 and cancel in
	// t[0] = (acc0+acc4)+…; the other 14 lanes hold 1, the tail adds 3.
	// Left to right, 1e16+1 == 1e16 loses x[1..3]: 14.
	x := ones(19)
	x[0], x[4] = 1e16, -1e16
	cases = append(cases, struct {
		x    []float64
		want float64
	}{x, 17})
	// n = 23 (n16 = 16, n4 = 20): the 4-lane stage and the tail. x[16] =
	// 1e16 lands in lane 0 (i%4), x[20] = -1e16 is the first tail element;
	// 1e16 has spacing 2, ties go to even (1e16+1 → 1e16, 1e16+7 → 1e16+8).
	// acc0 = 1 then 1+1e16 → 1e16, acc1..3 = 2, acc4..15 = 1;
	// t0 = (1e16+1)+(1+1) → 1e16+2, t1..3 = 5;
	// s = (1e16+2+5 → 1e16+8) + 10 = 1e16+18; tail: -1e16, +1, +1 → 20.
	// Left to right: 16 + 1e16, then x[17..19] are absorbed, -1e16, +2 → 18.
	x = ones(23)
	x[16], x[20] = 1e16, -1e16
	cases = append(cases, struct {
		x    []float64
		want float64
	}{x, 20})
	for i, c := range cases {
		got := SumVec(c.x)
		if got != c.want {
			t.Errorf("case %d: SumVec = %v, want %v (documented lane order)", i, got, c.want)
		}
		if g := sumVecGo(c.x); g != c.want {
			t.Errorf("case %d: sumVecGo = %v, want %v", i, g, c.want)
		}
		if s := rowopsSpecSum(c.x); s != c.want {
			t.Errorf("case %d: definition = %v, want %v (the worked example is wrong)", i, s, c.want)
		}
		if p := plainSum(c.x); p == c.want {
			t.Errorf("case %d: plain sum %v equals SumVec: the case does not pin the order", i, p)
		}
	}
}

// TestSqDistOrder pins SqDist's order the same way: (x-y)² of 1e8 is 1e16.
// SumSq, being DotFMA(x, x), is pinned by the same inputs with y = 0.
func TestSqDistOrder(t *testing.T) {
	n := 19
	x := make([]float64, n)
	y := make([]float64, n)
	for i := range x {
		x[i], y[i] = 3, 2 // d = 1, d² = 1
	}
	// n = 19 (n16 = n4 = 16): d = 1e8 in lane 0, d² = 1e16 (spacing 2,
	// ties to even), every other d² = 1.
	// t0 = (1e16+1)+(1+1) → 1e16+2, t1..3 = 4; s = (1e16+2+4) + 8 = 1e16+14;
	// tail: +1 → 1e16+16 (tie to even), +1 → 1e16+16, +1 → 1e16+16.
	// Left to right, every 1e16+1 rounds back to 1e16.
	x[0], y[0] = 1e8, 0
	want := 1e16 + 16
	if got := SqDist(x, y); got != want {
		t.Errorf("SqDist = %v, want %v", got, want)
	}
	if got := sqDistGo(x, y); got != want {
		t.Errorf("sqDistGo = %v, want %v", got, want)
	}
	if got := rowopsSpecSqDist(x, y); got != want {
		t.Errorf("definition = %v, want %v (the worked example is wrong)", got, want)
	}
	plain := 0.0
	for i := range x {
		d := x[i] - y[i]
		plain += d * d
	}
	if plain == want {
		t.Errorf("plain loop %v equals SqDist: the case does not pin the order", plain)
	}
	sq := make([]float64, n)
	for i := range sq {
		sq[i] = x[i] - y[i]
	}
	if got := SumSq(sq); got != want {
		t.Errorf("SumSq = %v, want %v", got, want)
	}
}

// TestSumVecSqDistSumSqZeros: the results are +0, never -0, for all-zero
// inputs of either sign, for differences that cancel, and for squares that
// underflow (their FMA rounds the tiny positive exact value to +0).
func TestSumVecSqDistSumSqZeros(t *testing.T) {
	negz := math.Copysign(0, -1)
	for n := 0; n <= 40; n++ {
		nz := make([]float64, n)
		pz := make([]float64, n)
		tiny := make([]float64, n)
		same := make([]float64, n)
		for i := range nz {
			nz[i] = negz
			tiny[i] = -1e-170 // square 1e-340 underflows to +0
			same[i] = -float64(i + 1)
		}
		for _, r := range []struct {
			what string
			got  float64
		}{
			{"SumVec(-0…)", SumVec(nz)},
			{"sumVecGo(-0…)", sumVecGo(nz)},
			{"SqDist(-0…, +0…)", SqDist(nz, pz)},
			{"SqDist(+0…, -0…)", SqDist(pz, nz)},
			{"SqDist(x, x)", SqDist(same, same)},
			{"sqDistGo(x, x)", sqDistGo(same, same)},
			{"SqDist(tiny, 0)", SqDist(tiny, pz)},
			{"SumSq(-0…)", SumSq(nz)},
			{"SumSq(tiny)", SumSq(tiny)},
		} {
			if r.got != 0 || math.Signbit(r.got) {
				t.Fatalf("n=%d: %s = %v (signbit %v), want +0", n, r.what, r.got, math.Signbit(r.got))
			}
		}
	}
}

// TestSqDistOverflow: differences of finite values that overflow make the
// result +Inf; equal infinities make it NaN.
func TestSqDistOverflow(t *testing.T) {
	for _, n := range []int{1, 3, 4, 17, 37} {
		x := make([]float64, n)
		y := make([]float64, n)
		x[n-1], y[n-1] = math.MaxFloat64, -math.MaxFloat64 // d = +Inf
		for _, got := range []float64{SqDist(x, y), sqDistGo(x, y)} {
			if !math.IsInf(got, 1) {
				t.Fatalf("n=%d: SqDist = %v, want +Inf", n, got)
			}
		}
		x[n-1], y[n-1] = 1e200, -1e200 // d finite, d² overflows
		if got := SqDist(x, y); !math.IsInf(got, 1) {
			t.Fatalf("n=%d: SqDist = %v, want +Inf", n, got)
		}
		x[0], y[0] = math.Inf(1), math.Inf(1)
		if got := SqDist(x, y); !math.IsNaN(got) {
			t.Fatalf("n=%d: SqDist with Inf-Inf = %v, want NaN", n, got)
		}
		if got := SumVec([]float64{math.MaxFloat64, math.MaxFloat64, 1, 2, 3}[:min(n, 5)]); n >= 2 && !math.IsInf(got, 1) {
			t.Fatalf("n=%d: SumVec = %v, want +Inf", n, got)
		}
	}
}

// TestMulAddFMAFamilyDispatch checks that the exported functions follow
// useAVX2 both ways (the switch is a plain variable).
func TestMulAddFMAFamilyDispatch(t *testing.T) {
	rowopsLogNaNs(t)
	saved := useAVX2
	defer func() { useAVX2 = saved }()
	rng := rand.New(rand.NewSource(16))
	for _, n := range []int{5, 37, 100} {
		x := make([]float64, n)
		y := make([]float64, n)
		d0 := make([]float64, n)
		rowopsFill(rng, x, true)
		rowopsFill(rng, y, true)
		rowopsFill(rng, d0, true)
		var dst [2][]float64
		var sums [2][3]float64
		for i, use := range []bool{false, hasAVX2FMA} {
			useAVX2 = use
			d := rowopsClone(d0)
			MulAddFMA(d, x, y)
			ScaleVec(d, -0.75)
			dst[i] = d
			sums[i] = [3]float64{SumVec(d), SqDist(d, x), SumSq(d)}
		}
		rowopsCheck(t, fmt.Sprintf("n=%d go vs asm dispatch", n), dst[1], dst[0], 0, n)
		rowopsCheck(t, fmt.Sprintf("n=%d go vs asm dispatch sums", n), sums[1][:], sums[0][:], 0, 3)
	}
}

// TestMulAddFMAFamilyNoAlloc: none of the primitives allocates.
func TestMulAddFMAFamilyNoAlloc(t *testing.T) {
	x := make([]float64, 103)
	y := make([]float64, 103)
	d := make([]float64, 103)
	for i := range x {
		x[i], y[i], d[i] = float64(i), 1/float64(i+1), -1
	}
	var sink float64
	for name, f := range map[string]func(){
		"MulAddFMA": func() { MulAddFMA(d, x, y) },
		"ScaleVec":  func() { ScaleVec(d, -1) },
		"SumVec":    func() { sink += SumVec(x) },
		"SqDist":    func() { sink += SqDist(x, y) },
		"SumSq":     func() { sink += SumSq(x) },
	} {
		if a := testing.AllocsPerRun(20, f); a != 0 {
			t.Errorf("%s: %v allocations per call", name, a)
		}
	}
	_ = sink
}

// TestMulAddFMAFamilyShort: empty inputs are no-ops (sums +0), and too
// short slices panic with a message naming the function, before anything
// is written.
func TestMulAddFMAFamilyShort(t *testing.T) {
	MulAddFMA(nil, nil, nil)
	MulAddFMA([]float64{}, nil, []float64{1})
	ScaleVec(nil, 2)
	for _, r := range []float64{SumVec(nil), SqDist(nil, nil), SqDist([]float64{}, nil), SumSq(nil)} {
		if r != 0 || math.Signbit(r) {
			t.Fatalf("empty reduction = %v, want +0", r)
		}
	}
	mustPanic := func(name, msg string, f func()) {
		t.Helper()
		defer func() {
			t.Helper()
			r := recover()
			if r == nil {
				t.Errorf("%s: no panic", name)
				return
			}
			if s, ok := r.(string); !ok || !strings.Contains(s, msg) {
				t.Errorf("%s: panic %v, want a message containing %q", name, r, msg)
			}
		}()
		f()
	}
	d := make([]float64, 4)
	x := []float64{1, 2, 3, 4}
	mustPanic("MulAddFMA short x", "runtime.MulAddFMA: len(x) or len(y) < len(dst)", func() { MulAddFMA(d, x[:3], x) })
	mustPanic("MulAddFMA short y", "runtime.MulAddFMA: len(x) or len(y) < len(dst)", func() { MulAddFMA(d, x, nil) })
	mustPanic("SqDist short y", "runtime.SqDist: len(y) < len(x)", func() { SqDist(x, d[:3]) })
	for i, v := range d {
		if v != 0 {
			t.Fatalf("d[%d] = %v written before the panic", i, v)
		}
	}
}
