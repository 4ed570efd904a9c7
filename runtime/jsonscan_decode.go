package runtime

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file is DataTable.Decode's streaming decoder: it walks the data
// document's top-level object with a jsonScanner and decodes each value
// the table declares straight into its Go form as it is read (numbers into
// one flat array per variable, rows slicing it), instead of reading the
// whole document and splitting it into json.RawMessages first. It reports
// what SplitObject and the Decode* functions of data.go and arrays.go
// report, with the same precedence:
//
//   - reading errors and a document larger than DataLimit, then
//   - the first syntax error, then
//   - the first duplicate key; then the note naming unknown keys, then
//   - the errors of the sizes, in the order of the table, then those of
//     the other variables, in the order of the table; within a value,
//     the error each Decode* function would return for it.
//
// A value's problems other than syntax do not stop the reading: the rest
// of the document is still read and checked.

// dataErr is an error in the value of a data variable, formatted as
// `data "name<elem>"<at>: <msg>` (elem names the element of an array of
// arrays decoded as a variable of its own, as decodeArray names them).
type dataErr struct{ elem, at, msg string }

func (e *dataErr) err(name string) error {
	return fmt.Errorf("data %q%s: %s", name+e.elem, e.at, e.msg)
}

func at1(i int) string    { return "[" + strconv.Itoa(i+1) + "]" }
func at2(i, j int) string { return "[" + strconv.Itoa(i+1) + ", " + strconv.Itoa(j+1) + "]" }

// varResult is what the document gives for a variable of the table.
type varResult struct {
	present   bool
	n         int // a size
	val       any // the decoded value, of the type of the Data field's element
	err       error
	noDecoder bool
}

// tableDecoder decodes a data document into a table's variables.
type tableDecoder struct {
	s       *jsonScanner
	t       *DataTable
	index   map[string]int // key → index in t.Vars
	known   []string
	res     []varResult
	seen    map[string]bool
	unknown []string
	dup     error
	// errRank is the rank (see rank) of the first variable, in the order
	// the errors are reported, whose value is bad; the values of those
	// after it are only checked for syntax.
	errRank int
	// hints are the sizes known so far (given before in the document, or
	// fixed), for the capacity of the arrays that have them as dimensions.
	hints map[string]int
	// size is the number of bytes of the input, or -1 if not known.
	size int64
}

// newTableDecoder returns a decoder of the document r into t's Data
// fields.
func newTableDecoder(t *DataTable, r io.Reader) *tableDecoder {
	limit, source := DataLimit()
	d := &tableDecoder{
		s:       newJSONScanner(r, limit, source),
		t:       t,
		index:   make(map[string]int, len(t.Vars)),
		res:     make([]varResult, len(t.Vars)),
		seen:    map[string]bool{},
		errRank: math.MaxInt,
		hints:   map[string]int{},
		size:    inputSize(r),
	}
	for k, v := range t.Vars {
		if v.Fixed {
			d.hints[v.Name] = v.SizeDefault
			continue
		}
		d.known = append(d.known, v.Name)
		if _, ok := d.index[v.Name]; !ok {
			d.index[v.Name] = k
		}
	}
	return d
}

// decode reads the document and stores what it gives in the Data fields.
func (d *tableDecoder) decode() error {
	if err := d.read(); err != nil {
		return err
	}
	return d.commit()
}

// inputSize returns the number of bytes left in r if r says (a regular
// file, or a reader with a Len method such as bytes.Reader), else -1.
func inputSize(r io.Reader) int64 {
	switch x := r.(type) {
	case interface{ Len() int }:
		return int64(x.Len())
	case interface {
		Stat() (fs.FileInfo, error)
		io.Seeker
	}:
		fi, err := x.Stat()
		if err != nil || !fi.Mode().IsRegular() {
			return -1
		}
		at, err := x.Seek(0, io.SeekCurrent)
		if err != nil {
			return -1
		}
		return max(fi.Size()-at, 0)
	}
	return -1
}

