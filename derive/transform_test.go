package derive

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vigen-go/vigen/spec"
)

// A <lower=a, upper=b> vector latent (a a const, b an expression of it)
// with a Normal prior and Normal children: the objective is
// Σ_i log N(x_i; m0, s0) + log((b − a) σ(u_i) σ(−u_i)) + Σ_n log N(y_ni; x_i, 1)
// with x = a + (b − a) σ(u), checked here written out by hand, and its
// derivatives (gradient, Hessian, trace gradient) by finite differences.
const boundedVI = `model bounded
size N, P
data y : real[N, P]
const lo : real = -1
const m0 : real = 0.5
latent x : real<lower=lo, upper=lo + 4>[P] nonconjugate delta
x ~ Normal(m0, 2)
for n in 1:N {
  y[n] ~ Normal(x, 1)
}
`

func TestTransformLowerUpperObjective(t *testing.T) {
	m, err := spec.Load("bounded.vi", []byte(boundedVI))
	if err != nil {
		t.Fatal(err)
	}
	d, err := Derive(m)
	if err != nil {
		t.Fatal(err)
	}
	o := d.Objectives[0]
	rng := rand.New(rand.NewPCG(3, 4))
	const n, p = 5, 3
	for trial := 0; trial < 3; trial++ {
		y := make([]float64, n*p)
		for i := range y {
			y[i] = 2 * rng.NormFloat64()
		}
		u := make([]float64, p)
		for i := range u {
			u[i] = 1.5 * rng.NormFloat64()
		}
		cov := []float64{0.5, 0.1, 0, 0.1, 0.4, 0.05, 0, 0.05, 0.3}
		lo := -1 + 0.1*float64(trial)
		env := &Env{Sizes: map[string]int{"N": n, "P": p}, Index: map[string]int{}, Tensors: map[string]*Value{
			"y": {Dims: []int{n, p}, Data: y}, "x": {Dims: []int{p}, Data: u}, "x.cov": {Dims: []int{p, p}, Data: cov},
			"lo": {Data: []float64{lo}}, "m0": {Data: []float64{0.5}},
		}}
		want := 0.0
		logN := func(v, mu, sd float64) float64 {
			return -0.5*math.Log(2*math.Pi) - math.Log(sd) - 0.5*(v-mu)*(v-mu)/(sd*sd)
		}
		for i := 0; i < p; i++ {
			s := 1 / (1 + math.Exp(-u[i]))
			x := lo + 4*s
			want += logN(x, 0.5, 2) + math.Log(4*s*(1-s))
			for k := 0; k < n; k++ {
				want += logN(y[k*p+i], x, 1)
			}
		}
		if got := Eval(o.F, env); math.Abs(got-want) > 1e-10*math.Abs(want) {
			t.Errorf("f = %.12g, by hand %.12g", got, want)
		}
		fdCheck(t, "grad", o.F, o.Grad, o.A, "x", env, 1e-7)
		for a := 0; a < p; a++ {
			env.Index[o.A.Name] = a
			fdCheck(t, "hess column", o.Grad, o.Hess, o.B, "x", env, 1e-6)
		}
		delete(env.Index, o.A.Name)
		fdCheck(t, "trace grad", o.Trace, o.TraceGrad, o.A, "x", env, 1e-6)
	}
}
