package runtime

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func raw(s string) json.RawMessage { return json.RawMessage(s) }

// wantErr checks that err is non-nil and its message is exactly msg.
func wantErr(t *testing.T, err error, msg string) {
	t.Helper()
	if err == nil {
		t.Errorf("no error, want %q", msg)
	} else if err.Error() != msg {
		t.Errorf("error %q,\n           want %q", err, msg)
	}
}

func TestSizes(t *testing.T) {
	s := NewSizes()
	if err := s.Bind("N", 1500, `"x" rows`); err != nil {
		t.Fatal(err)
	}
	if err := s.Bind("N", 1500, `"z" entries`); err != nil {
		t.Fatal(err)
	}
	wantErr(t, s.Bind("N", 1499, `"y" entries`), `size "N": "x" has 1500 rows but "y" has 1499 entries`)
	if n, ok := s.Get("N"); !ok || n != 1500 {
		t.Errorf("Get(N) = %d, %v", n, ok)
	}
	if _, ok := s.Get("K"); ok {
		t.Error("Get(K) should be unbound")
	}
	wantErr(t, s.Bind("K", -1, `"x" columns`), `size "K": "x" has -1 columns, which is negative`)
	if err := s.Bind("K", 3, `"K"`); err != nil {
		t.Fatal(err)
	}
	wantErr(t, s.Bind("K", 4, `"x" columns`), `size "K": "K" is 3 but "x" has 4 columns`)
	if err := s.Bind("D", 7, `row %d of "w"`); err != nil {
		t.Fatal(err)
	}
	wantErr(t, s.Bind("D", 8, `"x" columns`), `size "D": row 7 of "w" but "x" has 8 columns`)

	var zero Sizes // the zero value is usable
	if err := zero.Bind("N", 2, `"x" rows`); err != nil {
		t.Fatal(err)
	}
	if n, ok := zero.Get("N"); !ok || n != 2 {
		t.Error("zero Sizes")
	}
}

func TestDecodeSize(t *testing.T) {
	for in, want := range map[string]int{"0": 0, "17": 17, " 3.0 ": 3, "1e3": 1000} {
		if n, err := DecodeSize(raw(in), "N"); err != nil || n != want {
			t.Errorf("DecodeSize(%s) = %d, %v; want %d", in, n, err, want)
		}
	}
	for in, msg := range map[string]string{
		"-3":     `size "N": expected a non-negative integer, got -3`,
		"2.5":    `size "N": expected a non-negative integer, got 2.5`,
		`"7"`:    `size "N": expected a non-negative integer, got a string`,
		"[1]":    `size "N": expected a non-negative integer, got an array`,
		"null":   `size "N": expected a non-negative integer, got null`,
		"":       `size "N": expected a non-negative integer, got nothing`,
		"1e400":  `size "N": expected a non-negative integer, got 1e400`,
		"1e300":  `size "N": expected a non-negative integer, got 1e300`,
		"--1":    `size "N": expected a non-negative integer, got --1`,
		"0x10":   `size "N": expected a non-negative integer, got 0x10`,
		"true":   `size "N": expected a non-negative integer, got a boolean`,
		"{}":     `size "N": expected a non-negative integer, got an object`,
		"1 2":    `size "N": expected a non-negative integer, got 1 2`,
		"Infini": `size "N": expected a non-negative integer, got invalid JSON`,
	} {
		_, err := DecodeSize(raw(in), "N")
		wantErr(t, err, msg)
	}
}

