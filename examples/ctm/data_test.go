package main

import (
	"bytes"
	"testing"

	"github.com/vigen-go/vigen/examples/ctm/ctm"
	"github.com/vigen-go/vigen/examples/internal/bundled"
)

// TestBundledData: data.json is a small corpus for `vigen run` to fit by
// variational EM (the command's default, 100 documents over AP's 10,473
// terms, would need β in the file to be quick): 150 documents drawn by
// Synthetic from a CTM with K = 3 topics over V = 24 terms, each topic
// peaked on its own block of 8 terms, and correlated topic proportions.
func TestBundledData(t *testing.T) {
	p := &apParams{K: 3, V: 24, Mu0: []float64{0, 0, 0},
		Sigma0: [][]float64{{1, 0.6, -0.4}, {0.6, 1, -0.2}, {-0.4, -0.2, 1}}}
	for k := range p.K {
		row := make([]float64, p.V)
		for v := range row {
			row[v] = 0.1 / float64(p.V)
			if v/8 == k {
				row[v] += 0.9 / 8
			}
		}
		p.Beta = append(p.Beta, row)
	}
	docs, _, err := Synthetic(p, 1, 150)
	if err != nil {
		t.Fatal(err)
	}
	d := &ctm.Data{D: len(docs), K: p.K, V: p.V, W: docs}
	b := bundled.Check(t, "data.json", d)
	if _, err := ctm.LoadData(bytes.NewReader(b)); err != nil {
		t.Fatal(err)
	}
}