// read reads the document, recording what it gives for each variable.
func (d *tableDecoder) read() (err error) {
	defer func() {
		if p := recover(); p != nil {
			a, ok := p.(*scanAbort)
			if !ok {
				panic(p)
			}
			err = a.err
		}
	}()
	s := d.s
	if err := s.begin(); err != nil {
		return err
	}
	s.open() // the '{'
	if c := s.peek(); c == '}' {
		s.close()
	} else {
		for {
			if c != '"' {
				s.syntax("looking for beginning of object key string")
			}
			line, col := s.lineCol(s.offset())
			key := unquoteKey(s.str(true))
			if s.peek() != ':' {
				s.syntax("after object key")
			}
			s.i++
			s.peek()
			d.member(key, line, col)
			c = s.peek()
			if c == ',' {
				s.i++
				c = s.peek()
				continue
			}
			if c == '}' {
				s.close()
				break
			}
			s.syntax("after object key:value pair")
		}
	}
	for {
		for s.i < s.n {
			if !isSpace(s.buf[s.i]) {
				s.syntax("after top-level value")
			}
			s.i++
		}
		if !s.fill() {
			return nil
		}
	}
}

// unquoteKey returns the string the JSON string raw (with its quotes)
// stands for, as encoding/json decodes it.
func unquoteKey(raw []byte) string {
	plain := true
	for _, c := range raw[1 : len(raw)-1] {
		if c == '\\' || c >= utf8.RuneSelf {
			plain = false
			break
		}
	}
	if plain {
		return string(raw[1 : len(raw)-1])
	}
	var key string
	if err := json.Unmarshal(raw, &key); err != nil { // not reached: raw is a valid string
		return string(raw)
	}
	return key
}

// rank orders the variables as their errors are reported: the sizes in
// the order of the table, then the others.
func (d *tableDecoder) rank(k int) int {
	if d.t.Vars[k].Kind == KindSize {
		return k
	}
	return len(d.t.Vars) + k
}

// member reads the value of key, at line and column of the input.
func (d *tableDecoder) member(key string, line int, col int64) {
	s := d.s
	if d.seen[key] {
		if d.dup == nil {
			d.dup = fmt.Errorf("data: line %d, column %d: duplicate key %q", line, col, key)
		}
		s.skipValue()
		return
	}
	d.seen[key] = true
	k, ok := d.index[key]
	if !ok {
		d.unknown = append(d.unknown, key)
		s.skipValue()
		return
	}
	res := &d.res[k]
	res.present = true
	if d.dup != nil || d.rank(k) > d.errRank {
		s.skipValue() // its value cannot matter
		return
	}
	v := &d.t.Vars[k]
	if v.Kind == KindSize {
		res.n, res.err = d.size1(v.Name)
		if res.err == nil {
			d.hints[v.Name] = res.n
		}
	} else {
		res.val, res.err, res.noDecoder = d.value(v)
	}
	if res.err != nil || res.noDecoder {
		d.errRank = min(d.errRank, d.rank(k))
	}
}

// commit stores what the document gives in the Data fields, as Decode
// did after SplitObject: the sizes in the order of the table, then the
// other variables, up to the first error.
func (d *tableDecoder) commit() error {
	t := d.t
	if d.dup != nil {
		return d.dup
	}
	if len(d.unknown) > 0 {
		note(unknownKeysNote(d.unknown, d.known))
	}
	if t.Given != nil {
		*t.Given = map[string]bool{}
	}
	for k, v := range t.Vars {
		if res := d.res[k]; res.present && v.Kind == KindSize && !v.Fixed {
			*v.Data.(*int) = res.n
			if res.err != nil {
				return res.err
			}
			(*t.Given)[v.Name] = true
		}
	}
	for k := range t.Vars {
		v := &t.Vars[k]
		res := d.res[k]
		if !res.present || v.Kind == KindSize {
			continue
		}
		if res.noDecoder {
			panic(fmt.Sprintf("runtime: DataVar %q: no decoder for %T", v.Name, v.Data))
		}
		v.store(res.val)
		if res.err != nil {
			return res.err
		}
	}
	return nil
}

// store sets v's Data field to val, a value of its type (nil: the zero
// value, as a failed decode leaves it).
func (v *DataVar) store(val any) {
	switch p := v.Data.(type) {
	case *float64:
		*p, _ = val.(float64)
	case **float64:
		*p, _ = val.(*float64)
	case *[]float64:
		*p, _ = val.([]float64)
	case *[]int:
		*p, _ = val.([]int)
	case *[][]float64:
		*p, _ = val.([][]float64)
	case *[][]int:
		*p, _ = val.([][]int)
	case *[][][]float64:
		*p, _ = val.([][][]float64)
	case *[][][]int:
		*p, _ = val.([][][]int)
	case *[][][2]int:
		*p, _ = val.([][][2]int)
	}
}

