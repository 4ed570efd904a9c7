package ctmexample

import (
	"compress/gzip"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// apParams is the fixed CTM parameters fitted to AP (testdata/ap-k10.json.gz).
type apParams struct {
	K, V   int
	Beta   [][]float64 // K × V, rows sum to 1
	Mu0    []float64   // K
	Sigma0 [][]float64 // K × K
}

// apParamsFile is the on-disk form written by testdata/mkparams.go; see
// testdata/README.md. Term ids in Top are 1-based.
type apParamsFile struct {
	K      int            `json:"K"`
	V      int            `json:"V"`
	Source string         `json:"source"`
	Floor  []float64      `json:"floor"`
	Top    [][][2]float64 `json:"top"`
	Mu0    []float64      `json:"mu0"`
	Sigma0 [][]float64    `json:"Sigma0"`
}

// loadAPParams reads and expands testdata/ap-k10.json.gz into dense beta rows (K × V).
func loadAPParams(t testing.TB) *apParams {
	t.Helper()
	path := filepath.Join("testdata", "ap-k10.json.gz")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var pf apParamsFile
	if err := json.NewDecoder(zr).Decode(&pf); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	K, V := pf.K, pf.V
	if K < 1 || V < 1 || len(pf.Floor) != K || len(pf.Top) != K || len(pf.Mu0) != K || len(pf.Sigma0) != K {
		t.Fatalf("%s: inconsistent sizes (K=%d, V=%d, floor %d, top %d, mu0 %d, Sigma0 %d)",
			path, K, V, len(pf.Floor), len(pf.Top), len(pf.Mu0), len(pf.Sigma0))
	}
	p := &apParams{K: K, V: V, Beta: make([][]float64, K), Mu0: pf.Mu0, Sigma0: pf.Sigma0}
	for k := range K {
		row := make([]float64, V)
		for v := range row {
			row[v] = pf.Floor[k]
		}
		seen := make(map[int]bool, len(pf.Top[k]))
		for _, e := range pf.Top[k] {
			id := int(e[0])
			if float64(id) != e[0] || id < 1 || id > V || seen[id] {
				t.Fatalf("%s: topic %d: bad or repeated term id %v", path, k, e[0])
			}
			seen[id] = true
			row[id-1] = e[1]
		}
		p.Beta[k] = row
		if len(pf.Sigma0[k]) != K {
			t.Fatalf("%s: Sigma0 row %d has %d entries, want %d", path, k, len(pf.Sigma0[k]), K)
		}
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
