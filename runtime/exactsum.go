package runtime

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// ExactVec is a vector of sums kept exactly: each component is a
// nonoverlapping expansion of float64 partials (Shewchuk 1997, the
// algorithm of Python's math.fsum), whose sum is the exact sum of every
// number added to it. Adding and merging are therefore associative and
// commutative, not just up to rounding: a sharded fit combines its shards'
// statistics in whatever order or tree a distributed engine chooses and
// gets the same bits. Value rounds a component's exact sum once, to the
// nearest float64.
type ExactVec struct {
	parts [][]float64
}

// NewExactVec returns n zero sums.
func NewExactVec(n int) *ExactVec { return &ExactVec{parts: make([][]float64, n)} }

// Len is the number of components.
func (v *ExactVec) Len() int { return len(v.parts) }

// Add adds x[i] to component i exactly.
func (v *ExactVec) Add(x []float64) {
	for i, xi := range x {
		if xi != 0 {
			v.parts[i] = growExpansion(v.parts[i], xi)
		}
	}
}

// AddAt adds x to component i exactly.
func (v *ExactVec) AddAt(i int, x float64) {
	if x != 0 {
		v.parts[i] = growExpansion(v.parts[i], x)
	}
}

// Merge adds every sum of o into v exactly; the lengths must agree, but
// for an empty v (no components: an accumulator not yet given any),
// which takes o's length.
func (v *ExactVec) Merge(o *ExactVec) error {
	if len(v.parts) == 0 {
		v.parts = make([][]float64, len(o.parts))
	}
	if len(o.parts) != len(v.parts) {
		return fmt.Errorf("merging %d sums into %d", len(o.parts), len(v.parts))
	}
	for i, p := range o.parts {
		for _, x := range p {
			v.parts[i] = growExpansion(v.parts[i], x)
		}
	}
	return nil
}

// Value returns component i's exact sum rounded to the nearest float64
// (ties to even).
func (v *ExactVec) Value(i int) float64 { return roundExpansion(v.parts[i]) }

// Values writes every component's Value into out.
func (v *ExactVec) Values(out []float64) {
	for i := range v.parts {
		out[i] = roundExpansion(v.parts[i])
	}
}

// growExpansion adds x to the nonoverlapping expansion p (partials in
// increasing magnitude) exactly, by error-free two-sums.
func growExpansion(p []float64, x float64) []float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		// a non-finite sum stays non-finite; the fit reports it
		return append(p[:0], x)
	}
	i := 0
	for _, y := range p {
		if math.IsInf(y, 0) || math.IsNaN(y) {
			return append(p[:0], y+x)
		}
		if math.Abs(x) < math.Abs(y) {
			x, y = y, x
		}
		hi := x + y
		lo := y - (hi - x)
		if lo != 0 {
			p[i] = lo
			i++
		}
		x = hi
	}
	return append(p[:i], x)
}

// roundExpansion is the float64 nearest the sum of the expansion p: its
// largest partials summed until the sum is inexact, then the half-way case
// corrected by the sign of the rest (as math.fsum does).
func roundExpansion(p []float64) float64 {
	n := len(p)
	if n == 0 {
		return 0
	}
	n--
	hi, lo := p[n], 0.0
	for n > 0 {
		x := hi
		n--
		y := p[n]
		hi = x + y
		yr := hi - x
		lo = y - yr
		if lo != 0 {
			break
		}
	}
	if n > 0 && ((lo < 0 && p[n-1] < 0) || (lo > 0 && p[n-1] > 0)) {
		y := lo * 2
		x := hi + y
		if yr := x - hi; y == yr {
			hi = x
		}
	}
	return hi
}

// AppendBinary appends v's encoding: its length, then each component's
// number of partials and their bits.
func (v *ExactVec) AppendBinary(b []byte) []byte {
	if v == nil {
		return binary.AppendUvarint(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(v.parts)))
	for _, p := range v.parts {
		b = binary.AppendUvarint(b, uint64(len(p)))
		for _, x := range p {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
		}
	}
	return b
}

// errShortExact is the error of an encoding cut short.
var errShortExact = errors.New("exact sums: encoding cut short")

// decodeExactVec reads an ExactVec from the front of b and returns the rest.
func decodeExactVec(b []byte) (*ExactVec, []byte, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, nil, errShortExact
	}
	b = b[k:]
	v := &ExactVec{parts: make([][]float64, n)}
	for i := range v.parts {
		m, k := binary.Uvarint(b)
		if k <= 0 || m > uint64(len(b)-k)/8 {
			return nil, nil, errShortExact
		}
		b = b[k:]
		if m > 0 {
			p := make([]float64, m)
			for j := range p {
				p[j] = math.Float64frombits(binary.LittleEndian.Uint64(b))
				b = b[8:]
			}
			v.parts[i] = p
		}
	}
	return v, b, nil
}