// value decodes the value of v, as v.decode would decode it from its raw
// JSON; noDecoder reports that v's Data field has no decoder.
func (d *tableDecoder) value(v *DataVar) (val any, err error, noDecoder bool) {
	ragged := v.Class == ClassRagged
	var bad *dataErr
	switch v.Data.(type) {
	case *float64:
		val, bad = d.real()
	case **float64:
		var x float64
		if x, bad = d.real(); bad == nil {
			val = &x
		}
	case *[]float64:
		var x []float64
		x, bad = decodeVector[float64](d, d.hint(v.Dims, 1))
		val = x
	case *[]int:
		var x []int
		x, bad = decodeVector[int](d, d.hint(v.Dims, 1))
		val = x
	case *[][]float64:
		if ragged {
			val, bad = decodeRagged[float64](d)
		} else {
			val, bad = decodeRows[float64](d, v)
		}
	case *[][]int:
		if ragged {
			val, bad = decodeRagged[int](d)
		} else {
			val, bad = decodeRows[int](d, v)
		}
	case *[][][]float64:
		val, bad = decodeCube[float64](d)
	case *[][][]int:
		val, bad = decodeCube[int](d)
	case *[][][2]int:
		val, bad = d.bag()
	default:
		d.s.skipValue()
		return nil, nil, true
	}
	if bad != nil {
		return nil, bad.err(v.Name), false
	}
	return val, nil, false
}

// hint returns the number of elements of the first k dimensions of dims
// as far as the sizes known so far tell, or 0.
func (d *tableDecoder) hint(dims []string, k int) int64 {
	if len(dims) < k {
		return 0
	}
	n := int64(1)
	for _, dim := range dims[:k] {
		m, ok := d.hints[dim]
		if !ok || m <= 0 || int64(m) > math.MaxInt64/n {
			return 0
		}
		n *= int64(m)
	}
	return n
}

// plan returns how to allocate an array that the sizes say has elems
// elements (growBuf.expect): at once if the size of the input is known
// and could hold them, else once half of them have been read; never if
// the rest of the input (at most DataLimit) cannot hold them, two bytes
// to a number.
func (d *tableDecoder) plan(elems int64) (hint, commit int) {
	left := d.s.limit - d.s.offset()
	if d.size >= 0 {
		left = min(left, d.size-d.s.offset())
	}
	if elems <= 0 || elems > left/2 || elems > math.MaxInt {
		return 0, 0
	}
	if d.size >= 0 {
		return int(elems), 0
	}
	return int(elems), int(elems / 2)
}

// size1 decodes a size (DecodeSize).
func (d *tableDecoder) size1(name string) (int, error) {
	s := d.s
	c := s.peek()
	var got string
	if isNumberStart(c) {
		tok := s.number()
		v, msg := parseTok(tok)
		if msg == "" && v >= 0 {
			if n, imsg := intOf(v, 0, math.MaxInt); imsg == "" {
				return n, nil
			}
		}
		got = snippet(tok)
	} else {
		got = kindOfByte(c)
		s.skipValue()
	}
	return 0, fmt.Errorf("size %q: expected a non-negative integer, got %s", name, got)
}

// real decodes a number (DecodeReal).
func (d *tableDecoder) real() (float64, *dataErr) {
	s := d.s
	c := s.peek()
	if !isNumberStart(c) {
		s.skipValue()
		return 0, &dataErr{msg: "expected a number, got " + kindOfByte(c)}
	}
	v, msg := parseTok(s.number())
	if msg != "" {
		return 0, &dataErr{msg: msg}
	}
	return v, nil
}

// elem reads an element of an array of numbers: its value, and for ints
// the integer; rmsg says why it is not a number (parseNumber's message),
// imsg why it is not an integer (toInt's).
func (d *tableDecoder) elem(isInt bool) (v float64, n int, rmsg, imsg string) {
	s := d.s
	c := s.peek()
	if !isNumberStart(c) {
		s.skipValue()
		return 0, 0, "expected a number, got " + kindOfByte(c), ""
	}
	v, rmsg = parseTok(s.number())
	if rmsg == "" && isInt {
		n, imsg = intOf(v, math.MinInt, math.MaxInt)
	}
	return v, n, rmsg, imsg
}

