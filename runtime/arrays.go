package runtime

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
)

// Arrays of rank 1 to 3 as generated packages hold them: nested slices in
// Data (what a Go user builds), flattened row-major in the Model. The Flat*
// functions check the shape against the resolved sizes, reject non-finite
// reals and out-of-range ints, and return the flat copy. Indices in
// messages are 1-based, as in the model language.

type number interface{ ~float64 | ~int }

func checkElem[T number](name string, at []int, v T, lo, hi int) error {
	switch x := any(v).(type) {
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("data %q%s: %v is not a finite number", name, indexString(at), x)
		}
	case int:
		if x < lo || x > hi {
			return fmt.Errorf("data %q%s: %d is outside %s", name, indexString(at), x, rangeString(lo, hi))
		}
	}
	return nil
}

func indexString(at []int) string {
	s := "["
	for k, i := range at {
		if k > 0 {
			s += ", "
		}
		s += fmt.Sprint(i + 1)
	}
	return s + "]"
}

func lengthError(name string, at []int, got, want int) error {
	if len(at) == 0 {
		return fmt.Errorf("data %q: has %d entries, want %d", name, got, want)
	}
	return fmt.Errorf("data %q%s: has %d entries, want %d", name, indexString(at), got, want)
}

// Flat1 checks a vector of length n (ints within lo..hi).
func Flat1[T number](name string, v []T, n, lo, hi int) ([]T, error) {
	if len(v) != n {
		return nil, lengthError(name, nil, len(v), n)
	}
	for i, x := range v {
		if err := checkElem(name, []int{i}, x, lo, hi); err != nil {
			return nil, err
		}
	}
	return append([]T(nil), v...), nil
}

// Flat2 checks an r×c array and flattens it.
func Flat2[T number](name string, v [][]T, r, c, lo, hi int) ([]T, error) {
	if len(v) != r {
		return nil, lengthError(name, nil, len(v), r)
	}
	out := make([]T, 0, r*c)
	for i, row := range v {
		if len(row) != c {
			return nil, lengthError(name, []int{i}, len(row), c)
		}
		for j, x := range row {
			if err := checkElem(name, []int{i, j}, x, lo, hi); err != nil {
				return nil, err
			}
		}
		out = append(out, row...)
	}
	return out, nil
}

// Flat3 checks an a×b×c array and flattens it.
func Flat3[T number](name string, v [][][]T, a, b, c, lo, hi int) ([]T, error) {
	if len(v) != a {
		return nil, lengthError(name, nil, len(v), a)
	}
	out := make([]T, 0, a*b*c)
	for i, m := range v {
		if len(m) != b {
			return nil, lengthError(name, []int{i}, len(m), b)
		}
		for j, row := range m {
			if len(row) != c {
				return nil, lengthError(name, []int{i, j}, len(row), c)
			}
			for k, x := range row {
				if err := checkElem(name, []int{i, j, k}, x, lo, hi); err != nil {
					return nil, err
				}
			}
			out = append(out, row...)
		}
	}
	return out, nil
}

// CheckSimplexRows checks that each row of the flat rows×cols array is
// non-negative and sums to one (to 1e-9).
func CheckSimplexRows(name string, flat []float64, rows, cols int) error {
	for i := 0; i < rows; i++ {
		s := 0.0
		for j := 0; j < cols; j++ {
			v := flat[i*cols+j]
			if v < 0 {
				return fmt.Errorf("data %q%s: %v is negative, but the rows must be probabilities", name, indexString([]int{i, j}), v)
			}
			s += v
		}
		if math.Abs(s-1) > 1e-9 {
			if rows == 1 {
				return fmt.Errorf("data %q: entries sum to %v, not 1", name, s)
			}
			return fmt.Errorf("data %q[%d]: row sums to %v, not 1", name, i+1, s)
		}
	}
	return nil
}

