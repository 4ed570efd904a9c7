package runtime

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mathext"
)

// close reports whether got is within rtol·|want| + atol of want, treating
// equal infinities and NaNs as close.
func close(got, want, rtol, atol float64) bool {
	if got == want || math.IsNaN(got) && math.IsNaN(want) {
		return true
	}
	return math.Abs(got-want) <= rtol*math.Abs(want)+atol
}

// grid returns n evenly spaced points in [lo, hi] plus n uniform random ones.
func grid(lo, hi float64, n int, rng *rand.Rand) []float64 {
	xs := make([]float64, 0, 2*n)
	for i := 0; i < n; i++ {
		xs = append(xs, lo+(hi-lo)*float64(i)/float64(n-1))
	}
	for i := 0; i < n; i++ {
		xs = append(xs, lo+(hi-lo)*rng.Float64())
	}
	return xs
}

func checkAgainst(t *testing.T, name string, f, ref func(float64) float64, xs []float64, rtol, atol float64) {
	t.Helper()
	worst := 0.0
	for _, x := range xs {
		got, want := f(x), ref(x)
		if !close(got, want, rtol, atol) {
			t.Errorf("%s(%.17g) = %.17g, want %.17g (rel err %.3g)", name, x, got, want, (got-want)/want)
		}
		if !math.IsInf(want, 0) && math.Abs(want) > 1e-300 {
			worst = math.Max(worst, math.Abs(got-want)/math.Max(math.Abs(want), 1))
		}
	}
	t.Logf("%s: %d points, worst error relative to max(|value|, 1): %.3g", name, len(xs), worst)
}

func TestLogisticFamily(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	xs := append(grid(-740, 740, 100, rng), grid(-40, 40, 100, rng)...)
	xs = append(xs, 0, 1e-20, -1e-20, 36.9, 37, 37.1, -37.1, -745, 709, -709)
	// Denormal results carry an absolute error of up to half a denormal ulp.
	checkAgainst(t, "Logistic", Logistic, refLogistic, xs, 1e-15, 1e-320)
	checkAgainst(t, "Softplus", Softplus, refSoftplus, append(xs, 1000, 1e5), 1e-15, 1e-320)
	checkAgainst(t, "LogLogistic", LogLogistic, func(x float64) float64 { return -refSoftplus(-x) }, append(xs, -1000, -1e5), 1e-15, 1e-320)

	for _, x := range xs {
		if s := Logistic(x) + Logistic(-x); math.Abs(s-1) > 2.3e-16 {
			t.Errorf("Logistic(%g)+Logistic(−%g) = %.17g, want 1", x, x, s)
		}
		if d := Softplus(x) - Softplus(-x); math.Abs(d-x) > 4.5e-16*math.Max(1, math.Abs(x)) {
			t.Errorf("Softplus(%g)−Softplus(−%g) = %.17g, want %g", x, x, d, x)
		}
		// For x ≤ 0, log σ(x) computed directly from Logistic is accurate.
		if x <= 0 && x > -700 {
			if got, want := LogLogistic(x), math.Log(Logistic(x)); !close(got, want, 1e-15, 0) {
				t.Errorf("LogLogistic(%g) = %.17g, log(Logistic) = %.17g", x, got, want)
			}
		}
	}
	if got := LogLogistic(-1000); got != -1000 {
		t.Errorf("LogLogistic(−1000) = %.17g, want −1000", got)
	}
	if got := LogLogistic(1000); got != 0 {
		t.Errorf("LogLogistic(1000) = %g, want (−)0", got)
	}
	for _, c := range []struct{ x, want float64 }{
		{math.Inf(1), 1}, {math.Inf(-1), 0}, {0, 0.5},
	} {
		if got := Logistic(c.x); got != c.want {
			t.Errorf("Logistic(%g) = %g, want %g", c.x, got, c.want)
		}
	}
	if Logistic(-700) == 0 || Logistic(30) == 1 {
		t.Errorf("Logistic rounds to 0 or 1 too early: σ(−700) = %g, σ(30) = %.17g", Logistic(-700), Logistic(30))
	}
	if !math.IsNaN(Logistic(math.NaN())) || !math.IsNaN(Softplus(math.NaN())) {
		t.Error("NaN should propagate")
	}
	if Softplus(math.Inf(1)) != math.Inf(1) || Softplus(math.Inf(-1)) != 0 {
		t.Error("Softplus(±Inf)")
	}
}

