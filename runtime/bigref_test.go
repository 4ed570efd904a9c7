package runtime

// High-precision reference implementations (math/big, 192-bit mantissas) of
// exp, log, log1p, π, Bernoulli numbers and the gamma-family functions, used
// to test special.go independently of the math and gonum code it calls.

import (
	"math"
	"math/big"
	"sync"
)

const refPrec = 192

func bf(x float64) *big.Float { return new(big.Float).SetPrec(refPrec).SetFloat64(x) }

func bnew() *big.Float { return new(big.Float).SetPrec(refPrec) }

func badd(a, b *big.Float) *big.Float { return bnew().Add(a, b) }
func bsub(a, b *big.Float) *big.Float { return bnew().Sub(a, b) }
func bmul(a, b *big.Float) *big.Float { return bnew().Mul(a, b) }
func bquo(a, b *big.Float) *big.Float { return bnew().Quo(a, b) }

func f64(x *big.Float) float64 { v, _ := x.Float64(); return v }

// bigExp computes e^x as (Σ_k r^k/k!)^(2^m) with r = x/2^m, |r| < 2⁻⁸.
func bigExp(x *big.Float) *big.Float {
	r := bnew().Set(x)
	m := 0
	if e := x.MantExp(nil); e > -8 && x.Sign() != 0 {
		m = e + 8
		r.SetMantExp(r, -m)
	}
	sum, term := bf(1), bf(1)
	eps := bf(math.Ldexp(1, -refPrec-4))
	for k := 1; k < 200; k++ {
		term = bquo(bmul(term, r), bf(float64(k)))
		sum = badd(sum, term)
		if bnew().Abs(term).Cmp(eps) < 0 {
			break
		}
	}
	for i := 0; i < m; i++ {
		sum = bmul(sum, sum)
	}
	return sum
}

// bigLog computes log y for y > 0 by Newton's method on e^z = y,
// z ← z − 1 + y·e^{−z}, from a float64 starting guess.
func bigLog(y *big.Float) *big.Float {
	mant := bnew()
	e := y.MantExp(mant)
	z := bf(math.Log(f64(mant)) + float64(e)*math.Ln2)
	for i := 0; i < 3; i++ { // error 1e-16 → 1e-32 → 1e-64 → 1e-128
		z = badd(bsub(z, bf(1)), bmul(y, bigExp(bnew().Neg(z))))
	}
	return z
}

// bigLog1p computes log(1+u), by its series for |u| < 2⁻⁸.
func bigLog1p(u *big.Float) *big.Float {
	if bnew().Abs(u).Cmp(bf(1.0/256)) >= 0 {
		return bigLog(badd(bf(1), u))
	}
	sum, pow := bnew(), bf(1)
	for k := 1; pow.Sign() != 0 && pow.MantExp(nil) > -refPrec-8; k++ {
		pow = bmul(pow, u)
		t := bquo(pow, bf(float64(k)))
		if k%2 == 0 {
			t.Neg(t)
		}
		sum = badd(sum, t)
	}
	return sum
}

// bigAtanInv computes atan(1/n) = Σ_k (−1)^k / ((2k+1) n^{2k+1}).
func bigAtanInv(n float64) *big.Float {
	sum := bnew()
	pow := bquo(bf(1), bf(n))
	n2 := bf(n * n)
	for k := 0; pow.MantExp(nil) > -refPrec-8; k++ {
		t := bquo(pow, bf(float64(2*k+1)))
		if k%2 == 1 {
			t.Neg(t)
		}
		sum = badd(sum, t)
		pow = bquo(pow, n2)
	}
	return sum
}

// bigPi is Machin's π = 16 atan(1/5) − 4 atan(1/239).
var bigPi = sync.OnceValue(func() *big.Float {
	return bsub(bmul(bf(16), bigAtanInv(5)), bmul(bf(4), bigAtanInv(239)))
})

// halfLog2Pi is ½log 2π.
var halfLog2Pi = sync.OnceValue(func() *big.Float {
	return bmul(bf(0.5), bigLog(bmul(bf(2), bigPi())))
})

