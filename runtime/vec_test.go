package runtime

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/vigen-go/vigen/golden"
)

// The tests of vec.go compare, bit for bit, three or four computations of
// every primitive: a literal transcription of its documented definition, the
// pure-Go reference (the *Go function), the assembly kernel where the CPU
// has AVX2 and FMA, and the exported function (which dispatches on
// useAVX2). Inputs cover many sizes, unaligned slice starts, negatives,
// signed zeros, subnormals, huge and tiny magnitudes, infinities and NaNs
// with several payloads; every element outside the written region is
// checked to be untouched.

// vecSizes are the sizes the tests run: every n up to 70 (all loop tails
// and unroll remainders) and a few large ones.
var vecSizes = func() []int {
	var s []int
	for n := 0; n <= 70; n++ {
		s = append(s, n)
	}
	return append(s, 104, 295)
}()

// vecOffsets are slice starts within a backing array, to test unaligned
// vector loads and stores.
var vecOffsets = []int{0, 1, 3}

// vecNaNs are NaNs with different signs and payloads, quiet and signalling.
var vecNaNs = []float64{
	math.NaN(),
	math.Float64frombits(0x7ff8000000000000),
	math.Float64frombits(0xfff8000000000000),
	math.Float64frombits(0x7ff8dead0000beef),
	math.Float64frombits(0xfff0000000000123), // signalling
	math.Float64frombits(0x7ff4000000000001), // signalling
}

// vecValue draws one value: with special set, infinities and NaNs too.
func vecValue(rng *rand.Rand, special bool) float64 {
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
	case k < 20: // near the underflow threshold, so products round to subnormals
		return sign * math.Ldexp(1+rng.Float64(), -540+rng.Intn(40))
	case k < 23: // huge, so products overflow
		return sign * math.Ldexp(1+rng.Float64(), 500+rng.Intn(30))
	case special && k < 27:
		return math.Inf(int(sign))
	case special && k < 31:
		return vecNaNs[rng.Intn(len(vecNaNs))]
	}
	return sign * math.Ldexp(rng.Float64()+0.5, rng.Intn(41)-20)
}

func vecFill(rng *rand.Rand, s []float64, special bool) {
	for i := range s {
		s[i] = vecValue(rng, special)
	}
}

// vecCheckBits fails unless got and want hold the same bits, except that
// any NaN matches any NaN: NaN payloads are unspecified (see vec.go).
// vecNaNPayloadDiffs counts, but does not fail on, the NaN results whose
// bits differ; the tests log it.
func vecCheckBits(t *testing.T, what string, got, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: len %d, want %d", what, len(got), len(want))
	}
	bad := 0
	for i := range got {
		if math.IsNaN(got[i]) && math.IsNaN(want[i]) && math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			vecNaNPayloadDiffs++
		}
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) &&
			!(math.IsNaN(got[i]) && math.IsNaN(want[i])) {
			if bad < 5 {
				t.Errorf("%s: [%d] = %v (%#016x), want %v (%#016x)", what, i,
					got[i], math.Float64bits(got[i]), want[i], math.Float64bits(want[i]))
			}
			bad++
		}
	}
	if bad > 0 {
		t.Fatalf("%s: %d of %d elements differ", what, bad, len(got))
	}
}

var vecNaNPayloadDiffs int

// vecLogNaNPayloads logs, at the end of a test, how many NaN results
// differed in sign or payload between two computations.
func vecLogNaNPayloads(t *testing.T) {
	vecNaNPayloadDiffs = 0
	t.Cleanup(func() {
		if vecNaNPayloadDiffs > 0 {
			t.Logf("%d NaN results differ in sign or payload (allowed)", vecNaNPayloadDiffs)
		}
	})
}

func vecClone(s []float64) []float64 { return append([]float64(nil), s...) }

// vecSpecSyr is SyrUpper's documented definition, literally.
func vecSpecSyr(h []float64, n int, alpha float64, x []float64) {
	for a := 0; a < n; a++ {
		s := alpha * x[a]
		for b := a; b < n; b++ {
			h[a*n+b] = math.FMA(s, x[b], h[a*n+b])
		}
	}
}

