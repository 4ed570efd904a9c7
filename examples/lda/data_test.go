package main

import (
	"bytes"
	"testing"

	"github.com/vigen-go/vigen/examples/internal/bundled"
	"github.com/vigen-go/vigen/examples/lda/lda"
)

// TestBundledData: data.json is the synthetic corpus the command fits by
// default (K = 5, lda.vi's α and η), and it loads.
func TestBundledData(t *testing.T) {
	d, _ := Synthetic(1, SyntheticDocs)
	d.K, d.D, d.V = 5, len(d.W), SyntheticV
	b := bundled.Check(t, "data.json", d)
	if _, err := lda.LoadData(bytes.NewReader(b)); err != nil {
		t.Fatal(err)
	}
}
