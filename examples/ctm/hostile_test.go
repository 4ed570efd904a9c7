package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/examples/ctm/ctm"
	"github.com/vigen-go/vigen/examples/internal/datatest"
)

// hostile are edits of data.json that LoadData must refuse, with the start
// of the error it must give. V huge crashed the fit before (makeslice), and
// K zero made it loop forever.
var hostile = []struct {
	name string
	set  map[string]any
	want string
}{
	{"V huge", map[string]any{"V": json.RawMessage("1e12")}, `size "V" = 1000000000000: the fit would allocate `},
	{"K huge", map[string]any{"K": 1 << 31}, `size "K" = 2147483648: the fit would allocate `},
	{"K zero", map[string]any{"K": 0}, `size "K" = 0: it bounds the values 1..K of the latent z (ctm.vi:10:8), which must be at least 1`},
	{"D zero", map[string]any{"D": 0}, `size "D": "D" is 0 but "w" has 150 entries`},
	{"null term", map[string]any{"w": json.RawMessage("[[[null, 1]]]"), "D": nil}, `data "w"[1]: entry 1: term: expected a number, got null`},
	{"Sigma0 not SPD", map[string]any{"Sigma0": [][]float64{{1, 2, 0}, {2, 1, 0}, {0, 0, 1}}}, `data "Sigma0": not positive definite`},
}

// TestHostileData: each hostile edit of data.json is an error naming the
// size or variable.
func TestHostileData(t *testing.T) {
	for _, c := range hostile {
		_, err := ctm.LoadData(bytes.NewReader(datatest.Edit(t, "data.json", c.set)))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: error %v,\nwant one starting %s", c.name, err, c.want)
		}
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
		`{"K": 1, "V": 1, "w": [[[1, 1]]], "mu0": [0], "Sigma0": [[1]], "beta": [[1]]}`,
		`{"K": 2, "V": 2, "w": [[[1, 1]]], "mu0": [1e308, -1e308], "Sigma0": [[1e-300, 0], [0, 1e300]]}`,
		`{"K": 2, "V": 2, "w": [[[1, 1]]], "beta": [[0.5, 0.5], [1, 0]]}`,
	)
	f.Fuzz(func(t *testing.T, b []byte) {
		datatest.Fuzz(t, b, func(b []byte) (func() error, error) {
			d, err := ctm.LoadData(bytes.NewReader(b))
			return func() error {
				_, err := ctm.Fit(context.Background(), d, ctm.Options{MaxIter: 1, LocalMaxIter: 2, Workers: 1})
				return err
			}, err
		})
	})
}
