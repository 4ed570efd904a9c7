package runtime

import (
	"reflect"
	"strings"
	"testing"
)

// TestDecodeCubes checks the arrays-of-matrices decoders: values, and
// errors naming the variable and the matrix (from 1).
func TestDecodeCubes(t *testing.T) {
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
