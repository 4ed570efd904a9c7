package main

import (
	"bytes"
	"testing"

	"github.com/vigen-go/vigen/examples/internal/bundled"
	"github.com/vigen-go/vigen/examples/tempering/gmm"
	"github.com/vigen-go/vigen/examples/tempering/gmmsigma"
	"github.com/vigen-go/vigen/runtime"
)

// TestBundledData: data.json is the synthetic mixture of the gmm
// experiment, and both models load it.
func TestBundledData(t *testing.T) {
	md := syntheticMixture(400, 1)
	b := bundled.Check(t, "data.json", map[string]any{"K": md.k, "y": md.y})
	if _, err := gmm.LoadData(bytes.NewReader(b)); err != nil {
		t.Fatal(err)
	}
	if _, err := gmmsigma.LoadData(bytes.NewReader(b)); err != nil {
		t.Fatal(err)
	}
	// vt.json: variational tempering of gmmsigma.vi on data.json, for
	// vigen run -temper
	grid := expGrid(30, 10)
	bundled.Check(t, "vt.json", runtime.TemperSettings{Mode: "global", Grid: grid, LogC: gmmSigmaLogC(grid, len(md.y), md.k, 1, md.sigma)})
	if _, err := runtime.ReadTemperSettings("vt.json"); err != nil {
		t.Fatal(err)
	}
}
