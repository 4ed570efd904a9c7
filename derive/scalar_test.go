package derive

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vigen-go/vigen/spec"
)

// The derivatives of objectives that read a vector latent through literal
// indices (δ(a, 1) of beta[1]), scalar latents (fitted as one-element
// vectors), data at offsets (y[t-1]) inside a loop over part of a size
// (3:T-1), and a scalar param in its own M-step, against finite
// differences, and f against a direct computation.
func TestScalarsAndOffsetsMatchFiniteDifferences(t *testing.T) {
	const src = `model ar
size T, P
data y : real[T]
data x : real[T]
latent beta : real[P] nonconjugate laplace
latent c : real nonconjugate delta
param tau : real
beta ~ Normal(0, 2)
c ~ Normal(0, 3)
tau ~ Normal(0, 1)
for t in 3:T-1 {
  y[t] ~ Normal(c * beta[1] + beta[2] * y[t-1] + tau * y[t-2] + exp(beta[1]) * x[t+1], 1.5)
}
`
	m, err := spec.Load("ar.vi", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	d, err := Derive(m)
	if err != nil {
		t.Fatal(err)
	}
	steps, err := d.MSteps()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	const T, P = 9, 3
	y, x := make([]float64, T), make([]float64, T)
	for i := range y {
		y[i], x[i] = rng.NormFloat64(), rng.NormFloat64()
	}
	val := func(n int) *Value {
		v := &Value{Dims: []int{n}, Data: make([]float64, n)}
		for i := range v.Data {
			v.Data[i] = 0.5 * rng.NormFloat64()
		}
		return v
	}
	env := &Env{Sizes: map[string]int{"T": T, "P": P}, Index: map[string]int{}, Tensors: map[string]*Value{
		"y": {Dims: []int{T}, Data: y}, "x": {Dims: []int{T}, Data: x}, "beta": val(P), "c": val(1), "tau": val(1),
		"beta.mean": val(P), "c.mean": val(1), "beta.cov": {Dims: []int{P, P}, Data: []float64{0.3, 0.1, 0, 0.1, 0.2, 0, 0, 0, 0.1}},
		"c.cov": {Dims: []int{1, 1}, Data: []float64{0.2}},
	}}
	objs := append([]*Objective{}, d.Objectives...)
	for _, s := range steps {
		objs = append(objs, s.Numeric)
	}
	if len(objs) != 3 {
		t.Fatalf("%d objectives, want beta, c and tau's", len(objs))
	}
	for _, o := range objs {
		v := o.Latent.Name
		n := len(env.Tensors[v].Data)
		fdCheck(t, v+" grad", o.F, o.Grad, o.A, v, env, 1e-7)
		for a := range n {
			env.Index[o.A.Name] = a
			fdCheck(t, v+" hess column", o.Grad, o.Hess, o.B, v, env, 1e-6)
		}
		delete(env.Index, o.A.Name)
	}
	b, c := env.Tensors["beta.mean"].Data, env.Tensors["c.mean"].Data[0]
	var o *Objective
	for _, x := range objs {
		if x.Latent.Name == "tau" {
			o = x
		}
	}
	// f is an expectation under q(beta) and q(c), whose terms without tau
	// need not be written out: compare differences of f in tau.
	f := func(v float64) float64 {
		old := env.Tensors["tau"].Data[0]
		env.Tensors["tau"].Data[0] = v
		defer func() { env.Tensors["tau"].Data[0] = old }()
		return Eval(o.F, env)
	}
	direct := func(v float64) float64 {
		s := -0.5 * v * v
		for k := 2; k < T-1; k++ {
			r := y[k] - c*b[0] - b[1]*y[k-1] - math.Exp(b[0])*1.15*x[k+1] // E[exp(beta[1])] ≈ e^m(1 + Σ_11/2) (Eq. 19)
			s += (r*v*y[k-2] - 0.5*v*v*y[k-2]*y[k-2]) / 2.25
		}
		return s
	}
	if got, exp := f(0.7)-f(-0.4), direct(0.7)-direct(-0.4); math.Abs(got-exp) > 1e-9*math.Max(1, math.Abs(exp)) {
		t.Errorf("f(tau) differences %.12g, direct %.12g (is the loop 3:T-1 and are the lags right?)", got, exp)
	}
}
