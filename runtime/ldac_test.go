package runtime

import (
	"bufio"
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestReadLDAC(t *testing.T) {
	want := [][][2]int{
		{{1, 2}, {6, 1}, {3, 4}},
		{},
		{{10, 3}},
		{{4, 1}, {1, 7}},
	}
	for _, in := range []string{
		"3 0:2 5:1 2:4\n0\n1 9:3\n2 3:1 0:7\n",
		"3 0:2 5:1 2:4\n0\n1 9:3\n2 3:1 0:7",                 // no final newline
		"3 0:2 5:1 2:4\r\n0\r\n1 9:3\r\n2 3:1 0:7\r\n",       // CRLF
		"\ufeff3  0:2\t5:1 2:4 \n 0\n1 9:3\n2 3:1 0:7\n\n\n", // BOM, spacing, trailing blank lines
		"3 0:2 5:1 2:4\n0\n1 +9:03\n2 3:1 0:7\n",             // signs and leading zeros as strconv allows
	} {
		got, err := ReadLDAC(strings.NewReader(in), "x.dat")
		if err != nil {
			t.Errorf("ReadLDAC(%q): %v", in, err)
		} else if !reflect.DeepEqual(got, want) {
			t.Errorf("ReadLDAC(%q) =\n %v, want\n %v", in, got, want)
		}
	}
	for _, in := range []string{"", "\n", "\n\n \n"} {
		got, err := ReadLDAC(strings.NewReader(in), "x.dat")
		if err != nil || got == nil || len(got) != 0 {
			t.Errorf("ReadLDAC(%q) = %v, %v; want no documents", in, got, err)
		}
	}
	got, err := ReadLDAC(strings.NewReader("0\n0\n"), "x.dat")
	if err != nil || !reflect.DeepEqual(got, [][][2]int{{}, {}}) {
		t.Errorf("two empty documents: %v, %v", got, err)
	}
}

func TestReadLDACErrors(t *testing.T) {
	long := strings.Repeat("1 0:1\n", 16) + "3 4:1 5:2 12:x\n"
	for in, msg := range map[string]string{
		long: `ap.dat:17: entry 3 "12:x": count is not an integer`,
		"1 0:1\n0\n1 2:1\n0\n5 1:1 2:1 3:1 4:1\n": `ap.dat:5: says 5 distinct terms but lists 4`,
		"0 1:1\n":                    `ap.dat:1: says 0 distinct terms but lists 1`,
		"2 1:1\n":                    `ap.dat:1: says 2 distinct terms but lists 1`,
		"1 0:1\n3 7:1 2:2 7:3\n":     `ap.dat:2: entry 3 "7:3": term 7 appears twice (first as entry 1)`,
		"1 0:1\n1 0:1\n2 4:1 5:0":    `ap.dat:3: entry 2 "5:0": count 0, want a positive count`,
		"1 3:-2\n":                   `ap.dat:1: entry 1 "3:-2": count -2, want a positive count`,
		"1 -1:1\n":                   `ap.dat:1: entry 1 "-1:1": term id -1, want a non-negative term id`,
		"1 x:1\n":                    `ap.dat:1: entry 1 "x:1": term id is not an integer`,
		"1 :1\n":                     `ap.dat:1: entry 1 ":1": term id is not an integer`,
		"1 1.5:1\n":                  `ap.dat:1: entry 1 "1.5:1": term id is not an integer`,
		"1 3:\n":                     `ap.dat:1: entry 1 "3:": count is not an integer`,
		"1 3:1:2\n":                  `ap.dat:1: entry 1 "3:1:2": count is not an integer`,
		"1 3\n":                      `ap.dat:1: entry 1 "3": want id:count`,
		"2 3 :1\n":                   `ap.dat:1: entry 1 "3": want id:count`,
		"1 2147483647:1\n":           `ap.dat:1: entry 1 "2147483647:1": term id 2147483647 is too large (at most 2147483646)`,
		"1 99999999999999999999:1\n": `ap.dat:1: entry 1 "99999999999999999999:1": term id is too large`,
		"1 1:99999999999999999999\n": `ap.dat:1: entry 1 "1:99999999999999999999": count is too large`,
		"1 1:9223372036854775807\n":  `ap.dat:1: entry 1 "1:9223372036854775807": count 9223372036854775807 is too large (at most 9007199254740992)`,
		"x 1:1\n":                    `ap.dat:1: number of terms "x" is not an integer`,
		"1:1\n":                      `ap.dat:1: number of terms "1:1" is not an integer`,
		"-1\n":                       `ap.dat:1: number of terms -1 is negative`,
		"99999999999999999999\n":     `ap.dat:1: number of terms "99999999999999999999" is too large`,
		"1 0:1\n\n1 0:1\n":           `ap.dat:2: blank line before the last document (an empty document is the line "0")`,
		"\n0\n":                      `ap.dat:1: blank line before the last document (an empty document is the line "0")`,
		"0\n\n \n0\n":                `ap.dat:2: blank line before the last document (an empty document is the line "0")`,
	} {
		_, err := ReadLDAC(strings.NewReader(in), "ap.dat")
		wantErr(t, err, msg)
	}
	_, err := ReadLDAC(strings.NewReader("1 x:1\n"), "")
	wantErr(t, err, `line 1: entry 1 "x:1": term id is not an integer`)

	_, err = ReadLDAC(errReader{}, "ap.dat")
	if err == nil || !errors.Is(err, errBroken) || !strings.HasPrefix(err.Error(), "ap.dat:1: reading: ") {
		t.Errorf("reader error not passed on: %v", err)
	}
}

func TestReadLDACFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "small.dat")
	if err := os.WriteFile(path, []byte("2 0:1 4:2\n0\n1 3:x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadLDACFile(path)
	wantErr(t, err, path+`:3: entry 1 "3:x": count is not an integer`)
	if err := os.WriteFile(path, []byte("2 0:1 4:2\n0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	docs, err := ReadLDACFile(path)
	if err != nil || !reflect.DeepEqual(docs, [][][2]int{{{1, 1}, {5, 2}}, {}}) {
		t.Errorf("ReadLDACFile = %v, %v", docs, err)
	}
	if _, err := ReadLDACFile(filepath.Join(t.TempDir(), "missing.dat")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestWriteLDAC(t *testing.T) {
	var b bytes.Buffer
	docs := [][][2]int{{{1, 2}, {6, 1}, {3, 4}}, {}, nil, {{10, 3}}}
	if err := WriteLDAC(&b, docs); err != nil {
		t.Fatal(err)
	}
	if want := "3 0:2 5:1 2:4\n0\n0\n1 9:3\n"; b.String() != want {
		t.Errorf("WriteLDAC wrote %q, want %q", b.String(), want)
	}
	b.Reset()
	if err := WriteLDAC(&b, nil); err != nil || b.Len() != 0 {
		t.Errorf("no documents: wrote %q, %v", b.String(), err)
	}
	for msg, docs := range map[string][][][2]int{
		`document 2: entry 1 has term 0, want a term in 1..2147483647`:          {{{1, 1}}, {{0, 1}}},
		`document 1: entry 2 has term 2147483648, want a term in 1..2147483647`: {{{1, 1}, {1 << 31, 1}}},
		`document 1: entry 1 has count 0, want a positive count`:                {{{3, 0}}},
		`document 3: entry 3 repeats term 4 (first as entry 1)`:                 {{}, {}, {{4, 1}, {2, 1}, {4, 2}}},
	} {
		wantErr(t, WriteLDAC(&b, docs), msg)
	}
	if err := WriteLDAC(failWriter{}, docs); !errors.Is(err, errBroken) {
		t.Errorf("writer error not passed on: %v", err)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errBroken }

func TestLDACRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	docs := make([][][2]int, 300)
	for d := range docs {
		n := rng.IntN(40)
		if d%7 == 0 {
			n = 0
		}
		if d == 5 {
			n = 5000 // a long line
		}
		terms := rng.Perm(20000)[:n]
		docs[d] = make([][2]int, n)
		for k, term := range terms {
			docs[d][k] = [2]int{term + 1, 1 + rng.IntN(3)*rng.IntN(50)}
		}
	}
	docs[1] = [][2]int{{maxLDACID + 1, 1 << 40}, {1, 1}}
	var b bytes.Buffer
	if err := WriteLDAC(&b, docs); err != nil {
		t.Fatal(err)
	}
	got, err := ReadLDAC(&b, "round.dat")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, docs) {
		t.Errorf("round trip changed the documents")
	}
}

func TestMaxTerm(t *testing.T) {
	for _, c := range []struct {
		docs [][][2]int
		want int
	}{
		{nil, 0},
		{[][][2]int{{}, {}}, 0},
		{[][][2]int{{{3, 1}, {17, 2}}, {}, {{5, 9}}}, 17},
		{[][][2]int{{{1, 1}}}, 1},
	} {
		if got := MaxTerm(c.docs); got != c.want {
			t.Errorf("MaxTerm(%v) = %d, want %d", c.docs, got, c.want)
		}
	}
}

// TestReadLDACAP reads the AP corpus and checks the facts its README states.
func TestReadLDACAP(t *testing.T) {
	path := filepath.Join("..", "..", "shared", "data", "ap", "ap.dat")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("AP data not available (%v)", err)
	}
	docs, err := ReadLDACFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 2246 {
		t.Errorf("%d documents, want 2246", len(docs))
	}
	tokens, lo, hi := 0, -1, 0
	for _, doc := range docs {
		n := 0
		for _, p := range doc {
			n += p[1]
		}
		tokens += n
		if lo < 0 || n < lo {
			lo = n
		}
		hi = max(hi, n)
	}
	if tokens != 435838 {
		t.Errorf("%d tokens, want 435838", tokens)
	}
	if lo != 2 || hi != 620 {
		t.Errorf("%d to %d tokens per document, want 2 to 620", lo, hi)
	}
	if m := MaxTerm(docs); m != 10473 {
		t.Errorf("MaxTerm = %d, want 10473", m)
	}

	// Each document has as many pairs as the M at the start of its line,
	// counted here without ReadLDAC.
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	i := 0
	for ; sc.Scan(); i++ {
		first, _, _ := strings.Cut(sc.Text(), " ")
		m, err := strconv.Atoi(first)
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if i < len(docs) && len(docs[i]) != m {
			t.Errorf("document %d has %d pairs, its line says %d", i+1, len(docs[i]), m)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if i != len(docs) {
		t.Errorf("%d lines, %d documents", i, len(docs))
	}

	// Writing reproduces the file byte for byte.
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteLDAC(&b, docs); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), raw) {
		t.Errorf("WriteLDAC does not reproduce %s", path)
	}
}

func FuzzReadLDAC(f *testing.F) {
	for _, s := range []string{
		"3 0:2 5:1 2:4\n0\n1 9:3\n",
		"0\n",
		"",
		"\n\n",
		"1 0:1\r\n0\r\n",
		"2 7:1 7:2\n",
		"1 -1:1\n",
		"1 3:0\n",
		"1 2147483646:9223372036854775807\n",
		"1 0:1\n\n1 0:1\n",
		"\ufeff1 +4:01\n",
		"2 1:1\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		docs, err := ReadLDAC(bytes.NewReader(in), "fuzz.dat")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.dat:") {
				t.Fatalf("error without file and line: %v", err)
			}
			return
		}
		var b bytes.Buffer
		if err := WriteLDAC(&b, docs); err != nil {
			t.Fatalf("WriteLDAC(ReadLDAC(%q)): %v", in, err)
		}
		again, err := ReadLDAC(&b, "again.dat")
		if err != nil {
			t.Fatalf("reading back %q: %v", b.String(), err)
		}
		if !reflect.DeepEqual(again, docs) {
			t.Fatalf("round trip of %q: %v, then %v", in, docs, again)
		}
	})
}
