package main

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/vigen-go/vigen/runtime"
)

// randomFMM returns a small FMM with random data and a random state q
// (ν in (0, 1), m and s² spread).
func randomFMM(rng *rand.Rand, n, d, k int, sigmaN, sigmaMu, pi float64) (*fmmModel, *fmmState) {
	x := make([]float64, n*d)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	f := newFMMModel(x, d, k, sigmaN, sigmaMu, pi)
	q := f.newState(rng.Uint64())
	for i := range q.nu {
		q.nu[i] = 0.05 + 0.9*rng.Float64()
	}
	for i := range q.m {
		q.m[i] = rng.NormFloat64()
	}
	for j := range q.s2 {
		q.s2[j] = 0.05 + 0.3*rng.Float64()
	}
	f.refresh(q)
	return f, q
}

// logNormal is log N(x; m, v).
func logNormal(x, m, v float64) float64 {
	return -0.5*math.Log(2*math.Pi*v) - (x-m)*(x-m)/(2*v)
}

// The closed-form ELBO against a Monte Carlo estimate of
// E_q[log p(x, z, μ) − log q(z, μ)], with log p written out directly.
func TestFMMELBOMonteCarlo(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n, d, k = 3, 2, 2
	f, q := randomFMM(rng, n, d, k, 0.5, 0.7, 0.3)
	want := f.ELBO(q, 1, make([]float64, n))
	const samples = 200000
	var sum, sum2 float64
	z := make([]float64, n*k)
	mu := make([]float64, k*d)
	for s := 0; s < samples; s++ {
		v := 0.0
		for i := range mu {
			kk := i / d
			mu[i] = q.m[i] + math.Sqrt(q.s2[kk])*rng.NormFloat64()
			v += logNormal(mu[i], 0, f.sigmaMu*f.sigmaMu) - logNormal(mu[i], q.m[i], q.s2[kk])
		}
		for i := range z {
			z[i] = 0
			if rng.Float64() < q.nu[i] {
				z[i] = 1
				v += math.Log(f.pi) - math.Log(q.nu[i])
			} else {
				v += math.Log(1-f.pi) - math.Log(1-q.nu[i])
			}
		}
		for i := 0; i < n; i++ {
			for e := 0; e < d; e++ {
				mean := 0.0
				for kk := 0; kk < k; kk++ {
					mean += z[i*k+kk] * mu[kk*d+e]
				}
				v += logNormal(f.x[i*d+e], mean, f.sigmaN*f.sigmaN)
			}
		}
		sum += v
		sum2 += v * v
	}
	est := sum / samples
	se := math.Sqrt((sum2/samples - est*est) / samples)
	if math.Abs(est-want) > 5*se {
		t.Errorf("closed-form ELBO %.5f, Monte Carlo %.5f ± %.5f", want, est, se)
	}
	t.Logf("ELBO %.5f, Monte Carlo %.5f ± %.5f", want, est, se)
}

// Every tempered coordinate update, of one ν_nk or one q(μ_k) at T = 3,
// increases the tempered ELBO of Eq. 4 and maximizes it along its
// coordinate (perturbations lower it).
func TestFMMTemperedUpdatesAscend(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n, d, k = 6, 3, 3
	const invT = 1.0 / 3
	f, q := randomFMM(rng, n, d, k, 0.4, 0.7, 0.3)
	w := f.NewWorker(runtime.Trouble{})
	a := f.temperedELBO(q, invT)
	tol := 1e-10 * math.Abs(a)
	// perturbed returns A(q; T) with change applied to a copy of q.
	perturbed := func(change func(*fmmState)) float64 {
		p := f.Copy(nil, q)
		change(p)
		f.refresh(p)
		return f.temperedELBO(p, invT)
	}
	for round := 0; round < 2; round++ {
		for i := 0; i < n; i++ {
			for j := 0; j < k; j++ {
				f.updateNu(q, i, j, invT, q.r[i*d:(i+1)*d]) // keeps q's residual up to date
				b := f.temperedELBO(q, invT)
				if b < a-tol {
					t.Errorf("update of ν[%d,%d] lowered the tempered ELBO: %.12g → %.12g", i, j, a, b)
				}
				a = b
				for _, h := range []float64{-1e-3, 1e-3} { // in the logit, to stay in (0, 1)
					v := q.nu[i*k+j]
					if c := perturbed(func(p *fmmState) { p.nu[i*k+j] = sigmoid(math.Log(v/(1-v)) + h) }); c > a+tol {
						t.Errorf("logit ν[%d,%d] + %g raises the tempered ELBO above the update's: %.12g > %.12g", i, j, h, c, a)
					}
				}
			}
		}
		for g := 0; g < k; g++ {
			eta := make([]float64, d+1)
			for i := 0; i < n; i++ {
				f.UnitNatural(q, w, g, i, invT, eta)
			}
			f.PriorNatural(q, g, eta)
			f.SetNatural(q, g, eta)
			b := f.temperedELBO(q, invT)
			if b < a-tol {
				t.Errorf("update of q(μ_%d) lowered the tempered ELBO: %.12g → %.12g", g, a, b)
			}
			a = b
			for _, h := range []float64{-1e-4, 1e-4} {
				for e := 0; e < d; e++ {
					if c := perturbed(func(p *fmmState) { p.m[g*d+e] += h }); c > a+tol {
						t.Errorf("m[%d,%d] + %g raises the tempered ELBO: %.12g > %.12g", g, e, h, c, a)
					}
				}
				if c := perturbed(func(p *fmmState) { p.s2[g] *= 1 + h }); c > a+tol {
					t.Errorf("s²[%d]·(1 + %g) raises the tempered ELBO: %.12g > %.12g", g, h, c, a)
				}
			}
		}
	}
	// The same updates at T = 3 are not the untempered ones: the
	// untempered ELBO is not what they maximize.
	if e := f.ELBO(q, 1, make([]float64, n)); e == a {
		t.Errorf("tempered and untempered ELBO coincide at T = 3: %v", e)
	}
}

