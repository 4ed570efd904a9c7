package main

import (
	"context"
	"fmt"
	"testing"

	"github.com/vigen-go/vigen/examples/lda/lda"
	"github.com/vigen-go/vigen/runtime"
)

// apTrain reads the AP training documents (skipping without ../shared).
func apTrain(b *testing.B) [][][2]int {
	docs, err := runtime.ReadLDACFile(sharedData(b, "ap/ap-train.dat"))
	if err != nil {
		b.Fatal(err)
	}
	return docs
}

// BenchmarkSVIStep times SVI minibatch steps on the 1,797 AP training
// documents: one pass of eight steps of 256 documents (the last 5), each
// fitting its documents' q(θ_d), q(z_d) to LocalTol against the current
// topics and then taking the natural-gradient step of all K × 10,473 topic
// parameters and their E[log β], and the ELBO of the pass. The start is
// the documents-seeded topics of the lda command. It reports documents per
// second and the time per step; BenchmarkBatchIteration is the baseline
// per document.
func BenchmarkSVIStep(b *testing.B) {
	docs := apTrain(b)
	for _, K := range []int{10, 50} {
		b.Run(fmt.Sprintf("K=%d", K), func(b *testing.B) {
			benchFit(b, docs, K, lda.Options{Algorithm: "svi", SVI: runtime.SVISettings{BatchSize: 256, Passes: 1}})
			steps := (len(docs) + 255) / 256
			b.ReportMetric(b.Elapsed().Seconds()*1e3/float64(b.N*steps), "ms/step")
		})
	}
}

// BenchmarkBatchIteration times one iteration of batch coordinate ascent
// on the 1,797 AP training documents from the same start: every document's
// local factors fitted to LocalTol, the topics updated, and the ELBO.
func BenchmarkBatchIteration(b *testing.B) {
	docs := apTrain(b)
	for _, K := range []int{10, 50} {
		b.Run(fmt.Sprintf("K=%d", K), func(b *testing.B) {
			benchFit(b, docs, K, lda.Options{MaxIter: 1})
		})
	}
}

func benchFit(b *testing.B, docs [][][2]int, K int, opts lda.Options) {
	data := &lda.Data{K: K, V: 10473, W: docs}
	m, err := lda.NewModel(data)
	if err != nil {
		b.Fatal(err)
	}
	if opts.Start, err = DocumentStart(data); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		r, err := m.Fit(context.Background(), opts)
		if err != nil || r.Iterations != 1 {
			b.Fatalf("%v %v", err, r.Status)
		}
	}
	b.ReportMetric(float64(len(docs))*float64(b.N)/b.Elapsed().Seconds(), "docs/s")
}
