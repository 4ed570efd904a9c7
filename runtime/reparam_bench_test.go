package runtime

import (
	"math/rand/v2"
	"testing"
)

// ldaLikeLambda is the natural parameters of topics like LDA's on AP:
// most entries at η − 1 = −0.99, a few hundred per topic with counts.
func ldaLikeLambda(k, v int) []float64 {
	rng := rand.New(rand.NewPCG(1, 1))
	lam := make([]float64, k*v)
	for i := range lam {
		lam[i] = -0.99
		if rng.Float64() < 0.05 {
			lam[i] += rng.ExpFloat64() * 30
		}
	}
	return lam
}

func BenchmarkSSMFDirichletDraw(b *testing.B) {
	lam := ldaLikeLambda(50, 10473)
	gd := newGlobalDraw("Dirichlet", len(lam), 10473, true)
	for i := 0; i < b.N; i++ {
		gd.sample(lam, uint64(i), 1)
	}
}

func BenchmarkSSMFDirichletNatGrad(b *testing.B) {
	lam := ldaLikeLambda(50, 10473)
	gd := newGlobalDraw("Dirichlet", len(lam), 10473, true)
	gd.sample(lam, 1, 1)
	v := make([]float64, len(lam))
	for i := 0; i < b.N; i++ {
		for j := range v {
			v[j] = float64(j % 3)
		}
		gd.natGrad(lam, v, nil, 1)
	}
}
