package runtime

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mathext"
)

// Gaussian is a fitted multivariate normal factor q(θ) = N(Mean, Cov) as it
// appears in a Result.
type Gaussian struct {
	Family string      `json:"family"`
	Mean   []float64   `json:"mean"`
	Cov    [][]float64 `json:"cov"`
	// Constrained, for a constrained latent fitted on the unconstrained
	// scale (Mean and Cov are q's on that scale), summarizes each
	// coordinate on the constrained scale (constrained.go); nil otherwise.
	Constrained *Constrained `json:"constrained,omitempty"`
}

// NewGaussian copies mean and the flat row-major covariance into a Gaussian.
func NewGaussian(family string, mean, cov []float64) *Gaussian {
	n := len(mean)
	g := &Gaussian{Family: family, Mean: append([]float64(nil), mean...), Cov: make([][]float64, n)}
	for i := range g.Cov {
		g.Cov[i] = append([]float64(nil), cov[i*n:(i+1)*n]...)
	}
	return g
}

// SD returns the marginal standard deviations sqrt(diag(Cov)).
func (g *Gaussian) SD() []float64 {
	sd := make([]float64, len(g.Mean))
	for i := range sd {
		sd[i] = math.Sqrt(g.Cov[i][i])
	}
	return sd
}

// TraceProd returns Σ_ij a_ij b_ij, which is Tr{A B} for symmetric A, B.
func TraceProd(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// GaussianEntropy is the entropy of N(·, cov) for an n×n covariance:
// ½log|cov| + (n/2)(1 + log 2π). It returns −Inf if cov is not positive
// definite.
func GaussianEntropy(cov []float64, n int) float64 {
	ld, ok := LogDetSPD(cov, n)
	if !ok {
		return math.Inf(-1)
	}
	return 0.5*ld + 0.5*float64(n)*(1+math.Log(2*math.Pi))
}

// NegInvSPD sets dst = (−h)⁻¹ for a negative-definite h (a Hessian at a
// maximum). It reports false, leaving dst unspecified, otherwise.
func NegInvSPD(dst, h []float64, n int) bool {
	neg := make([]float64, n*n)
	for i, v := range h {
		neg[i] = -v
	}
	return InvSPD(dst, neg, n)
}

// Identity sets a to the n×n identity matrix.
func Identity(a []float64, n int) {
	for i := range a[:n*n] {
		a[i] = 0
	}
	for i := 0; i < n; i++ {
		a[i*n+i] = 1
	}
}

// Kronecker is the Kronecker delta: 1 if i == j, else 0.
func Kronecker(i, j int) float64 {
	if i == j {
		return 1
	}
	return 0
}

// Zeta3 is the Hurwitz zeta function ζ(3, x); ψ₂(x) = −2ζ(3, x).
func Zeta3(x float64) float64 { return mathext.Zeta(3, x) }

// Zeta4 is ζ(4, x).
func Zeta4(x float64) float64 { return mathext.Zeta(4, x) }

// Zeta5 is ζ(5, x).
func Zeta5(x float64) float64 { return mathext.Zeta(5, x) }

// Zeta6 is ζ(6, x).
func Zeta6(x float64) float64 { return mathext.Zeta(6, x) }

// NegInvSPDDamped sets dst = (−h + λI)⁻¹ for the smallest λ of 0, ε, 10ε,
// 100ε, … (ε = 1e-8·(1+max|h_ii|)) that makes −h + λI positive definite,
// and returns λ: 0 when h is negative definite, as at a maximum. It reports
// false, leaving dst unspecified, if h has non-finite entries.
func NegInvSPDDamped(dst, h []float64, n int) (float64, bool) {
	if NegInvSPD(dst, h, n) {
		return 0, true
	}
	scale := 0.0
	for i := 0; i < n; i++ {
		scale = math.Max(scale, math.Abs(h[i*n+i]))
	}
	if math.IsNaN(scale) || math.IsInf(scale, 0) {
		return 0, false
	}
	neg := make([]float64, n*n)
	for lam := 1e-8 * (1 + scale); lam < 1e30; lam *= 10 {
		for i, v := range h {
			neg[i] = -v
		}
		for i := 0; i < n; i++ {
			neg[i*n+i] += lam
		}
		if InvSPD(dst, neg, n) {
			return lam, true
		}
	}
	return 0, false
}

// Normal is the fitted normal factor q(θ) = N(Mean, SD²) of a scalar latent
// as it appears in a Result. Generated code fits it as a Gaussian over a
// one-element vector; NewNormal and Flat convert between the two.
type Normal struct {
	Family string  `json:"family"`
	Mean   float64 `json:"mean"`
	SD     float64 `json:"sd"`
	// Constrained, for a constrained latent fitted on the unconstrained
	// scale (Mean and SD are q's on that scale), summarizes it on the
	// constrained scale (constrained.go); nil otherwise.
	Constrained *ConstrainedScalar `json:"constrained,omitempty"`
}

// NewNormal is the Normal of the one-element Gaussian with mean mean[0]
// and variance cov[0].
func NewNormal(mean, cov []float64) *Normal {
	return &Normal{Family: "Normal", Mean: mean[0], SD: math.Sqrt(cov[0])}
}

// Flat returns the mean and variance of a starting Normal as one-element
// slices, checking that the sd is positive and finite.
func (g *Normal) Flat(what string) (mean, cov []float64, err error) {
	if g == nil {
		return nil, nil, fmt.Errorf("start: latent %q is missing", what)
	}
	if !(g.SD > 0) || math.IsInf(g.SD, 0) || math.IsNaN(g.Mean) || math.IsInf(g.Mean, 0) {
		return nil, nil, fmt.Errorf("start: latent %q has mean %v and sd %v; want a finite mean and a positive, finite sd", what, g.Mean, g.SD)
	}
	return []float64{g.Mean}, []float64{g.SD * g.SD}, nil
}
