package runtime

import (
	"reflect"
	"strings"
	"testing"
)

// TestDecodeArraysOf checks the decoders of arrays of matrices and of
// ragged rows: values, and errors naming the variable and the element
// (from 1).
func TestDecodeArraysOf(t *testing.T) {
	r, err := DecodeRealCube([]byte(`[[[1, 2], [3, 4]], [[5.5, 6]]]`), "x")
	if err != nil {
		t.Fatal(err)
	}
	if want := [][][]float64{{{1, 2}, {3, 4}}, {{5.5, 6}}}; !reflect.DeepEqual(r, want) {
		t.Errorf("DecodeRealCube = %v, want %v", r, want)
	}
	n, err := DecodeIntCube([]byte(`[[[1, 2]], [[3, 4], [5, 6]]]`), "k")
	if err != nil {
		t.Fatal(err)
	}
	if want := [][][]int{{{1, 2}}, {{3, 4}, {5, 6}}}; !reflect.DeepEqual(n, want) {
		t.Errorf("DecodeIntCube = %v, want %v", n, want)
	}
	rr, err := DecodeRaggedReal([]byte(`[[1, 2.5], [], [3]]`), "r")
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]float64{{1, 2.5}, {}, {3}}; !reflect.DeepEqual(rr, want) {
		t.Errorf("DecodeRaggedReal = %v, want %v", rr, want)
	}
	ri, err := DecodeRaggedInt([]byte(`[[1], [2, 3]]`), "r")
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]int{{1}, {2, 3}}; !reflect.DeepEqual(ri, want) {
		t.Errorf("DecodeRaggedInt = %v, want %v", ri, want)
	}
	for raw, want := range map[string]string{
		`{"a": 1}`:        `data "r": expected an array of arrays, one per document`,
		`[[1], [2, "a"]]`: `"r[2]"`,
	} {
		if _, err := DecodeRaggedReal([]byte(raw), "r"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("DecodeRaggedReal(%s): error %v, want one containing %s", raw, err, want)
		}
		if _, err := DecodeRaggedInt([]byte(raw), "r"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("DecodeRaggedInt(%s): error %v, want one containing %s", raw, err, want)
		}
	}
	if _, err := DecodeRaggedInt([]byte(`[[1], [2], [0.5]]`), "r"); err == nil || !strings.Contains(err.Error(), `"r[3]"`) {
		t.Errorf("DecodeRaggedInt of a fraction: error %v, want one naming r[3]", err)
	}
	for _, c := range []struct {
		int  bool
		raw  string
		want string
	}{
		{false, `{"a": 1}`, `data "x": expected an array of matrices`},
		{true, `3`, `data "x": expected an array of matrices`},
		{false, `[[[1]], [[1, "a"]]]`, `"x[2]"`},
		{true, `[[[1]], [[1]], [[1.5]]]`, `"x[3]"`},
	} {
		if c.int {
			_, err = DecodeIntCube([]byte(c.raw), "x")
		} else {
			_, err = DecodeRealCube([]byte(c.raw), "x")
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("decode %s (int %v): error %v, want one containing %s", c.raw, c.int, err, c.want)
		}
	}
}
