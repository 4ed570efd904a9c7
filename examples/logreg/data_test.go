package main

import (
	"bytes"
	"testing"

	"github.com/vigen-go/vigen/examples/internal/bundled"
	"github.com/vigen-go/vigen/examples/logreg/logreg"
)

// TestBundledData: data.json is the synthetic data the command fits by
// default, and it loads.
func TestBundledData(t *testing.T) {
	d, _ := Synthetic(1, 500, 4)
	d.N, d.P = 500, 4
	b := bundled.Check(t, "data.json", d)
	if _, err := logreg.LoadData(bytes.NewReader(b)); err != nil {
		t.Fatal(err)
	}
}
