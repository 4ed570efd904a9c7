package main

import (
	"bytes"
	"testing"

	"github.com/vigen-go/vigen/examples/internal/bundled"
	"github.com/vigen-go/vigen/examples/pumps/pumps"
)

// TestBundledData: data.json is the BUGS manual's data, which the command
// fits by default, and it loads.
func TestBundledData(t *testing.T) {
	b := bundled.Check(t, "data.json", Pumps())
	if _, err := pumps.LoadData(bytes.NewReader(b)); err != nil {
		t.Fatal(err)
	}
}
