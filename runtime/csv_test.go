package runtime

import (
	"errors"
	"strings"
	"testing"
)

func TestReadCSV(t *testing.T) {
	in := "\ufeffy, f1 ,f2\r\n1,2.5,-3e2\r\n\r\n0, 4 ,5\n"
	h, rows, err := ReadCSV(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(h, "|") != "y|f1|f2" || len(rows) != 2 || rows[0][2] != -300 || rows[1][1] != 4 {
		t.Errorf("ReadCSV = %q, %v", h, rows)
	}
	// No trailing newline, header only.
	if h, rows, err := ReadCSV(strings.NewReader("a,b\n1,2")); err != nil || len(h) != 2 || len(rows) != 1 {
		t.Errorf("no final newline: %q %v %v", h, rows, err)
	}
	if h, rows, err := ReadCSV(strings.NewReader("a,b\n")); err != nil || len(h) != 2 || len(rows) != 0 {
		t.Errorf("header only: %q %v %v", h, rows, err)
	}
}

func TestReadCSVErrors(t *testing.T) {
	long := "f1,f2,f3\n" + strings.Repeat("1,2,3\n", 15) + "1,2,abc\n"
	for in, msg := range map[string]string{
		long:                  `line 17, column "f3": "abc" is not a number`,
		"a,b\n1,2\n1,2,3\n":   `line 3: 3 fields, want 2 (as in the header)`,
		"a,b\n1\n":            `line 2: 1 fields, want 2 (as in the header)`,
		"a,b\n1,\n":           `line 2, column "b": empty field`,
		"a,b\nNaN,1\n":        `line 2, column "a": "NaN" is not a finite number`,
		"a,b\n1,-Inf\n":       `line 2, column "b": "-Inf" is not a finite number`,
		"a,b\n1,1e999\n":      `line 2, column "b": "1e999" is not a finite number`,
		"a,b\n0x10,1\n":       `line 2, column "a": "0x10" is not a number`,
		"a,b\n\"1\",2\n":      `line 2, column "a": "\"1\"" is not a number`,
		"a,a\n1,2\n":          `line 1: duplicate column "a" in the header`,
		"a,,c\n":              `line 1: header field 2 is empty`,
		"":                    `line 1: empty input, expected a header row`,
		"\n\n":                `line 1: empty input, expected a header row`,
		"\n\nx,y\n1,2\n3,z\n": `line 5, column "y": "z" is not a number`,
	} {
		_, _, err := ReadCSV(strings.NewReader(in))
		wantErr(t, err, msg)
	}
	_, _, err := ReadCSV(errReader{})
	if err == nil || !errors.Is(err, errBroken) {
		t.Errorf("reader error not passed on: %v", err)
	}
}

var errBroken = errors.New("broken")

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errBroken }

// WithColumns fills a vector from its column and a matrix from the
// columns left, adds the sizes the JSON lacks, and refuses what it cannot
// place, naming the file.
func TestWithColumns(t *testing.T) {
	header := []string{"a", "y", "b"}
	rows := [][]float64{{1, 0, 2.5}, {3, 1, 4}}
	dims := map[string][]string{"y": {"N"}, "x": {"N", "P"}, "z": {"N", "2"}}
	out, added, err := WithColumns([]byte(`{"N": 2}`), "t.csv", []string{"y", "x"}, dims, header, rows)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != `{"N":2,"P":2,"x":[[1,2.5],[3,4]],"y":[0,1]}` || len(added) != 1 || added["P"] != 2 {
		t.Errorf("got %s, added %v", out, added)
	}
	for _, c := range []struct {
		src   string
		names []string
		want  string
	}{
		{`{}`, []string{"w"}, `t.csv: "w" is not a data variable of one or two dimensions`},
		{`{}`, []string{"x", "z"}, "t.csv: x and z both want the remaining columns"},
		{`{"y": [1, 2]}`, []string{"y"}, `data "y" is given both in the JSON data and in t.csv`},
		{`[]`, []string{"y"}, "the data must be a JSON object"},
	} {
		if _, _, err := WithColumns([]byte(c.src), "t.csv", c.names, dims, header, rows); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %v: error %v, want %q", c.src, c.names, err, c.want)
		}
	}
	if _, _, err := WithColumns([]byte(`{}`), "t.csv", []string{"y"}, map[string][]string{"y": {"N"}}, []string{"a"}, [][]float64{{1}}); err == nil || !strings.Contains(err.Error(), `no column "y" (its columns: a)`) {
		t.Errorf("missing column: %v", err)
	}
	// a square matrix from a table that is not square: N cannot be both
	sq := map[string][]string{"x": {"N", "N"}}
	if _, _, err := WithColumns([]byte(`{}`), "t.csv", []string{"x"}, sq, header, rows); err == nil || !strings.Contains(err.Error(), "t.csv: N would be both 2 and 3") {
		t.Errorf("N×N from 2 rows and 3 columns: %v", err)
	}
}

// WithRecords reads a JSON-lines file: a number per line for a vector, an
// array per line for a matrix's row, sizes from the lines and the first
// row; errors name the file and line.
func TestWithRecords(t *testing.T) {
	dims := map[string][]string{"y": {"N"}, "x": {"N", "P"}}
	lines := [][]byte{[]byte(`{"y": 1, "x": [1, 0.5], "note": "ignored"}`), []byte(""), []byte(`{"y": 0, "x": [1, -2]}`)}
	out, added, err := WithRecords([]byte(`{}`), "d.jsonl", []string{"y", "x"}, dims, lines)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != `{"N":2,"P":2,"x":[[1,0.5],[1,-2]],"y":[1,0]}` || added["N"] != 2 || added["P"] != 2 {
		t.Errorf("got %s, added %v", out, added)
	}
	for _, c := range []struct {
		lines [][]byte
		want  string
	}{
		{[][]byte{[]byte(`[1]`)}, "d.jsonl:1: want a JSON object on each line"},
		{[][]byte{[]byte(`{"y": 1, "x": [1]}`), []byte(`{"x": [2]}`)}, `d.jsonl:2: no "y"`},
		{[][]byte{[]byte(`{"y": 1, "x": 3}`)}, `d.jsonl:1: "x" must be an array`},
		// encoding/json keeps a duplicate key's last value silently
		{[][]byte{[]byte(`{"y": 1, "x": [1]}`), []byte(`{"y": 1, "x": [2], "y": 0}`)}, `d.jsonl:2: duplicate key "y"`},
		{[][]byte{[]byte(`{"y": 1, "x": [1], "\u0079": 0}`)}, `d.jsonl:1: duplicate key "y"`},
		{[][]byte{[]byte(`{"y": 1, "x": [1], "note": 1, "note": 2}`)}, `d.jsonl:1: duplicate key "note"`},
	} {
		if _, _, err := WithRecords([]byte(`{}`), "d.jsonl", []string{"y", "x"}, dims, c.lines); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.lines, err, c.want)
		}
	}
	// the JSON data object that the lines join
	if _, _, err := WithRecords([]byte(`{"P": 2, "P": 3}`), "d.jsonl", []string{"y", "x"}, dims, lines); err == nil || !strings.Contains(err.Error(), `duplicate key "P"`) {
		t.Errorf("a data object giving P twice: error %v, want a duplicate key", err)
	}
}
