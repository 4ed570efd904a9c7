package main

import (
	"fmt"
	"math"

	"github.com/vigen-go/vigen/runtime"
)

// The factorial mixture model (FMM) of Mandt et al. (2016) §4, Eq. 12
// (Ghahramani 1995; Doshi et al. 2009):
//
//	μ_k ~ N(0, σ_μ² I_D),  Z_nk ~ Bernoulli(π),  X_n ~ N(Σ_k Z_nk μ_k, σ_n² I_D),
//
// k = 1..K, n = 1..N. vigen's modelling language cannot express it yet (a
// conjugate Bernoulli latent, and the coupled elementwise updates of the
// Z_nk inside a sum), so it is written here by hand on the runtime's generic
// coordinate ascent (runtime.FitCA), as examples/ncvmp does for softmax
// regression.
//
// Mean field: q(Z_nk) = Bernoulli(ν_nk) and q(μ_k) = N(m_k, s_k² I_D), one
// isotropic Gaussian per component. The isotropy is no restriction: given
// q(Z), the optimal q(μ_k) (even over all densities of μ_k, or of its D
// elements separately) is Gaussian with precision 1/σ_μ² + Σ_n E[Z_nk²]/σ_n²
// in every element, so the coordinate update lands in this family.
//
// The units of FitCA are the data points n. Point n's statements are X_n's
// and the Z_nk's; tempering divides their log density by T (Mandt et al.
// Eq. 2) and leaves the prior of μ alone. The updates, with 1/T = invT
// (1 untempered), are, sequentially over k,
//
//	logit ν_nk = invT·[log(π/(1−π)) + (m_k·(x_n − Σ_{j≠k} ν_nj m_j) − ½(|m_k|² + D s_k²))/σ_n²]
//
// within a point until it settles, and for the globals, sequentially over k,
// in natural parameters (coefficients of μ_k and of |μ_k|²),
//
//	λ_k = (Σ_n invT·ν_nk (x_n − Σ_{j≠k} ν_nj m_j)/σ_n²,
//	       −1/(2σ_μ²) − Σ_n invT·ν_nk/(2σ_n²)),
//
// i.e. s_k² = 1/(1/σ_μ² + invT Σ_n ν_nk/σ_n²), m_k = s_k² λ_k[:D]. The
// layout of a global factor's natural parameter is thus D + 1 numbers:
// m_k/s_k² elementwise, then −1/(2 s_k²).
//
// The ELBO is exact. With E[Z_nk²] = ν_nk and the mean-field cross terms
// E[Z_nk Z_nj μ_k·μ_j] = ν_nk ν_nj m_k·m_j (k ≠ j),
//
//	E‖x_n − Σ_k Z_nk μ_k‖² = ‖x_n‖² − 2Σ_k ν_nk x_n·m_k + Σ_k ν_nk (|m_k|² + D s_k²)
//	                         + Σ_{k≠j} ν_nk ν_nj m_k·m_j,
//
// and E log p(x_n, z_n | μ) = −(D/2) log 2πσ_n² − E‖…‖²/(2σ_n²) +
// Σ_k [ν_nk log π + (1 − ν_nk) log(1 − π)] (UnitLogJoint); the ELBO adds
// the Bernoulli entropies, E log p(μ_k) = −(D/2) log 2πσ_μ² −
// (|m_k|² + D s_k²)/(2σ_μ²) and the Gaussian entropies (D/2) log 2πe s_k².

// fmmModel holds the data and hyperparameters of an FMM and the inverse
// temperatures its updates read.
type fmmModel struct {
	x               []float64 // N×D, row-major
	xx              []float64 // ‖x_n‖²
	n, d, k         int
	sigmaN, sigmaMu float64
	pi              float64
	localTol        float64
	localMaxIter    int
	startS2         float64
	logitPi         float64
	temper          runtime.Temper
}

