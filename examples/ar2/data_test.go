package main

import (
	"bytes"
	"testing"

	"github.com/vigen-go/vigen/examples/ar2/ar2"
	"github.com/vigen-go/vigen/examples/internal/bundled"
)

// TestBundledData: data.json is the synthetic series the command fits by
// default, and it loads.
func TestBundledData(t *testing.T) {
	b := bundled.Check(t, "data.json", Synthetic(1, 200, DefaultTruth))
	if _, err := ar2.LoadData(bytes.NewReader(b)); err != nil {
		t.Fatal(err)
	}
}
