package main

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// compositions calls f with every composition of n into k parts.
func compositions(n, k int, f func([]int)) {
	c := make([]int, k)
	var rec func(i, left int)
	rec = func(i, left int) {
		if i == k-1 {
			c[i] = left
			f(c)
			return
		}
		for j := 0; j <= left; j++ {
			c[i] = j
			rec(i+1, left-j)
		}
	}
	rec(0, n)
}

// The convolution against the sum over compositions written out, at
// temperatures on and off the grid, and log C(1) = 0.
func TestGMMSigmaLogCEnumerated(t *testing.T) {
	const n, k, alpha, sigma = 9, 3, 0.7, 0.4
	grid := []float64{1, 1.7, 4, 10}
	got := gmmSigmaLogC(grid, n, k, alpha, sigma)
	if math.Abs(got[0]) > 1e-12 {
		t.Errorf("log C(1) = %v, want 0: the untempered joint is normalized", got[0])
	}
	lbeta := func(v []float64) float64 {
		s, tot := 0.0, 0.0
		for _, x := range v {
			l, _ := math.Lgamma(x)
			s += l
			tot += x
		}
		l, _ := math.Lgamma(tot)
		return s - l
	}
	for m, T := range grid {
		a := 1 / T
		sum := 0.0
		base := make([]float64, k)
		for i := range base {
			base[i] = alpha
		}
		compositions(n, k, func(c []int) {
			lm, _ := math.Lgamma(n + 1)
			v := make([]float64, k)
			for i, ci := range c {
				l, _ := math.Lgamma(float64(ci) + 1)
				lm -= l
				v[i] = alpha + a*float64(ci)
			}
			sum += math.Exp(lm + lbeta(v) - lbeta(base))
		})
		want := n*((1-a)/2*math.Log(2*math.Pi*sigma*sigma)-0.5*math.Log(a)) + math.Log(sum)
		if math.Abs(got[m]-want) > 1e-11 {
			t.Errorf("T = %v: log C = %.14g, the enumeration gives %.14g", T, got[m], want)
		}
	}
}

// Monte Carlo over the prior, as the paper's Appendix A computes C(T):
// draw π ~ Dirichlet(α) and average (Σ_k π_k^a)^N; the Normal part is
// checked by quadrature of N(y; 0, σ)^a.
func TestGMMSigmaLogCMonteCarlo(t *testing.T) {
	const n, k, alpha, sigma, T = 40, 3, 1.0, 0.8, 2.5
	a := 1 / T
	got := gmmSigmaLogC([]float64{T}, n, k, alpha, sigma)[0]
	rng := rand.New(rand.NewPCG(1, 2))
	g := distuv.Gamma{Alpha: alpha, Beta: 1, Src: rng}
	const draws = 200000
	logs := make([]float64, draws)
	for s := range logs {
		pi := make([]float64, k)
		tot := 0.0
		for i := range pi {
			pi[i] = g.Rand()
			tot += pi[i]
		}
		sum := 0.0
		for _, p := range pi {
			sum += math.Pow(p/tot, a)
		}
		logs[s] = n * math.Log(sum)
	}
	mx := math.Inf(-1)
	for _, l := range logs {
		mx = math.Max(mx, l)
	}
	var m1, m2 float64
	for _, l := range logs {
		e := math.Exp(l - mx)
		m1 += e
		m2 += e * e
	}
	m1, m2 = m1/draws, m2/draws
	se := math.Sqrt((m2-m1*m1)/draws) / m1 // of the log, by the delta method
	// ∫ N(y; 0, σ)^a dy by the trapezoid rule
	h, q := 1e-3, 0.0
	for y := -60.0; y <= 60; y += h {
		q += math.Pow(math.Exp(-y*y/(2*sigma*sigma))/math.Sqrt(2*math.Pi*sigma*sigma), a) * h
	}
	mc := mx + math.Log(m1) + n*math.Log(q)
	if math.Abs(got-mc) > 4*se+1e-6 {
		t.Errorf("log C(%v) = %.8g, Monte Carlo over the prior gives %.8g ± %.2g", T, got, mc, se)
	}
}
