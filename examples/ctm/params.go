package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
)

// bundledParams is testdata/ap-k10.json.gz: CTM parameters with K = 10
// topics over the 10,473-term AP vocabulary (see testdata/README.md).
// Embedded, so that the command finds them from any directory.
//
//go:embed testdata/ap-k10.json.gz
var bundledParams []byte

// bundledParamsName names bundledParams in messages.
const bundledParamsName = "testdata/ap-k10.json.gz"

// apParams is fixed CTM parameters (topics β, logistic-normal μ0 and Σ0),
// dense.
type apParams struct {
	K, V   int
	Beta   [][]float64 // K × V, rows sum to 1
	Mu0    []float64   // K
	Sigma0 [][]float64 // K × K
	// written: the file was written by this command's fit mode (-save).
	written bool
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
	// A fitted model written by -save has the full β instead of floor
	// and top, and says who wrote it.
	Beta      [][]float64 `json:"beta"`
	WrittenBy string      `json:"written_by"`
}

// readParamsFile reads parameters in the schema of testdata/README.md from
// path, gzip-compressed or not.
func readParamsFile(path string) (*apParams, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readParams(f, path)
}

// loadBundledParams returns the embedded parameters (bundledParams).
func loadBundledParams() (*apParams, error) {
	return readParams(bytes.NewReader(bundledParams), bundledParamsName)
}

// readParams reads parameters in the schema of testdata/README.md,
// gzip-compressed (recognized by its magic number) or plain JSON, and
// expands the topics into dense rows: beta[k][v] is the probability listed
// for term v+1 in top[k], else floor[k]. name is used in error messages.
//
// It checks the sizes, that term ids are in 1..V and not repeated, and that
// every number is finite; whether the rows of beta sum to 1 and Σ0 is
// positive definite the generated package checks (ctm.NewModel).
func readParams(r io.Reader, name string) (*apParams, error) {
	br := bufio.NewReader(r)
	var in io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		defer zr.Close()
		in = zr
	}
	var pf apParamsFile
	if err := json.NewDecoder(in).Decode(&pf); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	K, V := pf.K, pf.V
	if pf.Beta != nil && pf.Floor == nil && pf.Top == nil {
		// the full form: floor 0 and every term listed
		pf.Floor = make([]float64, len(pf.Beta))
		pf.Top = make([][][2]float64, len(pf.Beta))
		for k, row := range pf.Beta {
			if len(row) != V {
				return nil, fmt.Errorf("%s: beta row %d has %d entries, want V = %d", name, k+1, len(row), V)
			}
			for v, x := range row {
				pf.Top[k] = append(pf.Top[k], [2]float64{float64(v + 1), x})
			}
		}
	}
	if K < 1 || V < 1 || len(pf.Floor) != K || len(pf.Top) != K || len(pf.Mu0) != K || len(pf.Sigma0) != K {
		return nil, fmt.Errorf("%s: inconsistent sizes (K=%d, V=%d, floor %d, top %d, mu0 %d, Sigma0 %d)",
			name, K, V, len(pf.Floor), len(pf.Top), len(pf.Mu0), len(pf.Sigma0))
	}
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	p := &apParams{K: K, V: V, Beta: make([][]float64, K), Mu0: pf.Mu0, Sigma0: pf.Sigma0, written: pf.WrittenBy == modelMarker}
	for k := range K {
		if !finite(pf.Floor[k]) || !finite(pf.Mu0[k]) {
			return nil, fmt.Errorf("%s: topic %d: floor %v, mu0 %v: want finite numbers", name, k+1, pf.Floor[k], pf.Mu0[k])
		}
		row := make([]float64, V)
		for v := range row {
			row[v] = pf.Floor[k]
		}
		seen := make(map[int]bool, len(pf.Top[k]))
		for _, e := range pf.Top[k] {
			id := int(e[0])
			if float64(id) != e[0] || id < 1 || id > V || seen[id] {
				return nil, fmt.Errorf("%s: topic %d: bad or repeated term id %v (want 1..%d)", name, k+1, e[0], V)
			}
			if !finite(e[1]) {
				return nil, fmt.Errorf("%s: topic %d: term %d has probability %v", name, k+1, id, e[1])
			}
			seen[id] = true
			row[id-1] = e[1]
		}
		p.Beta[k] = row
		if len(pf.Sigma0[k]) != K {
			return nil, fmt.Errorf("%s: Sigma0 row %d has %d entries, want %d", name, k+1, len(pf.Sigma0[k]), K)
		}
		for j, x := range pf.Sigma0[k] {
			if !finite(x) {
				return nil, fmt.Errorf("%s: Sigma0[%d][%d] = %v", name, k+1, j+1, x)
			}
		}
	}
	return p, nil
}