// vecSpecDot is DotFMA's documented definition, literally.
func vecSpecDot(x, y []float64) float64 {
	n := len(x)
	n16, n4 := n/16*16, n/4*4
	var acc [16]float64
	for i := 0; i < n16; i++ {
		acc[i%16] = math.FMA(x[i], y[i], acc[i%16])
	}
	for i := n16; i < n4; i++ {
		acc[i%4] = math.FMA(x[i], y[i], acc[i%4])
	}
	var t [4]float64
	for j := 0; j < 4; j++ {
		t[j] = (acc[j] + acc[4+j]) + (acc[8+j] + acc[12+j])
	}
	s := (t[0] + t[2]) + (t[1] + t[3])
	for i := n4; i < n; i++ {
		s = math.FMA(x[i], y[i], s)
	}
	return s
}

// vecImpls runs f once per implementation: the pure-Go reference, the
// assembly kernel (if the CPU has it) and the exported, dispatching function.
func vecImpls(t *testing.T, f func(name string, asm, exported bool)) {
	t.Helper()
	f("go", false, false)
	if hasAVX2FMA {
		f("asm", true, false)
	}
	f("exported", false, true)
}

const vecGuard = 5 // elements after the region that must stay untouched

func TestVecSyrUpper(t *testing.T) {
	vecLogNaNPayloads(t)
	if !hasAVX2FMA {
		t.Log("no AVX2+FMA: comparing the pure-Go path with the definition only")
	}
	rng := rand.New(rand.NewSource(1))
	for _, special := range []bool{false, true} {
		for _, n := range vecSizes {
			for _, off := range vecOffsets {
				hbuf := make([]float64, off+n*n+vecGuard)
				xbuf := make([]float64, off+n+vecGuard)
				vecFill(rng, hbuf, special)
				vecFill(rng, xbuf, special)
				alpha := vecValue(rng, special)
				if n > 0 && rng.Intn(4) == 0 {
					alpha = rng.NormFloat64()
				}
				want := vecClone(hbuf)
				vecSpecSyr(want[off:], n, alpha, xbuf[off:])
				xwant := vecClone(xbuf)
				vecImpls(t, func(name string, asm, exported bool) {
					got := vecClone(hbuf)
					h, x := got[off:off+n*n], xbuf[off:off+n]
					switch {
					case exported:
						// Longer slices than needed: only h[:n*n], x[:n] are used.
						SyrUpper(got[off:], n, alpha, xbuf[off:])
					case asm:
						syrUpperAVX2(h, n, alpha, x)
					default:
						syrUpperGo(h, n, alpha, x)
					}
					what := fmt.Sprintf("SyrUpper %s n=%d off=%d special=%v alpha=%v", name, n, off, special, alpha)
					vecCheckBits(t, what, got, want)
					vecCheckBits(t, what+" x", xbuf, xwant)
				})
				// The strictly lower triangle and the guard are untouched
				// (checked against the input, not only against the definition).
				for a := 0; a < n; a++ {
					for b := 0; b < a; b++ {
						i := off + a*n + b
						if math.Float64bits(want[i]) != math.Float64bits(hbuf[i]) {
							t.Fatalf("definition wrote the lower triangle at (%d,%d)", a, b)
						}
					}
				}
				vecCheckBits(t, "SyrUpper prefix and guard", append(vecClone(want[:off]), want[off+n*n:]...),
					append(vecClone(hbuf[:off]), hbuf[off+n*n:]...))
			}
		}
	}
}

// TestVecSyrkUpper compares SyrkUpper with SyrUpper's definition applied
// row by row: every n up to 70 (all tile shapes, n&3 top rows and row
// blocks) and 104, 129, 295; every m up to 20 (one chunk of the assembly
// kernel and more) and 31, 100; all three offsets for the small sizes. The
// old four-row assembly path (the benchmarks' baseline) is checked too.
// Besides agreeing with the definition (which leaves them alone), the
// prefix, the strictly lower triangle and the guard must keep their exact
// bits, NaN payloads included.
func TestVecSyrkUpper(t *testing.T) {
	golden.SlowTier(t)
	vecLogNaNPayloads(t)
	rng := rand.New(rand.NewSource(2))
	var ms []int
	for m := 0; m <= 20; m++ {
		ms = append(ms, m)
	}
	ms = append(ms, 31, 100)
	ns := append(append([]int{}, vecSizes...), 129)
	for _, special := range []bool{false, true} {
		for _, n := range ns {
			for mi, m := range ms {
				offs := vecOffsets
				if n > 70 || m > 20 {
					// Keep the large cases quick: one offset each.
					offs = vecOffsets[(n+mi)%len(vecOffsets):][:1]
				}
				for _, off := range offs {
					vecCheckSyrk(t, rng, n, m, off, special)
				}
			}
		}
	}
}

