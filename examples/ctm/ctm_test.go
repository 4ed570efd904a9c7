package main

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/vigen-go/vigen/examples/ctm/ctm"
)

// corpus draws D documents of about `terms` distinct terms each over a
// vocabulary of V, with K topics, a random SPD Σ0 and random φ (one
// distribution over topics per distinct term of each document).
type corpus struct {
	data         *ctm.Data
	model        *ctm.Model
	phi          []float64 // flat, one row of K per bag entry
	sigma0Inv    *mat.SymDense
	logdetSigma0 float64
}

func newCorpus(t testing.TB, seed uint64, D, K, V, terms int) *corpus {
	rng := rand.New(rand.NewPCG(seed, 99))
	c := &corpus{data: &ctm.Data{V: V}}
	var entries int
	for d := 0; d < D; d++ {
		doc := map[int]int{}
		for len(doc) < terms {
			doc[1+rng.IntN(V)] = 1 + rng.IntN(4)
		}
		var pairs [][2]int
		for term := 1; term <= V; term++ {
			if n, ok := doc[term]; ok {
				pairs = append(pairs, [2]int{term, n})
			}
		}
		c.data.W = append(c.data.W, pairs)
		entries += len(pairs)
	}
	c.data.Mu0 = make([]float64, K)
	a := mat.NewDense(K, K, nil)
	for i := 0; i < K; i++ {
		c.data.Mu0[i] = 0.3 * rng.NormFloat64()
		for j := 0; j < K; j++ {
			a.Set(i, j, 0.3*rng.NormFloat64())
		}
	}
	s := mat.NewSymDense(K, nil)
	s.SymOuterK(1, a)
	c.data.Sigma0 = make([][]float64, K)
	for i := 0; i < K; i++ {
		s.SetSym(i, i, s.At(i, i)+0.5)
		c.data.Sigma0[i] = make([]float64, K)
		for j := 0; j < K; j++ {
			c.data.Sigma0[i][j] = s.At(i, j)
		}
	}
	var ch mat.Cholesky
	ch.Factorize(s)
	c.sigma0Inv = mat.NewSymDense(K, nil)
	ch.InverseTo(c.sigma0Inv)
	c.logdetSigma0 = ch.LogDet()
	c.data.Beta = make([][]float64, K)
	for k := range c.data.Beta {
		row := make([]float64, V)
		for v := range row {
			row[v] = 1 / float64(V)
		}
		c.data.Beta[k] = row
	}
	m, err := ctm.NewModel(c.data)
	if err != nil {
		t.Fatal(err)
	}
	c.model = m
	c.phi = make([]float64, entries*K)
	for n := 0; n < entries; n++ {
		s := 0.0
		for k := 0; k < K; k++ {
			c.phi[n*K+k] = rng.Float64()
			s += c.phi[n*K+k]
		}
		for k := 0; k < K; k++ {
			c.phi[n*K+k] /= s
		}
	}
	return c
}

// appendixB computes f(θ_d), its gradient and Hessian as Wang & Blei's
// Appendix B writes them, by hand: with π = softmax(θ), N = Σ_n c_n and
// t = Σ_n c_n φ_n,
//
//	f = θᵀt − N log Σ exp θ − ½(θ−μ0)ᵀΣ0⁻¹(θ−μ0) − (K/2)log 2π − ½log|Σ0|
//	∇f = t − Nπ − Σ0⁻¹(θ−μ0)
//	∇²f = N(ππᵀ − diag π) − Σ0⁻¹
//
// entries is document d's slice of bag entries (counts c, rows of φ).
func appendixB(theta, mu0 []float64, sInv []float64, logdet float64, counts []int, phi []float64, grad, hess, pi, t, r []float64) float64 {
	K := len(theta)
	mx := theta[0]
	for _, v := range theta {
		mx = math.Max(mx, v)
	}
	s := 0.0
	for k, v := range theta {
		pi[k] = math.Exp(v - mx)
		s += pi[k]
	}
	lse := mx + math.Log(s)
	for k := range pi {
		pi[k] /= s
		t[k] = 0
	}
	n := 0.0
	for e, c := range counts {
		cf := float64(c)
		n += cf
		row := phi[e*K : e*K+K]
		for k, p := range row {
			t[k] += cf * p
		}
	}
	f := -0.5*float64(K)*math.Log(2*math.Pi) - 0.5*logdet - n*lse
	for k := range theta {
		r[k] = theta[k] - mu0[k]
	}
	for i := 0; i < K; i++ {
		si := sInv[i*K : i*K+K]
		q := 0.0
		for j, v := range si {
			q += v * r[j]
		}
		f += theta[i]*t[i] - 0.5*r[i]*q
		grad[i] = t[i] - n*pi[i] - q
		hi := hess[i*K : i*K+K]
		npi := n * pi[i]
		for j := range hi {
			hi[j] = npi*pi[j] - si[j]
		}
		hi[i] -= npi
	}
	return f
}

