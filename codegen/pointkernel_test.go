package codegen

import (
	"bytes"
	"strings"
	"sync"
	"testing"

	"github.com/vigen-go/vigen/derive"
	"github.com/vigen-go/vigen/spec"
)

// TestManyPointStatementsSplit: a kernel of more point statements than
// one function holds (kernelChunk) is split into parts of kernelChunk/3
// statements, each evaluated once. It once recursed without end: the
// parts were cut from the outputs alone, and a kernel of point statements
// has none.
func TestManyPointStatementsSplit(t *testing.T) {
	const k = 150
	m, err := spec.Load("decls.vi", []byte(dataDeclsModel(k)))
	if err != nil {
		t.Fatal(err)
	}
	files, err := generateModel(m, Options{})
	if err != nil {
		t.Fatal(err)
	}
	src := string(files[0].Src)
	for _, want := range []string{"func (m *Model) sigmaFPart0(", "func (m *Model) sigmaFPart2(", "func (m *Model) sigmaTargetPart2("} {
		if !strings.Contains(src, want) {
			t.Errorf("the package lacks %s", want)
		}
	}
	if strings.Contains(src, "sigmaFPart3(") {
		t.Error("sigmaF has a fourth part: its 151 statements take three of 64")
	}
	// (mu's likelihoods are trees: their expectations over q(sigma) are
	// E[exp(linear)], exact, which a point term's Eq. 19 is not)
	if n := strings.Count(src, "~ Normal(mu, sigma)\n"); n < k {
		t.Errorf("%d likelihood blocks in the package, want at least %d", n, k)
	}
}

// TestGenerateConcurrently: generations from one Derivation may run at
// once (each grows its own copy of a point term's graph with the
// derivatives its kernels need), and give the same bytes.
func TestGenerateConcurrently(t *testing.T) {
	m, err := spec.Load("mixlit.vi", []byte(mixLiteralVI))
	if err != nil {
		t.Fatal(err)
	}
	d, err := derive.Derive(m)
	if err != nil {
		t.Fatal(err)
	}
	const n = 4
	out := make([][]File, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i], errs[i] = Generate(d, Options{Methods: []string{"delta"}})
		}()
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if !bytes.Equal(out[i][0].Src, out[0][0].Src) {
			t.Errorf("generation %d differs from the first", i)
		}
	}
}