func TestDecodeScalars(t *testing.T) {
	if v, err := DecodeReal(raw("-1.5e-3"), "s"); err != nil || v != -1.5e-3 {
		t.Errorf("DecodeReal = %g, %v", v, err)
	}
	_, err := DecodeReal(raw("[1]"), "s")
	wantErr(t, err, `data "s": expected a number, got an array`)
	_, err = DecodeReal(raw("1e999"), "s")
	wantErr(t, err, `data "s": 1e999 is out of range for a float64`)
	_, err = DecodeReal(raw("NaN"), "s")
	wantErr(t, err, `data "s": expected a number, got invalid JSON`)
	_, err = DecodeReal(raw("01"), "s")
	wantErr(t, err, `data "s": "01" is not a valid JSON number`)

	if v, err := DecodeInt(raw("2.0"), "k", 0, 3); err != nil || v != 2 {
		t.Errorf("DecodeInt = %d, %v", v, err)
	}
	if v, err := DecodeInt(raw("-7"), "k", math.MinInt, math.MaxInt); err != nil || v != -7 {
		t.Errorf("DecodeInt unbounded = %d, %v", v, err)
	}
	_, err = DecodeInt(raw("4"), "k", 0, 3)
	wantErr(t, err, `data "k": 4 is outside 0..3`)
	_, err = DecodeInt(raw("-1"), "k", 0, math.MaxInt)
	wantErr(t, err, `data "k": -1 is outside 0..`)
	_, err = DecodeInt(raw("5"), "k", math.MinInt, 3)
	wantErr(t, err, `data "k": 5 is outside ..3`)
	_, err = DecodeInt(raw("0.5"), "k", 0, 3)
	wantErr(t, err, `data "k": 0.5 is not an integer`)
	_, err = DecodeInt(raw("1e17"), "k", math.MinInt, math.MaxInt)
	wantErr(t, err, `data "k": 1e+17 is too large to be read exactly as an integer`)
	_, err = DecodeInt(raw(`"1"`), "k", 0, 3)
	wantErr(t, err, `data "k": expected a number, got a string`)
}

func TestDecodeVectors(t *testing.T) {
	v, err := DecodeRealVector(raw(" [1, 2.5, -3e2] "), "x")
	if err != nil || len(v) != 3 || v[1] != 2.5 || v[2] != -300 {
		t.Errorf("DecodeRealVector = %v, %v", v, err)
	}
	if v, err := DecodeRealVector(raw("[]"), "x"); err != nil || v == nil || len(v) != 0 {
		t.Errorf("empty vector = %#v, %v", v, err)
	}
	for in, msg := range map[string]string{
		"3":              `data "x": expected an array of numbers (a vector), got a number`,
		"null":           `data "x": expected an array of numbers (a vector), got null`,
		`{"a": 1}`:       `data "x": expected an array of numbers (a vector), got an object`,
		`[1, 2, "3"]`:    `data "x"[3]: expected a number, got a string`,
		`[1, null, 3]`:   `data "x"[2]: expected a number, got null`,
		`[1, [2], 3]`:    `data "x"[2]: expected a number, got an array`,
		`[1, 2, 1e400]`:  `data "x"[3]: 1e400 is out of range for a float64`,
		`[1, true]`:      `data "x"[2]: expected a number, got a boolean`,
		`[1, 2`:          `data "x": invalid JSON: unexpected end of JSON input`,
		`[1, "null", 2]`: `data "x"[2]: expected a number, got a string`,
	} {
		_, err := DecodeRealVector(raw(in), "x")
		wantErr(t, err, msg)
	}

	iv, err := DecodeIntVector(raw("[0, 1, 1.0, 1e0]"), "y", 0, 1)
	if err != nil || len(iv) != 4 || iv[2] != 1 || iv[3] != 1 {
		t.Errorf("DecodeIntVector = %v, %v", iv, err)
	}
	_, err = DecodeIntVector(raw("[0, 1, 0, 0.5]"), "y", 0, 1)
	wantErr(t, err, `data "y"[4]: 0.5 is not an integer`)
	big := "[" + strings.Repeat("0,", 16) + "2]"
	_, err = DecodeIntVector(raw(big), "y", 0, 1)
	wantErr(t, err, `data "y"[17]: 2 is outside 0..1`)
	_, err = DecodeIntVector(raw(`[0, "a"]`), "y", 0, 1)
	wantErr(t, err, `data "y"[2]: expected a number, got a string`)
}