func symFlat(s *mat.SymDense) []float64 {
	n := s.SymmetricDim()
	out := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			out[i*n+j] = s.At(i, j)
		}
	}
	return out
}

func TestGeneratedKernelIsAppendixB(t *testing.T) {
	const D, K, V = 6, 7, 200
	c := newCorpus(t, 1, D, K, V, 25)
	rng := rand.New(rand.NewPCG(2, 3))
	sInv := symFlat(c.sigma0Inv)
	off := 0
	for d := 0; d < D; d++ {
		doc := c.data.W[d]
		counts := make([]int, len(doc))
		for e, p := range doc {
			counts[e] = p[1]
		}
		phi := c.phi[off*K : (off+len(doc))*K]
		theta := make([]float64, K)
		for k := range theta {
			theta[k] = rng.NormFloat64()
		}
		g, h := make([]float64, K), make([]float64, K*K)
		wg, wh := make([]float64, K), make([]float64, K*K)
		f := c.model.ThetaF(d, theta, c.phi, g, h)
		want := appendixB(theta, c.data.Mu0, sInv, c.logdetSigma0, counts, phi, wg, wh, make([]float64, K), make([]float64, K), make([]float64, K))
		if math.Abs(f-want) > 1e-10*math.Abs(want) {
			t.Errorf("doc %d: f = %.15g, Appendix B %.15g", d, f, want)
		}
		for i := range g {
			if math.Abs(g[i]-wg[i]) > 1e-10*math.Max(1, math.Abs(wg[i])) {
				t.Errorf("doc %d: grad[%d] = %.15g, Appendix B %.15g", d, i, g[i], wg[i])
			}
		}
		for i := range h {
			if math.Abs(h[i]-wh[i]) > 1e-10*math.Max(1, math.Abs(wh[i])) {
				t.Errorf("doc %d: hess[%d] = %.15g, Appendix B %.15g", d, i, h[i], wh[i])
			}
		}
		// The delta method with a diagonal Σ (as in Appendix B): the
		// gradient of ½Tr{∇²f Σ}, with Tr{∇²f Σ} = N Σ_k (π_k² − π_k) Σ_kk
		// − Tr{Σ0⁻¹Σ}, is ½N[(2π_i − 1)π_i Σ_ii − π_i Σ_k (2π_k − 1)π_k Σ_kk].
		cov := make([]float64, K*K)
		for k := 0; k < K; k++ {
			cov[k*K+k] = 0.1 + rng.Float64()
		}
		dg := make([]float64, K)
		c.model.ThetaDelta(d, theta, cov, c.phi, dg, make([]float64, K*K))
		pi := make([]float64, K)
		appendixB(theta, c.data.Mu0, sInv, c.logdetSigma0, counts, phi, wg, wh, pi, make([]float64, K), make([]float64, K))
		n := 0.0
		for _, cnt := range counts {
			n += float64(cnt)
		}
		sum := 0.0
		for k := range pi {
			sum += (2*pi[k] - 1) * pi[k] * cov[k*K+k]
		}
		for i := range pi {
			want := wg[i] + 0.5*n*((2*pi[i]-1)*pi[i]*cov[i*K+i]-pi[i]*sum)
			if math.Abs(dg[i]-want) > 1e-9*math.Max(1, math.Abs(want)) {
				t.Errorf("doc %d: delta gradient[%d] = %.15g, Appendix B %.15g", d, i, dg[i], want)
			}
		}
		off += len(doc)
	}
}

// BenchmarkDocumentKernel times f, ∇f and ∇²f of one document (K = 50
// topics, 200 distinct terms), generated against Appendix B by hand.
func BenchmarkDocumentKernel(b *testing.B) {
	const D, K, V = 20, 50, 5000
	c := newCorpus(b, 4, D, K, V, 200)
	theta := make([]float64, K)
	for k := range theta {
		theta[k] = 0.1 * float64(k%7)
	}
	g, h := make([]float64, K), make([]float64, K*K)
	b.Run("generated", func(b *testing.B) {
		for b.Loop() {
			for d := 0; d < D; d++ {
				c.model.ThetaF(d, theta, c.phi, g, h)
			}
		}
	})
	sInv := symFlat(c.sigma0Inv)
	pi, t, r := make([]float64, K), make([]float64, K), make([]float64, K)
	type doc struct {
		counts []int
		phi    []float64
	}
	var docs []doc
	off := 0
	for _, w := range c.data.W {
		counts := make([]int, len(w))
		for e, p := range w {
			counts[e] = p[1]
		}
		docs = append(docs, doc{counts, c.phi[off*K : (off+len(w))*K]})
		off += len(w)
	}
	b.Run("handwritten", func(b *testing.B) {
		for b.Loop() {
			for _, dd := range docs {
				appendixB(theta, c.data.Mu0, sInv, c.logdetSigma0, dd.counts, dd.phi, g, h, pi, t, r)
			}
		}
	})
}