// At T = 1 the tempered path (local updates reading 1/T = 1, the global
// update as runtime's temperedGlobals builds it from PriorNatural and
// UnitNatural) is the untempered one bit for bit.
func TestFMMTemperedAtOneIsUntempered(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const n, d, k = 20, 4, 3
	f, q := randomFMM(rng, n, d, k, 0.3, 0.5, 0.3)
	q2 := f.Copy(nil, q)
	w := f.NewWorker(runtime.Trouble{})
	for it := 0; it < 3; it++ {
		f.temper = runtime.Temper{}
		for i := 0; i < n; i++ {
			f.UpdateUnit(q, w, i)
		}
		f.UpdateGlobals(q, w)
		f.temper = runtime.Temper{Global: 1}
		for i := 0; i < n; i++ {
			f.UpdateUnit(q2, w, i)
		}
		eta := make([]float64, d+1)
		for g := 0; g < k; g++ {
			clear(eta)
			for i := 0; i < n; i++ {
				f.UnitNatural(q2, w, g, i, f.temper.At(i), eta)
			}
			f.PriorNatural(q2, g, eta)
			f.SetNatural(q2, g, eta)
		}
	}
	if !slices.Equal(q.nu, q2.nu) || !slices.Equal(q.m, q2.m) || !slices.Equal(q.s2, q2.s2) {
		t.Errorf("the tempered path at T = 1 differs from the untempered one")
	}
	if a, b := f.ELBO(q, 1, make([]float64, n)), f.temperedELBO(q, 1); a != b {
		t.Errorf("ELBO %v ≠ tempered ELBO at T = 1 %v", a, b)
	}
}

// checkFixedPoint checks that q satisfies the tempered CAVI equations,
// written out here again, at inverse temperature invT.
func checkFixedPoint(t *testing.T, f *fmmModel, q *fmmState, invT, tol float64) {
	t.Helper()
	s2n := f.sigmaN * f.sigmaN
	worstNu, worstM, worstS := 0.0, 0.0, 0.0
	for k := 0; k < f.k; k++ {
		mk := q.m[k*f.d : (k+1)*f.d]
		mm := dot(mk, mk)
		sumNu := 0.0
		lam := make([]float64, f.d)
		for n := 0; n < f.n; n++ {
			// x_n − Σ_{j≠k} ν_nj m_j
			r := slices.Clone(f.x[n*f.d : (n+1)*f.d])
			for j := 0; j < f.k; j++ {
				if j != k {
					for e := range r {
						r[e] -= q.nu[n*f.k+j] * q.m[j*f.d+e]
					}
				}
			}
			logit := invT * (math.Log(f.pi/(1-f.pi)) + (dot(mk, r)-0.5*(mm+float64(f.d)*q.s2[k]))/s2n)
			worstNu = math.Max(worstNu, math.Abs(q.nu[n*f.k+k]-1/(1+math.Exp(-logit))))
			nu := q.nu[n*f.k+k]
			sumNu += nu
			for e := range lam {
				lam[e] += invT * nu * r[e] / s2n
			}
		}
		s2 := 1 / (1/(f.sigmaMu*f.sigmaMu) + invT*sumNu/s2n)
		worstS = math.Max(worstS, math.Abs(q.s2[k]-s2)/s2)
		for e := range lam {
			worstM = math.Max(worstM, math.Abs(q.m[k*f.d+e]-s2*lam[e]))
		}
	}
	if worstNu > tol || worstM > tol || worstS > tol {
		t.Errorf("1/T = %.3g: the fit is off its fixed point by %.2g in ν, %.2g in m, %.2g (relative) in s²", invT, worstNu, worstM, worstS)
	}
}

