package runtime

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/mathext"
)

// The gamma quantile's derivative in its shape, against central finite
// differences of gonum's inverse regularized incomplete gamma at fixed u.
func TestDLogGammaQuantileFD(t *testing.T) {
	for _, a := range []float64{0.05, 0.3, 1, 2.5, 10, 100, 1000, 20000} {
		for _, u := range []float64{0.01, 0.2, 0.5, 0.9, 0.999} {
			x := mathext.GammaIncRegInv(a, u)
			if x <= 1e-300 {
				continue
			}
			h := 1e-5 * a
			fdv := (math.Log(mathext.GammaIncRegInv(a+h, u)) - math.Log(mathext.GammaIncRegInv(a-h, u))) / (2 * h)
			got := DLogGammaQuantile(a, math.Log(x))
			if math.Abs(got-fdv) > 1e-5*math.Abs(fdv)+1e-8 {
				t.Errorf("a=%v u=%v: ∂log x/∂a = %v, finite differences %v", a, u, got, fdv)
			}
		}
	}
	// where x underflows, log space: log x = (log u + log Γ(a+1))/a to
	// first order, so ∂log x/∂a → (ψ(a+1) − log x)/a
	a, logx := 0.01, -2000.0
	if got, want := DLogGammaQuantile(a, logx), (Digamma(a+1)-logx)/a; math.Abs(got-want) > 1e-12*want {
		t.Errorf("underflowing draw: %v, want %v", got, want)
	}
}

// logNormalizer is A(λ) of one element or row of each family, written
// independently of reparam.go, for Fisher matrices by finite differences.
var logNormalizer = map[string]func(l []float64) float64{
	"Dirichlet": func(l []float64) float64 {
		var s, a0 float64
		for _, x := range l {
			lg, _ := math.Lgamma(x + 1)
			s += lg
			a0 += x + 1
		}
		lg0, _ := math.Lgamma(a0)
		return s - lg0
	},
	"Beta": func(l []float64) float64 {
		la, _ := math.Lgamma(l[0] + 1)
		lb, _ := math.Lgamma(l[1] + 1)
		lab, _ := math.Lgamma(l[0] + l[1] + 2)
		return la + lb - lab
	},
	"Gamma": func(l []float64) float64 {
		a, b := l[0]+1, -l[1]
		lg, _ := math.Lgamma(a)
		return lg - a*math.Log(b)
	},
	"Normal": func(l []float64) float64 { return -l[0]*l[0]/(4*l[1]) - 0.5*math.Log(-2*l[1]) },
}

// quantileStats is t(R(u, λ)) for fixed uniforms u, by inversion (gonum's
// quantiles), the map whose Jacobian natGrad uses.
func quantileStats(fam string, lam, u []float64) []float64 {
	switch fam {
	case "Dirichlet", "Beta":
		x := make([]float64, len(lam))
		var s float64
		for k := range lam {
			x[k] = mathext.GammaIncRegInv(lam[k]+1, u[k])
			s += x[k]
		}
		for k := range x {
			x[k] = math.Log(x[k] / s)
		}
		return x
	case "Gamma":
		x := mathext.GammaIncRegInv(lam[0]+1, u[0]) / -lam[1]
		return []float64{math.Log(x), x}
	case "Normal":
		s2 := -0.5 / lam[1]
		x := lam[0]*s2 + math.Sqrt(s2)*math.Sqrt2*math.Erfinv(2*u[0]-1)
		return []float64{x, x * x}
	}
	panic(fam)
}

