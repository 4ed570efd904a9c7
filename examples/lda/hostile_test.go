package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/examples/internal/datatest"
	"github.com/vigen-go/vigen/examples/lda/lda"
)

// raw writes JSON as it is.
func raw(s string) json.RawMessage { return json.RawMessage(s) }

// hostile are edits of data.json that LoadData must refuse, with the error
// it must give. They crashed the fit (K), fitted the wrong data (D), read
// wrong numbers (w) or fitted to not_finite (alpha, eta) before.
var hostile = []struct {
	name string
	set  map[string]any
	want string
}{
	{"K huge", map[string]any{"K": raw("1e12")}, `size "K" = 1000000000000: the fit would allocate `},
	{"V huge", map[string]any{"V": raw("1e15")}, `size "V" = 1000000000000000: the fit would allocate `},
	{"K and V huge", map[string]any{"K": 1 << 40, "V": 1 << 40}, `size "K" = 1099511627776: the fit would allocate `},
	{"D zero", map[string]any{"D": 0}, `size "D": "D" is 0 but "w" has 300 entries`},
	{"K zero", map[string]any{"K": 0}, `size "K" = 0: it is the length of the simplex theta (lda.vi:14:8), which must be at least 1`},
	{"term 1e300", map[string]any{"w": raw("[[[1e300, 1]]]"), "D": nil}, `data "w"[1]: entry 1: term: 1e300 is too large to be read exactly as an integer`},
	{"count 2^63-1", map[string]any{"w": raw("[[[2, 9223372036854775807]]]"), "D": nil}, `data "w"[1]: entry 1: count: 9223372036854775807 is too large to be read exactly as an integer`},
	{"null term", map[string]any{"w": raw("[[[1, 1]], [[null, 1]]]"), "D": nil}, `data "w"[2]: entry 1: term: expected a number, got null`},
	{"null count", map[string]any{"w": raw("[[[1, null]]]"), "D": nil}, `data "w"[1]: entry 1: count: expected a number, got null`},
	{"alpha negative", map[string]any{"alpha": -1}, `const "alpha" = -1: it is the alpha of Dirichlet at lda.vi:21:24, which must be > 0`},
	{"eta zero", map[string]any{"eta": 0}, `const "eta" = 0: it is the alpha of Dirichlet at lda.vi:18:23, which must be > 0`},
}

// TestHostileData: each hostile edit of data.json is an error naming the
// size or variable.
func TestHostileData(t *testing.T) {
	for _, c := range hostile {
		_, err := lda.LoadData(bytes.NewReader(datatest.Edit(t, "data.json", c.set)))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: error %v,\nwant one starting %s", c.name, err, c.want)
		}
	}
	// Go users leave a size at 0 to have it inferred.
	d, err := lda.LoadData(bytes.NewReader(datatest.Edit(t, "data.json", map[string]any{"D": nil})))
	if err != nil {
		t.Fatal(err)
	}
	d.D = 0
	if _, err := lda.NewModel(d); err != nil {
		t.Errorf("D = 0 in a Data built in Go: %v", err)
	}
}

// TestEndlessData: -data /dev/zero is an error at once, not a hang.
func TestEndlessData(t *testing.T) {
	z := &datatest.Endless{}
	_, err := lda.LoadData(z)
	if err == nil || errors.Is(err, datatest.ErrTooFar) || !strings.HasPrefix(err.Error(), "data: invalid JSON at line 1, column 1") {
		t.Errorf("error %v", err)
	}
}

// FuzzLoadData: no input makes LoadData panic; it returns an error naming
// a size, a variable or the document, or data that one iteration of Fit
// accepts, allocating a bounded amount (datatest.Fuzz).
func FuzzLoadData(f *testing.F) {
	edits := make([]map[string]any, len(hostile))
	for k, c := range hostile {
		edits[k] = c.set
	}
	datatest.Seed(f, "data.json", edits,
		`{"K": 2, "V": 3, "w": [[[1, 2]], [[3, 1]]]}`,
		`{"K": 2, "V": 3, "D": 0, "w": []}`,
		`{"K": 100000, "V": 100000, "w": [[[1, 1]]]}`,
		`{"K": 2, "w": [[[1, 2]]], "alpha": 1e308, "eta": 1e-308}`,
		`{"K": 2, "V": 2, "w": [[[1, 2], [1, 3]]]}`,
	)
	f.Fuzz(func(t *testing.T, b []byte) {
		datatest.Fuzz(t, b, func(b []byte) (func() error, error) {
			d, err := lda.LoadData(bytes.NewReader(b))
			return func() error {
				_, err := lda.Fit(context.Background(), d, lda.Options{MaxIter: 1, LocalMaxIter: 2, Workers: 1})
				return err
			}, err
		})
	})
}
