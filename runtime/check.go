package runtime

import (
	"fmt"
	"math"
)

// The Check* functions validate data given to a generated package, whether
// decoded from JSON or built in Go. Indices in messages are 1-based, as in
// the model language.

// CheckReal rejects NaN and ±Inf.
func CheckReal(name string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("data %q: %v is not a finite number", name, v)
	}
	return nil
}

// CheckVector checks that v has n finite entries.
func CheckVector(name string, v []float64, n int) error {
	if len(v) != n {
		return fmt.Errorf("data %q: has %d entries, want %d", name, len(v), n)
	}
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("data %q[%d]: %v is not a finite number", name, i+1, x)
		}
	}
	return nil
}

// CheckMatrix checks that m has rows×cols finite entries and returns them
// flattened row-major.
func CheckMatrix(name string, m [][]float64, rows, cols int) ([]float64, error) {
	if len(m) != rows {
		return nil, fmt.Errorf("data %q: has %d rows, want %d", name, len(m), rows)
	}
	flat := make([]float64, 0, rows*cols)
	for i, row := range m {
		if len(row) != cols {
			return nil, fmt.Errorf("data %q[%d]: row has %d entries, want %d", name, i+1, len(row), cols)
		}
		for j, x := range row {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("data %q[%d, %d]: %v is not a finite number", name, i+1, j+1, x)
			}
		}
		flat = append(flat, row...)
	}
	return flat, nil
}

// CheckIntVector checks that v has n entries in lo..hi.
func CheckIntVector(name string, v []int, n, lo, hi int) error {
	if len(v) != n {
		return fmt.Errorf("data %q: has %d entries, want %d", name, len(v), n)
	}
	for i, x := range v {
		if x < lo || x > hi {
			return fmt.Errorf("data %q[%d]: %d is outside %s", name, i+1, x, rangeString(lo, hi))
		}
	}
	return nil
}

func rangeString(lo, hi int) string {
	switch {
	case lo == math.MinInt && hi == math.MaxInt:
		return "the integers"
	case hi == math.MaxInt:
		return fmt.Sprintf("%d..", lo)
	case lo == math.MinInt:
		return fmt.Sprintf("..%d", hi)
	}
	return fmt.Sprintf("%d..%d", lo, hi)
}

// CheckSPD checks that the flat n×n matrix a is symmetric (to a relative
// 1e-10) and positive definite.
func CheckSPD(name string, a []float64, n int) error {
	scale := 0.0
	for _, v := range a {
		scale = math.Max(scale, math.Abs(v))
	}
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			if math.Abs(a[i*n+j]-a[j*n+i]) > 1e-10*scale {
				return fmt.Errorf("data %q: not symmetric: entry [%d, %d] is %v but [%d, %d] is %v", name, i+1, j+1, a[i*n+j], j+1, i+1, a[j*n+i])
			}
		}
	}
	if k, pivot := firstBadPivot(a, n); k > 0 {
		return fmt.Errorf("data %q: not positive definite: Cholesky pivot %d is %.3g, so the leading %d×%d block (rows and columns 1..%d) is not positive definite", name, k, pivot, k, k, k)
	}
	return nil
}

// firstBadPivot runs a Cholesky factorization of the symmetric n×n matrix a
// and returns the 1-based row k whose pivot d_k (the squared diagonal of
// the factor) is not positive, or 0 if a is positive definite.
func firstBadPivot(a []float64, n int) (k int, pivot float64) {
	l := make([]float64, n*n)
	for j := 0; j < n; j++ {
		d := a[j*n+j]
		for p := 0; p < j; p++ {
			d -= l[j*n+p] * l[j*n+p]
		}
		if !(d > 0) || math.IsInf(d, 0) {
			return j + 1, d
		}
		l[j*n+j] = math.Sqrt(d)
		for i := j + 1; i < n; i++ {
			s := a[i*n+j]
			for p := 0; p < j; p++ {
				s -= l[i*n+p] * l[j*n+p]
			}
			l[i*n+j] = s / l[j*n+j]
		}
	}
	return 0, 0
}

// CheckNoEmptyDocs checks that no document of a bag is empty: document i's
// entries are off[i]:off[i+1]. An empty document is legal in the model (its
// local posterior is its prior), but it usually means a mistake in
// preparing the data, so generated Fit functions call this unless
// Options.AllowEmpty is set.
func CheckNoEmptyDocs(name string, off []int) error {
	for i := 0; i+1 < len(off); i++ {
		if off[i+1] == off[i] {
			return fmt.Errorf("data %q[%d]: document %d is empty; remove it, or set Options.AllowEmpty to fit it (its posterior is the prior)", name, i+1, i+1)
		}
	}
	return nil
}

// Rows splits a flat row-major rows×cols slice into rows.
func Rows(flat []float64, rows, cols int) [][]float64 {
	out := make([][]float64, rows)
	for i := range out {
		out[i] = flat[i*cols : (i+1)*cols : (i+1)*cols]
	}
	return out
}

// DecodeRealRows decodes a JSON matrix (an array of equal-length rows).
func DecodeRealRows(raw []byte, name string) ([][]float64, error) {
	flat, rows, cols, err := DecodeRealMatrix(raw, name)
	if err != nil {
		return nil, err
	}
	return Rows(flat, rows, cols), nil
}

// DecodeRealPtr decodes a JSON number into a new float64 (for optional
// scalar constants, where nil means "use the default").
func DecodeRealPtr(raw []byte, name string) (*float64, error) {
	v, err := DecodeReal(raw, name)
	if err != nil {
		return nil, err
	}
	return &v, nil
}

// Domain is an interval that the values of a distribution's argument (or
// its target) must lie in, as the distribution table states it.
type Domain struct {
	Lo, Hi         float64 // math.Inf(-1), math.Inf(1) for no bound
	LoOpen, HiOpen bool    // whether the bound itself is excluded
	Text           string  // the requirement, "> 0" or "in (0, 1)", for messages
}

// Contains reports whether x lies in d (never for NaN).
func (d Domain) Contains(x float64) bool {
	above := x > d.Lo || !d.LoOpen && x == d.Lo
	below := x < d.Hi || !d.HiOpen && x == d.Hi
	return above && below
}

// CheckDomain checks that every entry of v, a flat row-major array of the
// given shape (nil for a scalar), lies in dom. v is the data, const or param
// name (role says which) and what says where it is used, as in
//
//	const "alpha" = -1: it is the alpha of Dirichlet at lda.vi:20:5, which must be > 0
func CheckDomain[T number](role, name string, v []T, shape []int, dom Domain, what string) error {
	for i, x := range v {
		if dom.Contains(float64(x)) {
			continue
		}
		at := ""
		if len(shape) > 0 {
			idx := make([]int, len(shape))
			for k, r := len(shape)-1, i; k >= 0; k-- {
				if shape[k] > 0 {
					idx[k], r = r%shape[k], r/shape[k]
				}
			}
			at = indexString(idx)
		}
		return fmt.Errorf("%s %q%s = %v: %s, which must be %s", role, name, at, x, what, dom.Text)
	}
	return nil
}
