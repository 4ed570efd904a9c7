package runtime

import (
	"fmt"
	"math"
)

// This file holds the closed-form M-steps of variational EM that generated
// code calls after accumulating expected sufficient statistics.

// ProbFloor replaces probabilities of exactly 0 in M-step estimates, so
// that log β stays finite and 0·log β is 0 in the ELBO (ctm-c floors log 0
// at −1000 for the same reason). Entries this small carry no mass.
const ProbFloor = 1e-300

// SimplexRows turns each row of x (rows of length k) from expected counts
// η into probabilities: x_row ∝ max(η + smooth, 0), with zeros raised to
// ProbFloor. A row whose total is not positive (a topic no token was
// assigned to) becomes uniform. It returns the number of such rows.
func SimplexRows(x []float64, k int, smooth float64) int {
	empty := 0
	for lo := 0; lo < len(x); lo += k {
		row := x[lo : lo+k]
		var sum float64
		for j, v := range row {
			v = math.Max(v+smooth, 0)
			row[j] = v
			sum += v
		}
		if !(sum > 0) || math.IsInf(sum, 0) {
			Fill(row, 1/float64(k))
			empty++
			continue
		}
		inv := 1 / sum
		for j := range row {
			row[j] = math.Max(row[j]*inv, ProbFloor)
		}
	}
	return empty
}

// GaussStats are the expected sufficient statistics of n vectors x_d of
// length P under q: Σ_d E[x_d] and Σ_d E[x_d x_dᵀ] = Σ_d (Σ_d + m_d m_dᵀ).
type GaussStats struct {
	P     int
	N     float64
	Sum   []float64 // P
	Outer []float64 // P×P, row-major
}

// NewGaussStats returns zero statistics for vectors of length p.
func NewGaussStats(p int) *GaussStats {
	return &GaussStats{P: p, Sum: make([]float64, p), Outer: make([]float64, p*p)}
}

// Add adds one unit with mean m and covariance cov (nil for a point, as
// for observed data).
func (s *GaussStats) Add(m, cov []float64) {
	p := s.P
	s.N++
	for i := 0; i < p; i++ {
		s.Sum[i] += m[i]
		row := s.Outer[i*p : (i+1)*p]
		for j := 0; j < p; j++ {
			row[j] += m[i] * m[j]
		}
		if cov != nil {
			for j := 0; j < p; j++ {
				row[j] += cov[i*p+j]
			}
		}
	}
}

// GaussStatsLen is the length of the flat form of GaussStats for vectors
// of length p, in which online EM keeps them among other statistics: N,
// then Sum (p), then Outer (p×p, row-major).
func GaussStatsLen(p int) int { return 1 + p + p*p }

// FlatGaussStats returns the statistics stored flat in flat (at least
// GaussStatsLen(p) numbers). Sum and Outer alias flat; N is copied.
func FlatGaussStats(flat []float64, p int) *GaussStats {
	return &GaussStats{P: p, N: flat[0], Sum: flat[1 : 1+p : 1+p], Outer: flat[1+p : 1+p+p*p : 1+p+p*p]}
}

// AddGaussFlat adds one unit with mean m and covariance cov (nil for a point)
// to the statistics stored flat in flat, with the arithmetic of Add, so
// that adding the units in the same order gives the same numbers.
func AddGaussFlat(flat []float64, p int, m, cov []float64) {
	s := FlatGaussStats(flat, p)
	s.Add(m, cov)
	flat[0] = s.N
}

// GaussMStep maximizes Σ_d E_q[log N(x_d; μ, Σ)] + log p(μ) + log p(Σ⁻¹)
// over the estimated ones of μ and Σ (or the precision Λ = Σ⁻¹), given the
// statistics of the x_d:
//
//	Σ̂ = (W⁻¹ + S(μ)) / (n + ν − P − 1),  S(μ) = Σ_d E[(x_d − μ)(x_d − μ)ᵀ]
//	μ̂ = (nΛ + C⁻¹)⁻¹ (Λ Σ_d E[x_d] + C⁻¹ m)
//
// with a Wishart(ν, W) prior on Λ and a N(m, C) prior on μ (Wang & Blei,
// App. C, with each unit's Σ_d included in S as the expected statistics
// require); without priors these are the sample mean and covariance. When
// both are estimated under priors they depend on each other and are
// iterated to a fixed point.
type GaussMStep struct {
	EstimateMean, EstimateCov bool
	// Precision: the covariance argument is Λ = Σ⁻¹ (MvNormalPrec).
	Precision bool
	// MeanPriorMean, MeanPriorCov give μ ~ N(m, C); nil for no prior.
	MeanPriorMean, MeanPriorCov []float64
	// WishartDOF and WishartScale give Λ ~ Wishart(ν, W); nil for none.
	WishartDOF   float64
	WishartScale []float64
	// Shrinkage λ ∈ [0, 1] pulls the estimated covariance toward the
	// scaled identity: (1 − λ)Σ̂ + λ (tr Σ̂ / P) I. It is 0 (none) by default.
	Shrinkage float64
}