func vecCheckSyrk(t *testing.T, rng *rand.Rand, n, m, off int, special bool) {
	t.Helper()
	hbuf := make([]float64, off+n*n+vecGuard)
	xsbuf := make([]float64, off+m*n+vecGuard)
	abuf := make([]float64, off+m+vecGuard)
	vecFill(rng, hbuf, special)
	vecFill(rng, xsbuf, special)
	vecFill(rng, abuf, special)
	alpha := abuf[off : off+m]
	want := vecClone(hbuf)
	for r := 0; r < m; r++ {
		vecSpecSyr(want[off:], n, alpha[r], xsbuf[off+r*n:])
	}
	xswant := vecClone(xsbuf)
	awant := vecClone(abuf)
	check := func(name string, got []float64) {
		t.Helper()
		what := fmt.Sprintf("SyrkUpper %s n=%d m=%d off=%d special=%v", name, n, m, off, special)
		vecCheckBits(t, what, got, want)
		vecCheckBits(t, what+" xs", xsbuf, xswant)
		vecCheckBits(t, what+" alpha", abuf, awant)
		same := func(i int) {
			if math.Float64bits(got[i]) != math.Float64bits(hbuf[i]) {
				t.Fatalf("%s: element %d (outside the upper triangle) changed from %#016x to %#016x",
					what, i, math.Float64bits(hbuf[i]), math.Float64bits(got[i]))
			}
		}
		for i := 0; i < off; i++ {
			same(i)
		}
		for a := 0; a < n; a++ {
			for b := 0; b < a; b++ {
				same(off + a*n + b)
			}
		}
		for i := off + n*n; i < len(got); i++ {
			same(i)
		}
	}
	vecImpls(t, func(name string, asm, exported bool) {
		got := vecClone(hbuf)
		h, xs := got[off:off+n*n], xsbuf[off:off+m*n]
		switch {
		case exported:
			// Longer slices than needed: only h[:n*n], xs[:m*n] are used.
			SyrkUpper(got[off:], n, alpha, xsbuf[off:])
		case asm:
			if n > 0 {
				syrkUpperAVX2(h, n, alpha, xs)
			}
		default:
			syrkUpperGo(h, n, alpha, xs)
		}
		check(name, got)
	})
	if hasAVX2FMA && n > 0 {
		got := vecClone(hbuf)
		syrkUpper4AVX2(got[off:off+n*n], n, alpha, xsbuf[off:off+m*n])
		check("asm-syrk4", got)
	}
}

// TestVecSyrkUpperZeros: signed zeros where the order of the updates
// decides the sign (h = -0 stays -0 only if every product is -0 as well).
func TestVecSyrkUpperZeros(t *testing.T) {
	for _, n := range []int{1, 4, 5, 7, 8, 13, 50} {
		for _, m := range []int{1, 3, 4, 16, 17} {
			h := make([]float64, n*n)
			xs := make([]float64, m*n)
			alpha := make([]float64, m)
			for i := range h {
				h[i] = math.Copysign(0, -1)
			}
			for r := range alpha {
				alpha[r] = 1
				if r%3 == 1 {
					alpha[r] = -1
				}
				for b := 0; b < n; b++ {
					xs[r*n+b] = math.Copysign(0, float64((r+b)%2*2-1))
				}
			}
			want := vecClone(h)
			for r := 0; r < m; r++ {
				vecSpecSyr(want, n, alpha[r], xs[r*n:])
			}
			got := vecClone(h)
			SyrkUpper(got, n, alpha, xs)
			for i := range got {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("n=%d m=%d: element %d = %v, want %v", n, m, i, got[i], want[i])
				}
			}
		}
	}
}

