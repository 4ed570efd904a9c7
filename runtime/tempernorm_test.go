package runtime

import (
	"math"
	"math/rand/v2"
	"testing"
)

// DirichletLogSumPow against Monte Carlo over q(p) = Dirichlet(λ): its
// exponential is E[Σ_v p_v^s] (within 4 standard errors), it bounds
// E[log Σ_v p_v^s] from above, and it is 0 at s = 1.
func TestDirichletLogSumPow(t *testing.T) {
	lambda := []float64{0.3, 2, 5, 0.05, 10, 0.01}
	invT := []float64{1, 0.7, 0.3, 0.1}
	out := make([]float64, len(invT))
	DirichletLogSumPow(lambda, invT, out, nil)
	if out[0] != 0 {
		t.Errorf("s = 1: %v, want 0", out[0])
	}
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 200000
	p := make([]float64, len(lambda))
	sum, sum2, logSum := make([]float64, len(invT)), make([]float64, len(invT)), make([]float64, len(invT))
	for range n {
		tot := 0.0
		for v, l := range lambda {
			p[v] = RandGamma(rng, l)
			tot += p[v]
		}
		for m, s := range invT {
			z := 0.0
			for _, x := range p {
				z += math.Pow(x/tot, s)
			}
			sum[m] += z
			sum2[m] += z * z
			logSum[m] += math.Log(z)
		}
	}
	for m, s := range invT[1:] {
		m++
		mean := sum[m] / n
		se := math.Sqrt((sum2[m]/n - mean*mean) / n)
		if got := math.Exp(out[m]); math.Abs(got-mean) > 4*se {
			t.Errorf("s = %g: exp(DirichletLogSumPow) = %.6f, Monte Carlo E[Σ p^s] = %.6f ± %.6f", s, got, mean, se)
		}
		if lm := logSum[m] / n; lm > out[m] {
			t.Errorf("s = %g: E[log Σ p^s] ≈ %.6f exceeds the bound %.6f", s, lm, out[m])
		}
	}
}

// DirichletTemperedLogNorm for K = 2 (a Beta density) against Simpson's
// rule on ∫_0^1 Beta(x; a, b)^s dx, with x = (1 − cos πu)/2 to smooth
// the ends.
func TestDirichletTemperedLogNorm(t *testing.T) {
	invT := []float64{1, 0.8, 0.5, 0.2}
	for _, ab := range [][2]float64{{2.5, 4}, {1.5, 1.2}, {7, 3}} {
		out := make([]float64, len(invT))
		DirichletTemperedLogNorm(ab[:], invT, out)
		lb := Lgamma(ab[0]) + Lgamma(ab[1]) - Lgamma(ab[0]+ab[1])
		for m, s := range invT {
			const n = 20000
			h := 1.0 / n
			f := func(u float64) float64 {
				x := (1 - math.Cos(math.Pi*u)) / 2
				if x <= 0 || x >= 1 {
					return 0
				}
				return math.Pi / 2 * math.Sin(math.Pi*u) * math.Exp(s*((ab[0]-1)*math.Log(x)+(ab[1]-1)*math.Log(1-x)-lb))
			}
			integral := f(0) + f(1)
			for i := 1; i < n; i++ {
				w := 2.0
				if i%2 == 1 {
					w = 4
				}
				integral += w * f(float64(i)*h)
			}
			integral *= h / 3
			if want := math.Log(integral); math.Abs(out[m]-want) > 1e-8 {
				t.Errorf("Beta(%g, %g), s = %g: %.9f, quadrature %.9f", ab[0], ab[1], s, out[m], want)
			}
		}
	}
}
