package runtime

import (
	"fmt"
	"math"
	"sync"

	"gonum.org/v1/gonum/integrate/quad"
)

// This file holds the expectations that non-conjugate variational message
// passing (NCVMP; Knowles & Minka 2011, "Non-conjugate Variational Message
// Passing for Multinomial and Binary Regression") needs for a univariate
// Gaussian q(x) = N(m, v): the expected log factor
//
//	S(m, v) = E_{x~N(m,v)}[g(x)]
//
// with its partial derivatives ∂S/∂m and ∂S/∂v, from which Eq. 7 builds the
// message (see NCVMPMessage). §5.1 computes them by Gauss–Hermite
// quadrature; ncvmp_bounds.go and ncvmp_softmax.go hold the bounds the paper
// compares against.

// DefaultHermitePoints is the number of Gauss–Hermite points used when a
// caller asks for 0. It was chosen by TestHermiteAccuracyTable, which
// measures the error of S, ∂S/∂m and ∂S/∂v for the logistic factor (both
// labels) over m ∈ [−20, 20], v ∈ [1e-4, 100] against a 2000-point
// Gauss–Legendre reference. With 128 points the largest error is about
// 5e-14 for v ≤ 1 and 1.5e-9 for v ≤ 10, but 5e-4 for 10 < v ≤ 100: the
// poles of log σ at ±iπ sit π/sqrt(2v) from the real axis in the rule's
// coordinates, so the error of a fixed rule grows with v. Callers that
// expect variances near 100 and need 1e-8 should ask for about 1000 points
// (3.9e-9 measured; gonum computes rules above 200 points asymptotically).
const DefaultHermitePoints = 128

// HermiteRule is an n-point Gauss–Hermite rule for expectations under a
// Gaussian: E_{x~N(m,v)}[f(x)] ≈ Σ_i W_i f(m + sqrt(2v)·X_i), with X_i the
// nodes of the physicists' rule (weight e^{−x²}) and W_i its weights divided
// by sqrt(π), so that Σ_i W_i = 1. Nodes and weights come from gonum's
// quad.Hermite. A rule is immutable and safe for concurrent use.
type HermiteRule struct {
	X, W []float64
}

var hermiteRules sync.Map // int → *HermiteRule

// Hermite returns the n-point rule (DefaultHermitePoints if n is 0),
// computed on first use and cached, so later calls for the same n neither
// compute nor allocate. It panics if n < 0.
func Hermite(n int) *HermiteRule {
	if n == 0 {
		n = DefaultHermitePoints
	}
	if n < 0 {
		panic(fmt.Sprintf("runtime.Hermite: %d points", n))
	}
	if r, ok := hermiteRules.Load(n); ok {
		return r.(*HermiteRule)
	}
	x, w := make([]float64, n), make([]float64, n)
	quad.Hermite{}.FixedLocations(x, w, math.Inf(-1), math.Inf(1))
	var sum float64
	for _, wi := range w {
		sum += wi
	}
	// Normalize by the computed Σw (= sqrt(π) up to rounding) so that the
	// rule integrates constants exactly.
	for i := range w {
		w[i] /= sum
	}
	r, _ := hermiteRules.LoadOrStore(n, &HermiteRule{X: x, W: w})
	return r.(*HermiteRule)
}

// LogFactor1 is a univariate log factor g with its first and second
// derivatives at x.
type LogFactor1 func(x float64) (g, dg, d2g float64)

// Expect returns S(m, v) = E[g(x)] for x ~ N(m, v) together with
//
//	∂S/∂m = E[g'(x)],   ∂S/∂v = ½ E[g''(x)]
//
// (the Gaussian identities of Bonnet and Price), all by the rule, with the
// nodes at m + sqrt(2v)·X_i. These are the gradients Eq. 7 turns into the
// NCVMP message. v must be ≥ 0; at v = 0 the result is g(m), g'(m), g”(m)/2.
func (r *HermiteRule) Expect(g LogFactor1, m, v float64) (S, dSdm, dSdv float64) {
	s := math.Sqrt(2 * v)
	for i, x := range r.X {
		f, f1, f2 := g(m + s*x)
		w := r.W[i]
		S += w * f
		dSdm += w * f1
		dSdv += w * f2
	}
	return S, dSdm, dSdv / 2
}

// LogisticLogFactor is the log of the logistic factor of §5.1,
// g(x) = log σ(x)^s (1−σ(x))^{1−s} = s·x − log(1+e^x), with
// g'(x) = s − σ(x) and g”(x) = −σ(x)(1−σ(x)). s is the observed label, 0 or 1
// (any real s gives the same formulas).
func LogisticLogFactor(s, x float64) (g, dg, d2g float64) {
	p := Logistic(x)
	return s*x - Softplus(x), s - p, -p * (1 - p)
}

// ExpectLogistic is HermiteRule.Expect for the logistic factor with label s:
// S(m, v) = E[s·x − log(1+e^x)] and its derivatives, i.e. the quadrature
// NCVMP message of §5.1 (1/v_f = E[σ(x)(1−σ(x))]). It does not allocate.
func (r *HermiteRule) ExpectLogistic(s, m, v float64) (S, dSdm, dSdv float64) {
	sd := math.Sqrt(2 * v)
	for i, x := range r.X {
		f, f1, f2 := LogisticLogFactor(s, m+sd*x)
		w := r.W[i]
		S += w * f
		dSdm += w * f1
		dSdv += w * f2
	}
	return S, dSdm, dSdv / 2
}