func TestLogit(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	ps := grid(1e-9, 1-1e-9, 200, rng)
	ps = append(ps, 1e-300, 1e-20, 0.25, 0.2499999999, 0.5+1e-16, 0.5-1e-12, 1-1e-16, 0.75)
	checkAgainst(t, "Logit", Logit, refLogit, ps, 1e-15, 0)
	for _, p := range ps {
		// σ has condition number ≈ |logit p| in its argument.
		l := Logit(p)
		if got := Logistic(l); !close(got, p, 4e-16*(1+math.Abs(l)), 0) && p < 1-1e-9 {
			t.Errorf("Logistic(Logit(%g)) = %.17g", p, got)
		}
	}
	for _, c := range []struct{ p, want float64 }{
		{0, math.Inf(-1)}, {1, math.Inf(1)}, {0.5, 0},
	} {
		if got := Logit(c.p); got != c.want {
			t.Errorf("Logit(%g) = %g, want %g", c.p, got, c.want)
		}
	}
	if !math.IsNaN(Logit(-0.1)) || !math.IsNaN(Logit(1.1)) {
		t.Error("Logit outside [0,1] should be NaN")
	}
}

func gammaPoints(rng *rand.Rand) []float64 {
	xs := append(grid(1e-3, 12, 60, rng), grid(12, 1e4, 20, rng)...)
	xs = append(xs, 1e-10, 1e-3, 0.5, 1, 1.4616321449683622, 2, 2.5, 6.5, 7, 9.99, 10, 10.01, 1e6)
	for _, x := range grid(-20, -1e-3, 40, rng) {
		if x != math.Floor(x) {
			xs = append(xs, x)
		}
	}
	return append(xs, -0.5, -1.5, -2.3, -10.7)
}

func TestLgamma(t *testing.T) {
	t.Parallel()
	xs := gammaPoints(rand.New(rand.NewPCG(5, 6)))
	checkAgainst(t, "Lgamma", Lgamma, refLgamma, xs, 2e-15, 1e-15)
	if Lgamma(1) != 0 || Lgamma(2) != 0 {
		t.Error("Lgamma(1), Lgamma(2) should be 0")
	}
}

func TestDigamma(t *testing.T) {
	t.Parallel()
	xs := gammaPoints(rand.New(rand.NewPCG(7, 8)))
	// Absolute tolerance for the root near 1.46 and for the cancellation in
	// the recurrence.
	checkAgainst(t, "Digamma", Digamma, refDigamma, xs, 4e-15, 2e-15)
	const eulerGamma = 0.57721566490153286060651209008240243
	if got := Digamma(1); !close(got, -eulerGamma, 2e-15, 0) {
		t.Errorf("ψ(1) = %.17g, want −γ", got)
	}
	if got, want := Digamma(0.5), -eulerGamma-2*math.Ln2; !close(got, want, 2e-15, 0) {
		t.Errorf("ψ(½) = %.17g, want %.17g", got, want)
	}
	for _, x := range xs {
		if x > 0 {
			// Recurrence ψ(x+1) = ψ(x) + 1/x.
			// The sum cancels; allow a few ulps of its larger term.
			if got, want := Digamma(x+1), Digamma(x)+1/x; !close(got, want, 0, 1e-15*(1+math.Abs(Digamma(x))+1/x)) {
				t.Errorf("ψ(%g+1) = %.17g, ψ(x)+1/x = %.17g", x, got, want)
			}
			// gonum's mathext.Digamma agrees to its own accuracy (~5e-11).
			if g := mathext.Digamma(x); !close(Digamma(x), g, 1e-9, 1e-10) {
				t.Errorf("ψ(%g) = %.17g, mathext.Digamma = %.17g", x, Digamma(x), g)
			}
		}
	}
	if !math.IsInf(Digamma(0), -1) || !math.IsNaN(Digamma(-2)) || !math.IsNaN(Digamma(math.Inf(-1))) ||
		!math.IsInf(Digamma(math.Inf(1)), 1) || !math.IsNaN(Digamma(math.NaN())) {
		t.Error("Digamma special cases")
	}
}