// Solve updates mean and cov (a covariance, or a precision if g.Precision)
// in place from s. It reports an error, leaving them unchanged, when the
// estimate is not positive definite.
func (g *GaussMStep) Solve(s *GaussStats, mean, cov []float64) error {
	p := s.P
	if s.N == 0 {
		return nil
	}
	if g.Shrinkage < 0 || g.Shrinkage > 1 {
		return fmt.Errorf("covariance shrinkage %g is outside [0, 1]", g.Shrinkage)
	}
	mu := append([]float64(nil), mean...)
	lam := make([]float64, p*p) // precision Λ
	sig := make([]float64, p*p) // covariance Σ
	if g.Precision {
		copy(lam, cov)
		if !InvSPD(sig, lam, p) {
			return fmt.Errorf("the precision is not positive definite")
		}
	} else {
		copy(sig, cov)
		if !InvSPD(lam, sig, p) {
			return fmt.Errorf("the covariance is not positive definite")
		}
	}
	var winv, cinv []float64
	if g.WishartScale != nil {
		winv = make([]float64, p*p)
		if !InvSPD(winv, g.WishartScale, p) {
			return fmt.Errorf("the Wishart scale is not positive definite")
		}
	}
	if g.MeanPriorCov != nil {
		cinv = make([]float64, p*p)
		if !InvSPD(cinv, g.MeanPriorCov, p) {
			return fmt.Errorf("the covariance of the mean's prior is not positive definite")
		}
	}
	a := make([]float64, p*p)
	rhs := make([]float64, p)
	prev := make([]float64, p)
	coupled := g.EstimateMean && g.EstimateCov && cinv != nil
	for it := 0; it < 200; it++ {
		copy(prev, mu)
		if g.EstimateMean {
			if cinv == nil {
				for i := range mu {
					mu[i] = s.Sum[i] / s.N
				}
			} else {
				// (nΛ + C⁻¹) μ = Λ Σx + C⁻¹ m
				for i := 0; i < p; i++ {
					rhs[i] = 0
					for j := 0; j < p; j++ {
						a[i*p+j] = s.N*lam[i*p+j] + cinv[i*p+j]
						rhs[i] += lam[i*p+j]*s.Sum[j] + cinv[i*p+j]*g.MeanPriorMean[j]
					}
				}
				if !SolveSPD(mu, a, rhs, p) {
					return fmt.Errorf("the mean's M-step system is not positive definite")
				}
			}
		}
		if g.EstimateCov {
			den := s.N
			for i := 0; i < p; i++ {
				for j := 0; j < p; j++ {
					v := s.Outer[i*p+j] - mu[i]*s.Sum[j] - s.Sum[i]*mu[j] + s.N*mu[i]*mu[j]
					if winv != nil {
						v += winv[i*p+j]
					}
					sig[i*p+j] = v
				}
			}
			if winv != nil {
				den += g.WishartDOF - float64(p) - 1
			}
			if !(den > 0) {
				return fmt.Errorf("the covariance M-step divides by n + ν − P − 1 = %g", den)
			}
			var tr float64
			for i := 0; i < p; i++ {
				tr += sig[i*p+i]
			}
			for i := range sig {
				sig[i] /= den
			}
			if g.Shrinkage > 0 {
				t := tr / den / float64(p)
				for i := range sig {
					sig[i] *= 1 - g.Shrinkage
				}
				for i := 0; i < p; i++ {
					sig[i*p+i] += g.Shrinkage * t
				}
			}
			MirrorUpper(sig, p)
			if !InvSPD(lam, sig, p) {
				return fmt.Errorf("the estimated covariance is not positive definite (too few units for %d dimensions? try shrinkage)", p)
			}
		}
		if !coupled || L2Change(mu, prev) < 1e-14 {
			break
		}
	}
	if g.EstimateMean {
		copy(mean, mu)
	}
	if g.EstimateCov {
		if g.Precision {
			copy(cov, lam)
		} else {
			copy(cov, sig)
		}
	}
	return nil
}
