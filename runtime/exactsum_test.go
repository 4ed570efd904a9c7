package runtime

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// exactBig is the float64 nearest the exact sum of xs, by math/big with
// enough bits for any float64 sum.
func exactBig(xs []float64) float64 {
	s := new(big.Float).SetPrec(4000)
	for _, x := range xs {
		s.Add(s, new(big.Float).SetPrec(4000).SetFloat64(x))
	}
	f, _ := s.Float64()
	return f
}

// hardNumbers draws numbers that make naive sums wrong: wide exponents,
// both signs, and cancellation.
func hardNumbers(r *rand.Rand, n int) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		x := math.Ldexp(r.Float64(), r.IntN(200)-100)
		if r.IntN(2) == 0 {
			x = -x
		}
		xs[i] = x
	}
	// exact cancellation of a big term by its negative, late
	xs = append(xs, 1e30, 1, -1e30)
	return xs
}

func TestExactVecIsTheRoundedExactSum(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	worstNaive := 0.0
	for trial := 0; trial < 200; trial++ {
		xs := hardNumbers(r, 1+r.IntN(60))
		v := NewExactVec(1)
		naive := 0.0
		for _, x := range xs {
			v.AddAt(0, x)
			naive += x
		}
		want := exactBig(xs)
		if got := v.Value(0); got != want {
			t.Fatalf("trial %d: exact sum %v, math/big says %v", trial, got, want)
		}
		worstNaive = math.Max(worstNaive, math.Abs(naive-want))
	}
	if worstNaive == 0 {
		t.Fatal("the naive sums were all exact: the test numbers do not test rounding")
	}
	// the half-way case: 1 + 2⁻⁵³ + 2⁻¹⁰⁰ rounds up, 1 + 2⁻⁵³ to even
	v := NewExactVec(2)
	for _, x := range []float64{1, math.Ldexp(1, -53), math.Ldexp(1, -100)} {
		v.AddAt(0, x)
	}
	v.AddAt(1, 1)
	v.AddAt(1, math.Ldexp(1, -53))
	if got, want := v.Value(0), math.Nextafter(1, 2); got != want {
		t.Errorf("1 + 2⁻⁵³ + 2⁻¹⁰⁰ = %v, want %v", got, want)
	}
	if got := v.Value(1); got != 1 {
		t.Errorf("1 + 2⁻⁵³ = %v, want 1 (ties to even)", got)
	}
}

// TestExactVecMergeOrder merges the same parts in different orders and
// trees, as a distributed combine may, and gets the same bits, through an
// encoding and back.
func TestExactVecMergeOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const n, shards = 50, 9
	parts := make([]*ExactVec, shards)
	var all [][]float64 = make([][]float64, n)
	for s := range parts {
		parts[s] = NewExactVec(n)
		for i := 0; i < n; i++ {
			xs := hardNumbers(r, 5)
			for _, x := range xs {
				parts[s].AddAt(i, x)
			}
			all[i] = append(all[i], xs...)
		}
	}
	roundTrip := func(v *ExactVec) *ExactVec {
		w, rest, err := decodeExactVec(v.AppendBinary(nil))
		if err != nil || len(rest) != 0 {
			t.Fatalf("decode: %v (%d bytes left)", err, len(rest))
		}
		return w
	}
	// left to right
	a := NewExactVec(n)
	for _, p := range parts {
		if err := a.Merge(roundTrip(p)); err != nil {
			t.Fatal(err)
		}
	}
	// a tree, right to left
	var tree func(lo, hi int) *ExactVec
	tree = func(lo, hi int) *ExactVec {
		if hi-lo == 1 {
			return roundTrip(parts[lo])
		}
		mid := (lo + hi) / 2
		x, y := tree(mid, hi), tree(lo, mid)
		if err := x.Merge(y); err != nil {
			t.Fatal(err)
		}
		return roundTrip(x)
	}
	b := tree(0, shards)
	for i := 0; i < n; i++ {
		want := exactBig(all[i])
		if a.Value(i) != want || b.Value(i) != want {
			t.Fatalf("component %d: %v and %v, want %v", i, a.Value(i), b.Value(i), want)
		}
	}
	if err := a.Merge(NewExactVec(n + 1)); err == nil {
		t.Error("merging sums of different lengths was not refused")
	}
	if _, _, err := decodeExactVec(a.AppendBinary(nil)[:20]); err == nil {
		t.Error("a truncated encoding decoded")
	}
}

// TestExactVecNonFinite: infinities and NaNs give IEEE's sum whatever the
// order, and an overflow gives the infinity of its sign.
func TestExactVecNonFinite(t *testing.T) {
	inf, max := math.Inf(1), math.MaxFloat64
	for _, c := range []struct {
		xs   []float64
		want float64
	}{
		{[]float64{1, inf, 2}, inf},
		{[]float64{inf, -inf}, math.NaN()},
		{[]float64{-inf, 1, inf}, math.NaN()},
		{[]float64{math.NaN(), inf}, math.NaN()},
		{[]float64{max, max, 1}, inf},
		{[]float64{-max, -max, 1}, -inf},
	} {
		for _, order := range [][]float64{c.xs, reversed(c.xs)} {
			v := NewExactVec(1)
			for _, x := range order {
				v.AddAt(0, x)
			}
			got := v.Value(0)
			if !(got == c.want || math.IsNaN(got) && math.IsNaN(c.want)) {
				t.Errorf("sum of %v = %v, want %v", order, got, c.want)
			}
		}
	}
}

func reversed(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[len(xs)-1-i] = x
	}
	return out
}
