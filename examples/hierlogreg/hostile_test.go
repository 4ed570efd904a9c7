package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/examples/hierlogreg/hierlogreg"
	"github.com/vigen-go/vigen/examples/internal/datatest"
)

// TestHostileData: edits of data.json that crashed the fit (M huge: out of
// memory), fitted the wrong data (N = 0) or fitted to not_finite (nu) are
// errors naming the size or the constant.
func TestHostileData(t *testing.T) {
	for _, c := range []struct {
		name string
		set  map[string]any
		want string
	}{
		{"M huge", map[string]any{"M": int64(1e12)}, `size "M" = 1000000000000: the fit would allocate `},
		{"N zero", map[string]any{"N": 0}, `size "N": "N" is 0 but "x" has 2953 entries`},
		{"nu zero", map[string]any{"nu": 0}, `const "nu" = 0: it is the dof of Wishart at hierlogreg.vi:18:19, which must be > P − 1 = 2`},
		{"nu at P - 1", map[string]any{"nu": 2}, `const "nu" = 2: it is the dof of Wishart at hierlogreg.vi:18:19, which must be > P − 1 = 2`},
		{"Phi0 not SPD", map[string]any{"Phi0": [][]float64{{1, 0, 0}, {0, -1, 0}, {0, 0, 1}}}, `data "Phi0": not positive definite`},
	} {
		_, err := hierlogreg.LoadData(bytes.NewReader(datatest.Edit(t, "data.json", c.set)))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: error %v,\nwant one starting %s", c.name, err, c.want)
		}
	}
	if _, err := hierlogreg.LoadData(bytes.NewReader(datatest.Edit(t, "data.json", map[string]any{"nu": 2.5}))); err != nil {
		t.Errorf("nu = 2.5 > P − 1: %v", err)
	}
}