// isIntType reports whether T is int.
func isIntType[T float64 | int]() bool {
	var z T
	_, ok := any(z).(int)
	return ok
}

// vectorInto reads an array of numbers (DecodeRealVector, or for int
// DecodeIntVector) into g, and returns the number of its elements and the
// error of DecodeRealVector or DecodeIntVector.
func vectorInto[T float64 | int](d *tableDecoder, g *growBuf[T]) (int, *dataErr) {
	s := d.s
	isInt := isIntType[T]()
	if c := s.peek(); c != '[' {
		s.skipValue()
		return 0, &dataErr{msg: "expected an array of numbers (a vector), got " + kindOfByte(c)}
	}
	s.open()
	var bad, ibad *dataErr
	i := 0
	if s.arrayFirst() {
		for ; ; i++ {
			v, n, rmsg, imsg := d.elem(isInt)
			switch {
			case rmsg != "":
				if bad == nil {
					bad = &dataErr{at: at1(i), msg: rmsg}
				}
			case imsg != "":
				if ibad == nil {
					ibad = &dataErr{at: at1(i), msg: imsg}
				}
			}
			if bad == nil {
				if isInt {
					g.add(T(n))
				} else {
					g.add(T(v))
				}
			}
			if !s.arrayNext() {
				i++
				break
			}
		}
	}
	if bad == nil {
		bad = ibad
	}
	return i, bad
}

// decodeVector decodes an array of numbers (DecodeRealVector or
// DecodeIntVector), of elems elements if the sizes say.
func decodeVector[T float64 | int](d *tableDecoder, elems int64) ([]T, *dataErr) {
	var g growBuf[T]
	g.expect(d.plan(elems))
	if _, bad := vectorInto(d, &g); bad != nil {
		return nil, bad
	}
	return g.finish(), nil
}

// decodeRows decodes v's matrix (DecodeRealRows or DecodeIntRows): its rows
// slice one flat array.
func decodeRows[T float64 | int](d *tableDecoder, v *DataVar) ([][]T, *dataErr) {
	var rowsHint int64
	if len(v.Dims) >= 1 {
		rowsHint = d.hint(v.Dims, 1)
	}
	flat, rows, cols, bad := decodeMatrix[T](d, rowsHint, d.hint(v.Dims, 2))
	if bad != nil {
		return nil, bad
	}
	return rowsOf(flat, rows, cols), nil
}

// rowsOf slices flat into rows of cols, as Rows does.
func rowsOf[T any](flat []T, rows, cols int) [][]T {
	out := make([][]T, rows)
	for i := range out {
		out[i] = flat[i*cols : (i+1)*cols : (i+1)*cols]
	}
	return out
}

// decodeMatrix decodes an array of equal-length arrays of numbers into a
// flat row-major array (DecodeRealMatrix, or for int DecodeIntMatrix),
// of elems elements if the sizes say (else of rows × the first row's
// length if the sizes give rows).
func decodeMatrix[T float64 | int](d *tableDecoder, rows, elems int64) (flat []T, nrows, ncols int, bad *dataErr) {
	s := d.s
	isInt := isIntType[T]()
	if c := s.peek(); c != '[' {
		s.skipValue()
		return nil, 0, 0, &dataErr{msg: "expected an array of arrays (a matrix), got " + kindOfByte(c)}
	}
	s.open()
	var g growBuf[T]
	if elems > 0 {
		g.expect(d.plan(elems))
	}
	var ibad *dataErr
	if s.arrayFirst() {
		for i := 0; ; i++ {
			if c := s.peek(); c != '[' {
				if bad == nil {
					bad = &dataErr{at: at1(i), msg: "expected an array of numbers (a row), got " + kindOfByte(c)}
				}
				s.skipValue()
			} else {
				s.open()
				k := 0
				var rowBad *dataErr
				if s.arrayFirst() {
					for j := 0; ; j++ {
						v, n, rmsg, imsg := d.elem(isInt)
						switch {
						case rmsg != "":
							if rowBad == nil {
								rowBad = &dataErr{at: at2(i, j), msg: rmsg}
							}
						case imsg != "":
							if ibad == nil {
								ibad = &dataErr{at: at2(i, j), msg: imsg}
							}
						}
						if bad == nil && rowBad == nil {
							if isInt {
								g.add(T(n))
							} else {
								g.add(T(v))
							}
						}
						k++
						if !s.arrayNext() {
							break
						}
					}
				}
				if bad == nil {
					switch {
					case i == 0:
						ncols = k
						if elems <= 0 && rows > 0 && k > 0 && rows <= math.MaxInt64/int64(k) {
							g.expect(d.plan(rows * int64(k)))
						}
					case k != ncols:
						bad = &dataErr{at: at1(i), msg: fmt.Sprintf("row has %d numbers, want %d", k, ncols)}
					}
				}
				if bad == nil {
					bad = rowBad
				}
			}
			nrows++
			if !s.arrayNext() {
				break
			}
		}
	}
	if bad == nil {
		bad = ibad
	}
	if bad != nil {
		return nil, 0, 0, bad
	}
	if nrows == 0 {
		ncols = 0
	}
	return g.finish(), nrows, ncols, nil
}

