package derive

import (
	"math"
	"math/rand/v2"
	"strings"
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
		fdCheck(t, "trace grad", o.Trace(), o.TraceGrad(), o.A, "x", env, 1e-6)
	}
}

// logDetFD is log|det J| of the Jacobian J_ka = ∂x_k/∂u_a of x, computed
// by central finite differences and Gaussian elimination with partial
// pivoting: an independent check of a transform's log-Jacobian.
func logDetFD(x func(u []float64) []float64, u []float64) float64 {
	n := len(x(u))
	m := len(u)
	jac := make([][]float64, n)
	for k := range jac {
		jac[k] = make([]float64, m)
	}
	for a := range u {
		h := 1e-6 * math.Max(1, math.Abs(u[a]))
		old := u[a]
		u[a] = old + h
		xp := x(u)
		u[a] = old - h
		xm := x(u)
		u[a] = old
		for k := range xp {
			jac[k][a] = (xp[k] - xm[k]) / (2 * h)
		}
	}
	ld := 0.0
	for c := 0; c < n; c++ {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(jac[r][c]) > math.Abs(jac[p][c]) {
				p = r
			}
		}
		jac[c], jac[p] = jac[p], jac[c]
		ld += math.Log(math.Abs(jac[c][c]))
		for r := c + 1; r < n; r++ {
			f := jac[r][c] / jac[c][c]
			for k := c; k < n; k++ {
				jac[r][k] -= f * jac[c][k]
			}
		}
	}
	return ld
}

