package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
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
	// logc.json: the grid and log C(T) of gmmsigma.vi on data.json, for
	// vigen run -temper global -logc, with the fingerprint of the model
	// and data they were computed for
	d, err := gmmsigma.LoadData(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	fp, err := gmmSigmaFingerprint(d)
	if err != nil {
		t.Fatal(err)
	}
	grid := expGrid(30, 10)
	bundled.Check(t, "logc.json", map[string]any{"grid": grid, "log_c": gmmSigmaLogC(grid, len(md.y), md.k, 1, md.sigma), "fingerprint": fp})
	s, err := runtime.TemperFromFlags("", "global", "logc.json")
	if err != nil {
		t.Fatal(err)
	}
	// the model is named by the sha256 of gmmsigma.vi, as vigen run and
	// the generated package's results name it
	src, err := os.ReadFile("gmmsigma.vi")
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(src); fp.Model != hex.EncodeToString(sum[:]) {
		t.Errorf("logc.json's fingerprint names the model %s, not gmmsigma.vi's sha256 %x", fp.Model, sum)
	}
	if err := s.CheckFingerprint("gmmsigma", &runtime.Fingerprint{Model: fp.Model, Data: fp.Data}); err != nil {
		t.Fatal(err)
	}
	if err := s.CheckModel("gmmsigma", fp.Model); err != nil {
		t.Fatal(err)
	}
}
