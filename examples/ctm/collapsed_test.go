package main

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vigen-go/vigen/examples/ctm/ctm"
)

// collapsedByHand is the collapsed objective of one document written out:
// with q(z) at its optimum given θ, the z and w statements contribute
// g(θ) = Σ_n c_n log Σ_k e^{θ_k} β_{k,w_n} − N log Σ_k e^{θ_k}, and the
// prior adds log N(θ; μ0, Σ0). Its gradient and Hessian, with
// p_n = e^θ ⊙ β_{·,w_n} / Σ_k e^{θ_k}β_{k,w_n} and π = softmax θ:
//
//	∇g  = Σ_n c_n p_n − Nπ − Σ0⁻¹(θ−μ0)
//	∇²g = Σ_n c_n (diag p_n − p_n p_nᵀ) − N(diag π − ππᵀ) − Σ0⁻¹
func collapsedByHand(theta []float64, beta [][]float64, doc [][2]int, mu0, sInv []float64, logdet float64, grad, hess []float64) float64 {
	K := len(theta)
	clear(grad)
	clear(hess)
	n := 0.0
	f := 0.0
	p := make([]float64, K)
	for _, e := range doc {
		w, c := e[0]-1, float64(e[1])
		n += c
		s := 0.0
		for k := range p {
			p[k] = math.Exp(theta[k]) * beta[k][w]
			s += p[k]
		}
		f += c * math.Log(s)
		for k := range p {
			p[k] /= s
		}
		for a := 0; a < K; a++ {
			grad[a] += c * p[a]
			hess[a*K+a] += c * p[a]
			for b := 0; b < K; b++ {
				hess[a*K+b] -= c * p[a] * p[b]
			}
		}
	}
	m, z := math.Inf(-1), 0.0
	for _, v := range theta {
		m = math.Max(m, v)
	}
	pi := make([]float64, K)
	for k, v := range theta {
		pi[k] = math.Exp(v - m)
		z += pi[k]
	}
	f -= n * (m + math.Log(z))
	for k := range pi {
		pi[k] /= z
	}
	for a := 0; a < K; a++ {
		grad[a] -= n * pi[a]
		hess[a*K+a] -= n * pi[a]
		for b := 0; b < K; b++ {
			hess[a*K+b] += n*pi[a]*pi[b] - sInv[a*K+b]
		}
	}
	quad := 0.0
	for a := 0; a < K; a++ {
		r := 0.0
		for b := 0; b < K; b++ {
			r += sInv[a*K+b] * (theta[b] - mu0[b])
		}
		grad[a] -= r
		quad += (theta[a] - mu0[a]) * r
	}
	return f - 0.5*quad - 0.5*float64(K)*math.Log(2*math.Pi) - 0.5*logdet
}

// TestCollapsedKernelByHand checks the generated collapsed objective
// (ThetaCollapsed: its Hessian is a sum of one symmetric rank-1 update per
// bag entry, runtime.SyrUpper) against the formulas above, with random
// sparse topics and K = 7 and 53 (a triangle longer than the assembly's
// blocks, of odd size), and its gradient against central differences of
// its own value.
func TestCollapsedKernelByHand(t *testing.T) {
	for _, K := range []int{7, 53} {
		const D, V = 4, 300
		c := newCorpus(t, uint64(K), D, K, V, 40)
		rng := rand.New(rand.NewPCG(uint64(K), 5))
		for k := range c.data.Beta {
			s := 0.0
			for v := range c.data.Beta[k] {
				c.data.Beta[k][v] = rng.ExpFloat64() * rng.ExpFloat64()
				s += c.data.Beta[k][v]
			}
			for v := range c.data.Beta[k] {
				c.data.Beta[k][v] /= s
			}
		}
		m, err := ctm.NewModel(c.data)
		if err != nil {
			t.Fatal(err)
		}
		sInv := symFlat(c.sigma0Inv)
		for d := 0; d < D; d++ {
			theta := make([]float64, K)
			for k := range theta {
				theta[k] = rng.NormFloat64()
			}
			g, h := make([]float64, K), make([]float64, K*K)
			wg, wh := make([]float64, K), make([]float64, K*K)
			f := m.ThetaCollapsed(d, theta, g, h)
			want := collapsedByHand(theta, c.data.Beta, c.data.W[d], c.data.Mu0, sInv, c.logdetSigma0, wg, wh)
			if math.Abs(f-want) > 1e-11*math.Abs(want) {
				t.Errorf("K=%d doc %d: g = %.15g, by hand %.15g", K, d, f, want)
			}
			// the value alone, for Newton's last step
			if v := m.ThetaCollapsedValue(d, theta); math.Abs(v-f) > 1e-13*math.Abs(f) {
				t.Errorf("K=%d doc %d: ThetaCollapsedValue = %.17g, ThetaCollapsed's value %.17g", K, d, v, f)
			}
			for i := range g {
				if math.Abs(g[i]-wg[i]) > 1e-10*math.Max(1, math.Abs(wg[i])) {
					t.Errorf("K=%d doc %d: grad[%d] = %.15g, by hand %.15g", K, d, i, g[i], wg[i])
				}
			}
			for i := range h {
				if math.Abs(h[i]-wh[i]) > 1e-10*math.Max(1, math.Abs(wh[i])) {
					t.Errorf("K=%d doc %d: hess[%d,%d] = %.15g, by hand %.15g", K, d, i/K, i%K, h[i], wh[i])
				}
			}
			// the gradient against central differences of the value
			x := append([]float64(nil), theta...)
			for i := range x {
				const step = 1e-5
				x[i] = theta[i] + step
				fp := m.ThetaCollapsed(d, x, make([]float64, K), make([]float64, K*K))
				x[i] = theta[i] - step
				fm := m.ThetaCollapsed(d, x, make([]float64, K), make([]float64, K*K))
				x[i] = theta[i]
				if fd := (fp - fm) / (2 * step); math.Abs(fd-g[i]) > 1e-6*math.Max(1, math.Abs(g[i])) {
					t.Errorf("K=%d doc %d: grad[%d] = %.10g, central difference %.10g", K, d, i, g[i], fd)
				}
			}
		}
	}
}
