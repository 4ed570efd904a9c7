package runtime

import (
	"math"

	"gonum.org/v1/gonum/mathext"
)

// Logistic returns σ(x) = 1/(1+e^{−x}).
//
// For x ≥ 0 it computes 1/(1+e^{−x}); for x < 0 it computes e^x/(1+e^x), so
// e^{±x} never overflows. The result is exactly 0 or 1 only where the true
// value rounds to it in float64 (x ≲ −745 or x ≳ 37) and at ∓Inf.
func Logistic(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// LogLogistic returns log σ(x) = −log(1+e^{−x}) = −Softplus(−x).
// It is accurate for every x: ≈ x for very negative x, ≈ −e^{−x} for large x.
func LogLogistic(x float64) float64 {
	return -Softplus(-x)
}

// Softplus returns log(1+e^x), computed stably:
//
//	x              for x > 37       (e^{−x} < ulp(x)/2)
//	log1p(e^x)     for −37 ≤ x ≤ 37
//	e^x            for x < −37      (log1p(y) = y − y²/2 + …, y² < ε·y)
func Softplus(x float64) float64 {
	switch {
	case x > 37:
		return x
	case x < -37:
		return math.Exp(x)
	default:
		return math.Log1p(math.Exp(x)) // NaN falls through to here and stays NaN
	}
}

// Logit returns log(p/(1−p)), the inverse of Logistic, for p in [0, 1]
// (−Inf at 0, +Inf at 1, NaN outside).
//
// For p ≥ 1/4 it uses logit(p) = 2·atanh(2p−1), where 2p−1 is exact, so the
// result keeps full relative accuracy near p = 1/2; for p < 1/4 it uses
// log(p/(1−p)), whose magnitude is then above log 3 so no cancellation occurs.
func Logit(p float64) float64 {
	if p >= 0.25 {
		return 2 * math.Atanh(2*p-1)
	}
	return math.Log(p / (1 - p))
}

// Lgamma returns log|Γ(x)|, math.Lgamma's value without the sign.
func Lgamma(x float64) float64 {
	v, _ := math.Lgamma(x)
	return v
}

// Digamma returns ψ(x) = d/dx log Γ(x).
//
// For x > 0 it applies ψ(x) = ψ(x+1) − 1/x until x ≥ 10 and then the
// asymptotic series (DLMF 5.11.2, Bernoulli numbers B_2k)
//
//	ψ(x) ≈ log x − 1/(2x) − Σ_{k=1..7} B_2k/(2k x^{2k})
//	     = log x − 1/(2x) − 1/(12x²) + 1/(120x⁴) − 1/(252x⁶) + 1/(240x⁸)
//	       − 1/(132x¹⁰) + 691/(32760x¹²) − 1/(12x¹⁴),
//
// whose truncation error at x ≥ 10 is below 5e-17. For x < 0 it uses the
// reflection ψ(x) = ψ(1−x) − π/tan(πx). Poles (x = 0, −1, −2, …) give NaN,
// except ψ(±0) = ∓Inf, as in gonum's mathext.Digamma. (mathext.Digamma itself
// stops its series at x ≥ 6.5 and is off by up to ~5e-11 for x < 10, which is
// why it is not used here.)
func Digamma(x float64) float64 {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 1):
		return x
	case math.IsInf(x, -1):
		return math.NaN()
	case x == 0:
		return math.Copysign(math.Inf(1), -x)
	case x < 0:
		if x == math.Floor(x) {
			return math.NaN()
		}
		// tan(πx) has period 1; reduce to r ∈ [−½, ½] for accuracy.
		r := x - math.Round(x)
		return Digamma(1-x) - math.Pi/math.Tan(math.Pi*r)
	}
	var shift float64
	for ; x < 10; x++ {
		shift -= 1 / x
	}
	y := 1 / (x * x)
	series := y * (1.0/12 - y*(1.0/120-y*(1.0/252-y*(1.0/240-y*(1.0/132-y*(691.0/32760-y/12))))))
	return shift + (math.Log(x) - 0.5/x - series)
}

// Trigamma returns ψ'(x) = Σ_{k≥0} 1/(x+k)².
//
// For x > 0 this is the Hurwitz zeta function ζ(2, x) (gonum's mathext.Zeta).
// For x < 0 it uses the reflection formula ψ'(x) = π²/sin²(πx) − ψ'(1−x); at
// the poles x = 0, −1, −2, … it returns +Inf. It returns NaN for NaN and
// −Inf, and 0 for +Inf.
func Trigamma(x float64) float64 {
	switch {
	case math.IsNaN(x) || math.IsInf(x, -1):
		return math.NaN()
	case math.IsInf(x, 1):
		return 0
	case x > 0:
		return mathext.Zeta(2, x)
	case x == math.Floor(x):
		return math.Inf(1)
	}
	// sin(πx) with x reduced to r = x − round(x) ∈ [−½, ½] keeps full accuracy.
	r := x - math.Round(x)
	s := math.Sin(math.Pi * r)
	return math.Pi*math.Pi/(s*s) - mathext.Zeta(2, 1-x)
}

