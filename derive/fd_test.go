package derive

import (
	"math"
	"math/rand/v2"
	"testing"
)

// logregEnv returns random data for logregModel with N rows and P columns.
func logregEnv(rng *rand.Rand, n, p int) *Env {
	x := make([]float64, n*p)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	y := make([]float64, n)
	for i := range y {
		y[i] = float64(rng.IntN(2))
	}
	mu0 := make([]float64, p)
	for i := range mu0 {
		mu0[i] = 0.3 * rng.NormFloat64()
	}
	// A random SPD Sigma0 = AAᵀ + I; derive only needs its inverse and
	// log-determinant, which the test sets to arbitrary consistent values.
	inv := make([]float64, p*p)
	for i := 0; i < p; i++ {
		for j := 0; j <= i; j++ {
			v := 0.2 * rng.NormFloat64()
			if i == j {
				v = 1 + rng.Float64()
			}
			inv[i*p+j], inv[j*p+i] = v, v
		}
	}
	cov := make([]float64, p*p)
	for i := 0; i < p; i++ {
		for j := 0; j <= i; j++ {
			v := 0.1 * rng.NormFloat64()
			if i == j {
				v = 0.5 + rng.Float64()
			}
			cov[i*p+j], cov[j*p+i] = v, v
		}
	}
	theta := make([]float64, p)
	for i := range theta {
		theta[i] = rng.NormFloat64()
	}
	return &Env{
		Sizes: map[string]int{"N": n, "P": p},
		Index: map[string]int{},
		Tensors: map[string]*Value{
			"x": {Dims: []int{n, p}, Data: x}, "y": {Dims: []int{n}, Data: y},
			"mu0": {Dims: []int{p}, Data: mu0}, "Sigma0.inv": {Dims: []int{p, p}, Data: inv},
			"Sigma0.logdet": {Data: []float64{0.7}}, "theta": {Dims: []int{p}, Data: theta},
			"theta.cov": {Dims: []int{p, p}, Data: cov},
		},
	}
}

// fdCheck compares the derivative expression d (free index at) of e with
// central finite differences of e in the tensor v, for every component.
func fdCheck(t *testing.T, what string, e, d Expr, at Index, v string, env *Env, tol float64) {
	t.Helper()
	x := env.Tensors[v].Data
	for a := range x {
		env.Index[at.Name] = a
		got := Eval(d, env)
		h := 1e-5 * math.Max(1, math.Abs(x[a]))
		old := x[a]
		x[a] = old + h
		fp := Eval(e, env)
		x[a] = old - h
		fm := Eval(e, env)
		x[a] = old
		want := (fp - fm) / (2 * h)
		scale := math.Max(1, math.Abs(want))
		if math.Abs(got-want) > tol*scale {
			t.Errorf("%s[%d] = %.12g, finite differences give %.12g", what, a, got, want)
		}
	}
	delete(env.Index, at.Name)
}

func TestLogregDerivativesMatchFiniteDifferences(t *testing.T) {
	d, err := Derive(logregModel())
	if err != nil {
		t.Fatal(err)
	}
	o := d.Objectives[0]
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 3; trial++ {
		env := logregEnv(rng, 7, 4)
		fdCheck(t, "grad", o.F, o.Grad, o.A, "theta", env, 1e-7)
		// Each Hessian column is the derivative of the gradient.
		for a := 0; a < 4; a++ {
			env.Index[o.A.Name] = a
			fdCheck(t, "hess column", o.Grad, o.Hess, o.B, "theta", env, 1e-6)
		}
		delete(env.Index, o.A.Name)
		fdCheck(t, "trace grad", o.Trace(), o.TraceGrad(), o.A, "theta", env, 1e-6)
	}
}

// The Hessian must be the one of Appendix C: −Σ_n σ(1−σ) x_n x_nᵀ − Σ0⁻¹,
// and the trace gradient −Σ_n σ(1−σ)(1−2σ) x_n (x_nᵀ Σ x_n) (written out by
// hand here, independently of derive).
func TestLogregMatchesAppendixC(t *testing.T) {
	d, err := Derive(logregModel())
	if err != nil {
		t.Fatal(err)
	}
	o := d.Objectives[0]
	rng := rand.New(rand.NewPCG(3, 4))
	const n, p = 9, 3
	env := logregEnv(rng, n, p)
	x, th, inv, cov := env.Tensors["x"].Data, env.Tensors["theta"].Data, env.Tensors["Sigma0.inv"].Data, env.Tensors["theta.cov"].Data
	for a := 0; a < p; a++ {
		env.Index[o.A.Name] = a
		wantTG := 0.0
		for i := 0; i < n; i++ {
			u := 0.0
			for k := 0; k < p; k++ {
				u += x[i*p+k] * th[k]
			}
			s := 1 / (1 + math.Exp(-u))
			q := 0.0
			for k := 0; k < p; k++ {
				for l := 0; l < p; l++ {
					q += x[i*p+k] * cov[k*p+l] * x[i*p+l]
				}
			}
			wantTG -= s * (1 - s) * (1 - 2*s) * x[i*p+a] * q
		}
		if got := Eval(o.TraceGrad(), env); math.Abs(got-wantTG) > 1e-10*math.Max(1, math.Abs(wantTG)) {
			t.Errorf("trace grad[%d] = %g, App. C gives %g", a, got, wantTG)
		}
		for b := 0; b < p; b++ {
			env.Index[o.B.Name] = b
			want := -inv[a*p+b]
			for i := 0; i < n; i++ {
				u := 0.0
				for k := 0; k < p; k++ {
					u += x[i*p+k] * th[k]
				}
				s := 1 / (1 + math.Exp(-u))
				want -= s * (1 - s) * x[i*p+a] * x[i*p+b]
			}
			if got := Eval(o.Hess, env); math.Abs(got-want) > 1e-10*math.Max(1, math.Abs(want)) {
				t.Errorf("hess[%d,%d] = %g, App. C gives %g", a, b, got, want)
			}
		}
	}
}
