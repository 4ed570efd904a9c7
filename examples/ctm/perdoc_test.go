package main

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/vigen-go/vigen/examples/ctm/ctm"
	"github.com/vigen-go/vigen/runtime"
)

// apTest is the AP test set, relative to this package's directory.
var apTest = filepath.Join("..", "..", "..", "shared", "data", "ap", "ap-test.dat")

func readAPTest(t testing.TB) [][][2]int {
	if _, err := os.Stat(apTest); err != nil {
		t.Skipf("AP corpus not available (%v); the per-document checks on AP need ../shared", err)
	}
	docs, err := runtime.ReadLDACFile(apTest)
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

// handCTM is per-document CTM inference written independently of the
// generator from Wang & Blei's Appendix B: f, ∇f and ∇²f of appendixB (and
// the trace gradient of the delta method), Newton's method, φ_nk ∝ β_{k,w_n} exp(μ_k) (the log-sum-exp
// of the softmax is the same for every k and cancels), alternated until
// nothing changes.
type handCTM struct {
	K      int
	beta   [][]float64
	mu0    []float64
	sInv   []float64
	logdet float64
}

func newHandCTM(p *apParams) *handCTM {
	s := mat.NewSymDense(p.K, nil)
	for i := 0; i < p.K; i++ {
		for j := 0; j < p.K; j++ {
			s.SetSym(i, j, p.Sigma0[i][j])
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(s) {
		panic("Sigma0 not SPD")
	}
	inv := mat.NewSymDense(p.K, nil)
	ch.InverseTo(inv)
	return &handCTM{K: p.K, beta: p.Beta, mu0: p.Mu0, sInv: symFlat(inv), logdet: ch.LogDet()}
}

// objective is f (laplace) or the delta-method objective
// f(μ) + ½Tr{∇²f(μ)Σ}, with its Hessian (third and fourth derivatives of f).
func (h *handCTM) objective(mu, sigma []float64, counts []int, phi []float64, delta bool, grad, hess []float64) float64 {
	K := h.K
	pi, t, r := make([]float64, K), make([]float64, K), make([]float64, K)
	f := appendixB(mu, h.mu0, h.sInv, h.logdet, counts, phi, grad, hess, pi, t, r)
	if !delta {
		return f
	}
	// Tr{∇²f Σ} = N(πᵀΣπ − Σ_k π_k Σ_kk) − Tr{Σ0⁻¹Σ}; its gradient in μ is
	// N[2π_i((Σπ)_i − πᵀΣπ) − π_i(Σ_ii − Σ_k π_k Σ_kk)].
	n := 0.0
	for _, c := range counts {
		n += float64(c)
	}
	sp := make([]float64, K)
	pSp, pDiag, trS := 0.0, 0.0, 0.0
	for i := 0; i < K; i++ {
		for j := 0; j < K; j++ {
			sp[i] += sigma[i*K+j] * pi[j]
			trS += h.sInv[i*K+j] * sigma[j*K+i]
		}
		pSp += pi[i] * sp[i]
		pDiag += pi[i] * sigma[i*K+i]
	}
	f += 0.5 * (n*(pSp-pDiag) - trS)
	for i := 0; i < K; i++ {
		grad[i] += 0.5 * n * (2*pi[i]*(sp[i]-pSp) - pi[i]*(sigma[i*K+i]-pDiag))
	}
	// Its Hessian: with c = 2Σπ − diag Σ, e = 4Σπ − diag Σ, c̄ = πᵀc, ē = πᵀe,
	// ∂²/∂μ_j∂μ_k = N[π_j(δ_jk − π_k)(c_j − c̄) + π_jπ_k(2(Σ_jk − (Σπ)_j) − (e_k − ē))].
	cBar, eBar := 2*pSp-pDiag, 4*pSp-pDiag
	for j := 0; j < K; j++ {
		cj := 2*sp[j] - sigma[j*K+j]
		for k := 0; k < K; k++ {
			ek := 4*sp[k] - sigma[k*K+k]
			v := pi[j] * pi[k] * (2*(sigma[j*K+k]-sp[j]) - (ek - eBar) - (cj - cBar))
			if j == k {
				v += pi[j] * (cj - cBar)
			}
			hess[j*K+k] += 0.5 * n * v
		}
	}
	return f
}

func countsOf(doc [][2]int) []int {
	counts := make([]int, len(doc))
	for n, p := range doc {
		counts[n] = p[1]
	}
	return counts
}

// covFrom sets sigma to −∇²f(μ)⁻¹.
func (h *handCTM) covFrom(doc [][2]int, mu, phi, sigma []float64) {
	K := h.K
	g, hs := make([]float64, K), make([]float64, K*K)
	h.objective(mu, nil, countsOf(doc), phi, false, g, hs)
	negH := mat.NewSymDense(K, nil)
	for i := 0; i < K; i++ {
		for j := i; j < K; j++ {
			negH.SetSym(i, j, -hs[i*K+j])
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(negH) {
		panic("−∇²f not SPD")
	}
	inv := mat.NewSymDense(K, nil)
	ch.InverseTo(inv)
	copy(sigma, symFlat(inv))
}

// sweep is one pass of the inner loop: the θ update (Laplace, or delta with
// Σ fixed), Σ = −∇²f(μ)⁻¹, then φ.
func (h *handCTM) sweep(doc [][2]int, mu, sigma, phi []float64, delta bool) {
	K := h.K
	counts := countsOf(doc)
	// The optimizer is vigen's runtime.Maximize, as in the generated code:
	// what is checked is the objective, gradient and curvature the
	// generator derived, against Appendix B.
	runtime.Maximize(func(x, g, hh []float64) float64 { return h.objective(x, sigma, counts, phi, delta, g, hh) }, mu, runtime.NewtonSettings{Tol: 1e-15, MaxIter: 5000})
	h.covFrom(doc, mu, phi, sigma)
	e := make([]float64, K)
	for k := range e {
		e[k] = math.Exp(mu[k])
	}
	for n, p := range doc {
		row := phi[n*K : n*K+K]
		s := 0.0
		for k := range row {
			row[k] = e[k] * h.beta[k][p[0]-1]
			s += row[k]
		}
		inv := 1 / s
		for k := range row {
			row[k] *= inv
		}
	}
}

// TestPerDocumentInferenceIsAppendixB runs the generated per-document
// inference (Laplace and delta) on the AP test documents with the fixed
// parameters of testdata/ap-k10.json.gz and compares E[θ_d] and Σ_d with
// handCTM.
//
// Laplace: the generated code starts each document at the maximum of the
// collapsed objective (derive/collapse.go), the fixed point the θ/φ
// alternation converges to only linearly; after its sweeps, one more
// hand-written sweep of Appendix B (θ update, then φ) must leave the state
// where it is: the generated result is Appendix B's fixed point.
//
// Delta (with the plain sweeps, Options.PlainSweeps, as a hand-written loop
// would run them): the alternation of μ, Σ and φ amplifies rounding differences on
// some documents (from 1e-15 after 3 sweeps to 1e-6 after 20), so
// trajectories cannot be compared at 1e-6. The update itself is: from the
// generated state after 10 sweeps, one hand-written sweep must give the
// generated state after 11. Both μ-steps are Newton's method on the Hessian
// of f + ½Tr{∇²fΣ} (the hand-written one derived by hand above), so both
// reach the optimum, not just where a linearly convergent iteration stops.
func TestPerDocumentInferenceIsAppendixB(t *testing.T) {
	docs := readAPTest(t)
	p := loadAPParams(t)
	if testing.Short() {
		docs = docs[:40]
	}
	hand := newHandCTM(p)
	fit := func(method string, sweeps int) *ctm.Result {
		data := &ctm.Data{K: p.K, V: p.V, W: docs, Beta: p.Beta, Mu0: p.Mu0, Sigma0: p.Sigma0}
		res, err := ctm.Fit(context.Background(), data, ctm.Options{Method: method, MaxIter: 1, LocalTol: 1e-300, LocalMaxIter: sweeps, FixParams: true, Keep: []string{"z"},
			PlainSweeps: method == "delta",
			Newton:      runtime.NewtonSettings{Tol: 1e-15, MaxIter: 5000}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for _, method := range []string{"laplace", "delta"} {
		var res, before *ctm.Result
		if method == "laplace" {
			before = fit(method, 100)
			res = before
		} else {
			before, res = fit(method, 10), fit(method, 11)
		}
		worstMu, worstCov := 0.0, 0.0
		off := 0
		for d, doc := range docs {
			g := before.Latent.Theta[d]
			mu := append([]float64(nil), g.Mean...)
			sigma := make([]float64, 0, p.K*p.K)
			for _, row := range g.Cov {
				sigma = append(sigma, row...)
			}
			phi := append([]float64(nil), before.Latent.Z.Params["prob"][off*p.K:(off+len(doc))*p.K]...)
			hand.sweep(doc, mu, sigma, phi, method == "delta")
			off += len(doc)
			g = res.Latent.Theta[d]
			scale := 1.0
			for _, v := range mu {
				scale = math.Max(scale, math.Abs(v))
			}
			for k := range mu {
				worstMu = math.Max(worstMu, math.Abs(g.Mean[k]-mu[k])/scale)
			}
			cs := 0.0
			for _, v := range sigma {
				cs = math.Max(cs, math.Abs(v))
			}
			for i := 0; i < p.K; i++ {
				for j := 0; j < p.K; j++ {
					worstCov = math.Max(worstCov, math.Abs(g.Cov[i][j]-sigma[i*p.K+j])/cs)
				}
			}
		}
		t.Logf("%s on %d AP test documents: largest relative difference from Appendix B by hand: E[θ] %.2g, Σ %.2g", method, len(docs), worstMu, worstCov)
		if worstMu > 1e-6 || worstCov > 1e-6 {
			t.Errorf("%s: generated per-document inference differs from Appendix B by hand: E[θ] %.2g, Σ %.2g (want ≤ 1e-6)", method, worstMu, worstCov)
		}
	}
}
