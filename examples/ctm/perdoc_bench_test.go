package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vigen-go/vigen/examples/ctm/ctm"
)

// randomParams returns K topics over V terms drawn from a seeded symmetric
// Dirichlet(0.05) (sparse like fitted topics), μ0 = 0 and Σ0 = I: for
// timing per-document inference at K where no fitted parameters are
// stored.
func randomParams(K, V int) *apParams {
	r := rand.New(rand.NewPCG(uint64(K), 7))
	p := &apParams{K: K, V: V, Mu0: make([]float64, K), Sigma0: make([][]float64, K), Beta: make([][]float64, K)}
	for k := 0; k < K; k++ {
		p.Sigma0[k] = make([]float64, K)
		p.Sigma0[k][k] = 1
		row := make([]float64, V)
		s := 0.0
		for v := range row {
			// Gamma(0.05) by the exponent trick: U^(1/a)·Exp(1) (Kundu).
			g := r.ExpFloat64()
			u := r.Float64()
			x := g * pow(u, 1/0.05)
			row[v] = x + 1e-12
			s += row[v]
		}
		for v := range row {
			row[v] /= s
		}
		p.Beta[k] = row
	}
	return p
}

func pow(x, y float64) float64 {
	if x == 0 {
		return 0
	}
	return math.Exp(y * math.Log(x))
}

// BenchmarkPerDocumentInference times the generated per-document inference
// (θ_d by Laplace or delta, z_d in closed form, alternated to the default
// LocalTol, and to 1e-6) over the 449 AP test documents: K = 10 with the stored AP
// parameters, K = 50 with random sparse topics. It reports µs per document.
func BenchmarkPerDocumentInference(b *testing.B) {
	docs := readAPTest(b)
	for _, K := range []int{10, 50} {
		var p *apParams
		if K == 10 {
			p = loadAPParams(b)
		} else {
			p = randomParams(K, 10473)
		}
		data := &ctm.Data{K: p.K, V: p.V, W: docs, Beta: p.Beta, Mu0: p.Mu0, Sigma0: p.Sigma0}
		m, err := ctm.NewModel(data)
		if err != nil {
			b.Fatal(err)
		}
		for _, method := range []string{"laplace", "delta"} {
			for _, tol := range []float64{1e-6, 1e-8} {
				b.Run(fmt.Sprintf("K=%d/%s/LocalTol=%g", K, method, tol), func(b *testing.B) {
					var res *ctm.Result
					for i := 0; i < b.N; i++ {
						res, err = m.Fit(context.Background(), ctm.Options{Method: method, LocalTol: tol, FixParams: true})
						if err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(docs)), "µs/doc")
					b.ReportMetric(0, "ns/op")
					if res.Status != "converged" {
						b.Logf("status %q", res.Status)
					}
				})
			}
		}
	}
}