// TestVecSyrkUpperNoAlloc: SyrkUpper keeps its scratch on the stack.
func TestVecSyrkUpperNoAlloc(t *testing.T) {
	for _, n := range []int{7, 50, 104, 128} {
		for _, m := range []int{1, 4, 16, 40} {
			h, xs, alpha := vecBenchData(n, m)
			if a := testing.AllocsPerRun(10, func() { SyrkUpper(h, n, alpha, xs) }); a != 0 {
				t.Errorf("n=%d m=%d: %v allocations per call", n, m, a)
			}
		}
	}
}

func TestVecAxpyMulDot(t *testing.T) {
	vecLogNaNPayloads(t)
	rng := rand.New(rand.NewSource(3))
	sizes := append(append([]int{}, vecSizes...), 1000, 1023)
	for _, special := range []bool{false, true} {
		for _, n := range sizes {
			for _, off := range vecOffsets {
				xbuf := make([]float64, off+n+vecGuard)
				ybuf := make([]float64, off+n+vecGuard)
				dbuf := make([]float64, off+n+vecGuard)
				vecFill(rng, xbuf, special)
				vecFill(rng, ybuf, special)
				vecFill(rng, dbuf, special)
				alpha := vecValue(rng, special)
				x, y := xbuf[off:off+n], ybuf[off:off+n]

				// AxpyFMA
				want := vecClone(ybuf)
				for i := 0; i < n; i++ {
					want[off+i] = math.FMA(alpha, x[i], want[off+i])
				}
				vecImpls(t, func(name string, asm, exported bool) {
					got := vecClone(ybuf)
					switch {
					case exported:
						AxpyFMA(alpha, x, got[off:]) // y longer than x
					case asm:
						if n > 0 {
							axpyFMAAVX2(alpha, x, got[off:off+n])
						}
					default:
						axpyFMAGo(alpha, x, got[off:off+n])
					}
					vecCheckBits(t, fmt.Sprintf("AxpyFMA %s n=%d off=%d special=%v", name, n, off, special), got, want)
				})

				// MulVec
				want = vecClone(dbuf)
				for i := 0; i < n; i++ {
					want[off+i] = x[i] * y[i]
				}
				vecImpls(t, func(name string, asm, exported bool) {
					got := vecClone(dbuf)
					switch {
					case exported:
						MulVec(got[off:off+n], xbuf[off:], ybuf[off:]) // x, y longer than dst
					case asm:
						if n > 0 {
							mulVecAVX2(got[off:off+n], x, y)
						}
					default:
						mulVecGo(got[off:off+n], x, y)
					}
					vecCheckBits(t, fmt.Sprintf("MulVec %s n=%d off=%d special=%v", name, n, off, special), got, want)
				})

				// DotFMA
				wantDot := vecSpecDot(x, y)
				vecImpls(t, func(name string, asm, exported bool) {
					var got float64
					switch {
					case exported:
						got = DotFMA(x, ybuf[off:]) // y longer than x
					case asm:
						got = dotFMAAVX2(x, y)
					default:
						got = dotFMAGo(x, y)
					}
					vecCheckBits(t, fmt.Sprintf("DotFMA %s n=%d off=%d special=%v", name, n, off, special),
						[]float64{got}, []float64{wantDot})
				})
			}
		}
	}
}

// TestVecDotOrder pins DotFMA's accumulation order on inputs where the
// order changes the result: it must not be a plain left-to-right sum.
func TestVecDotOrder(t *testing.T) {
	// 1e16 and -1e16 cancel only within one lane; the 1s are absorbed or
	// not depending on where they land.
	x := make([]float64, 19)
	y := make([]float64, 19)
	for i := range x {
		x[i], y[i] = 1, 1
	}
	x[0], x[4] = 1e16, -1e16 // lanes 0 and 4: combined in t[0] = (acc0+acc4)+…
	got := DotFMA(x, y)
	if want := vecSpecDot(x, y); math.Float64bits(got) != math.Float64bits(want) {
		t.Fatalf("DotFMA = %v, want %v", got, want)
	}
	// acc0 = 1e16 and acc4 = -1e16 cancel exactly in t[0], the other 14
	// lanes hold 1 each, and the 3 tail elements add 1 each. A plain
	// left-to-right sum loses x[1..3] to rounding (1e16+1 == 1e16) and
	// gives 14.
	if got != 17 {
		t.Fatalf("DotFMA = %v, want 17 (lane order)", got)
	}
	plain := 0.0
	for i := range x {
		plain += x[i] * y[i]
	}
	if plain == got {
		t.Fatalf("plain sum %v equals DotFMA: test does not pin the order", plain)
	}
}

