package runtime

import (
	"math"
	"strings"
	"testing"
)

// TestCheckAllocs: a size given huge is refused by name before anything is
// allocated, preferring the size given explicitly; a product that overflows
// int is refused whatever the limit.
func TestCheckAllocs(t *testing.T) {
	defer func(old int64) { MaxFitBytes = old }(MaxFitBytes)
	MaxFitBytes = 1 << 30
	s := NewSizes()
	if err := s.BindGiven("K", 1e12); err != nil {
		t.Fatal(err)
	}
	if err := s.Bind("V", 50, `"w" terms`); err != nil {
		t.Fatal(err)
	}
	if err := s.Bind("D", 3000, `"w" entries`); err != nil {
		t.Fatal(err)
	}
	s.SetEntries("w", 100)
	allocs := []Alloc{{What: "q(beta)", Dims: []string{"K", "V"}, Copies: 3}, {What: "q(z)", Dims: []string{"@w", "K"}, Copies: 3}, {What: "data", Dims: []string{"D"}}}
	wantErr(t, s.CheckAllocs(allocs), `size "K" = 1000000000000: the fit would allocate 3.2 PiB, more than the limit of 1 GiB (runtime.MaxFitBytes); the largest part is q(z) (w entries×K = 100×1000000000000 numbers, 3 copies)`)

	// Neither given: the largest size of the largest array is named.
	s = NewSizes()
	s.Bind("N", 1<<20, `"x" rows`)
	s.Bind("P", 1<<12, `"x" columns`)
	wantErr(t, s.CheckAllocs([]Alloc{{What: "q(theta)", Dims: []string{"N", "P", "P"}}}), `size "N" = 1048576: the fit would allocate 128 TiB, more than the limit of 1 GiB (runtime.MaxFitBytes); the largest part is q(theta) (N×P×P = 1048576×4096×4096 numbers)`)
	if err := s.CheckAllocs([]Alloc{{What: "x", Dims: []string{"N"}, Copies: 3}}); err != nil {
		t.Errorf("24 MiB: %v", err)
	}

	MaxFitBytes = math.MaxInt64
	s = NewSizes()
	s.BindGiven("A", 1<<40)
	s.BindGiven("B", 1<<40)
	if err := s.CheckAllocs([]Alloc{{What: "a", Dims: []string{"A", "B"}}}); err == nil || !strings.HasPrefix(err.Error(), `size "A" = 1099511627776: the fit would allocate 8 YiB`) {
		t.Errorf("overflow: %v", err)
	}
	MaxFitBytes = 0
	if l, what := MemoryLimit(); l <= 0 || what == "" {
		t.Errorf("MemoryLimit() = %d, %q", l, what)
	}
}

// TestBindGiven: a size given as 0 is bound, so data that disagree are an
// error naming both.
func TestBindGiven(t *testing.T) {
	s := NewSizes()
	if err := s.BindGiven("N", 0); err != nil {
		t.Fatal(err)
	}
	wantErr(t, s.Bind("N", 500, `"x" rows`), `size "N": "N" is 0 but "x" has 500 rows`)
	wantErr(t, s.BindGiven("M", -1), `size "M": "M" is -1, which is negative`)
	wantErr(t, s.AtLeast("N", 1, "it is the length of the simplex p (m.vi:3:8)"), `size "N" = 0: it is the length of the simplex p (m.vi:3:8), which must be at least 1`)
}

func TestCheckDomain(t *testing.T) {
	pos := Domain{Lo: 0, Hi: math.Inf(1), LoOpen: true, HiOpen: true, Text: "> 0"}
	wantErr(t, CheckDomain("const", "alpha", []float64{-1}, nil, pos, "it is the alpha of Dirichlet at lda.vi:21:24"),
		`const "alpha" = -1: it is the alpha of Dirichlet at lda.vi:21:24, which must be > 0`)
	wantErr(t, CheckDomain("data", "s", []float64{1, 2, 3, 4, 0, 6}, []int{2, 3}, pos, "it is the sd of Normal at m.vi:9:20"),
		`data "s"[2, 2] = 0: it is the sd of Normal at m.vi:9:20, which must be > 0`)
	wantErr(t, CheckDomain("data", "n", []int{3, -1}, []int{2}, Domain{Lo: 0, Hi: math.Inf(1), HiOpen: true, Text: "≥ 0"}, "it is the n of Binomial at m.vi:9:20"),
		`data "n"[2] = -1: it is the n of Binomial at m.vi:9:20, which must be ≥ 0`)
	unit := Domain{Lo: 0, Hi: 1, LoOpen: true, HiOpen: true, Text: "in (0, 1)"}
	for _, x := range []float64{0, 1, math.NaN(), -0.5, 2} {
		if CheckDomain("param", "p", []float64{x}, nil, unit, "") == nil {
			t.Errorf("%v accepted in (0, 1)", x)
		}
	}
	if err := CheckDomain("param", "p", []float64{1e-300, 0.5, 1 - 1e-16}, []int{3}, unit, ""); err != nil {
		t.Error(err)
	}
}

func TestFormatBytes(t *testing.T) {
	for b, want := range map[float64]string{0: "0 B", 1023: "1023 B", 1024: "1 KiB", 1536: "1.5 KiB", 23.5 * (1 << 30): "23.5 GiB", 150 << 20: "150 MiB"} {
		if got := FormatBytes(b); got != want {
			t.Errorf("FormatBytes(%v) = %q, want %q", b, got, want)
		}
	}
}
