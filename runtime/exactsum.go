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
	// slab holds each component's partials, slabWidth slots per
	// component, count[i] of them used; a component that needs more
	// moves to spill (count[i] = spilled).
	slab  []float64
	count []uint8
	spill map[int][]float64
}

// slabWidth is the partials a component keeps in the slab: the exact sum
// of a few numbers of one sign and like magnitudes needs one to three.
const slabWidth = 3

const spilled = 255

// NewExactVec returns n zero sums.
func NewExactVec(n int) *ExactVec {
	return &ExactVec{slab: make([]float64, n*slabWidth), count: make([]uint8, n)}
}

// Len is the number of components.
func (v *ExactVec) Len() int {
	if v == nil {
		return 0
	}
	return len(v.count)
}

// parts returns component i's partials, with the capacity it has in the
// slab.
func (v *ExactVec) parts(i int) []float64 {
	if v.count[i] == spilled {
		return v.spill[i]
	}
	return v.slab[i*slabWidth : i*slabWidth+int(v.count[i]) : (i+1)*slabWidth]
}

// setParts stores p, which parts(i) grew, as component i's partials.
func (v *ExactVec) setParts(i int, p []float64) {
	if v.count[i] != spilled && len(p) <= slabWidth {
		copy(v.slab[i*slabWidth:], p) // a no-op where p is in the slab
		v.count[i] = uint8(len(p))
		return
	}
	if v.spill == nil {
		v.spill = map[int][]float64{}
	}
	v.spill[i] = p
	v.count[i] = spilled
}

// add adds x to component i exactly.
func (v *ExactVec) add(i int, x float64) {
	if x != 0 {
		v.setParts(i, growExpansion(v.parts(i), x))
	}
}

// Add adds x[i] to component i exactly.
func (v *ExactVec) Add(x []float64) {
	for i, xi := range x {
		v.add(i, xi)
	}
}

// AddAt adds x to component i exactly.
func (v *ExactVec) AddAt(i int, x float64) { v.add(i, x) }

// Merge adds every sum of o into v exactly; the lengths must agree, but
// for an empty v (no components: an accumulator not yet given any),
// which takes o's length.
func (v *ExactVec) Merge(o *ExactVec) error {
	if v.Len() == 0 && o.Len() > 0 {
		*v = *NewExactVec(o.Len())
	}
	if o.Len() != v.Len() {
		return fmt.Errorf("merging %d sums into %d", o.Len(), v.Len())
	}
	for i := range o.count {
		for _, x := range o.parts(i) {
			v.add(i, x)
		}
	}
	return nil
}

// Value returns component i's exact sum rounded to the nearest float64
// (ties to even).
func (v *ExactVec) Value(i int) float64 { return roundExpansion(v.parts(i)) }

// Values writes every component's Value into out.
func (v *ExactVec) Values(out []float64) {
	for i := range v.count {
		out[i] = roundExpansion(v.parts(i))
	}
}

// growExpansion adds x to the nonoverlapping expansion p (partials in
// increasing magnitude) exactly, by error-free two-sums.
func growExpansion(p []float64, x float64) []float64 {
	if n := len(p); n > 0 && !isFinite(p[n-1]) {
		// a non-finite sum stays one: IEEE's sum of the infinities and
		// NaNs seen (Inf − Inf is NaN), in any order
		return append(p[:0], p[n-1]+x)
	}
	if !isFinite(x) {
		return append(p[:0], x)
	}
	i := 0
	for _, y := range p {
		if math.Abs(x) < math.Abs(y) {
			x, y = y, x
		}
		hi := x + y
		if math.IsInf(hi, 0) {
			return append(p[:0], hi) // overflow: the sum is ±Inf from here on
		}
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
	b = binary.AppendUvarint(b, uint64(v.Len()))
	for i := 0; i < v.Len(); i++ {
		p := v.parts(i)
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
	v := NewExactVec(int(n))
	for i := range v.count {
		m, k := binary.Uvarint(b)
		if k <= 0 || m > uint64(len(b)-k)/8 {
			return nil, nil, errShortExact
		}
		b = b[k:]
		p := make([]float64, 0, slabWidth)
		if m > slabWidth {
			p = make([]float64, 0, m)
		}
		for range m {
			p = append(p, math.Float64frombits(binary.LittleEndian.Uint64(b)))
			b = b[8:]
		}
		v.setParts(i, p)
	}
	return v, b, nil
}