// An ordered (and a positive_ordered) latent read through int data,
// c[g[n]]: the objective is written out by hand from Stan's definition of
// the transform, the log-Jacobian derive adds is checked against log|det|
// of the finite-difference Jacobian of derive's own constrained reads, and
// the derivatives by finite differences.
func TestTransformOrderedObjective(t *testing.T) {
	for _, kind := range []string{"ordered", "positive_ordered"} {
		src := `model ord
size N, K
data y : real[N]
data g : int[N] in 1..K
latent c : ` + kind + `[K] nonconjugate delta
c ~ Normal(0.5, 3)
for n in 1:N {
  y[n] ~ Normal(c[g[n]], 1)
}
`
		m, err := spec.Load("ord.vi", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		d, err := Derive(m)
		if err != nil {
			t.Fatal(err)
		}
		o := d.Objectives[0]
		rng := rand.New(rand.NewPCG(5, 6))
		const n, k = 7, 4
		stan := func(u []float64) []float64 {
			x := make([]float64, len(u))
			for i := range u {
				switch {
				case i == 0 && kind == "ordered":
					x[i] = u[i]
				case i == 0:
					x[i] = math.Exp(u[i])
				default:
					x[i] = x[i-1] + math.Exp(u[i])
				}
			}
			return x
		}
		for trial := 0; trial < 3; trial++ {
			y := make([]float64, n)
			g := make([]float64, n)
			for i := range y {
				y[i] = 2 * rng.NormFloat64()
				g[i] = float64(1 + rng.IntN(k))
			}
			u := make([]float64, k)
			for i := range u {
				u[i] = rng.NormFloat64()
			}
			cov := []float64{0.5, 0.1, 0, 0.02, 0.1, 0.4, 0.05, 0, 0, 0.05, 0.3, 0.01, 0.02, 0, 0.01, 0.6}
			env := &Env{Sizes: map[string]int{"N": n, "K": k}, Index: map[string]int{}, Tensors: map[string]*Value{
				"y": {Dims: []int{n}, Data: y}, "g": {Dims: []int{n}, Data: g}, "c": {Dims: []int{k}, Data: u}, "c.cov": {Dims: []int{k, k}, Data: cov},
			}}
			logN := func(v, mu, sd float64) float64 {
				return -0.5*math.Log(2*math.Pi) - math.Log(sd) - 0.5*(v-mu)*(v-mu)/(sd*sd)
			}
			x := stan(u)
			jac := 0.0
			for i := range u {
				if i > 0 || kind == "positive_ordered" {
					jac += u[i]
				}
			}
			want := jac
			for i := range x {
				want += logN(x[i], 0.5, 3)
			}
			for i := range y {
				want += logN(y[i], x[int(g[i])-1], 1)
			}
			if got := Eval(o.F, env); math.Abs(got-want) > 1e-10*math.Abs(want) {
				t.Errorf("%s: f = %.12g, by hand %.12g", kind, got, want)
			}
			// derive's reads x_k and its log-Jacobian agree with log|det ∂x/∂u|
			b := NewBuilder(m)
			i := b.Fresh("i", "K")
			xe, err := b.Lower(m.Prior("c").Target, []Expr{IxE(i)})
			if err != nil {
				t.Fatal(err)
			}
			je, err := b.logJacobian(m.Prior("c"))
			if err != nil {
				t.Fatal(err)
			}
			readX := func(uu []float64) []float64 {
				saved := env.Tensors["c"].Data
				env.Tensors["c"].Data = uu
				out := make([]float64, k)
				for a := range out {
					env.Index[i.Name] = a
					out[a] = Eval(xe, env)
				}
				delete(env.Index, i.Name)
				env.Tensors["c"].Data = saved
				return out
			}
			for a, xv := range readX(u) {
				if math.Abs(xv-x[a]) > 1e-12*math.Max(1, math.Abs(x[a])) {
					t.Errorf("%s: x[%d] = %g, Stan's transform gives %g", kind, a, xv, x[a])
				}
			}
			if got, fd := Eval(je, env), logDetFD(readX, append([]float64(nil), u...)); math.Abs(got-fd) > 1e-6 {
				t.Errorf("%s: log-Jacobian %.10g, log|det| of the finite-difference Jacobian %.10g", kind, got, fd)
			}
			fdCheck(t, kind+" grad", o.F, o.Grad, o.A, "c", env, 1e-7)
			for a := 0; a < k; a++ {
				env.Index[o.A.Name] = a
				fdCheck(t, kind+" hess column", o.Grad, o.Hess, o.B, "c", env, 1e-6)
			}
			delete(env.Index, o.A.Name)
			fdCheck(t, kind+" trace grad", o.Trace(), o.TraceGrad(), o.A, "c", env, 1e-6)
		}
	}
}

// A constrained latent with no `~` (an improper flat prior, here with a
// `factor` term) still gets its log-Jacobian, in its objective and in the
// ELBO: f(u) = Σ_i (−e^{u_i} + u_i) + Σ_{n,i} log Poisson(y_ni; e^{u_i}),
// the last u_i the Jacobian of s = e^u. Dropping it (as when the Jacobian
// rode only on the prior's statement) changes f and the bound.
func TestTransformFlatPriorKeepsJacobian(t *testing.T) {
	for _, src := range []string{`model flat
size N, P
data y : int[N, P]
latent s : real<lower=0>[P] nonconjugate laplace
factor -sum(s)
for n in 1:N {
  y[n] ~ Poisson(s)
}
`, `model flat
size N, P
data y : int[N, P]
latent s : real<lower=0>[P] nonconjugate laplace
for n in 1:N {
  y[n] ~ Poisson(s)
}
`} {
		m, err := spec.Load("flat.vi", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		d, err := Derive(m)
		if err != nil {
			t.Fatal(err)
		}
		withFactor := len(m.Factors) == 2
		o := d.Objectives[0]
		const n, p = 3, 2
		y := []float64{1, 4, 0, 2, 3, 5}
		u := []float64{0.3, -0.4}
		env := &Env{Sizes: map[string]int{"N": n, "P": p}, Index: map[string]int{}, Tensors: map[string]*Value{
			"y": {Dims: []int{n, p}, Data: y}, "s": {Dims: []int{p}, Data: u},
			"s.cov": {Dims: []int{p, p}, Data: []float64{0.2, 0, 0, 0.3}},
		}}
		want := 0.0
		for i := 0; i < p; i++ {
			want += u[i] // the log-Jacobian
			if withFactor {
				want -= math.Exp(u[i])
			}
			for k := 0; k < n; k++ {
				lg, _ := math.Lgamma(y[k*p+i] + 1)
				want += y[k*p+i]*u[i] - math.Exp(u[i]) - lg
			}
		}
		if got := Eval(o.F, env); math.Abs(got-want) > 1e-12*math.Abs(want) {
			t.Errorf("factor=%v: f = %.12g, by hand (with the log-Jacobian Σu) %.12g", withFactor, got, want)
		}
		fdCheck(t, "grad", o.F, o.Grad, o.A, "s", env, 1e-7)
		// the ELBO equals that of the same density written as a proper
		// prior, s ~ Gamma(1, 1) (log density −s), whose Jacobian rides
		// on its statement; without the factor the flat prior is 0 on s
		prop := strings.Replace(src, "factor -sum(s)", "s ~ Gamma(1, 1)", 1)
		if !withFactor {
			continue
		}
		mp, err := spec.Load("proper.vi", []byte(prop))
		if err != nil {
			t.Fatal(err)
		}
		dp, err := Derive(mp)
		if err != nil {
			t.Fatal(err)
		}
		env.Tensors["s.mean"] = env.Tensors["s"]
		ba, err := d.Bound()
		if err != nil {
			t.Fatal(err)
		}
		bp, err := dp.Bound()
		if err != nil {
			t.Fatal(err)
		}
		got, want := Eval(Add(ba.Global, ba.Local), env), Eval(Add(bp.Global, bp.Local), env)
		if math.Abs(got-want) > 1e-12*math.Abs(want) {
			t.Errorf("ELBO with the flat prior and factor −Σs: %.12g; with s ~ Gamma(1, 1): %.12g", got, want)
		}
	}
}

// A positive_ordered latent is positive by its transform: a prior with
// positive support (Gamma, Exponential) needs no <lower=0> on it.
func TestTransformPositiveOrderedPositivePrior(t *testing.T) {
	src := `model po
size N, K
data y : real[N]
data g : int[N] in 1..K
latent c : positive_ordered[K] nonconjugate laplace
c ~ Gamma(2, 1)
for n in 1:N {
  y[n] ~ Normal(c[g[n]], 1)
}
`
	m, err := spec.Load("po.vi", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Derive(m); err != nil {
		t.Fatal(err)
	}
}
