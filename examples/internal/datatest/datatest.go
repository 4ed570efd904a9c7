// Package datatest holds what the examples' tests of hostile data share:
// edits of a bundled data.json, an endless input like /dev/zero, and the
// property the fuzz targets over the generated LoadData assert.
package datatest

import (
	"encoding/json"
	"errors"
	"flag"
	"os"
	"regexp"
	"runtime"
	"testing"

	vrt "github.com/vigen-go/vigen/runtime"
)

// Edit reads the JSON object in the file path, replaces (or with a nil
// value deletes) the given keys, and returns the result. A value of type
// json.RawMessage is written as it is, so that inputs encoding/json would not
// produce (1e300, 9223372036854775807) can be written.
func Edit(t testing.TB, path string, set map[string]any) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return EditBytes(t, b, set)
}

// EditBytes is Edit on the JSON object b.
func EditBytes(t testing.TB, b []byte, set map[string]any) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for k, v := range set {
		var err error
		if v == nil {
			delete(m, k)
			continue
		}
		raw, ok := v.(json.RawMessage)
		if !ok {
			if raw, err = json.Marshal(v); err != nil {
				t.Fatal(err)
			}
		}
		m[k] = raw
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// ErrTooFar is what Endless returns once it has given Limit bytes: a reader
// that reads that much of an endless stream has failed to stop.
var ErrTooFar = errors.New("datatest: read 256 MiB of an endless stream")

// Endless is an endless stream of zero bytes, like /dev/zero, except that
// it fails with ErrTooFar after 256 MiB so that a test of a reader that
// never stops fails instead of hanging.
type Endless struct{ N int64 }

func (z *Endless) Read(p []byte) (int, error) {
	if z.N >= 256<<20 {
		return 0, ErrTooFar
	}
	clear(p)
	z.N += int64(len(p))
	return len(p), nil
}

// named matches the errors of LoadData and Fit that say what is wrong:
// naming a size, a variable, or the document itself ("data: invalid JSON
// at line 1, column 3: ...").
var named = regexp.MustCompile(`^((data|size|const|param) "[^"]+"|data: )`)

// NamesData reports whether err names the size or variable it is about, or
// is about the whole document.
func NamesData(err error) bool { return named.MatchString(err.Error()) }

// FitLimit is the memory limit the fuzz targets set (runtime.MaxFitBytes):
// small, so that every input that passes validation fits fast.
const FitLimit = 4 << 20

// Fuzz checks one fuzz input b: load (LoadData on b) must not panic; an
// error must name what it is about; data that load accepts must fit one
// short iteration (fit) without panicking, and LoadData and the fit
// together must allocate a bounded multiple of FitLimit and the input size.
func Fuzz(t *testing.T, b []byte, load func([]byte) (fit func() error, err error)) {
	defer func(old int64) { vrt.MaxFitBytes = old }(vrt.MaxFitBytes)
	vrt.MaxFitBytes = FitLimit
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fit, err := load(b)
	if err != nil {
		if !NamesData(err) {
			t.Fatalf("LoadData: the error does not name a size, a variable or the document: %v", err)
		}
		return
	}
	if err := fit(); err != nil && !NamesData(err) {
		t.Fatalf("Fit of data LoadData accepted: %v", err)
	}
	runtime.ReadMemStats(&after)
	// Fit allocates the arrays CheckAllocs counts (at most FitLimit) plus
	// per-update temporaries of the same shapes; decoding a few times the
	// input.
	if got, bound := after.TotalAlloc-before.TotalAlloc, uint64(64*FitLimit+64*len(b)); got > bound {
		t.Fatalf("LoadData and one iteration of Fit allocated %d bytes, more than %d", got, bound)
	}
}

// Seed adds the fuzz seeds of an example's FuzzLoadData: its bundled data
// file (unless fuzzing, see Fuzzing) and a 3-document cut of it, each also
// with every edit applied, then the literal inputs.
func Seed(f *testing.F, path string, edits []map[string]any, inputs ...string) {
	f.Helper()
	if !Fuzzing() {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		for _, e := range edits {
			f.Add(EditBytes(f, b, e))
		}
	}
	small := Small(f, path, 3)
	f.Add(small)
	for _, e := range edits {
		f.Add(EditBytes(f, small, e))
	}
	for _, s := range inputs {
		f.Add([]byte(s))
	}
}

// Fuzzing reports whether the test binary runs with -test.fuzz. Fuzz targets
// then leave out large seeds such as a whole data.json: the engine
// minimizes every input that finds new coverage, and minimizing a 40 kB
// document takes minutes.
func Fuzzing() bool {
	f := flag.Lookup("test.fuzz")
	return f != nil && f.Value.String() != ""
}

// Small returns the data in the file path with only the first n documents
// of the bag w (and no "D"), as a small seed for fuzzing.
func Small(t testing.TB, path string, n int) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var w []json.RawMessage
	if err := json.Unmarshal(m["w"], &w); err != nil {
		t.Fatal(err)
	}
	return Edit(t, path, map[string]any{"w": w[:min(n, len(w))], "D": nil})
}