// bernoulli returns B_0..B_m from B_m = −1/(m+1) Σ_{k<m} C(m+1,k) B_k.
func bernoulli(m int) []*big.Rat {
	b := make([]*big.Rat, m+1)
	b[0] = big.NewRat(1, 1)
	for n := 1; n <= m; n++ {
		s := new(big.Rat)
		for k := 0; k < n; k++ {
			c := new(big.Rat).SetInt(new(big.Int).Binomial(int64(n+1), int64(k)))
			s.Add(s, c.Mul(c, b[k]))
		}
		b[n] = s.Mul(s, big.NewRat(-1, int64(n+1)))
	}
	return b
}

var refBernoulli = bernoulli(40)

func bigRat(r *big.Rat) *big.Float { return bnew().SetRat(r) }

// shiftTo returns z = x+N ≥ 40 and the factors x, x+1, …, x+N−1.
func shiftTo(x float64) (*big.Float, []*big.Float) {
	var fs []*big.Float
	z := bf(x)
	for z.Cmp(bf(40)) < 0 {
		fs = append(fs, bnew().Set(z))
		z = badd(z, bf(1))
	}
	return z, fs
}

// refLgamma is log|Γ(x)| = log Γ(z) − log|Π(x+k)| with Stirling's series
// log Γ(z) = (z−½)log z − z + ½log 2π + Σ_k B_2k / (2k(2k−1) z^{2k−1}).
func refLgamma(x float64) float64 {
	z, fs := shiftTo(x)
	s := bsub(bmul(bsub(z, bf(0.5)), bigLog(z)), z)
	s = badd(s, halfLog2Pi())
	zpow := bnew().Set(z)
	z2 := bmul(z, z)
	for k := 1; 2*k <= 40; k++ {
		t := bquo(bigRat(refBernoulli[2*k]), bmul(bf(float64(2*k*(2*k-1))), zpow))
		s = badd(s, t)
		zpow = bmul(zpow, z2)
	}
	prod := bf(1)
	for _, f := range fs {
		prod = bmul(prod, f)
	}
	return f64(bsub(s, bigLog(bnew().Abs(prod))))
}

// refDigamma is ψ(x) = ψ(z) − Σ 1/(x+k) with
// ψ(z) = log z − 1/(2z) − Σ_k B_2k / (2k z^{2k}).
func refDigamma(x float64) float64 {
	z, fs := shiftTo(x)
	s := bsub(bigLog(z), bquo(bf(1), bmul(bf(2), z)))
	z2 := bmul(z, z)
	zpow := bnew().Set(z2)
	for k := 1; 2*k <= 40; k++ {
		s = bsub(s, bquo(bigRat(refBernoulli[2*k]), bmul(bf(float64(2*k)), zpow)))
		zpow = bmul(zpow, z2)
	}
	for _, f := range fs {
		s = bsub(s, bquo(bf(1), f))
	}
	return f64(s)
}

// refTrigamma is ψ'(x) = ψ'(z) + Σ 1/(x+k)² with
// ψ'(z) = 1/z + 1/(2z²) + Σ_k B_2k / z^{2k+1}.
func refTrigamma(x float64) float64 {
	z, fs := shiftTo(x)
	z2 := bmul(z, z)
	s := badd(bquo(bf(1), z), bquo(bf(1), bmul(bf(2), z2)))
	zpow := bmul(z2, z)
	for k := 1; 2*k <= 40; k++ {
		s = badd(s, bquo(bigRat(refBernoulli[2*k]), zpow))
		zpow = bmul(zpow, z2)
	}
	for _, f := range fs {
		s = badd(s, bquo(bf(1), bmul(f, f)))
	}
	return f64(s)
}

// refSoftplus is log(1+e^x).
func refSoftplus(x float64) float64 {
	return f64(bigLog1p(bigExp(bf(x))))
}

// refLogistic is 1/(1+e^{−x}).
func refLogistic(x float64) float64 {
	return f64(bquo(bf(1), badd(bf(1), bigExp(bf(-x)))))
}

// refLogit is log p − log(1−p).
func refLogit(p float64) float64 {
	return f64(bsub(bigLog(bf(p)), bigLog1p(bf(-p))))
}

// refLogSumExp is log Σ e^{x_i}, skipping −Inf.
func refLogSumExp(x []float64) float64 {
	s := bnew()
	for _, v := range x {
		if !math.IsInf(v, -1) {
			s = badd(s, bigExp(bf(v)))
		}
	}
	if s.Sign() == 0 {
		return math.Inf(-1)
	}
	return f64(bigLog(s))
}