func TestDecodeMatrices(t *testing.T) {
	flat, r, c, err := DecodeRealMatrix(raw("[[1, 2, 3], [4, 5, 6]]"), "x")
	if err != nil || r != 2 || c != 3 || len(flat) != 6 || flat[3] != 4 {
		t.Errorf("DecodeRealMatrix = %v %d %d %v", flat, r, c, err)
	}
	if flat, r, c, err := DecodeRealMatrix(raw("[]"), "x"); err != nil || r != 0 || c != 0 || len(flat) != 0 {
		t.Errorf("empty matrix = %v %d %d %v", flat, r, c, err)
	}
	if _, r, c, err := DecodeRealMatrix(raw("[[], []]"), "x"); err != nil || r != 2 || c != 0 {
		t.Errorf("2×0 matrix = %d %d %v", r, c, err)
	}
	rowOf := func(k int) string { return "[" + strings.TrimSuffix(strings.Repeat("1,", k), ",") + "]" }
	ragged := "[" + strings.Repeat(rowOf(104)+",", 2) + rowOf(103) + "]"
	for in, msg := range map[string]string{
		"3":                       `data "x": expected an array of arrays (a matrix), got a number`,
		ragged:                    `data "x"[3]: row has 103 numbers, want 104`,
		"[[1, 2], [3]]":           `data "x"[2]: row has 1 numbers, want 2`,
		"[[1, 2], 3]":             `data "x"[2]: expected an array of numbers (a row), got a number`,
		"[[1, 2], null]":          `data "x"[2]: expected an array of numbers (a row), got null`,
		`[[1, 2], [3, "4"]]`:      `data "x"[2, 2]: expected a number, got a string`,
		"[[1, 2], [3, null]]":     `data "x"[2, 2]: expected a number, got null`,
		"[1, 2]":                  `data "x"[1]: expected an array of numbers (a row), got a number`,
		"[[1, 2], [3, 4]":         `data "x": invalid JSON: unexpected end of JSON input`,
		"[[1, 2], [3, [4]], [5]]": `data "x"[2, 2]: expected a number, got an array`,
	} {
		_, _, _, err := DecodeRealMatrix(raw(in), "x")
		wantErr(t, err, msg)
	}

	iflat, r, c, err := DecodeIntMatrix(raw("[[0, 2], [1.0, 2]]"), "z", 0, 2)
	if err != nil || r != 2 || c != 2 || iflat[2] != 1 {
		t.Errorf("DecodeIntMatrix = %v %d %d %v", iflat, r, c, err)
	}
	_, _, _, err = DecodeIntMatrix(raw("[[0, 2], [1, 3]]"), "z", 0, 2)
	wantErr(t, err, `data "z"[2, 2]: 3 is outside 0..2`)
	_, _, _, err = DecodeIntMatrix(raw("[[0, 2.5], [1, 2]]"), "z", 0, 2)
	wantErr(t, err, `data "z"[1, 2]: 2.5 is not an integer`)
	_, _, _, err = DecodeIntMatrix(raw("[[0], [1, 2]]"), "z", 0, 2)
	wantErr(t, err, `data "z"[2]: row has 2 numbers, want 1`)
}

func TestSplitObject(t *testing.T) {
	known := []string{"N", "x", "y"}
	m, err := SplitObject(strings.NewReader(`{"N": 3, "x": [[1],[2],[3]],
		"y": [0, 1, 1]}`), known)
	if err != nil || len(m) != 3 || string(m["N"]) != "3" || string(m["y"]) != "[0, 1, 1]" {
		t.Fatalf("SplitObject = %v, %v", m, err)
	}
	if m, err := SplitObject(strings.NewReader(" {} \n"), known); err != nil || len(m) != 0 {
		t.Errorf("empty object: %v, %v", m, err)
	}
	for in, msg := range map[string]string{
		"{\"z\": 3,\n \"z\": 4}":   `data: line 2, column 2: duplicate key "z"`,
		"{\"N\": 3,\n \"N\": 4}":   `data: line 2, column 2: duplicate key "N"`,
		`[1, 2]`:                   `data: expected a JSON object, got an array`,
		`"N"`:                      `data: expected a JSON object, got a string`,
		`3`:                        `data: expected a JSON object, got a number`,
		`null`:                     `data: expected a JSON object, got null`,
		``:                         `data: empty input, expected a JSON object`,
		"  \n ":                    `data: empty input, expected a JSON object`,
		"{\"N\": 3, \"x\": [1, 2":  `data: unexpected end of input`,
		"{\"N\": 3\n\n  \"x\": 1}": `data: invalid JSON at line 3, column 3: invalid character '"' after object key:value pair`,
		`{"N": 3`:                  `data: unexpected end of input`,
		`{"N": 3} {}`:              `data: invalid JSON at line 1, column 10: invalid character '{' after top-level value`,
		"{\"N\": 3,\n\"x\": [1,]}": `data: invalid JSON at line 2, column 9: invalid character ']' looking for beginning of value`,
		`{"N" 3}`:                  `data: invalid JSON at line 1, column 6: invalid character '3' after object key`,
		`{3: 3}`:                   `data: invalid JSON at line 1, column 2: invalid character '3' looking for beginning of object key string`,
	} {
		_, err := SplitObject(strings.NewReader(in), known)
		wantErr(t, err, msg)
	}
}