// decodeRagged decodes an array of arrays of numbers of any lengths
// (DecodeRaggedReal, DecodeRaggedInt), the rows slicing one array.
func decodeRagged[T float64 | int](d *tableDecoder) ([][]T, *dataErr) {
	s := d.s
	switch c := s.peek(); c {
	case 'n':
		s.literal() // null, which decodeArray reads as no rows
		return [][]T{}, nil
	case '[':
	default:
		s.skipValue()
		return nil, &dataErr{msg: "expected an array of arrays, one per document"}
	}
	s.open()
	var g growBuf[T]
	off := []int{0}
	if s.arrayFirst() {
		for i := 0; ; i++ {
			k, bad := vectorInto(d, &g)
			if bad != nil {
				bad.elem = at1(i)
				d.skipRest()
				return nil, bad
			}
			off = append(off, off[len(off)-1]+k)
			if !s.arrayNext() {
				break
			}
		}
	}
	flat := g.finish()
	out := make([][]T, len(off)-1)
	for i := range out {
		out[i] = flat[off[i]:off[i+1]:off[i+1]]
	}
	return out, nil
}

// decodeCube decodes an array of matrices (DecodeRealCube, DecodeIntCube).
func decodeCube[T float64 | int](d *tableDecoder) ([][][]T, *dataErr) {
	s := d.s
	switch c := s.peek(); c {
	case 'n':
		s.literal() // null, which decodeArray reads as no matrices
		return [][][]T{}, nil
	case '[':
	default:
		s.skipValue()
		return nil, &dataErr{msg: "expected an array of matrices"}
	}
	s.open()
	out := [][][]T{}
	if s.arrayFirst() {
		for i := 0; ; i++ {
			flat, rows, cols, bad := decodeMatrix[T](d, 0, 0)
			if bad != nil {
				bad.elem = at1(i)
				d.skipRest()
				return nil, bad
			}
			out = append(out, rowsOf(flat, rows, cols))
			if !s.arrayNext() {
				break
			}
		}
	}
	return out, nil
}

// skipRest reads the rest of the array whose element has just been read.
func (d *tableDecoder) skipRest() {
	s := d.s
	for s.arrayNext() {
		s.skipValue()
	}
}

// bag decodes documents of [term, count] pairs (DecodeBag), the documents
// slicing one array of pairs.
func (d *tableDecoder) bag() ([][][2]int, *dataErr) {
	s := d.s
	if c := s.peek(); c != '[' {
		s.skipValue()
		return nil, &dataErr{msg: "expected an array of documents, each an array of [term, count] pairs, got " + kindOfByte(c)}
	}
	s.open()
	var g growBuf[[2]int]
	off := []int{0}
	var bad *dataErr
	if s.arrayFirst() {
		for doc := 0; ; doc++ {
			if c := s.peek(); c != '[' {
				if bad == nil {
					bad = &dataErr{at: at1(doc), msg: "expected an array of [term, count] pairs, got " + kindOfByte(c)}
				}
				s.skipValue()
			} else {
				s.open()
				if s.arrayFirst() {
					for k := 0; ; k++ {
						p, msg := d.pair()
						if msg != "" && bad == nil {
							bad = &dataErr{at: at1(doc), msg: "entry " + strconv.Itoa(k+1) + ": " + msg}
						}
						if bad == nil {
							g.add(p)
						}
						if !s.arrayNext() {
							break
						}
					}
				}
			}
			if bad == nil {
				off = append(off, g.len())
			}
			if !s.arrayNext() {
				break
			}
		}
	}
	if bad != nil {
		return nil, bad
	}
	pairs := g.finish()
	out := make([][][2]int, len(off)-1)
	for i := range out {
		out[i] = pairs[off[i]:off[i+1]:off[i+1]]
	}
	return out, nil
}

