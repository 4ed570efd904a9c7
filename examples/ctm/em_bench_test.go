package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/vigen-go/vigen/examples/ctm/ctm"
	"github.com/vigen-go/vigen/runtime"
)

// warmAP fits K topics to the AP training documents for a few EM
// iterations and returns the model and the result, the warm state an EM
// iteration starts from.
func warmAP(b *testing.B, K int) (*ctm.Model, *ctm.Result) {
	path := apFile(b, "ap-train.dat")
	docs, err := runtime.ReadLDACFile(path)
	if err != nil {
		b.Fatal(err)
	}
	m, err := ctm.NewModel(&ctm.Data{K: K, V: 10473, W: docs, Beta: seedTopics(docs, K, 10473, 1)})
	if err != nil {
		b.Fatal(err)
	}
	res, err := m.Fit(context.Background(), ctm.Options{MaxIter: 5})
	if err != nil {
		b.Fatal(err)
	}
	return m, res
}

// BenchmarkEStep times the E-step of one EM iteration on the 1,797 AP
// training documents from a warm start (the state after five iterations):
// every document's q(θ_d), q(z_d) updated to LocalTol with the params
// fixed, on GOMAXPROCS goroutines, plus the ELBO. It reports documents per
// second.
func BenchmarkEStep(b *testing.B) {
	for _, K := range []int{10, 50} {
		b.Run(fmt.Sprintf("K=%d", K), func(b *testing.B) {
			m, warm := warmAP(b, K)
			opts := ctm.Options{MaxIter: 1, FixParams: true, Start: warm}
			b.ResetTimer()
			for b.Loop() {
				if _, err := m.Fit(context.Background(), opts); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(warm.Latent.Theta))*float64(b.N)/b.Elapsed().Seconds(), "docs/s")
		})
	}
}

// BenchmarkMStep times the M-step for β (expected counts over the
// 350,489 AP training tokens), μ0 and Σ0 (from the 1,797 documents' q(θ_d)),
// including copying the result into the variational state.
func BenchmarkMStep(b *testing.B) {
	for _, K := range []int{10, 50} {
		b.Run(fmt.Sprintf("K=%d", K), func(b *testing.B) {
			m, warm := warmAP(b, K)
			b.ResetTimer()
			for b.Loop() {
				if _, err := m.MStep(warm, ctm.Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// apFile returns the path of a file of the AP corpus in ../shared/data/ap,
// skipping the test or benchmark when it is absent.
func apFile(t testing.TB, name string) string {
	path := filepath.Join("..", "..", "..", "shared", "data", "ap", name)
	if _, err := os.Stat(path); err != nil {
		t.Skipf("AP corpus not available (%v); this needs ../shared", err)
	}
	return path
}