func TestTrigamma(t *testing.T) {
	t.Parallel()
	xs := gammaPoints(rand.New(rand.NewPCG(9, 10)))
	checkAgainst(t, "Trigamma", Trigamma, refTrigamma, xs, 2e-15, 0)
	for _, x := range xs {
		// Central difference of ψ: error h²ψ'''/6 + ε|ψ|/h.
		// h is scaled by the distance to the nearest pole.
		dist := math.Min(math.Abs(x), 1)
		if x < 0 {
			dist = math.Abs(x - math.Round(x))
		}
		h := 1e-4 * dist
		fd := (Digamma(x+h) - Digamma(x-h)) / (2 * h)
		if !close(Trigamma(x), fd, 1e-6, 0) {
			t.Errorf("ψ'(%g) = %.17g, finite difference of ψ = %.17g", x, Trigamma(x), fd)
		}
	}
	if got, want := Trigamma(1), math.Pi*math.Pi/6; !close(got, want, 1e-15, 0) {
		t.Errorf("ψ'(1) = %.17g, want π²/6 = %.17g", got, want)
	}
	if got, want := Trigamma(0.5), math.Pi*math.Pi/2; !close(got, want, 1e-15, 0) {
		t.Errorf("ψ'(½) = %.17g, want π²/2 = %.17g", got, want)
	}
	for _, x := range []float64{0, -1, -7} {
		if !math.IsInf(Trigamma(x), 1) {
			t.Errorf("ψ'(%g) = %g, want +Inf", x, Trigamma(x))
		}
	}
	if Trigamma(math.Inf(1)) != 0 || !math.IsNaN(Trigamma(math.Inf(-1))) || !math.IsNaN(Trigamma(math.NaN())) {
		t.Error("Trigamma special cases")
	}
	_ = Trigamma(-1e9 - 0.5) // must not panic or take long
}

func TestLogSumExp(t *testing.T) {
	t.Parallel()
	inf := math.Inf(1)
	cases := [][]float64{
		{0},
		{1, 2, 3},
		{-1000, -1000},
		{1000, 1000, 999},
		{-1000, 0, 1000},
		{-inf, 3, -inf},
		{-745, -740, -800},
		{1e-20, -1e-20},
		{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8},
		{700, 710, 720},
	}
	rng := rand.New(rand.NewPCG(11, 12))
	for i := 0; i < 20; i++ {
		x := make([]float64, 1+rng.IntN(30))
		for j := range x {
			x[j] = 50 * rng.NormFloat64()
		}
		cases = append(cases, x)
	}
	for _, x := range cases {
		if got, want := LogSumExp(x), refLogSumExp(x); !close(got, want, 2e-15, 1e-15) {
			t.Errorf("LogSumExp(%v) = %.17g, want %.17g", x, got, want)
		}
	}
	for _, c := range []struct {
		x    []float64
		want float64
	}{
		{nil, -inf},
		{[]float64{-inf, -inf}, -inf},
		{[]float64{1, inf}, inf},
		{[]float64{-inf, 2}, 2},
	} {
		if got := LogSumExp(c.x); got != c.want {
			t.Errorf("LogSumExp(%v) = %g, want %g", c.x, got, c.want)
		}
	}
	if !math.IsNaN(LogSumExp([]float64{1, math.NaN(), inf})) {
		t.Error("LogSumExp with NaN should be NaN")
	}
}

