package runtime

import (
	"sync"
	"unsafe"
	"weak"
)

// The arrays that Decode allocates for data variables are registered here,
// so that Load can tell them from arrays a caller built (or sliced, or
// pieced together) and give such an array to the Model as it is, instead
// of copying it: a data matrix whose rows slice one decoded array in order
// is that array flattened. The registry holds weak pointers only: it
// keeps no array alive, and an array that has been freed is never taken
// for one allocated at the same address afterwards.

// minAliasLen is the length of the shortest array registered: copying a
// shorter one costs little.
const minAliasLen = 1 << 10

// decodedArray is a registered array: a weak.Pointer[T] to its first
// element, and its length.
type decodedArray struct {
	first any
	n     int
}

var decodedArrays struct {
	sync.Mutex
	m       map[uintptr]decodedArray
	pruneAt int
}

// registerDecoded records that a is an array of its own, allocated by the
// decoder, that no one else writes into.
func registerDecoded[T float64 | int](a []T) {
	if len(a) < minAliasLen {
		return
	}
	p := unsafe.SliceData(a)
	r := &decodedArrays
	r.Lock()
	defer r.Unlock()
	if r.m == nil {
		r.m = map[uintptr]decodedArray{}
	}
	if len(r.m) >= r.pruneAt {
		for k, e := range r.m {
			if !e.alive() {
				delete(r.m, k)
			}
		}
		r.pruneAt = 2*len(r.m) + 16
	}
	r.m[uintptr(unsafe.Pointer(p))] = decodedArray{weak.Make(p), len(a)}
}

func (e decodedArray) alive() bool {
	switch w := e.first.(type) {
	case weak.Pointer[float64]:
		return w.Value() != nil
	case weak.Pointer[int]:
		return w.Value() != nil
	}
	return false
}

// decodedLen returns the length of the registered array that begins at p.
func decodedLen[T float64 | int](p *T) (int, bool) {
	if p == nil {
		return 0, false
	}
	r := &decodedArrays
	r.Lock()
	e, ok := r.m[uintptr(unsafe.Pointer(p))]
	r.Unlock()
	if !ok {
		return 0, false
	}
	if w, ok := e.first.(weak.Pointer[T]); !ok || w.Value() != p {
		return 0, false
	}
	return e.n, true
}

// decodedVector returns v if it is a prefix, of length n, of an array the
// decoder registered.
func decodedVector[T float64 | int](v []T, n int) ([]T, bool) {
	if n == 0 || len(v) != n {
		return nil, false
	}
	if m, ok := decodedLen(unsafe.SliceData(v)); !ok || m < n {
		return nil, false
	}
	return v[:n:n], true
}

// decodedMatrix returns the r×c array flattened if its rows, each of
// length c, lie in order at the start of an array the decoder registered:
// that array's first r·c elements.
func decodedMatrix[T float64 | int](rows [][]T, r, c int) ([]T, bool) {
	if r == 0 || c == 0 || len(rows) != r {
		return nil, false
	}
	base := unsafe.SliceData(rows[0])
	n, ok := decodedLen(base)
	if !ok || r > n/c {
		return nil, false
	}
	size := unsafe.Sizeof(*base)
	for i, row := range rows {
		if len(row) != c || unsafe.Pointer(unsafe.SliceData(row)) != unsafe.Add(unsafe.Pointer(base), uintptr(i*c)*size) {
			return nil, false
		}
	}
	return unsafe.Slice(base, r*c), true
}
