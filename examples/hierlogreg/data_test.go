package main

import (
	"bytes"
	"testing"

	"github.com/vigen-go/vigen/examples/hierlogreg/hierlogreg"
	"github.com/vigen-go/vigen/examples/internal/bundled"
)

// TestBundledData: data.json is the synthetic data the command fits by
// default, and it loads.
func TestBundledData(t *testing.T) {
	d, _ := Synthetic(1, 100, 3)
	d.N = len(d.Y)
	b := bundled.Check(t, "data.json", d)
	if _, err := hierlogreg.LoadData(bytes.NewReader(b)); err != nil {
		t.Fatal(err)
	}
}
