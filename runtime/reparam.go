package runtime

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/integrate/quad"
)

// The reparameterized draws of SSMF (Hoffman 2014, §2.1 and §3), one table
// entry per family of conjugate global factor. A factor of n elements with
// natural parameters λ (runtime.ToNatural's layout: one block of n per
// sufficient statistic) is drawn as β̃ = R(u, λ) from uniforms u, and SSMF's
// gradient needs, for the draw, the vector–Jacobian product
//
//	Jᵀv = ∂⟨t(R(u, λ)), v⟩/∂λ,
//
// preconditioned by the inverse Fisher information F(λ)⁻¹ = (∂²A/∂λ∂λᵀ)⁻¹
// (Eq. 26). Each entry computes it in closed form from the draw and one
// auxiliary number per element (∂log x/∂shape of a gamma draw, or the
// standard normal draw), which the tests check against finite differences
// of R with u held fixed, and against E_u[J] = F (Eq. 27) by Monte Carlo.
//
// Gamma draws go through the gamma quantile only implicitly (Eq. 15): a
// draw x of Gamma(a, 1) (Marsaglia–Tsang, in log space for small a) has
// ∂x/∂a = −(∂P(a, x)/∂a)/p(x; a) at u = P(a, x), which is the derivative
// of the inverse-CDF map (the paper: "our algorithm does not need to
// sample β by inversion; we only need to know that it is possible").

// reparam is one family's entry.
type reparam struct {
	// stats is the number of sufficient statistics (natural blocks).
	stats int
	// vector marks a family over rows (the Dirichlet): draw and natGrad
	// see one row of the single statistic at a time; otherwise one
	// element, its statistics gathered from the blocks.
	vector bool
	// draw writes the statistics t(β̃) of one draw into t and the
	// auxiliary numbers natGrad needs into aux (one per element and
	// statistic, len(lam)), given the natural parameters lam. A nil aux
	// skips them (SSMF-A does not differentiate the draw).
	draw func(rng *rand.Rand, lam, t, aux []float64)
	// natGrad writes F(λ)⁻¹ Jᵀ v for the draw (t, aux) into out.
	natGrad func(lam, t, aux, v, out []float64)
	// antithetic, for a family whose Algorithm 1 gradient is estimated
	// from three evaluations (the Normal), writes the statistics of the
	// draw's reflection (m − sε for m + sε) into minus and those of the
	// point at the mean into mean; antiNatGrad combines the statistics v,
	// vm and v0 given the draw, its reflection and the mean into one
	// estimate of E[F⁻¹Jᵀv] (antitheticNormalNatGrad). Nil: one draw.
	antithetic  func(lam, t, aux, minus, mean []float64)
	antiNatGrad func(lam, t, aux, v, vm, v0, out []float64)
	// valid reports whether lam are the natural parameters of a member of
	// the family.
	valid func(lam []float64) bool
	// drawStats draws from ordinary parameters (DrawStats).
	drawStats func(k int, rng *rand.Rand, params, stats [][]float64)
}

// reparams is the table, by family name.
var reparams = map[string]*reparam{
	"Dirichlet": {stats: 1, vector: true, draw: dirichletDraw, natGrad: dirichletNatGrad,
		valid: func(lam []float64) bool { return allAbove(lam, -1) }, drawStats: dirichletDrawStats},
	"Beta": {stats: 2, draw: betaDraw, natGrad: betaNatGrad,
		valid: func(lam []float64) bool { return finite(lam) && lam[0] > -1 && lam[1] > -1 }, drawStats: betaDrawStats},
	"Gamma": {stats: 2, draw: gammaDraw, natGrad: gammaNatGrad,
		valid: func(lam []float64) bool { return finite(lam) && lam[0] > -1 && lam[1] < 0 }, drawStats: gammaDrawStats},
	"Normal": {stats: 2, draw: normalDraw, natGrad: normalNatGrad,
		antithetic: normalAntithetic, antiNatGrad: antitheticNormalNatGrad,
		valid: func(lam []float64) bool { return finite(lam) && lam[1] < 0 }, drawStats: normalDrawStats},
}

