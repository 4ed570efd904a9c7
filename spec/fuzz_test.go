package spec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// seedModels adds every model source the repository holds to f's seed
// corpus: the examples, spec/testdata/good and spec/testdata/bad.
func seedModels(f *testing.F) {
	var n int
	for _, pat := range []string{
		filepath.Join("..", "examples", "*", "*.vi"),
		filepath.Join("testdata", "good", "*.vi"),
		filepath.Join("testdata", "bad", "*.vi"),
	} {
		files, _ := filepath.Glob(pat)
		for _, p := range files {
			src, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(src)
			n++
		}
	}
	if n < 40 {
		f.Fatalf("seed corpus has %d models; the examples and testdata should give more than 40", n)
	}
}

// FuzzLoad runs the parser and checker on arbitrary source. Whatever the
// input, Load must not panic, and must either return a model or an
// ErrorList whose every entry has a position inside the file, a message,
// and no trace of an internal failure. Loading is deterministic, and a
// parsable source formats to a fixed point of Format.
//
//	go test ./spec -run '^$' -fuzz '^FuzzLoad$' -fuzztime 5m
func FuzzLoad(f *testing.F) {
	seedModels(f)
	f.Fuzz(func(t *testing.T, src []byte) {
		if _, perr := Parse("fuzz.vi", src); perr == nil {
			// Formatting a parsable source succeeds and is a fixed point.
			out, err := Format("fuzz.vi", src)
			if err != nil {
				t.Fatalf("Format failed on a parsable source: %v", err)
			}
			if again, err := Format("fuzz.vi", out); err != nil || string(again) != string(out) {
				t.Fatalf("Format is not idempotent (%v):\n%q\n%q", err, out, again)
			}
		}
		m, err := Load("fuzz.vi", src)
		if err == nil {
			if m == nil {
				t.Fatal("Load returned neither a model nor an error")
			}
			return
		}
		list, ok := err.(ErrorList)
		if !ok || len(list) == 0 {
			t.Fatalf("error is %T (%d entries), want a non-empty ErrorList: %v", err, len(list), err)
		}
		lines := strings.Count(string(src), "\n") + 1
		for i, e := range list {
			if i > 0 && (list[i-1].Pos.Line > e.Pos.Line || list[i-1].Pos.Line == e.Pos.Line && list[i-1].Pos.Col > e.Pos.Col) {
				t.Errorf("errors not sorted by position: %v", list)
			}
			if e.Pos.File != "fuzz.vi" || e.Pos.Line < 1 || e.Pos.Line > lines || e.Pos.Col < 1 {
				t.Errorf("error outside the file (%d lines): %v", lines, e)
			}
			if strings.TrimSpace(e.Msg) == "" {
				t.Errorf("empty message at %v", e.Pos)
			}
			if strings.Contains(e.Msg, "runtime error") || strings.Contains(e.Msg, "internal") {
				t.Errorf("internal failure reported as a model error: %v", e)
			}
		}
		if _, err2 := Load("fuzz.vi", src); err2 == nil || err2.Error() != err.Error() {
			t.Errorf("a second Load differs:\n%v\nvs\n%v", err, err2)
		}
	})
}
