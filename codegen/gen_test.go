package codegen

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/vigen-go/vigen/derive"
	"github.com/vigen-go/vigen/golden"
	"github.com/vigen-go/vigen/spec"
)

// Generate leaves its derivation as it was: generating an example's
// package from a derivation already used for another generation (with
// and without -kernels, as vigen gen's stale-file check does) gives the
// bytes a fresh derivation gives.
func TestGenerateReusesDerivation(t *testing.T) {
	golden.SlowTier(t)
	vis, _ := filepath.Glob(filepath.Join("..", "examples", "*", "*.vi"))
	if len(vis) == 0 {
		t.Fatal("no example models found")
	}
	for _, vi := range vis {
		src, err := os.ReadFile(vi)
		if err != nil {
			t.Fatal(err)
		}
		m, err := spec.Load(filepath.Base(vi), src)
		if err != nil {
			t.Fatal(err)
		}
		for _, kernels := range []bool{false, true} {
			fresh, err := derive.Derive(m)
			if err != nil {
				t.Fatal(err)
			}
			want, err := Generate(fresh, Options{KernelsOnly: kernels})
			if err != nil {
				t.Fatal(err)
			}
			d, err := derive.Derive(m)
			if err != nil {
				t.Fatal(err)
			}
			for _, first := range []bool{!kernels, kernels} {
				if _, err := Generate(d, Options{KernelsOnly: first}); err != nil {
					t.Fatal(err)
				}
			}
			got, err := Generate(d, Options{KernelsOnly: kernels})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got[0].Src, want[0].Src) {
				t.Errorf("%s (kernels only %v): a derivation used before generates other code than a fresh one", vi, kernels)
			}
		}
	}
}
