package main

import (
	"bytes"
	"testing"

	"github.com/vigen-go/vigen/examples/hlm/hlm"
	"github.com/vigen-go/vigen/examples/internal/bundled"
)

// TestBundledData: data.json is the synthetic data the command fits by
// default, and it loads.
func TestBundledData(t *testing.T) {
	d, _ := Synthetic(1, 200, 20, 100)
	b := bundled.Check(t, "data.json", d)
	if _, err := hlm.LoadData(bytes.NewReader(b)); err != nil {
		t.Fatal(err)
	}
}