// The gamma-family primitives at the extremes of float64, against the
// leading terms of their expansions: near 0, lgamma(x) = −log x − γx,
// ψ(x) = −1/x − γ, ψ'(x) = 1/x² + π²/6; for large x, Stirling's
// lgamma(x) = (x−½)log x − x + ½log 2π + 1/(12x), ψ(x) = log x − 1/(2x),
// ψ'(x) = 1/x + 1/(2x²). The neglected terms are below rounding at these
// arguments.
func TestGammaFamilyExtremes(t *testing.T) {
	const euler = 0.57721566490153286061
	for _, x := range []float64{1e-300, 1e-200, 1e-100, 1e-20, 1e-12} {
		if got, want := Lgamma(x), -math.Log(x)-euler*x; !close(got, want, 1e-15, 0) {
			t.Errorf("Lgamma(%g) = %.17g, want %.17g", x, got, want)
		}
		if got, want := Digamma(x), -1/x-euler; !close(got, want, 1e-15, 0) {
			t.Errorf("Digamma(%g) = %.17g, want %.17g", x, got, want)
		}
		if x >= 1e-150 {
			if got, want := Trigamma(x), 1/(x*x)+math.Pi*math.Pi/6; !close(got, want, 1e-15, 0) {
				t.Errorf("Trigamma(%g) = %.17g, want %.17g", x, got, want)
			}
		} else if got := Trigamma(x); !math.IsInf(got, 1) {
			t.Errorf("Trigamma(%g) = %g, want +Inf (1/x² overflows)", x, got)
		}
	}
	for _, x := range []float64{1e8, 1e15, 1e100, 1e300} {
		want := (x-0.5)*math.Log(x) - x + 0.5*math.Log(2*math.Pi) + 1/(12*x)
		if math.IsInf(want, 0) { // (x−½)log x overflows only beyond 1e305
			t.Fatalf("reference overflowed at %g", x)
		}
		if got := Lgamma(x); !close(got, want, 1e-15, 0) {
			t.Errorf("Lgamma(%g) = %.17g, want %.17g", x, got, want)
		}
		if got, want := Digamma(x), math.Log(x)-1/(2*x); !close(got, want, 1e-15, 0) {
			t.Errorf("Digamma(%g) = %.17g, want %.17g", x, got, want)
		}
		if got, want := Trigamma(x), 1/x+1/(2*x*x); !close(got, want, 1e-15, 0) {
			t.Errorf("Trigamma(%g) = %.17g, want %.17g", x, got, want)
		}
	}
	// log σ(x) for |x| up to 1e3 and beyond: −softplus(−x) exactly.
	for _, x := range []float64{-1e3, -745, -100, 100, 745, 1e3} {
		got := LogLogistic(x)
		want := math.Min(x, 0) - math.Log1p(math.Exp(-math.Abs(x)))
		if math.IsInf(got, 0) || math.IsNaN(got) || !close(got, want, 1e-15, 1e-320) {
			t.Errorf("LogLogistic(%g) = %.17g, want %.17g", x, got, want)
		}
	}
}

// normalLogCDFAsymptotic is log Φ(x) for x ≪ 0 from the asymptotic series
// Φ(x) = φ(x)/|x| · (1 − 1/x² + 3/x⁴ − 15/x⁶ + 105/x⁸ − 945/x¹⁰), whose
// truncation error at x ≤ −20 is below 1e-13 relative.
func normalLogCDFAsymptotic(x float64) float64 {
	z := 1 / (x * x)
	series := 1 - z*(1-3*z*(1-5*z*(1-7*z*(1-9*z))))
	return -0.5*x*x - 0.5*math.Log(2*math.Pi) - math.Log(-x) + math.Log(series)
}

