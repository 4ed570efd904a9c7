package main

import (
	"bytes"
	"testing"

	"github.com/vigen-go/vigen/examples/eightschools/centred"
	"github.com/vigen-go/vigen/examples/eightschools/eightschools"
	"github.com/vigen-go/vigen/examples/internal/bundled"
)

// TestBundledData: data.json is Rubin's data, which the command fits by
// default, and both models load it.
func TestBundledData(t *testing.T) {
	b := bundled.Check(t, "data.json", Schools())
	if _, err := eightschools.LoadData(bytes.NewReader(b)); err != nil {
		t.Fatal(err)
	}
	if _, err := centred.LoadData(bytes.NewReader(b)); err != nil {
		t.Fatal(err)
	}
}