// pair reads a [term, count] pair, or says what is wrong with it as
// DecodeBag does.
func (d *tableDecoder) pair() ([2]int, string) {
	s := d.s
	var p [2]int
	c := s.peek()
	if c != '[' {
		s.skipValue()
		return p, "expected a [term, count] pair, got " + kindOfByte(c)
	}
	s.open()
	var msgs [2]string
	k := 0
	if s.arrayFirst() {
		for ; ; k++ {
			if k < 2 {
				if c := s.peek(); isNumberStart(c) {
					p[k], msgs[k] = tokToInt(s.number())
				} else {
					msgs[k] = "expected a number, got " + kindOfByte(c)
					s.skipValue()
				}
			} else {
				s.skipValue()
			}
			if !s.arrayNext() {
				k++
				break
			}
		}
	}
	switch {
	case k != 2:
		return p, fmt.Sprintf("expected a [term, count] pair, got an array of %d", k)
	case msgs[0] != "":
		return p, "term: " + msgs[0]
	case msgs[1] != "":
		return p, "count: " + msgs[1]
	}
	return p, ""
}

// tokToInt is rawToInt for the text of a number.
func tokToInt(tok []byte) (int, string) {
	v, msg := parseTok(tok)
	if msg != "" {
		return 0, msg
	}
	n, msg := intOf(v, math.MinInt, math.MaxInt)
	if msg != "" {
		msg = snippet(tok) + strings.TrimPrefix(msg, strconv.FormatFloat(v, 'g', -1, 64))
	}
	return n, msg
}

// growBuf collects the elements of an array of unknown length: in chunks
// of at most 1 MiB, copied into one array at the end, so that the memory
// it takes stays near twice the array's; or, when the length is expected
// (expect), straight into an array of that length, with no copy.
type growBuf[T any] struct {
	cur    []T
	chunks [][]T
	done   int // the elements in chunks
	hint   int // the expected length, if > 0
	commit int // when to allocate the expected length
}

// chunkBytes is the size of growBuf's chunks.
const chunkBytes = 1 << 20

// expect says that the array is expected to have hint elements: once
// commit elements are in (at once if 0), the rest go into an array of hint
// elements.
func (g *growBuf[T]) expect(hint, commit int) {
	if hint > g.len() {
		g.hint, g.commit = hint, commit
	}
}

func (g *growBuf[T]) len() int { return g.done + len(g.cur) }

// add appends v.
func (g *growBuf[T]) add(v T) {
	if len(g.cur) == cap(g.cur) {
		g.grow()
	}
	g.cur = append(g.cur, v)
}

// grow makes room in cur, cur being full.
func (g *growBuf[T]) grow() {
	n := g.len()
	if g.hint > n && n >= g.commit {
		a := make([]T, n, g.hint)
		g.copyTo(a)
		g.cur, g.chunks, g.done, g.hint = a, nil, 0, 0
		return
	}
	if cap(g.cur) > 0 {
		g.chunks = append(g.chunks, g.cur)
		g.done = n
	}
	var z T
	size := max(256, min(n/4, chunkBytes/int(max(1, sizeOf(z)))))
	g.cur = make([]T, 0, size)
}

// copyTo copies the elements into a.
func (g *growBuf[T]) copyTo(a []T) {
	k := 0
	for _, c := range g.chunks {
		k += copy(a[k:], c)
	}
	copy(a[k:], g.cur)
}

// finish returns the elements, in one array of their length (never nil).
func (g *growBuf[T]) finish() []T {
	n := g.len()
	if len(g.chunks) == 0 && g.cur != nil && cap(g.cur)-n <= n/8 {
		return g.cur[:n:n]
	}
	a := make([]T, n)
	g.copyTo(a)
	*g = growBuf[T]{}
	return a
}

// sizeOf returns the size in bytes of the element types growBuf holds.
func sizeOf(v any) int {
	switch v.(type) {
	case [2]int:
		return 16
	}
	return 8
}