func TestLogPhi(t *testing.T) {
	// where Φ is representable and not near 1, log(Φ) is accurate
	for x := -30.0; x <= 0.5; x += 0.37 {
		want := math.Log(0.5 * math.Erfc(-x/math.Sqrt2))
		if got := LogPhi(x); math.Abs(got-want) > 1e-14*math.Max(1, math.Abs(want)) {
			t.Errorf("LogPhi(%g) = %.17g, log(Φ) = %.17g", x, got, want)
		}
	}
	// the lower tail, on both sides of the switch at −20 and beyond Φ's underflow
	for _, x := range []float64{-19.5, -20, -20.5, -25, -38, -40, -100, -1e4} {
		want := normalLogCDFAsymptotic(x)
		if got := LogPhi(x); math.Abs(got-want) > 1e-13*math.Abs(want) {
			t.Errorf("LogPhi(%g) = %.17g, asymptotic series %.17g", x, got, want)
		}
	}
	// the upper tail: log Φ(x) = log(1 − q) = −q − q²/2 − q³/3 − …, q = Φ(−x)
	for _, x := range []float64{5, 10, 20} {
		q := 0.5 * math.Erfc(x/math.Sqrt2)
		want := -q - q*q/2 - q*q*q/3
		if got := LogPhi(x); math.Abs(got-want) > 1e-14*math.Abs(want) {
			t.Errorf("LogPhi(%g) = %.17g, want %.17g", x, got, want)
		}
	}
	if !math.IsInf(LogPhi(math.Inf(-1)), -1) || LogPhi(math.Inf(1)) != 0 || !math.IsNaN(LogPhi(math.NaN())) {
		t.Errorf("LogPhi(±Inf, NaN) = %v, %v, %v", LogPhi(math.Inf(-1)), LogPhi(math.Inf(1)), LogPhi(math.NaN()))
	}
}

func TestInvMillsIsTheDerivativeOfLogPhi(t *testing.T) {
	for _, x := range []float64{-60, -30, -20.01, -19.99, -5, -1, 0, 0.7, 3, 8} {
		h := 1e-5 * math.Max(1, math.Abs(x))
		fd := (LogPhi(x+h) - LogPhi(x-h)) / (2 * h)
		if got := InvMills(x); math.Abs(got-fd) > 1e-7*math.Max(1, math.Abs(fd)) {
			t.Errorf("InvMills(%g) = %.12g, finite differences of LogPhi %.12g", x, got, fd)
		}
	}
	// ≈ −x − 1/x for x ≪ 0 (the reciprocal of Mills's ratio)
	if got, want := InvMills(-1e3), 1e3+1e-3-2e-9; math.Abs(got-want) > 1e-9 {
		t.Errorf("InvMills(-1000) = %.15g, want %.15g", got, want)
	}
}

func TestLogDiffPhi(t *testing.T) {
	for _, c := range [][2]float64{{1, -1}, {0.3, 0.2}, {2, 1.5}, {-1, -3}, {4, -0.5}} {
		want := math.Log(Phi(c[0]) - Phi(c[1]))
		if got := LogDiffPhi(c[0], c[1]); math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
			t.Errorf("LogDiffPhi(%g, %g) = %.15g, direct %.15g", c[0], c[1], got, want)
		}
	}
	// both ends far in a tail: Φ(41) − Φ(40) = Φ(−40) − Φ(−41) ≈ Φ(−40)
	want := normalLogCDFAsymptotic(-40)
	for _, c := range [][2]float64{{-40, -41}, {41, 40}} {
		if got := LogDiffPhi(c[0], c[1]); math.Abs(got-want) > 1e-12*math.Abs(want) {
			t.Errorf("LogDiffPhi(%g, %g) = %.15g, want %.15g", c[0], c[1], got, want)
		}
	}
	if !math.IsNaN(LogDiffPhi(0, 1)) {
		t.Errorf("LogDiffPhi(0, 1) = %v, want NaN (u < l)", LogDiffPhi(0, 1))
	}
}
