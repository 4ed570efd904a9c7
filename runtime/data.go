package runtime

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// This file decodes the values of JSON data documents, given as raw JSON
// (SplitObject in object.go splits a document, Sizes in sizes.go checks
// sizes across variables). Generated LoadData functions read documents
// with DataTable.Decode, which streams (jsonscan_decode.go) and decodes
// each value as it is read, with the errors these functions give for it.
// Every error names the data variable and, where there is one, the
// element's index, 1-based as in the model language (and as in check.go's
// Check* messages), e.g.
//
//	data "x"[3]: row has 103 numbers, want 104
//	data "y"[17]: 2 is outside 0..1
//	data "y"[4]: 0.5 is not an integer
//	data "x": expected an array of arrays (a matrix), got a number
//	size "N": "x" has 1500 rows but "y" has 1499 entries
//
// Arrays are first decoded by encoding/json straight into float64 slices;
// only when that fails (or a null is present, which encoding/json would
// silently read as 0) are they taken apart element by element to locate the
// problem. No input makes these functions panic.

// DecodeSize decodes a non-negative integer (written as 3 or 3.0) given
// explicitly for size name.
func DecodeSize(raw json.RawMessage, name string) (int, error) {
	raw = bytes.TrimSpace(raw)
	v, msg := parseNumber(raw)
	if msg == "" && v >= 0 {
		if n, imsg := toInt(v, 0, math.MaxInt); imsg == "" {
			return n, nil
		}
	}
	got := kindOf(raw)
	if msg == "" || got == "a number" {
		got = snippet(raw)
	}
	return 0, fmt.Errorf("size %q: expected a non-negative integer, got %s", name, got)
}

// DecodeReal decodes a number.
func DecodeReal(raw json.RawMessage, name string) (float64, error) {
	v, msg := parseNumber(bytes.TrimSpace(raw))
	if msg != "" {
		return 0, fmt.Errorf("data %q: %s", name, msg)
	}
	return v, nil
}

// DecodeInt decodes an integer in lo..hi (inclusive; use math.MinInt or
// math.MaxInt for no bound). An integral number written as 1.0 or 1e2 is
// accepted.
func DecodeInt(raw json.RawMessage, name string, lo, hi int) (int, error) {
	v, msg := parseNumber(bytes.TrimSpace(raw))
	if msg == "" {
		var n int
		if n, msg = toInt(v, lo, hi); msg == "" {
			return n, nil
		}
	}
	return 0, fmt.Errorf("data %q: %s", name, msg)
}

// DecodeRealVector decodes an array of numbers.
func DecodeRealVector(raw json.RawMessage, name string) ([]float64, error) {
	raw = bytes.TrimSpace(raw)
	if !bytes.Contains(raw, []byte("null")) {
		var v []float64
		if json.Unmarshal(raw, &v) == nil && v != nil {
			return v, nil
		}
	}
	elems, msg := splitArray(raw, "an array of numbers (a vector)")
	if msg != "" {
		return nil, fmt.Errorf("data %q: %s", name, msg)
	}
	out := make([]float64, len(elems))
	for i, e := range elems {
		if out[i], msg = parseNumber(e); msg != "" {
			return nil, fmt.Errorf("data %q[%d]: %s", name, i+1, msg)
		}
	}
	return out, nil
}

// DecodeIntVector decodes an array of integers in lo..hi (see DecodeInt).
func DecodeIntVector(raw json.RawMessage, name string, lo, hi int) ([]int, error) {
	v, err := DecodeRealVector(raw, name)
	if err != nil {
		return nil, err
	}
	out := make([]int, len(v))
	for i, x := range v {
		var msg string
		if out[i], msg = toInt(x, lo, hi); msg != "" {
			return nil, fmt.Errorf("data %q[%d]: %s", name, i+1, msg)
		}
	}
	return out, nil
}

// DecodeRealMatrix decodes an array of equal-length arrays of numbers into a
// flat row-major slice. An empty array decodes to rows 0, cols 0.
func DecodeRealMatrix(raw json.RawMessage, name string) (flat []float64, rows, cols int, err error) {
	raw = bytes.TrimSpace(raw)
	if !bytes.Contains(raw, []byte("null")) {
		var m [][]float64
		if json.Unmarshal(raw, &m) == nil && m != nil {
			return flatten(m, name)
		}
	}
	outer, msg := splitArray(raw, "an array of arrays (a matrix)")
	if msg != "" {
		return nil, 0, 0, fmt.Errorf("data %q: %s", name, msg)
	}
	m := make([][]float64, len(outer))
	for i, r := range outer {
		elems, msg := splitArray(r, "an array of numbers (a row)")
		if msg != "" {
			return nil, 0, 0, fmt.Errorf("data %q[%d]: %s", name, i+1, msg)
		}
		if i > 0 && len(elems) != len(m[0]) {
			return nil, 0, 0, raggedError(name, i, len(elems), len(m[0]))
		}
		m[i] = make([]float64, len(elems))
		for j, e := range elems {
			if m[i][j], msg = parseNumber(e); msg != "" {
				return nil, 0, 0, fmt.Errorf("data %q[%d, %d]: %s", name, i+1, j+1, msg)
			}
		}
	}
	return flatten(m, name)
}