// fmmState is q: ν (N×K), m (K×D), s² (K), and what the updates read
// besides: the Gram matrix G_kj = m_k·m_j and the residuals r_n = x_n −
// Σ_j ν_nj m_j (N×D), which UpdateUnit recomputes and SetNatural keeps up
// to date (refresh recomputes both).
type fmmState struct {
	nu []float64
	m  []float64
	s2 []float64
	g  []float64
	r  []float64
}

// fmmWorker is one worker's scratch space.
type fmmWorker struct {
	r, prev, eta, old []float64
	trouble           runtime.Trouble
}

// fmmResult is a fit: the run's record and q's component means and
// variances.
type fmmResult struct {
	runtime.Run
	M  []float64 // K×D, E[μ]
	S2 []float64 // K
}

func newFMMModel(x []float64, d, k int, sigmaN, sigmaMu, pi float64) *fmmModel {
	n := len(x) / d
	f := &fmmModel{x: x, n: n, d: d, k: k, sigmaN: sigmaN, sigmaMu: sigmaMu, pi: pi,
		localTol: runtime.DefaultLocalTol, localMaxIter: runtime.DefaultLocalMaxIter, xx: make([]float64, n)}
	f.logitPi = math.Log(pi / (1 - pi))
	f.startS2 = 1 / (1/(sigmaMu*sigmaMu) + float64(n)*pi/(sigmaN*sigmaN))
	for i := 0; i < n; i++ {
		f.xx[i] = dot(f.xn(i), f.xn(i))
	}
	return f
}

func (f *fmmModel) xn(n int) []float64 { return f.x[n*f.d : (n+1)*f.d] }