// LogSumExp returns log Σ_i e^{x_i}, computed as m + log1p(Σ_{i≠i*} e^{x_i−m})
// with m = x_{i*} = max_i x_i, so nothing overflows. Entries may be −Inf; if
// all are (or x is empty) the result is −Inf. A +Inf entry gives +Inf, and a
// NaN entry gives NaN.
func LogSumExp(x []float64) float64 {
	if len(x) == 0 {
		return math.Inf(-1)
	}
	imax := 0
	for i, v := range x {
		if math.IsNaN(v) {
			return v
		}
		if v > x[imax] {
			imax = i
		}
	}
	m := x[imax]
	if math.IsInf(m, 0) {
		return m
	}
	var s float64
	for i, v := range x {
		if i != imax {
			s += math.Exp(v - m)
		}
	}
	return m + math.Log1p(s)
}

// XLogX is x log x, continued by 0 at x = 0.
func XLogX(x float64) float64 {
	if x == 0 {
		return 0
	}
	return x * math.Log(x)
}

// logSqrt2Pi is ½ log 2π, minus the log of the standard normal density's
// normalizer.
var logSqrt2Pi = 0.5 * math.Log(2*math.Pi)

// normalTailRatio returns R(t) = (1 − Φ(t))/φ(t) for t ≥ 20 (Mills's
// ratio), from its continued fraction 1/(t + 1/(t + 2/(t + 3/(t + …))))
// evaluated backwards from 60 terms: at t ≥ 20 the truncation error is far
// below float64 precision.
func normalTailRatio(t float64) float64 {
	f := t
	for k := 60; k >= 1; k-- {
		f = t + float64(k)/f
	}
	return 1 / f
}

// Phi returns Φ(x), the standard normal distribution function, as
// erfc(−x/√2)/2 (accurate in the lower tail; 1 − Φ(x) underflows to 0 only
// where it is below 1e-308).
func Phi(x float64) float64 {
	return 0.5 * math.Erfc(-x/math.Sqrt2)
}

// LogPhi returns log Φ(x), accurate for every x:
//
//	log1p(−erfc(x/√2)/2)              for x > 0 (Φ near 1: log Φ ≈ −(1 − Φ))
//	log(erfc(−x/√2)/2)                for −20 ≤ x ≤ 0
//	−x²/2 − ½log 2π + log R(−x)       for x < −20 (R Mills's ratio)
//
// so that probit likelihoods stay finite and accurate far in the tails
// (log Φ(−40) ≈ −804.6, where Φ itself is 0 in float64 below x ≈ −38.5).
func LogPhi(x float64) float64 {
	switch {
	case math.IsNaN(x):
		return x
	case x > 0:
		return math.Log1p(-0.5 * math.Erfc(x/math.Sqrt2))
	case x >= -20:
		return math.Log(0.5 * math.Erfc(-x/math.Sqrt2))
	case math.IsInf(x, -1):
		return x
	}
	return -0.5*x*x - logSqrt2Pi + math.Log(normalTailRatio(-x))
}

// InvMills returns φ(x)/Φ(x), the derivative of log Φ(x), accurate for
// every x: ≈ −x for very negative x, ≈ φ(x) → 0 for large x.
func InvMills(x float64) float64 {
	switch {
	case math.IsNaN(x):
		return x
	case x >= -20:
		return math.Exp(-0.5*x*x - logSqrt2Pi - LogPhi(x))
	case math.IsInf(x, -1):
		return math.Inf(1)
	}
	return 1 / normalTailRatio(-x)
}

// LogDiffPhi returns log(Φ(u) − Φ(l)) for u > l (NaN for u < l, −Inf for
// u = l). Both normal probabilities are taken from the tail where they are
// small (by Φ(u) − Φ(l) = Φ(−l) − Φ(−u) when l > 0), so the difference
// keeps its accuracy away from a tiny interval:
// log Φ(u) + log(1 − exp(log Φ(l) − log Φ(u))).
func LogDiffPhi(u, l float64) float64 {
	if l > 0 {
		u, l = -l, -u
	}
	lu, ll := LogPhi(u), LogPhi(l)
	if math.IsInf(ll, -1) {
		return lu
	}
	return lu + math.Log(-math.Expm1(ll-lu))
}

// LogAddExp returns log(e^a + e^b) without overflow or underflow: the
// larger argument plus log1p(e^{−|a−b|}). It is −Inf when both are −Inf
// (a component of weight zero contributes nothing) and NaN when either is.
func LogAddExp(a, b float64) float64 {
	if a < b {
		a, b = b, a
	}
	if math.IsInf(b, -1) {
		return a
	}
	return a + math.Log1p(math.Exp(b-a))
}
