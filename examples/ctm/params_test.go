package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// loadAPParams reads and expands testdata/ap-k10.json.gz into dense beta rows (K × V).
func loadAPParams(t testing.TB) *apParams {
	t.Helper()
	p, err := readParamsFile(filepath.Join("testdata", "ap-k10.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestAPParamsAreValid(t *testing.T) {
	p := loadAPParams(t)
	if p.K != 10 || p.V != 10473 {
		t.Fatalf("K=%d V=%d, want K=10 V=10473", p.K, p.V)
	}
	if len(p.Beta) != p.K || len(p.Mu0) != p.K || len(p.Sigma0) != p.K {
		t.Fatalf("sizes: beta %d, mu0 %d, Sigma0 %d rows", len(p.Beta), len(p.Mu0), len(p.Sigma0))
	}
	for k, row := range p.Beta {
		if len(row) != p.V {
			t.Fatalf("beta row %d has %d entries, want %d", k, len(row), p.V)
		}
		s := 0.0
		for v, b := range row {
			if !(b > 0) || math.IsInf(b, 0) {
				t.Fatalf("beta[%d][%d] = %v, want > 0", k, v, b)
			}
			s += b
		}
		if math.Abs(s-1) > 1e-9 {
			t.Errorf("beta row %d sums to %.15g, want 1 within 1e-9", k, s)
		}
	}
	for i, m := range p.Mu0 {
		if math.IsNaN(m) || math.IsInf(m, 0) {
			t.Errorf("mu0[%d] = %v", i, m)
		}
	}
	sig := mat.NewSymDense(p.K, nil)
	for i := range p.K {
		if len(p.Sigma0[i]) != p.K {
			t.Fatalf("Sigma0 row %d has %d entries", i, len(p.Sigma0[i]))
		}
		for j := range p.K {
			if p.Sigma0[i][j] != p.Sigma0[j][i] {
				t.Errorf("Sigma0 not symmetric: [%d][%d]=%v, [%d][%d]=%v", i, j, p.Sigma0[i][j], j, i, p.Sigma0[j][i])
			}
			if j >= i {
				sig.SetSym(i, j, p.Sigma0[i][j])
			}
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(sig) {
		t.Errorf("Sigma0 is not positive definite")
	}
}

// The embedded parameters, which the command uses, are the file in testdata.
func TestBundledParamsAreTestdata(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "ap-k10.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, bundledParams) {
		t.Errorf("the embedded parameters (%d bytes) differ from testdata/ap-k10.json.gz (%d bytes)", len(bundledParams), len(b))
	}
}