func dot(a, b []float64) float64 {
	s := 0.0
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

// sigmoid is the logistic function, without overflow either side.
func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// newState returns a random start from seed: every m_k drawn from the prior
// N(0, σ_μ² I), s_k = σ_μ, and ν = π (which the first iteration, updating
// the points first, overwrites).
func (f *fmmModel) newState(seed uint64) *fmmState {
	rng := runtime.NewRand(seed)
	q := &fmmState{nu: make([]float64, f.n*f.k), m: make([]float64, f.k*f.d), s2: make([]float64, f.k),
		g: make([]float64, f.k*f.k), r: make([]float64, f.n*f.d)}
	for i := range q.m {
		q.m[i] = f.sigmaMu * rng.NormFloat64()
	}
	for k := range q.s2 {
		q.s2[k] = f.startS2
	}
	for i := range q.nu {
		q.nu[i] = f.pi
	}
	f.refresh(q)
	return q
}

func (f *fmmModel) mk(q *fmmState, k int) []float64 { return q.m[k*f.d : (k+1)*f.d] }

// refresh recomputes the Gram matrix and the residuals from ν and m.
func (f *fmmModel) refresh(q *fmmState) {
	for k := 0; k < f.k; k++ {
		for j := 0; j < f.k; j++ {
			q.g[k*f.k+j] = dot(f.mk(q, k), f.mk(q, j))
		}
	}
	for n := 0; n < f.n; n++ {
		f.residual(q, n, q.r[n*f.d:(n+1)*f.d])
	}
}

// residual writes x_n − Σ_j ν_nj m_j into r.
func (f *fmmModel) residual(q *fmmState, n int, r []float64) {
	copy(r, f.xn(n))
	for j := 0; j < f.k; j++ {
		v := q.nu[n*f.k+j]
		for i, m := range f.mk(q, j) {
			r[i] -= v * m
		}
	}
}

// nuNatural is the untempered natural parameter (logit) of q(Z_nk)'s
// optimum given r = x_n − Σ_j ν_nj m_j.
func (f *fmmModel) nuNatural(q *fmmState, n, k int, r []float64) float64 {
	nu := q.nu[n*f.k+k]
	mm := q.g[k*f.k+k]
	a := dot(f.mk(q, k), r) + nu*mm // m_k·(x_n − Σ_{j≠k} ν_nj m_j)
	return f.logitPi + (a-0.5*(mm+float64(f.d)*q.s2[k]))/(f.sigmaN*f.sigmaN)
}

// updateNu sets ν_nk to its tempered optimum, keeping the residual r of
// point n up to date, and returns the new value.
func (f *fmmModel) updateNu(q *fmmState, n, k int, invT float64, r []float64) float64 {
	i := n*f.k + k
	nu := sigmoid(invT * f.nuNatural(q, n, k, r))
	if dv := nu - q.nu[i]; dv != 0 {
		for j, m := range f.mk(q, k) {
			r[j] -= dv * m
		}
	}
	q.nu[i] = nu
	return nu
}

func (f *fmmModel) Shape(*fmmState) runtime.CAShape {
	return runtime.CAShape{Units: f.n, Globals: true}
}

func (f *fmmModel) NewWorker(tr runtime.Trouble) *fmmWorker {
	return &fmmWorker{r: make([]float64, f.d), prev: make([]float64, f.k),
		eta: make([]float64, f.d+1), old: make([]float64, f.d+1), trouble: tr}
}

// UpdateUnit sweeps over point n's ν_nk, k = 1..K in turn, until the
// largest relative change of a sweep falls below LocalTol.
func (f *fmmModel) UpdateUnit(q *fmmState, w *fmmWorker, n int) bool {
	invT := f.temper.At(n)
	f.residual(q, n, w.r)
	nu := q.nu[n*f.k : (n+1)*f.k]
	for sweep := 0; sweep < f.localMaxIter; sweep++ {
		copy(w.prev, nu)
		for k := 0; k < f.k; k++ {
			f.updateNu(q, n, k, invT, w.r)
		}
		if runtime.L2Change(nu, w.prev) < f.localTol {
			copy(q.r[n*f.d:(n+1)*f.d], w.r)
			return true
		}
	}
	copy(q.r[n*f.d:(n+1)*f.d], w.r)
	return false
}

// UpdateGlobals updates q(μ_k), k = 1..K in turn, untempered, exactly as
// the runtime's tempered update does at 1/T = 1 (the units' parts summed
// in unit order, then the prior's).
func (f *fmmModel) UpdateGlobals(q *fmmState, w *fmmWorker) float64 {
	change := 0.0
	for g := 0; g < f.k; g++ {
		f.Natural(q, g, w.old)
		clear(w.eta)
		for n := 0; n < f.n; n++ {
			f.UnitNatural(q, w, g, n, 1, w.eta)
		}
		f.PriorNatural(q, g, w.eta)
		f.SetNatural(q, g, w.eta)
		change = math.Max(change, runtime.L2Change(w.eta, w.old))
	}
	return change
}

// Stochastic describes the global factors: μ_1..μ_K, D + 1 natural
// parameters each.
func (f *fmmModel) Stochastic() runtime.SVIShape {
	s := runtime.SVIShape{}
	for k := 0; k < f.k; k++ {
		s.Natural = append(s.Natural, f.d+1)
		s.Names = append(s.Names, fmt.Sprintf("mu[%d]", k+1))
	}
	return s
}

func (f *fmmModel) Natural(q *fmmState, g int, eta []float64) {
	for i, m := range f.mk(q, g) {
		eta[i] = m / q.s2[g]
	}
	eta[f.d] = -0.5 / q.s2[g]
}

func (f *fmmModel) SetNatural(q *fmmState, g int, eta []float64) {
	s2 := -0.5 / eta[f.d]
	q.s2[g] = s2
	m := f.mk(q, g)
	for n := 0; n < f.n; n++ {
		nu := q.nu[n*f.k+g]
		if nu == 0 {
			continue
		}
		r := q.r[n*f.d : (n+1)*f.d]
		for i := range m {
			r[i] -= nu * (eta[i]*s2 - m[i])
		}
	}
	for i := range m {
		m[i] = eta[i] * s2
	}
	for j := 0; j < f.k; j++ {
		v := dot(m, f.mk(q, j))
		q.g[g*f.k+j], q.g[j*f.k+g] = v, v
	}
}

func (f *fmmModel) PriorNatural(_ *fmmState, _ int, eta []float64) {
	eta[f.d] -= 0.5 / (f.sigmaMu * f.sigmaMu)
}

// UnitNatural adds point n's part of q(μ_g)'s natural parameter times
// invT: ν_ng (x_n − Σ_{j≠g} ν_nj m_j)/σ_n² and −ν_ng/(2σ_n²).
func (f *fmmModel) UnitNatural(q *fmmState, w *fmmWorker, g, n int, invT float64, eta []float64) {
	nu := q.nu[n*f.k+g]
	if nu == 0 {
		return
	}
	r := q.r[n*f.d : (n+1)*f.d]
	c := invT * nu / (f.sigmaN * f.sigmaN)
	for i, m := range f.mk(q, g) {
		eta[i] += c * (r[i] + nu*m)
	}
	eta[f.d] -= 0.5 * c
}

func (f *fmmModel) Tempering() *runtime.Temper { return &f.temper }

// expectedSq is E_q‖x_n − Σ_k Z_nk μ_k‖².
func (f *fmmModel) expectedSq(q *fmmState, n int) float64 {
	nu := q.nu[n*f.k : (n+1)*f.k]
	x := f.xn(n)
	s := f.xx[n]
	for k, v := range nu {
		s += -2*v*dot(x, f.mk(q, k)) + v*(q.g[k*f.k+k]+float64(f.d)*q.s2[k])
		for j, u := range nu {
			if j != k {
				s += v * u * q.g[k*f.k+j]
			}
		}
	}
	return s
}

// UnitLogJoint is E_q[log p(x_n, z_n | μ)].
func (f *fmmModel) UnitLogJoint(q *fmmState, n int) float64 {
	s2 := f.sigmaN * f.sigmaN
	lj := -0.5*float64(f.d)*math.Log(2*math.Pi*s2) - f.expectedSq(q, n)/(2*s2)
	lp, lq := math.Log(f.pi), math.Log(1-f.pi)
	for _, v := range q.nu[n*f.k : (n+1)*f.k] {
		lj += v*lp + (1-v)*lq
	}
	return lj
}

// bernoulliEntropy is −ν log ν − (1−ν) log(1−ν), 0 at 0 and 1.
func bernoulliEntropy(v float64) float64 {
	h := 0.0
	if v > 0 {
		h -= v * math.Log(v)
	}
	if v < 1 {
		h -= (1 - v) * math.Log1p(-v)
	}
	return h
}

// globalELBO is the ELBO's part of q(μ): E log p(μ) − E log q(μ).
func (f *fmmModel) globalELBO(q *fmmState) float64 {
	d := float64(f.d)
	v := f.sigmaMu * f.sigmaMu
	e := 0.0
	for k := 0; k < f.k; k++ {
		e += -0.5*d*math.Log(2*math.Pi*v) - (q.g[k*f.k+k]+d*q.s2[k])/(2*v) + 0.5*d*math.Log(2*math.Pi*math.E*q.s2[k])
	}
	return e
}

// unitEntropy is Σ_k H(q(Z_nk)).
func (f *fmmModel) unitEntropy(q *fmmState, n int) float64 {
	h := 0.0
	for _, v := range q.nu[n*f.k : (n+1)*f.k] {
		h += bernoulliEntropy(v)
	}
	return h
}

// ELBO is the untempered bound, the points' parts computed on workers
// goroutines and added in point order.
func (f *fmmModel) ELBO(q *fmmState, workers int, perUnit []float64) float64 {
	runtime.ParallelFor(f.n, workers, func(_, n int) {
		perUnit[n] = f.UnitLogJoint(q, n) + f.unitEntropy(q, n)
	})
	e := f.globalELBO(q)
	for _, v := range perUnit[:f.n] {
		e += v
	}
	return e
}

// temperedELBO is Eq. 4's A(q; T) at inverse temperature invT.
func (f *fmmModel) temperedELBO(q *fmmState, invT float64) float64 {
	e := f.globalELBO(q)
	for n := 0; n < f.n; n++ {
		e += invT*f.UnitLogJoint(q, n) + f.unitEntropy(q, n)
	}
	return e
}

func (f *fmmModel) Copy(dst, src *fmmState) *fmmState {
	if dst == nil {
		dst = new(fmmState)
	}
	dst.nu = append(dst.nu[:0], src.nu...)
	dst.m = append(dst.m[:0], src.m...)
	dst.s2 = append(dst.s2[:0], src.s2...)
	dst.g = append(dst.g[:0], src.g...)
	dst.r = append(dst.r[:0], src.r...)
	return dst
}

func (f *fmmModel) NonFinite(q *fmmState) string {
	for _, p := range []struct {
		name string
		x    []float64
	}{{"nu", q.nu}, {"mu mean", q.m}, {"mu variance", q.s2}} {
		if i := runtime.FirstNonFinite(p.x); i >= 0 {
			return fmt.Sprintf("%s[%d] = %v", p.name, i, p.x[i])
		}
	}
	return ""
}

func (f *fmmModel) Result(run runtime.Run, q *fmmState, _ struct{}) fmmResult {
	return fmmResult{Run: run, M: append([]float64(nil), q.m...), S2: append([]float64(nil), q.s2...)}
}

// UnitLogNormalizers returns the function writing the log normalizer of
// one point's tempered density at each temperature of grid
// (runtime.UnitNormalizer, for local variational tempering): ∫ N(x_n; Σ_k z_nk μ_k, σ_n² I)^a dx_n · Π_k Σ_z
// (π^z (1−π)^(1−z))^a = (2πσ_n²)^(D(1−a)/2) a^(−D/2) Π_k (π^a + (1−π)^a)
// whatever μ, a = 1/T: fmmLogC for one point.
func (f *fmmModel) UnitLogNormalizers(_ *fmmState, grid []float64) func(int, []float64) {
	point := fmmLogC(grid, 1, f.d, f.k, f.pi, f.sigmaN, false)
	return func(_ int, out []float64) { copy(out, point) }
}

var (
	_ runtime.UnitNormalizer[*fmmState]                           = (*fmmModel)(nil)
	_ runtime.CAModel[*fmmState, *fmmWorker, struct{}, fmmResult] = (*fmmModel)(nil)
	_ runtime.SVIGlobals[*fmmState, *fmmWorker]                   = (*fmmModel)(nil)
	_ runtime.Tempered[*fmmState]                                 = (*fmmModel)(nil)
)

// fmmLogC is log C(T) of the FMM (Mandt et al. Eq. 3) at each temperature
// of grid, for N points of dimension D, K components with prior
// probability π and noise sd σ_n. With a = 1/T, the integral over x_n of
// N(x_n; Σ_k z_nk μ_k, σ_n² I)^a is (2πσ_n²)^(D(1−a)/2) a^(−D/2) whatever μ
// and z_n, so μ integrates out against its prior, and the sum over each
// Z_nk of π^(a z)(1−π)^(a(1−z)) is π^a + (1−π)^a:
//
//	log C(T) = N D [½ log T + ½(1 − 1/T) log 2πσ_n²] + N K log(π^(1/T) + (1−π)^(1/T)).
//
// The paper (§4 and Appendix C) drops the term in log 2πσ_n² (it
// normalizes the tempered Gaussian by (2πσ_n²)^(−D/2) rather than
// (2πσ_n²)^(−D/(2T))); paper = true returns its formula instead.
func fmmLogC(grid []float64, n, d, k int, pi, sigmaN float64, paper bool) []float64 {
	out := make([]float64, len(grid))
	for m, T := range grid {
		a := 1 / T
		c := 0.5 * math.Log(T)
		if !paper {
			c += 0.5 * (1 - a) * math.Log(2*math.Pi*sigmaN*sigmaN)
		}
		out[m] = float64(n)*float64(d)*c + float64(n)*float64(k)*math.Log(math.Pow(pi, a)+math.Pow(1-pi, a))
	}
	return out
}