// Each family's F⁻¹Jᵀv against finite differences: Jᵀv of t(R(u, λ))
// with u fixed, and F the Hessian of the log normalizer.
func TestReparamNatGradFD(t *testing.T) {
	cases := []struct {
		fam string
		lam []float64
	}{
		{"Dirichlet", []float64{1.5, 0.2, 3, 9}},
		{"Dirichlet", []float64{40, 2, 0.5}},
		{"Beta", []float64{2, 0.7}},
		{"Gamma", []float64{1.3, -2}},
		{"Gamma", []float64{30, -0.5}},
		{"Normal", []float64{0.8, -2.5}},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range cases {
		f := reparams[c.fam]
		n := len(c.lam)
		v := make([]float64, n)
		for i := range v {
			v[i] = rng.NormFloat64() * 3
		}
		for rep := 0; rep < 5; rep++ {
			u := make([]float64, n)
			for i := range u {
				u[i] = 0.05 + 0.9*rng.Float64()
			}
			// the draw at u, with its auxiliary numbers from our formulas
			tt := quantileStats(c.fam, c.lam, u)
			aux := make([]float64, n)
			switch c.fam {
			case "Dirichlet", "Beta":
				for k := range aux {
					aux[k] = DLogGammaQuantile(c.lam[k]+1, math.Log(mathext.GammaIncRegInv(c.lam[k]+1, u[k])))
				}
			case "Gamma":
				aux[0] = DLogGammaQuantile(c.lam[0]+1, math.Log(mathext.GammaIncRegInv(c.lam[0]+1, u[0])))
			case "Normal":
				aux[0] = math.Sqrt2 * math.Erfinv(2*u[0]-1)
			}
			got := make([]float64, n)
			f.natGrad(c.lam, tt, aux, v, got)

			g := make([]float64, n)
			fd.Gradient(g, func(l []float64) float64 {
				s := 0.0
				for k, x := range quantileStats(c.fam, l, u) {
					s += x * v[k]
				}
				return s
			}, c.lam, &fd.Settings{Formula: fd.Central, Step: 1e-6})
			// F·(F⁻¹Jᵀv) against Jᵀv: no inverse to amplify the finite
			// differences' error
			fisher := hessianFD(logNormalizer[c.fam], c.lam)
			for k := range g {
				fg, scale := 0.0, 0.0
				for j := range got {
					fg += fisher[k][j] * got[j]
					scale += math.Abs(fisher[k][j] * got[j])
				}
				// the nested differences of the Fisher matrix are good to ~1e-6
				if math.Abs(fg-g[k]) > 1e-5*(scale+math.Abs(g[k])+1) {
					t.Errorf("%s λ=%v u=%v: F·natGrad[%d] = %v, Jᵀv by finite differences %v", c.fam, c.lam, u, k, fg, g[k])
				}
			}
		}
	}
}

func hessianFD(f func([]float64) float64, x []float64) [][]float64 {
	n := len(x)
	h := make([][]float64, n)
	g := func(x []float64, out []float64) {
		fd.Gradient(out, f, x, &fd.Settings{Formula: fd.Central, Step: 1e-5})
	}
	for i := range h {
		h[i] = make([]float64, n)
	}
	gp, gm := make([]float64, n), make([]float64, n)
	for j := 0; j < n; j++ {
		e := 1e-4 * math.Max(1, math.Abs(x[j]))
		xp := append([]float64(nil), x...)
		xm := append([]float64(nil), x...)
		xp[j] += e
		xm[j] -= e
		g(xp, gp)
		g(xm, gm)
		for i := 0; i < n; i++ {
			h[i][j] = (gp[i] - gm[i]) / (2 * e)
		}
	}
	return h
}

// Eq. 27: E_u[J] = F, so the natural gradient's expectation over draws is
// v itself: E[F⁻¹Jᵀv] = v. Checked for every family by Monte Carlo with
// the sampler natGrad is used with, to 4 standard errors.
func TestReparamExpectedJacobianIsFisher(t *testing.T) {
	cases := []struct {
		fam string
		lam []float64
	}{
		{"Dirichlet", []float64{-0.99, 0.5, 3, 0.2}}, // α = 0.01: log-space draws
		{"Dirichlet", []float64{200, 5, 0}},
		{"Beta", []float64{0.3, -0.6}},
		{"Gamma", []float64{-0.7, -1.5}},
		{"Gamma", []float64{12, -3}},
		{"Normal", []float64{-1.2, -0.3}},
	}
	const draws = 200000
	for _, c := range cases {
		f := reparams[c.fam]
		n := len(c.lam)
		rng := rand.New(rand.NewPCG(7, uint64(n)))
		v := make([]float64, n)
		for i := range v {
			v[i] = float64(i+1) * 1.5
		}
		sum, sq := make([]float64, n), make([]float64, n)
		tt, aux, out := make([]float64, n), make([]float64, n), make([]float64, n)
		for i := 0; i < draws; i++ {
			f.draw(rng, c.lam, tt, aux)
			f.natGrad(c.lam, tt, aux, v, out)
			for k, x := range out {
				sum[k] += x
				sq[k] += x * x
			}
		}
		for k := range v {
			mean := sum[k] / draws
			se := math.Sqrt((sq[k]/draws - mean*mean) / draws)
			if math.Abs(mean-v[k]) > 4*se+1e-9 {
				t.Errorf("%s λ=%v: E[F⁻¹Jᵀv][%d] = %v ± %v, want %v", c.fam, c.lam, k, mean, se, v[k])
			}
		}
	}
}

// The draws have the family's moments: E[t(β̃)] = ∇A(λ).
func TestReparamDrawMoments(t *testing.T) {
	cases := []struct {
		fam string
		lam []float64
	}{
		{"Dirichlet", []float64{-0.99, 0.5, 3}},
		{"Beta", []float64{0.3, -0.6}},
		{"Gamma", []float64{-0.7, -1.5}},
		{"Normal", []float64{-1.2, -0.3}},
	}
	const draws = 200000
	for _, c := range cases {
		f := reparams[c.fam]
		n := len(c.lam)
		rng := rand.New(rand.NewPCG(3, 4))
		want := make([]float64, n)
		fd.Gradient(want, logNormalizer[c.fam], c.lam, &fd.Settings{Formula: fd.Central, Step: 1e-6})
		sum, sq := make([]float64, n), make([]float64, n)
		tt, aux := make([]float64, n), make([]float64, n)
		for i := 0; i < draws; i++ {
			f.draw(rng, c.lam, tt, aux)
			for k, x := range tt {
				sum[k] += x
				sq[k] += x * x
			}
		}
		for k := range want {
			mean := sum[k] / draws
			se := math.Sqrt((sq[k]/draws - mean*mean) / draws)
			if math.Abs(mean-want[k]) > 4*se+1e-6*math.Abs(want[k]) {
				t.Errorf("%s λ=%v: E[t_%d] = %v ± %v, want ∇A = %v", c.fam, c.lam, k, mean, se, want[k])
			}
		}
	}
}

// Eq. 26 on a model with local latents: a two-component mixture with a
// Beta weight,
//
//	β ~ Beta(a₀, b₀),  z_d | β ~ Bernoulli(β),  y_d | z_d ~ N(μ_{z_d}, 1),
//
// whose local step is the exact conditional q(z_d | β) = p(z_d | y_d, β),
// used through its expectation (§2.4): η_d(β) = (r_d, 1 − r_d), r_d =
// βN₁/(βN₁ + (1−β)N₂). The expectation of Algorithm 1's stochastic natural
// gradient over β̃ ~ q(β) must be the exact natural gradient of L(λ) (Eq.
// 21): F⁻¹∇_λ Σ_d E_q[log p(y_d | β)] + η − λ, whose data part is computed
// here by quadrature of the score-function form ∇_λE_q[f] = E_q[f·(t − ∇A)].
// Algorithm 2's (Eq. 29) differs from it by Eq. 30's covariance term,
// which this data set makes visible.
func TestSSMFNaturalGradientIsExact(t *testing.T) {
	y := []float64{-1.3, -0.2, 0.4, 1.1, 1.9, 2.5, -2.2, 0.9}
	mu1, mu2 := -1.0, 1.5
	lam := []float64{2.2, 3.5} // q(β) = Beta(3.2, 4.5)
	a, b := lam[0]+1, lam[1]+1
	norm := func(x, m float64) float64 { return math.Exp(-0.5*(x-m)*(x-m)) / math.Sqrt(2*math.Pi) }
	logLik := func(beta float64) float64 {
		s := 0.0
		for _, yd := range y {
			s += math.Log(beta*norm(yd, mu1) + (1-beta)*norm(yd, mu2))
		}
		return s
	}
	lb, _ := math.Lgamma(a)
	lb2, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	logB := lb + lb2 - lab
	dens := func(x float64) float64 { return math.Exp((a-1)*math.Log(x) + (b-1)*math.Log1p(-x) - logB) }
	et := []float64{Digamma(a) - Digamma(a+b), Digamma(b) - Digamma(a+b)} // ∇A
	grad := make([]float64, 2)
	for k := range grad {
		k := k
		grad[k] = quad.Fixed(func(x float64) float64 {
			tk := math.Log(x)
			if k == 1 {
				tk = math.Log1p(-x)
			}
			return logLik(x) * (tk - et[k]) * dens(x)
		}, 0, 1, 2000, quad.Legendre{}, 0)
	}
	c := Trigamma(a + b)
	exact := make([]float64, 2)
	exact[0], exact[1] = solve2(Trigamma(a)-c, -c, Trigamma(b)-c, grad[0], grad[1])

	const draws = 1000000
	rng := rand.New(rand.NewPCG(11, 12))
	tt, aux, v, out := make([]float64, 2), make([]float64, 2), make([]float64, 2), make([]float64, 2)
	// controlledNatGrad's form with a control variate fixed before the
	// draws: the same expectation, and less noise when the control is near
	// it (at SSMF's fixed point λ − η is the expectation)
	cv := []float64{exact[0], exact[1]}
	var sum, sq, sumA, sumC, sqC [2]float64
	vc, outC := make([]float64, 2), make([]float64, 2)
	for i := 0; i < draws; i++ {
		reparams["Beta"].draw(rng, lam, tt, aux)
		beta := math.Exp(tt[0])
		v[0], v[1] = 0, 0
		for _, yd := range y {
			r := beta * norm(yd, mu1) / (beta*norm(yd, mu1) + (1-beta)*norm(yd, mu2))
			v[0] += r
			v[1] += 1 - r
		}
		sumA[0] += v[0]
		sumA[1] += v[1]
		reparams["Beta"].natGrad(lam, tt, aux, v, out)
		for k, x := range out {
			sum[k] += x
			sq[k] += x * x
		}
		vc[0], vc[1] = v[0]-cv[0], v[1]-cv[1]
		reparams["Beta"].natGrad(lam, tt, aux, vc, outC)
		for k, x := range outC {
			sumC[k] += x + cv[k]
			sqC[k] += (x + cv[k]) * (x + cv[k])
		}
	}
	for k := range exact {
		mean := sum[k] / draws
		se := math.Sqrt((sq[k]/draws - mean*mean) / draws)
		if math.Abs(mean-exact[k]) > 4*se {
			t.Errorf("E[F⁻¹Jᵀη][%d] = %v ± %v, the exact natural gradient's data part is %v", k, mean, se, exact[k])
		}
		if se > 3e-3*math.Abs(exact[k]) {
			t.Errorf("component %d: the Monte Carlo error %v is too large to test against %v", k, se, exact[k])
		}
		meanC := sumC[k] / draws
		seC := math.Sqrt((sqC[k]/draws - meanC*meanC) / draws)
		if math.Abs(meanC-exact[k]) > 4*seC || !(seC < se/2) {
			t.Errorf("with the control variate: %v ± %v, want %v with less than half the error %v", meanC, seC, exact[k], se)
		}
		if math.Abs(sumA[k]/draws-exact[k]) < 0.1*math.Abs(exact[k]) {
			t.Errorf("component %d: SSMF-A's expectation %v is within 10%% of the exact %v: the test does not tell the two apart", k, sumA[k]/draws, exact[k])
		}
		t.Logf("component %d: SSMF %.5f ± %.5f (controlled %.5f ± %.5f), exact %.5f, SSMF-A %.5f", k, mean, se, meanC, seC, exact[k], sumA[k]/draws)
	}
}

// trigamma's recurrence and asymptotic series against the Hurwitz zeta
// function ζ(2, x) over the shapes SSMF meets, across the switch at 10.
func TestTrigammaAgainstZeta(t *testing.T) {
	for _, x := range []float64{1e-4, 0.01, 0.3, 1, 2.5, 9.99, 10, 11, 57.3, 1e3, 1e6} {
		if got, want := trigamma(x), mathext.Zeta(2, x); math.Abs(got-want) > 1e-14*want {
			t.Errorf("Trigamma(%v) = %v, ζ(2, x) = %v", x, got, want)
		}
	}
}

// Far in the upper tail the series for ∂log x/∂a cancels (P ≈ 1); the tail
// form must hold there, and the two forms must agree where both are good.
// References computed with mpmath at 60 digits from the upper regularized
// incomplete gamma, (∂Q/∂a)/(x p(x; a)).
func TestDLogGammaQuantileTail(t *testing.T) {
	for _, c := range []struct{ a, x, want float64 }{
		{100, 190, 0.00714345016296756},
		{0.3, 30, 0.226064888638419},
		{5, 60, 0.0464738420001112},
		{1, 700, 0.0101853179090903},
		{1e4, 10700, 9.66568227965261e-5},
		{2.5, 20, 0.126184300122559},
		{50, 80, 0.0157187537278918},
		{0.01, 3, 26.7602463936449},
	} {
		if got := DLogGammaQuantile(c.a, math.Log(c.x)); math.Abs(got-c.want) > 1e-9*c.want {
			t.Errorf("a=%v x=%v: %v, want %v", c.a, c.x, got, c.want)
		}
	}
	// just below and above the switch: the series and the tail form agree
	for _, a := range []float64{0.5, 3, 40, 900} {
		for _, k := range []float64{3, 4} {
			x := a + k*math.Sqrt(a) + 1
			s, tail := DLogGammaQuantile(a, math.Log(x)), dLogGammaQuantileTail(a, x)
			if math.Abs(s-tail) > 1e-9*math.Abs(s) {
				t.Errorf("a=%v x=%v: series %v, tail form %v", a, x, s, tail)
			}
		}
	}
	for _, bad := range [][2]float64{{0, 1}, {-1, 1}, {math.NaN(), 1}, {1, math.NaN()}, {5e-324, 0}} {
		if got := DLogGammaQuantile(bad[0], bad[1]); !math.IsNaN(got) {
			t.Errorf("DLogGammaQuantile(%v, %v) = %v, want NaN", bad[0], bad[1], got)
		}
	}
}

// The Normal's F⁻¹Jᵀv keeps its digits where a 2×2 solve of F lost them
// all (|m| ≫ s, F's determinant 2s⁶ the difference of terms of size m²s⁴);
// its closed form is checked against finite differences in
// TestReparamNatGradFD.
func TestNormalNatGradLargeMean(t *testing.T) {
	for _, c := range [][2]float64{{1e5, 1e-5}, {1e4, 1e-4}, {-3, 2}} {
		m, s := c[0], c[1]
		lam := []float64{m / (s * s), -0.5 / (s * s)}
		e := 0.7
		x := m + s*e
		v := []float64{1.3, -0.2}
		out := make([]float64, 2)
		reparams["Normal"].natGrad(lam, []float64{x, x * x}, []float64{e, 0}, v, out)
		w := v[0] + 2*v[1]*x
		want := []float64{w * (1 - m*e/s), w * e / (2 * s)}
		for k := range want {
			if math.Abs(out[k]-want[k]) > 1e-6*math.Abs(want[k]) {
				t.Errorf("m=%v s=%v: out[%d] = %v, want %v", m, s, k, out[k], want[k])
			}
		}
	}
	if reparams["Normal"].valid([]float64{math.NaN(), -1}) || reparams["Gamma"].valid([]float64{math.Inf(1), -1}) {
		t.Error("valid accepts a NaN or infinite natural parameter")
	}
}

// SSMF's Normal gradient from the draw, its reflection and the mean is
// exactly (v₁, v₂) when the statistics do not depend on the draw (a
// Normal global with no local factors between it and the data: λ̂ is the
// exact posterior's), whatever the draw, and its mean part is the average
// of f′ = v₁ + 2v₂x over the pair.
func TestAntitheticNormalNatGrad(t *testing.T) {
	f := reparams["Normal"]
	m, s := 3.0, 0.2
	lam := []float64{m / (s * s), -0.5 / (s * s)}
	v := []float64{7.5, -1.25}
	rng := rand.New(rand.NewPCG(1, 2))
	tt, aux, minus, mean, out := make([]float64, 2), make([]float64, 2), make([]float64, 2), make([]float64, 2), make([]float64, 2)
	for range 20 {
		f.draw(rng, lam, tt, aux)
		f.antithetic(lam, tt, aux, minus, mean)
		if math.Abs(minus[0]-(2*m-tt[0])) > 1e-12 || mean[0] != m || mean[1] != m*m {
			t.Fatalf("draw %v: reflection %v, mean %v", tt, minus, mean)
		}
		f.antiNatGrad(lam, tt, aux, v, v, v, out)
		if math.Abs(out[0]-v[0]) > 1e-12 || out[1] != v[1] {
			t.Errorf("draw %v: %v, want %v", tt[0], out, v)
		}
	}
	// statistics that do depend on it: the mean part is (u⁺ + u⁻)/2 − 2m v₂⁰
	vp, vm, v0 := []float64{1, -2}, []float64{3, -1}, []float64{2, -1.5}
	f.draw(rng, lam, tt, aux)
	f.antithetic(lam, tt, aux, minus, mean)
	f.antiNatGrad(lam, tt, aux, vp, vm, v0, out)
	up, um := vp[0]+2*vp[1]*tt[0], vm[0]+2*vm[1]*minus[0]
	if want := (up+um)/2 - 2*m*v0[1]; math.Abs(out[0]-want) > 1e-12 || out[1] != v0[1] {
		t.Errorf("out = %v, want (%v, %v)", out, want, v0[1])
	}
}