// Keys the model does not declare are left out with one note naming them,
// sorted, with "did you mean" for those close to a declared name (a
// misspelled const override would otherwise silently leave the default).
func TestSplitObjectUnknownKeys(t *testing.T) {
	var notes []string
	defer func(f func(string)) { Notes = f }(Notes)
	Notes = func(msg string) { notes = append(notes, msg) }
	known := []string{"N", "sigma", "x", "y", "alpha0"}
	m, err := SplitObject(strings.NewReader(`{"N": 3, "zz": 1, "Sigma": 2, "x": [1], "alpah0": 1, "N_extra": {"a": 1}}`), known)
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 2 || string(m["N"]) != "3" || string(m["x"]) != "[1]" {
		t.Errorf("SplitObject = %v", m)
	}
	want := `data: ignoring 4 keys that the model does not declare: "N_extra", "Sigma" (did you mean "sigma"?), "alpah0" (did you mean "alpha0"?), "zz"`
	if len(notes) != 1 || notes[0] != want {
		t.Errorf("notes = %q\nwant [%q]", notes, want)
	}
	notes = nil
	if _, err := SplitObject(strings.NewReader(`{"y": [1], "yy": 2}`), known); err != nil {
		t.Fatal(err)
	}
	if want := `data: ignoring a key that the model does not declare: "yy" (did you mean "y"?)`; len(notes) != 1 || notes[0] != want {
		t.Errorf("notes = %q\nwant [%q]", notes, want)
	}
	notes = nil
	if _, err := SplitObject(strings.NewReader(`{"y": [1]}`), known); err != nil || notes != nil {
		t.Errorf("no unknown keys: err %v, notes %q", err, notes)
	}
	Notes = nil // silenced: no panic, no output
	if _, err := SplitObject(strings.NewReader(`{"q": 1}`), known); err != nil {
		t.Error(err)
	}
}

// decodeSeeds are FuzzDecode's seed corpus: a few documents and 3,000
// deterministic mutations of them (insertions from a JSON-ish alphabet,
// deletions, truncations), which go test runs as a unit test (this was
// TestDecodeNeverPanics).
func decodeSeeds() [][]byte {
	docs := []string{
		`{"N": 2, "x": [[1, 2], [3, 4]], "y": [0, 1], "s": 1.5}`,
		`[[1e308, -1e308], [1e-320, 0]]`, `[1, [2, [3, [4]]]]`, `{"a": {"b": [null, true]}}`,
	}
	out := [][]byte{[]byte(`{"N": 2}`), []byte(`[[1,2],[3]]`), []byte(`[0, 1, null]`), []byte("a,b\n1,2\n")}
	for _, d := range docs {
		out = append(out, []byte(d))
	}
	alphabet := []byte(`[]{}",:.-+eE0123456789 nulltrue` + "\x00\xff")
	rng := rand.New(rand.NewPCG(71, 72))
	for i := 0; i < 3000; i++ {
		b := []byte(docs[rng.IntN(len(docs))])
		for k := rng.IntN(4) + 1; k > 0; k-- {
			switch pos := rng.IntN(len(b) + 1); rng.IntN(3) {
			case 0: // insert
				b = append(b[:pos], append([]byte{alphabet[rng.IntN(len(alphabet))]}, b[pos:]...)...)
			case 1: // delete
				if pos < len(b) {
					b = append(b[:pos], b[pos+1:]...)
				}
			default: // truncate
				b = b[:pos]
			}
		}
		out = append(out, b)
	}
	return out
}