// FitCA's fixed points, untempered and at a constant T = 3 (AVI with a
// schedule longer than the fit), satisfy the hand-derived equations.
func TestFMMFixedPoint(t *testing.T) {
	_, x, _ := fmmData(300, 2)
	for _, T := range []float64{1, 3} {
		f := newFMMModel(x, fmmD, fmmK, fmmSigmaN, fmmSigmaMu, fmmPi)
		f.localTol = 1e-12
		q := f.newState(1)
		s := runtime.CASettings{Convergence: runtime.Convergence{MaxIter: 400, Tol: 1e-14, MeanTol: 1e-12, LocalMaxIter: 1000}.WithDefaults(), Workers: 1}
		if T > 1 {
			s.Temper = runtime.TemperSettings{Anneal: runtime.Anneal{T0: T, Length: 1e9}}
		}
		r, err := runtime.FitCA(context.Background(), runtime.CAModel[*fmmState, *fmmWorker, struct{}, fmmResult](f), q, s)
		if err != nil {
			t.Fatal(err)
		}
		if T == 1 && !r.Converged {
			t.Fatalf("not converged: %s", r.Status)
		}
		checkFixedPoint(t, f, q, 1/T, 1e-6)
		res := make([]float64, f.d)
		for n := 0; n < f.n; n++ {
			f.residual(q, n, res)
			for e, v := range res {
				if math.Abs(v-q.r[n*f.d+e]) > 1e-10 {
					t.Fatalf("T = %g: the kept residual of point %d is %v, recomputed %v", T, n, q.r[n*f.d+e], v)
				}
			}
		}
	}
}

// log C(T) against numerical integration of Eq. 3 over x (a 2-D Riemann
// sum on a fine grid, spectrally accurate for these Gaussians), with the
// Z's enumerated, for D = 1, K = 2, N = 2, at μ drawn from its prior (the
// integrand does not depend on μ, which the draws confirm).
func TestFMMLogC(t *testing.T) {
	const sigmaN, sigmaMu, pi = 0.6, 0.8, 0.3
	grid := []float64{1, 2.5, 7}
	got := fmmLogC(grid, 2, 1, 2, pi, sigmaN, false)
	paper := fmmLogC(grid, 2, 1, 2, pi, sigmaN, true)
	rng := rand.New(rand.NewPCG(7, 8))
	const L, h = 20.0, 0.1
	m := int(2 * L / h)
	for gi, T := range grid {
		a := 1 / T
		for draw := 0; draw < 2; draw++ {
			mu := []float64{sigmaMu * rng.NormFloat64(), sigmaMu * rng.NormFloat64()}
			total := 0.0
			for z := 0; z < 16; z++ { // z_11, z_12, z_21, z_22
				zz := []float64{float64(z & 1), float64(z >> 1 & 1), float64(z >> 2 & 1), float64(z >> 3 & 1)}
				lz := 0.0
				for _, v := range zz {
					lz += a * (v*math.Log(pi) + (1-v)*math.Log(1-pi))
				}
				m1 := zz[0]*mu[0] + zz[1]*mu[1]
				m2 := zz[2]*mu[0] + zz[3]*mu[1]
				s := 0.0
				for i := 0; i <= m; i++ {
					x1 := -L + float64(i)*h
					l1 := a * logNormal(x1, m1, sigmaN*sigmaN)
					for j := 0; j <= m; j++ {
						x2 := -L + float64(j)*h
						s += math.Exp(l1 + a*logNormal(x2, m2, sigmaN*sigmaN) + lz)
					}
				}
				total += s * h * h
			}
			if num := math.Log(total); math.Abs(num-got[gi]) > 1e-8 {
				t.Errorf("T = %g: log C = %.10f, numerical integration %.10f (the paper's formula %.10f)", T, got[gi], num, paper[gi])
			}
		}
		if want := 2 * 0.5 * (1 - a) * math.Log(2*math.Pi*sigmaN*sigmaN); math.Abs(got[gi]-paper[gi]-want) > 1e-12 {
			t.Errorf("T = %g: exact − paper = %v, want N D (1 − 1/T)/2 log 2πσ² = %v", T, got[gi]-paper[gi], want)
		}
	}
	if got[0] != 0 {
		t.Errorf("log C(1) = %v, want 0", got[0])
	}
}

// The matching recovers a permutation of the truth exactly.
func TestMatchComponents(t *testing.T) {
	truth := fmmTruth(rand.New(rand.NewPCG(9, 9)))
	perm := []int{3, 0, 7, 1, 6, 2, 5, 4}
	fit := make([]float64, len(truth))
	for tk, fk := range perm {
		copy(fit[fk*fmmD:(fk+1)*fmmD], truth[tk*fmmD:(tk+1)*fmmD])
	}
	got, d := matchComponents(truth, fit, fmmK, fmmD)
	if !slices.Equal(got, perm) || d != 0 {
		t.Errorf("matching %v at distance %v, want %v at 0", got, d, perm)
	}
	if !slices.Equal(permuted(fit, got, fmmD), truth) {
		t.Errorf("the matched components are not the truth")
	}
}
