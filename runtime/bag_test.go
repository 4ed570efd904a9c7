package runtime

import (
	"encoding/json"
	"slices"
	"testing"
)

// TestDecodeBag: terms and counts are read only when a float64 holds them
// exactly; huge numbers and nulls are errors naming the document and entry
// (they used to be read as math.MinInt and as 0).
func TestDecodeBag(t *testing.T) {
	got, err := DecodeBag(json.RawMessage(` [[[1, 2], [3.0, 1e1]], [], [[9007199254740992, 1]]] `), "w")
	if err != nil {
		t.Fatal(err)
	}
	want := [][][2]int{{{1, 2}, {3, 10}}, {}, {{1 << 53, 1}}}
	if !slices.EqualFunc(got, want, func(a, b [][2]int) bool { return slices.Equal(a, b) }) {
		t.Errorf("DecodeBag = %v, want %v", got, want)
	}
	for in, msg := range map[string]string{
		`[[[1e300, 1]]]`:                `data "w"[1]: entry 1: term: 1e300 is too large to be read exactly as an integer`,
		`[[[2, 9223372036854775807]]]`:  `data "w"[1]: entry 1: count: 9223372036854775807 is too large to be read exactly as an integer`,
		`[[[1, 1]], [[null, 1]]]`:       `data "w"[2]: entry 1: term: expected a number, got null`,
		`[[[1, 1], [2, null]]]`:         `data "w"[1]: entry 2: count: expected a number, got null`,
		`[[[1.5, 1]]]`:                  `data "w"[1]: entry 1: term: 1.5 is not an integer`,
		`[[[1, 2, 3]]]`:                 `data "w"[1]: entry 1: expected a [term, count] pair, got an array of 3`,
		`[[[1]]]`:                       `data "w"[1]: entry 1: expected a [term, count] pair, got an array of 1`,
		`[[1, 2]]`:                      `data "w"[1]: entry 1: expected a [term, count] pair, got a number`,
		`[null]`:                        `data "w"[1]: expected an array of [term, count] pairs, got null`,
		`{"a": 1}`:                      `data "w": expected an array of documents, each an array of [term, count] pairs, got an object`,
		`[[["1", 2]]]`:                  `data "w"[1]: entry 1: term: expected a number, got a string`,
		`[[[1e400, 1]]]`:                `data "w"[1]: entry 1: term: 1e400 is out of range for a float64`,
		`[[[-9223372036854775808, 1]]]`: `data "w"[1]: entry 1: term: -9223372036854775808 is too large to be read exactly as an integer`,
	} {
		_, err := DecodeBag(json.RawMessage(in), "w")
		wantErr(t, err, msg)
	}
}