// DecodeIntRows decodes a JSON matrix of integers.
func DecodeIntRows(raw []byte, name string) ([][]int, error) {
	flat, rows, cols, err := DecodeIntMatrix(raw, name, math.MinInt, math.MaxInt)
	if err != nil {
		return nil, err
	}
	out := make([][]int, rows)
	for i := range out {
		out[i] = flat[i*cols : (i+1)*cols : (i+1)*cols]
	}
	return out, nil
}

// DecodeRealCube decodes a JSON array of matrices.
func DecodeRealCube(raw []byte, name string) ([][][]float64, error) {
	return decodeArray(raw, name, "an array of matrices", DecodeRealRows)
}

// DecodeIntCube decodes a JSON array of integer matrices.
func DecodeIntCube(raw []byte, name string) ([][][]int, error) {
	return decodeArray(raw, name, "an array of matrices", DecodeIntRows)
}

// decodeArray decodes a JSON array (what it must be, for the error) whose
// elements elem decodes, naming the i-th (from 1) name[i] in its errors.
func decodeArray[R ~[]byte, T any](raw []byte, name, what string, elem func(raw R, name string) (T, error)) ([]T, error) {
	var parts []json.RawMessage
	if err := json.Unmarshal(raw, &parts); err != nil {
		return nil, fmt.Errorf("data %q: expected %s", name, what)
	}
	out := make([]T, len(parts))
	for i, p := range parts {
		v, err := elem(R(p), fmt.Sprintf("%s[%d]", name, i+1))
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// DecodeBag decodes documents given as arrays of [term, count] pairs. Terms
// and counts must be integers (written as 3 or 3.0) that a float64 holds
// exactly (magnitude at most 2⁵³); anything else, null included, is an error
// naming the document and the entry.
func DecodeBag(raw []byte, name string) ([][][2]int, error) {
	docs, msg := splitArray(bytes.TrimSpace(raw), "an array of documents, each an array of [term, count] pairs")
	if msg != "" {
		return nil, fmt.Errorf("data %q: %s", name, msg)
	}
	out := make([][][2]int, len(docs))
	for d, doc := range docs {
		var fast [][]float64
		if !bytes.Contains(doc, []byte("null")) && json.Unmarshal(doc, &fast) == nil && fast != nil {
			out[d] = make([][2]int, len(fast))
			ok := true
			for k, p := range fast {
				if len(p) != 2 {
					ok = false
					break
				}
				for j := range p {
					var msg string
					if out[d][k][j], msg = toInt(p[j], math.MinInt, math.MaxInt); msg != "" {
						ok = false
					}
				}
			}
			if ok {
				continue
			}
		}
		// Take the document apart to say what is wrong with it.
		pairs, msg := splitArray(bytes.TrimSpace(doc), "an array of [term, count] pairs")
		if msg != "" {
			return nil, fmt.Errorf("data %q[%d]: %s", name, d+1, msg)
		}
		out[d] = make([][2]int, len(pairs))
		for k, p := range pairs {
			elems, msg := splitArray(bytes.TrimSpace(p), "a [term, count] pair")
			if msg == "" && len(elems) != 2 {
				msg = fmt.Sprintf("expected a [term, count] pair, got an array of %d", len(elems))
			}
			if msg != "" {
				return nil, fmt.Errorf("data %q[%d]: entry %d: %s", name, d+1, k+1, msg)
			}
			for j, what := range [2]string{"term", "count"} {
				out[d][k][j], msg = rawToInt(bytes.TrimSpace(elems[j]))
				if msg != "" {
					return nil, fmt.Errorf("data %q[%d]: entry %d: %s: %s", name, d+1, k+1, what, msg)
				}
			}
		}
	}
	return out, nil
}

// BagEntries returns the number of [term, count] entries of all documents.
func BagEntries(docs [][][2]int) int {
	n := 0
	for _, doc := range docs {
		n += len(doc)
	}
	return n
}

// FlattenBag checks a bag of d documents whose terms lie in lo..hi and whose
// counts are positive, and returns it in compressed form: document i's
// entries are term[off[i]:off[i+1]] with counts count[off[i]:off[i+1]].
func FlattenBag(name string, docs [][][2]int, d, lo, hi int) (off, term []int, count []float64, err error) {
	if len(docs) != d {
		return nil, nil, nil, lengthError(name, nil, len(docs), d)
	}
	off = make([]int, d+1)
	for i, doc := range docs {
		for k, p := range doc {
			if p[0] < lo || p[0] > hi {
				return nil, nil, nil, fmt.Errorf("data %q[%d]: term %d of entry %d is outside %s", name, i+1, p[0], k+1, rangeString(lo, hi))
			}
			if p[1] < 1 {
				return nil, nil, nil, fmt.Errorf("data %q[%d]: entry %d has count %d, want a positive count", name, i+1, k+1, p[1])
			}
			term = append(term, p[0])
			count = append(count, float64(p[1]))
		}
		off[i+1] = len(term)
	}
	return off, term, count, nil
}

// FlatRagged checks per-entry data of a bag, one row per document with one
// value per (term, count) entry, against the bag's offsets, and flattens it
// in the bag's entry order.
func FlatRagged[T number](name string, v [][]T, off []int, lo, hi int) ([]T, error) {
	if len(v) != len(off)-1 {
		return nil, lengthError(name, nil, len(v), len(off)-1)
	}
	out := make([]T, 0, off[len(off)-1])
	for d, row := range v {
		if want := off[d+1] - off[d]; len(row) != want {
			return nil, fmt.Errorf("data %q[%d]: has %d entries, but document %d of the bag has %d", name, d+1, len(row), d+1, want)
		}
		for k, x := range row {
			if err := checkElem(name, []int{d, k}, x, lo, hi); err != nil {
				return nil, err
			}
		}
		out = append(out, row...)
	}
	return out, nil
}

// DecodeRaggedReal decodes an array of rows of possibly different lengths
// (per-entry data of a bag).
func DecodeRaggedReal(raw []byte, name string) ([][]float64, error) {
	return decodeArray(raw, name, "an array of arrays, one per document", DecodeRealVector)
}

// DecodeRaggedInt is DecodeRaggedReal for integers.
func DecodeRaggedInt(raw []byte, name string) ([][]int, error) {
	return decodeArray(raw, name, "an array of arrays, one per document", func(raw []byte, name string) ([]int, error) {
		return DecodeIntVector(raw, name, math.MinInt, math.MaxInt)
	})
}

// CopyRows copies a row-major flat matrix with c columns into a slice of rows.
func CopyRows(flat []float64, c int) [][]float64 {
	out := make([][]float64, len(flat)/c)
	for i := range out {
		out[i] = append([]float64(nil), flat[i*c:(i+1)*c]...)
	}
	return out
}

// CopyCube copies a row-major flat array of shape (·, b, c) into nested slices.
func CopyCube(flat []float64, b, c int) [][][]float64 {
	out := make([][][]float64, len(flat)/(b*c))
	for i := range out {
		out[i] = CopyRows(flat[i*b*c:(i+1)*b*c], c)
	}
	return out
}

// GroupRows lists the points of each group: given group[n] in 1..m (the
// group of point n, already range-checked), group g's points are
// rows[off[g]:off[g+1]], as 1-based point numbers in increasing order.
func GroupRows(group []int, m int) (off, rows []int) {
	off = make([]int, m+1)
	for _, g := range group {
		off[g]++
	}
	for g := 1; g <= m; g++ {
		off[g] += off[g-1]
	}
	// group g's points go to rows[off[g-1]:off[g]]
	next := make([]int, m)
	copy(next, off[:m])
	rows = make([]int, len(group))
	for n, g := range group {
		rows[next[g-1]] = n + 1
		next[g-1]++
	}
	return off, rows
}

// StackVec is the length of the stack arrays generated kernels keep their
// vector temporaries in (see Vec).
const StackVec = 64

// Vec returns a zeroed vector of n entries: buf[:n], a fresh stack array
// of the caller's, when it is long enough, else a new array.
func Vec(buf []float64, n int) []float64 {
	if n <= len(buf) {
		return buf[:n]
	}
	return make([]float64, n)
}