// Reparameterizable reports whether SSMF can draw and differentiate a
// global factor of family.
func Reparameterizable(family string) bool { return reparams[family] != nil }

// finite reports whether every element of x is a finite number.
func finite(x []float64) bool {
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

func allAbove(x []float64, lo float64) bool {
	for _, v := range x {
		if !(v > lo) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// DLogGammaQuantile returns ∂log x/∂a of the Gamma(a, 1) quantile x(u, a)
// at fixed u, at the point with log x = logx:
//
//	∂log x/∂a = −(∂P(a, x)/∂a)/(x p(x; a)) = Σ_{n≥0} s_n (ψ(a+n+1) − log x),
//	s_0 = 1/a,  s_n = s_{n−1}·x/(a+n),
//
// from the series P(a, x) = Σ_n x^(a+n) e^(−x)/Γ(a+n+1) differentiated
// term by term (its terms divided by x·p(x; a) are the s_n). The terms
// grow while a + n < x and then fall geometrically; the sum stops when
// they are negligible. Far in the upper tail, where P ≈ 1 and the series
// cancels (its relative error is about 1e-16/Q), it is the upper tail's
// form instead (dLogGammaQuantileTail).
func DLogGammaQuantile(a, logx float64) float64 {
	if !(a > 0) || math.IsInf(a, 1) || math.IsNaN(logx) {
		return math.NaN()
	}
	x := math.Exp(logx)
	if x > a+5*math.Sqrt(a)+5 {
		return dLogGammaQuantileTail(a, x)
	}
	s := 1 / a
	if math.IsInf(s, 1) {
		return math.NaN() // a subnormal shape
	}
	psi := Digamma(a + 1)
	sum := s * (psi - logx)
	for n := 1; n < 10_000_000; n++ {
		s *= x / (a + float64(n))
		psi += 1 / (a + float64(n))
		term := s * (psi - logx)
		sum += term
		if a+float64(n) > x && math.Abs(term) <= 1e-17*math.Abs(sum) {
			break
		}
		if s == 0 {
			break
		}
	}
	return sum
}

// dLogGammaQuantileTail is ∂log x/∂a = (∂Q(a, x)/∂a)/(x p(x; a)) for x
// above the bulk of Gamma(a, 1), Q = 1 − P. With t = x + u,
//
//	∂Q/∂a/(x p) = (1/x) ∫_0^∞ (log(x+u) − ψ(a)) (1 + u/x)^(a−1) e^(−u) du,
//
// whose integrand decays at least like e^(−ru), r = 1 − (a−1)/x > 0 here;
// with u = s/r it is integrated over s ∈ [0, 60] by Gauss–Legendre (the
// rest is below e^(−60)).
func dLogGammaQuantileTail(a, x float64) float64 {
	r := 1 - (a-1)/x
	if r > 1 {
		r = 1 // a < 1: the integrand decays faster than e^(−u)
	}
	psi := Digamma(a)
	f := func(s float64) float64 {
		u := s / r
		return (math.Log(x+u) - psi) * math.Exp(-u+(a-1)*math.Log1p(u/x))
	}
	return quad.Fixed(f, 0, 60, 160, quad.Legendre{}, 0) / (r * x)
}

// dirichletDraw draws one row: x_v ~ Gamma(α_v) in log space, t_v = log
// β̃_v = log x_v − log Σ x (Eq. 33), aux_v = ∂log x_v/∂α_v.
func dirichletDraw(rng *rand.Rand, lam, t, aux []float64) {
	logDirichlet(rng, func(v int) float64 { return lam[v] + 1 }, t, aux)
}

// logDirichlet writes log β̃ of a draw from the Dirichlet with shapes
// shape(0), …, shape(len(t)−1) into t, and ∂log x_v/∂shape_v of its Gamma
// draws into aux unless it is nil: SSMF's draws (from λ) and the Gibbs
// step's (from q's parameters) share it.
func logDirichlet(rng *rand.Rand, shape func(v int) float64, t, aux []float64) {
	for v := range t {
		a := shape(v)
		t[v] = logGammaOnly(rng, a)
		if aux != nil {
			aux[v] = DLogGammaQuantile(a, t[v])
		}
	}
	lse := LogSumExp(t)
	for v := range t {
		t[v] -= lse
	}
}

// dirichletNatGrad: ⟨log β̃, v⟩ = Σ v_k log x_k − (Σ v) log Σ x, so
// ∂/∂α_k = (v_k − (Σ v) β̃_k) ∂log x_k/∂α_k (Eq. 35), preconditioned by
// F = diag ψ'(α) − ψ'(Σα) 11ᵀ (Eq. 38) through Sherman–Morrison.
func dirichletNatGrad(lam, t, aux, v, out []float64) {
	var buf [StackVec]float64
	invD := Vec(buf[:], len(v)) // 1/ψ'(α_k)
	var vs, a0 float64
	for k, x := range v {
		vs += x
		a0 += lam[k] + 1
	}
	var sg, s1 float64 // 1ᵀD⁻¹g, 1ᵀD⁻¹1
	for k := range v {
		invD[k] = 1 / trigamma(lam[k]+1)
		out[k] = (v[k] - vs*math.Exp(t[k])) * aux[k] * invD[k]
		sg += out[k]
		s1 += invD[k]
	}
	c := trigamma(a0)
	coef := c * sg / (1 - c*s1)
	for k := range out {
		out[k] += coef * invD[k]
	}
}

// trigamma is ψ'(x) for x > 0, as the SSMF steps need it for every element
// of a factor: the recurrence ψ'(x) = ψ'(x+1) + 1/x² up to x ≥ 10, then the
// asymptotic series 1/x + 1/(2x²) + Σ_k B_2k/x^(2k+1) to B_14 (next term
// below 1e-16 relative there), seven times faster than Trigamma (gonum's
// Hurwitz ζ). Trigamma keeps ζ: the generated updates' results are
// recorded bit for bit (examples/internal/regress), and moving them is a
// change of its own. Tested against ζ.
func trigamma(x float64) float64 {
	if !(x > 0) || math.IsInf(x, 1) {
		return Trigamma(x) // NaN, ±Inf and x ≤ 0: the general routine
	}
	var acc float64
	for x < 10 {
		acc += 1 / (x * x)
		x++
	}
	ix := 1 / x
	ix2 := ix * ix
	return acc + ix + ix2/2 + ix*ix2*(1.0/6-ix2*(1.0/30-ix2*(1.0/42-ix2*(1.0/30-ix2*(5.0/66-ix2*(691.0/2730-ix2*7.0/6))))))
}

// betaDraw is the Dirichlet of two: t = (log x, log(1−x)) of x = G_a/(G_a+G_b).
func betaDraw(rng *rand.Rand, lam, t, aux []float64) {
	la, lb := logBeta(rng, lam[0]+1, lam[1]+1, t)
	if aux != nil {
		aux[0], aux[1] = DLogGammaQuantile(lam[0]+1, la), DLogGammaQuantile(lam[1]+1, lb)
	}
}

// logBeta writes (log x, log(1−x)) of a Beta(a, b) draw x = G_a/(G_a+G_b)
// into t and returns log G_a and log G_b.
func logBeta(rng *rand.Rand, a, b float64, t []float64) (la, lb float64) {
	la, lb = logGammaOnly(rng, a), logGammaOnly(rng, b)
	l := LogAddExp(la, lb)
	t[0], t[1] = la-l, lb-l
	return la, lb
}

func betaNatGrad(lam, t, aux, v, out []float64) {
	a, b := lam[0]+1, lam[1]+1
	vs := v[0] + v[1]
	g0 := (v[0] - vs*math.Exp(t[0])) * aux[0]
	g1 := (v[1] - vs*math.Exp(t[1])) * aux[1]
	c := trigamma(a + b)
	out[0], out[1] = solve2(trigamma(a)-c, -c, trigamma(b)-c, g0, g1)
}

// gammaDraw: λ = (a − 1, −b), x = G_a/b, t = (log x, x), aux = ∂log G_a/∂a.
func gammaDraw(rng *rand.Rand, lam, t, aux []float64) {
	a, b := lam[0]+1, -lam[1]
	lg := logGammaOnly(rng, a)
	t[0], t[1] = gammaStats(lg, b)
	if aux != nil {
		aux[0], aux[1] = DLogGammaQuantile(a, lg), 0
	}
}

// gammaStats is t = (log x, x) of x = G/b with log G = lg.
func gammaStats(lg, b float64) (logx, x float64) {
	logx = lg - math.Log(b)
	return logx, math.Exp(logx)
}

// gammaNatGrad: ⟨t, v⟩ = v₁ log x + v₂ x; ∂/∂λ₁ = (v₁ + v₂x)·∂log G/∂a and
// ∂/∂λ₂ = (v₁ + v₂x)/b; F = [[ψ'(a), 1/b], [1/b, a/b²]].
func gammaNatGrad(lam, t, aux, v, out []float64) {
	a, b := lam[0]+1, -lam[1]
	w := v[0] + v[1]*t[1]
	out[0], out[1] = solve2(trigamma(a), 1/b, a/(b*b), w*aux[0], w/b)
}

// normalDraw: λ = (m/s², −1/(2s²)), x = m + sε, t = (x, x²), aux = ε.
func normalDraw(rng *rand.Rand, lam, t, aux []float64) {
	s2 := -0.5 / lam[1]
	m, s := lam[0]*s2, math.Sqrt(s2)
	e := rng.NormFloat64()
	x := m + s*e
	t[0], t[1] = x, x*x
	if aux != nil {
		aux[0], aux[1] = e, 0
	}
}

// normalNatGrad: ∂x/∂λ = (s², 2ms² + εs³), ⟨t, v⟩' = w = v₁ + 2v₂x, and F
// (the covariance of (x, x²)) has first column (s², 2ms²) and determinant
// 2s⁶, so F⁻¹Jᵀv = w·(1 − mε/s, ε/(2s)) in closed form (a 2×2 solve would
// cancel terms of size m²s⁴ and lose all precision when |m| ≫ s).
func normalNatGrad(lam, t, aux, v, out []float64) {
	s2 := -0.5 / lam[1]
	m, s := lam[0]*s2, math.Sqrt(s2)
	w := v[0] + 2*v[1]*t[0]
	e := aux[0]
	out[0], out[1] = w*(1-m*e/s), w*e/(2*s)
}

// normalAntithetic writes t = (x, x²) of the antithetic draw x = m − sε
// = 2m − x⁺ of x⁺ = m + sε into minus, and of x = m into mean.
func normalAntithetic(lam, t, _, minus, mean []float64) {
	m := lam[0] * (-0.5 / lam[1])
	x := 2*m - t[0]
	minus[0], minus[1] = x, x*x
	mean[0], mean[1] = m, m*m
}

// antitheticNormalNatGrad is SSMF's natural gradient of a Normal factor
// from three evaluations of the local steps: given the draw x⁺ = m + sε
// (statistics v), its reflection x⁻ = m − sε (vm) and the mean m (v0).
// With f the data's part of L given β = x (Eq. 21), u = v₁ + 2v₂x is f′(x)
// (the local factors are optimal given x, Eq. 20, so only the explicit
// dependence counts), and in the Normal's mean parameters the natural
// gradient of E_q[f] is (E f′ − m E f″, ½ E f″) (Price's theorem). The
// estimate is
//
//	E f′ ≈ (u⁺ + u⁻)/2   (unbiased: x⁺ and x⁻ have the same law),
//	E f″ ≈ 2v₂⁰          (the curvature of the conditional given x = m),
//
// so λ̂ = η + ((u⁺ + u⁻)/2 − 2m v₂⁰, v₂⁰): its precision is SVI's given
// the point at the mean (always a Normal), and at its fixed point
// E f′ + ∂E_q[log p(β)]/∂m = 0, a stationary point of L(λ) in the means
// (Eq. 21); only the variances leave out the part of f″ from the local
// factors' dependence on β (Eq. 30's covariance, which SSMF-A leaves out
// of the means too). Algorithm 1's single draw estimates E f″ by Stein's
// lemma, u(x⁺) ε/s, unbiased, but it multiplies all of u's noise by ε/s,
// and s shrinks like N^(−½): on a mixture of well-separated Normal
// components its precision's step was several times the precision, the
// means went to ±10³ and beyond, and an antithetic pair with a control
// variate still left the fit wandering for tens of steps after its
// first (the local fits change abruptly over ±s while the components
// overlap). normalNatGrad keeps the single draw's form for the tests.
func antitheticNormalNatGrad(lam, t, _, v, vm, v0, out []float64) {
	m := lam[0] * (-0.5 / lam[1])
	xp := t[0]
	xm := 2*m - xp
	up, um := v[0]+2*v[1]*xp, vm[0]+2*vm[1]*xm
	h := 2 * v0[1]
	out[0], out[1] = (up+um)/2-m*h, h/2
}

// solve2 solves [[a, b], [b, c]] x = (g0, g1).
func solve2(a, b, c, g0, g1 float64) (float64, float64) {
	det := a*c - b*b
	return (c*g0 - b*g1) / det, (a*g1 - b*g0) / det
}

// The Gibbs step's draws (DrawStats), from q's ordinary parameters, with
// the same samplers as SSMF's.
func dirichletDrawStats(k int, rng *rand.Rand, params, stats [][]float64) {
	alpha := params[0]
	for r := 0; r*k < len(alpha); r++ {
		logDirichlet(rng, func(v int) float64 { return alpha[r*k+v] }, stats[0][r*k:(r+1)*k], nil)
	}
}

func betaDrawStats(_ int, rng *rand.Rand, params, stats [][]float64) {
	var t [2]float64
	for i := range params[0] {
		logBeta(rng, params[0][i], params[1][i], t[:])
		setStat(stats, 0, i, t[0])
		setStat(stats, 1, i, t[1])
	}
}

func gammaDrawStats(_ int, rng *rand.Rand, params, stats [][]float64) {
	for i := range params[0] {
		lx, x := gammaStats(logGammaOnly(rng, params[0][i]), params[1][i])
		setStat(stats, 0, i, lx)
		setStat(stats, 1, i, x)
	}
}

func normalDrawStats(_ int, rng *rand.Rand, params, stats [][]float64) {
	for i := range params[0] {
		x := params[0][i] + params[1][i]*rng.NormFloat64()
		setStat(stats, 0, i, x)
		setStat(stats, 1, i, x*x)
	}
}

func setStat(stats [][]float64, j, i int, x float64) {
	if j < len(stats) && stats[j] != nil {
		stats[j][i] = x
	}
}

// logGammaOnly is log of a Gamma(a, 1) draw, in log space for a < 1.
func logGammaOnly(rng *rand.Rand, a float64) float64 {
	if a < 1 {
		u := rng.Float64()
		for u == 0 {
			u = rng.Float64()
		}
		return math.Log(RandGamma(rng, a+1)) + math.Log(u)/a
	}
	return math.Log(RandGamma(rng, a))
}

// globalDraw is one draw β̃ of a global factor of n elements and its
// auxiliary numbers, in the natural parameters' layout.
type globalDraw struct {
	f      *reparam
	row    int // a vector family's row length
	t, aux []float64
	minus  []float64 // an antithetic family's: the reflected draw's statistics
	mean   []float64 // and the mean's
	cv     []float64 // controlledNatGrad's control variate
	old    []float64 // step's copy of λ
}

// newGlobalDraw prepares the draws of a factor of family with size
// natural parameters (rows of row for a vector family); diff keeps the
// auxiliary numbers of SSMF's gradient (SSMF-A does not need them).
func newGlobalDraw(family string, size, row int, diff bool) *globalDraw {
	gd := &globalDraw{f: reparams[family], row: max(row, 1), t: make([]float64, size)}
	if diff {
		gd.aux = make([]float64, size)
	}
	if diff && gd.f.antithetic != nil {
		gd.minus, gd.mean = make([]float64, size), make([]float64, size)
	}
	return gd
}

// chunks is the number of independent pieces of the factor: rows of a
// vector family, blocks of elementwise ones. Each draws from its own
// stream, so the draw does not depend on the workers.
func (gd *globalDraw) chunks() (n, per int) {
	if gd.f.vector {
		return len(gd.t) / gd.row, gd.row
	}
	elems := len(gd.t) / gd.f.stats
	return (elems + drawBlock - 1) / drawBlock, drawBlock
}

const drawBlock = 256

// visit calls fn for each row (vector family) or element of chunk c with
// views of arrays (each in the natural layout; nil stays nil): a row's
// slices, or an element's statistics gathered from their blocks into small
// arrays and scattered back after fn.
func (gd *globalDraw) visit(c int, arrays [][]float64, fn func(v [][]float64)) {
	var viewBuf [6][]float64
	views := viewBuf[:len(arrays)]
	if gd.f.vector {
		lo, hi := c*gd.row, (c+1)*gd.row
		for k, a := range arrays {
			if a != nil {
				views[k] = a[lo:hi]
			}
		}
		fn(views)
		return
	}
	s := gd.f.stats
	n := len(gd.t) / s
	var bufs [6][maxNatural]float64
	for i := c * drawBlock; i < min((c+1)*drawBlock, n); i++ {
		for k, a := range arrays {
			if a != nil {
				for j := 0; j < s; j++ {
					bufs[k][j] = a[j*n+i]
				}
				views[k] = bufs[k][:s]
			}
		}
		fn(views)
		for k, a := range arrays {
			if a != nil {
				for j := 0; j < s; j++ {
					a[j*n+i] = bufs[k][j]
				}
			}
		}
	}
}

// sample draws β̃ from q(β) with natural parameters lam, chunk c from
// the stream (seed, c), and, for an antithetic family under Algorithm 1,
// the statistics of its reflection and of the mean.
func (gd *globalDraw) sample(lam []float64, seed uint64, workers int) {
	nc, _ := gd.chunks()
	ParallelFor(nc, workers, func(_, c int) {
		rng := rand.New(rand.NewPCG(seed, uint64(c)))
		gd.visit(c, [][]float64{lam, gd.t, gd.aux, gd.minus, gd.mean}, func(v [][]float64) {
			gd.f.draw(rng, v[0], v[1], v[2])
			if v[3] != nil {
				gd.f.antithetic(v[0], v[1], v[2], v[3], v[4])
			}
		})
	})
}

// Evaluations of the local steps in a step of Algorithm 1 with an
// antithetic family among the globals: given the draw, its reflection and
// the mean.
const (
	evalDraw = iota
	evalMinus
	evalMean
	antitheticEvals
)

// at is the statistics the local steps see in evaluation i of an
// antithetic step: an antithetic family's draw, reflection or mean; the
// other families' draw in all three.
func (gd *globalDraw) at(i int) []float64 {
	switch {
	case gd.minus == nil || i == evalDraw:
		return gd.t
	case i == evalMinus:
		return gd.minus
	}
	return gd.mean
}

// antithetic reports whether the factor's gradient is estimated from the
// three evaluations under Algorithm 1.
func (gd *globalDraw) antithetic() bool { return gd.minus != nil }

// natGrad replaces v (the minibatch's scaled statistics Σ η_b, in the
// natural layout) by F(λ)⁻¹ J(u, λ)ᵀ v for the current draw (Eq. 26). With
// more, the statistics of the other evaluations of an antithetic step
// (evalMinus and evalMean), it is their estimate: the family's
// antiNatGrad, or, for a family drawn once, the average of the single
// estimates from the three (each unbiased: the family's draw is the same
// in all three, and the others' points have the law of the draw or do not
// depend on it).
func (gd *globalDraw) natGrad(lam, v []float64, more [][]float64, workers int) {
	nc, _ := gd.chunks()
	var vm, v0 []float64
	if more != nil {
		vm, v0 = more[0], more[1]
	}
	ParallelFor(nc, workers, func(_, c int) {
		var buf, buf2 [StackVec]float64
		gd.visit(c, [][]float64{lam, gd.t, gd.aux, v, vm, v0}, func(x [][]float64) {
			out := Vec(buf[:], len(x[3]))
			switch {
			case x[4] == nil:
				gd.f.natGrad(x[0], x[1], x[2], x[3], out)
			case gd.minus != nil:
				gd.f.antiNatGrad(x[0], x[1], x[2], x[3], x[4], x[5], out)
			default:
				gd.f.natGrad(x[0], x[1], x[2], x[3], out)
				for _, w := range x[4:6] {
					o := Vec(buf2[:], len(w))
					gd.f.natGrad(x[0], x[1], x[2], w, o)
					for i := range out {
						out[i] += o[i]
					}
				}
				for i := range out {
					out[i] /= 3
				}
			}
			copy(x[3], out)
		})
	})
}

// controlledNatGrad replaces v, the minibatch's scaled statistics, by
// Algorithm 1's gradient term with a control variate:
//
//	c + F⁻¹Jᵀ(v − c),   c = λ − η_prior,
//
// which has the expectation of F⁻¹Jᵀv (Eq. 26) since E_u[J] = F (Eq. 27)
// and c does not depend on the draw: it is Eq. 28's decomposition with
// the current λ − η standing for N·η̄. Near the optimum v − c is small, and
// so is the noise F⁻¹ multiplies; without it the noise of the Dirichlet's
// concentration direction (F is nearly singular along α) takes λ̂ outside
// the family in most steps on LDA. prior writes η_prior into its argument.
// more, if not nil, holds the other evaluations' statistics (natGrad),
// from which the control variate is subtracted too (an antithetic
// family's estimate is exact for statistics that do not depend on the
// draw, so the control changes nothing there).
func (gd *globalDraw) controlledNatGrad(lam, v []float64, more [][]float64, prior func([]float64), workers int) {
	c := Grow(&gd.cv, len(v))
	clear(c)
	prior(c)
	for i := range c {
		c[i] = lam[i] - c[i]
		v[i] -= c[i]
		for _, w := range more {
			w[i] -= c[i]
		}
	}
	gd.natGrad(lam, v, more, workers)
	for i := range c {
		v[i] += c[i]
	}
}

// step moves lam to (1 − ρ)·lam + ρ·hat like NaturalStep, but row by row
// (element by element) shortens ρ by halves where the full step would
// leave the family (SSMF's gradient, unlike SVI's, is not a convex
// combination of valid parameters); a row no shortening keeps inside
// stays where it was. It returns the relative change and the number of
// rows or elements whose step was shortened.
func (gd *globalDraw) step(lam, hat []float64, rho float64) (change float64, short int) {
	old := Grow(&gd.old, len(lam))
	copy(old, lam)
	nc, _ := gd.chunks()
	for c := 0; c < nc; c++ {
		gd.visit(c, [][]float64{lam, old, hat}, func(v [][]float64) {
			l, o, h := v[0], v[1], v[2]
			r := rho
			for tries := 0; ; tries++ {
				for i := range l {
					l[i] = (1-r)*o[i] + r*h[i]
				}
				if gd.f.valid(l) {
					break
				}
				r /= 2
				if tries == 59 {
					copy(l, o)
					break
				}
			}
			if r != rho {
				short++
			}
		})
	}
	var diff, norm float64
	for i, x := range lam {
		diff += (x - old[i]) * (x - old[i])
		norm += old[i] * old[i]
	}
	return math.Sqrt(diff) / math.Max(math.Sqrt(norm), 1), short
}