// TestVecDotSignedZero: an FMA whose exact result is a tiny negative number
// rounds to -0, so a lane can hold -0. For n = 4, 8, 12 the reduction adds
// the twelve untouched (+0) lanes all the same, which makes the sum +0; a
// kernel that skipped adding lanes it knows to be zero would return -0.
// (From n = 16 on every lane is -0 and so is the sum; a tail FMA can make
// it -0 again.)
func TestVecDotSignedZero(t *testing.T) {
	for n := 1; n <= 40; n++ {
		x := make([]float64, n)
		y := make([]float64, n)
		for i := range x {
			x[i], y[i] = -1e-300, 1e-300
		}
		want := vecSpecDot(x, y)
		if (n == 4 || n == 8 || n == 12) && (want != 0 || math.Signbit(want)) {
			t.Fatalf("n=%d: definition gives %v, want +0", n, want)
		}
		for _, got := range []float64{dotFMAGo(x, y), DotFMA(x, y)} {
			if math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("n=%d: DotFMA = %v (signbit %v), want %v (signbit %v)", n, got, math.Signbit(got), want, math.Signbit(want))
			}
		}
	}
}

// TestVecDispatch checks that the exported functions follow useAVX2 both
// ways (the switch is a plain variable, so tests and benchmarks can flip it).
func TestVecDispatch(t *testing.T) {
	saved := useAVX2
	defer func() { useAVX2 = saved }()
	rng := rand.New(rand.NewSource(4))
	n, m := 37, 9
	h0 := make([]float64, n*n)
	xs := make([]float64, m*n)
	alpha := make([]float64, m)
	vecFill(rng, h0, false)
	vecFill(rng, xs, false)
	vecFill(rng, alpha, false)
	var results [2][]float64
	var dots [2]float64
	for i, use := range []bool{false, hasAVX2FMA} {
		useAVX2 = use
		h := vecClone(h0)
		SyrkUpper(h, n, alpha, xs)
		SyrUpper(h, n, 0.5, xs[n:])
		AxpyFMA(-1.5, xs[:n*n/m], h)
		MulVec(h[:n], h[n:2*n], xs)
		results[i] = h
		dots[i] = DotFMA(h, h)
	}
	vecCheckBits(t, "go vs asm dispatch", results[1], results[0])
	vecCheckBits(t, "go vs asm dispatch dot", dots[1:], dots[:1])
}

// TestVecZeroAndShort checks that empty inputs are no-ops and that too short
// slices panic before anything is written.
func TestVecZeroAndShort(t *testing.T) {
	SyrUpper(nil, 0, 1, nil)
	SyrUpper(nil, -1, 1, nil)
	SyrkUpper(nil, 0, []float64{1}, nil)
	SyrkUpper(nil, 3, nil, nil)
	AxpyFMA(1, nil, nil)
	MulVec(nil, nil, nil)
	if d := DotFMA(nil, nil); d != 0 || math.Signbit(d) {
		t.Fatalf("DotFMA(nil, nil) = %v", d)
	}
	mustPanic := func(name string, f func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s: no panic", name)
			}
		}()
		f()
	}
	h := make([]float64, 8) // 3×3 needs 9
	x := []float64{1, 2, 3}
	mustPanic("SyrUpper short h", func() { SyrUpper(h, 3, 1, x) })
	mustPanic("SyrUpper short x", func() { SyrUpper(make([]float64, 9), 3, 1, x[:2]) })
	mustPanic("SyrkUpper short xs", func() { SyrkUpper(make([]float64, 9), 3, []float64{1, 1}, x) })
	mustPanic("AxpyFMA short y", func() { AxpyFMA(1, x, h[:2]) })
	mustPanic("MulVec short y", func() { MulVec(h[:3], x, x[:2]) })
	mustPanic("DotFMA short y", func() { DotFMA(x, x[:1]) })
	for i, v := range h {
		if v != 0 {
			t.Fatalf("h[%d] = %v written before the panic", i, v)
		}
	}
}