// decodeAll feeds b to every decoder: none may panic, an error names the
// variable, and what decodes is well formed (in range, rows×cols values,
// the integer decoders agreeing with the real ones).
func decodeAll(t *testing.T, b []byte) {
	t.Helper()
	r := json.RawMessage(b)
	named := func(what string, err error, prefix string) {
		t.Helper()
		if err != nil && !strings.HasPrefix(err.Error(), prefix) {
			t.Errorf("%s(%q): error %q does not start with %q", what, b, err, prefix)
		}
	}
	n, err := DecodeSize(r, "N")
	named("DecodeSize", err, `size "N"`)
	if err == nil && n < 0 {
		t.Errorf("DecodeSize(%q) = %d", b, n)
	}
	x, err := DecodeReal(r, "s")
	named("DecodeReal", err, `data "s"`)
	if err == nil && math.IsNaN(x) {
		t.Errorf("DecodeReal(%q) = NaN", b)
	}
	k, err := DecodeInt(r, "k", 0, 3)
	named("DecodeInt", err, `data "k"`)
	if err == nil && (k < 0 || k > 3) {
		t.Errorf("DecodeInt(%q, 0, 3) = %d", b, k)
	}
	v, verr := DecodeRealVector(r, "v")
	named("DecodeRealVector", verr, `data "v"`)
	iv, err := DecodeIntVector(r, "v", math.MinInt, math.MaxInt)
	named("DecodeIntVector", err, `data "v"`)
	if err == nil && (verr != nil || len(iv) != len(v)) {
		t.Errorf("DecodeIntVector(%q) = %v but DecodeRealVector = %v, %v", b, iv, v, verr)
	}
	flat, rows, cols, merr := DecodeRealMatrix(r, "m")
	named("DecodeRealMatrix", merr, `data "m"`)
	if merr == nil && (len(flat) != rows*cols || rows < 0 || cols < 0) {
		t.Errorf("DecodeRealMatrix(%q): %d values, %d×%d", b, len(flat), rows, cols)
	}
	iflat, irows, icols, err := DecodeIntMatrix(r, "m", 0, 1)
	named("DecodeIntMatrix", err, `data "m"`)
	if err == nil {
		if merr != nil || irows != rows || icols != cols || len(iflat) != len(flat) {
			t.Errorf("DecodeIntMatrix(%q): %d×%d, DecodeRealMatrix: %d×%d, %v", b, irows, icols, rows, cols, merr)
		}
		for _, z := range iflat {
			if z != 0 && z != 1 {
				t.Errorf("DecodeIntMatrix(%q, 0, 1) holds %d", b, z)
			}
		}
	}
	_, err = DecodeBag(r, "w")
	named("DecodeBag", err, `data "w"`)
	defer func(f func(string)) { Notes = f }(Notes)
	Notes = nil
	obj, err := SplitObject(strings.NewReader(string(b)), []string{"N", "x"})
	named("SplitObject", err, "data: ")
	for key := range obj {
		if key != "N" && key != "x" {
			t.Errorf("SplitObject(%q) returned the unknown key %q", b, key)
		}
	}
	header, csvRows, err := ReadCSV(strings.NewReader(string(b)))
	if err == nil {
		for i, row := range csvRows {
			if len(row) != len(header) {
				t.Errorf("ReadCSV(%q): row %d has %d fields, the header %d", b, i+1, len(row), len(header))
			}
		}
	}
}

// FuzzDecode: no input makes a decoder panic or return something
// malformed (decodeAll). Its seeds run with go test; go test -fuzz
// FuzzDecode ./runtime searches further.
func FuzzDecode(f *testing.F) {
	for _, b := range decodeSeeds() {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) { decodeAll(t, b) })
}
