package main

import (
	"context"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/examples/ctm/ctm"
)

// The generated Fit rejects bad bag data and bad starting params before any
// work, naming the variable and the index.
func TestFitValidatesData(t *testing.T) {
	docs := [][][2]int{{{1, 2}, {3, 1}}, {{2, 1}}}
	for _, c := range []struct {
		name string
		data ctm.Data
		want string
	}{
		{"term id above V", ctm.Data{K: 2, V: 3, W: [][][2]int{{{1, 2}}, {{4, 1}}}}, `data "w"[2]: term 4 of entry 1 is outside 1..3`},
		{"term id 0", ctm.Data{K: 2, V: 3, W: [][][2]int{{{0, 1}}}}, `data "w"[1]: term 0 of entry 1 is outside 1..3`},
		{"negative count", ctm.Data{K: 2, V: 3, W: [][][2]int{{{1, 1}, {2, -3}}}}, `data "w"[1]: entry 2 has count -3`},
		{"empty document", ctm.Data{K: 2, V: 3, W: [][][2]int{{{1, 1}}, {}}}, `data "w"[2]: document 2 is empty`},
		{"Sigma0 indefinite", ctm.Data{K: 2, V: 3, W: docs, Sigma0: [][]float64{{1, 0}, {0, -1}}}, `"Sigma0": not positive definite: Cholesky pivot 2 is -1`},
		{"beta row not a simplex", ctm.Data{K: 2, V: 3, W: docs, Beta: [][]float64{{0.5, 0.5, 0}, {0.2, 0.2, 0.7}}}, `"beta"[2]: row sums to 1.1, not 1`},
		{"mu0 length", ctm.Data{K: 2, V: 3, W: docs, Mu0: []float64{0}}, `"mu0"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := ctm.Fit(context.Background(), &c.data, ctm.Options{MaxIter: 2})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %s", err, c.want)
			}
			if res != nil {
				t.Error("Fit returned a result along with the error")
			}
		})
	}
}