// DecodeIntMatrix decodes an array of equal-length arrays of integers in
// lo..hi (see DecodeInt) into a flat row-major slice.
func DecodeIntMatrix(raw json.RawMessage, name string, lo, hi int) (flat []int, rows, cols int, err error) {
	v, rows, cols, err := DecodeRealMatrix(raw, name)
	if err != nil {
		return nil, 0, 0, err
	}
	out := make([]int, len(v))
	for k, x := range v {
		var msg string
		if out[k], msg = toInt(x, lo, hi); msg != "" {
			return nil, 0, 0, fmt.Errorf("data %q[%d, %d]: %s", name, k/cols+1, k%cols+1, msg)
		}
	}
	return out, rows, cols, nil
}

// flatten checks that the rows of m have equal length and concatenates them.
func flatten(m [][]float64, name string) ([]float64, int, int, error) {
	rows, cols := len(m), 0
	if rows > 0 {
		cols = len(m[0])
	}
	flat := make([]float64, 0, rows*cols)
	for i, r := range m {
		if len(r) != cols {
			return nil, 0, 0, raggedError(name, i, len(r), cols)
		}
		flat = append(flat, r...)
	}
	return flat, rows, cols, nil
}

func raggedError(name string, i, got, want int) error {
	return fmt.Errorf("data %q[%d]: row has %d numbers, want %d", name, i+1, got, want)
}

// splitArray checks that raw is a JSON array and returns its elements, or a
// message saying what it is instead of want.
func splitArray(raw []byte, want string) ([]json.RawMessage, string) {
	if k := kindOf(raw); k != "an array" {
		return nil, "expected " + want + ", got " + k
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, "invalid JSON: " + err.Error()
	}
	return elems, ""
}

// kindOf names the kind of the JSON value raw (without surrounding space) by
// its first byte, for messages such as "expected a number, got a string".
func kindOf(raw []byte) string {
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '[':
		return "an array"
	case '{':
		return "an object"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return "a number"
	}
	return "invalid JSON"
}

// parseNumber parses raw as a single JSON number, or returns a message.
func parseNumber(raw []byte) (float64, string) {
	if k := kindOf(raw); k != "a number" {
		return 0, "expected a number, got " + k
	}
	if !json.Valid(raw) {
		return 0, fmt.Sprintf("%q is not a valid JSON number", snippet(raw))
	}
	v, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsInf(v, 0) {
		return 0, snippet(raw) + " is out of range for a float64"
	}
	return v, ""
}

// maxExactInt is 2⁵³: every integer of magnitude ≤ 2⁵³ is a float64, so an
// integer read from JSON through float64 is exact up to here.
const maxExactInt = 1 << 53

// toInt converts an integral v in lo..hi to int, or returns a message.
func toInt(v float64, lo, hi int) (int, string) {
	s := strconv.FormatFloat(v, 'g', -1, 64)
	if v != math.Trunc(v) {
		return 0, s + " is not an integer"
	}
	if math.Abs(v) > maxExactInt {
		return 0, s + " is too large to be read exactly as an integer"
	}
	n := int(v)
	if n >= lo && n <= hi {
		return n, ""
	}
	return 0, fmt.Sprintf("%d is outside %s", n, intRange(lo, hi))
}

// rawToInt parses raw as a JSON number holding an integer that a float64
// represents exactly, or returns a message quoting raw as written.
func rawToInt(raw []byte) (int, string) {
	v, msg := parseNumber(raw)
	if msg != "" {
		return 0, msg
	}
	n, msg := toInt(v, math.MinInt, math.MaxInt)
	if msg != "" {
		msg = snippet(raw) + strings.TrimPrefix(msg, strconv.FormatFloat(v, 'g', -1, 64))
	}
	return n, msg
}

// intRange writes lo..hi, leaving out an unbounded end.
func intRange(lo, hi int) string {
	s := ".."
	if lo != math.MinInt {
		s = strconv.Itoa(lo) + s
	}
	if hi != math.MaxInt {
		s += strconv.Itoa(hi)
	}
	return s
}

// snippet returns raw as a string, shortened to at most 40 bytes for messages.
func snippet(raw []byte) string {
	if len(raw) > 40 {
		return string(raw[:37]) + "..."
	}
	return string(raw)
}
