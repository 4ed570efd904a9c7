package derive

import (
	"fmt"
	"math"
	"math/rand"
	"sort"
	"testing"

	"github.com/vigen-go/vigen/golden"
)

// coupledModel is a small version of issue 17's basis-function GP: the
// sd's basis weights z are also the mean's regression weights, so every
// latent's f holds the Taylor terms of the others.
func coupledModel() string {
	src := "model coupled\n\nsize N, One, K\ndata X : real[N, K]\ndata sl : real[K]\ndata Y : real[N]\n"
	for _, v := range []string{"a", "as", "lsd", "lls", "z"} {
		dim := "One"
		if v == "z" {
			dim = "K"
		}
		src += fmt.Sprintf("latent %s : real[%s] nonconjugate laplace\n%s ~ Normal(0, 1)\n", v, dim, v)
	}
	return src + `for n in 1:N {
  Y[n] ~ Normal(sum(a) + dot(X[n], z),
                exp(sum(as) + dot(X[n], 1.58 * exp(sum(lsd) + 0.5 * sum(lls) - 0.25 * exp(2 * sum(lls)) * sl) * z)))
}
`
}

// deriveWithBigTree derives coupledModel with the size from which
// expressions keep their per-point sums as factors set to limit.
func deriveWithBigTree(t *testing.T, limit float64) *Derivation {
	t.Helper()
	old := bigTree
	bigTree = limit
	defer func() { bigTree = old }()
	return derivePredictive(t, "coupled.vi", coupledModel())
}

// Kept as per-point factors (every expression in big mode), the bound and
// each latent's f, gradient, Hessian, delta-method trace, its gradient and
// the Hessian of that gradient evaluate to what the multiplied-out normal
// form gives, and the last is smaller.
func TestPerPointAtomsKeepValues(t *testing.T) {
	golden.SlowTier(t)
	if testing.Short() {
		t.Skip("skipping the evaluation of multiplied-out derivatives in -short mode")
	}
	flat := deriveWithBigTree(t, math.Inf(1))
	atoms := deriveWithBigTree(t, 0)
	rng := rand.New(rand.NewSource(3))
	env := &Env{Tensors: map[string]*Value{}, Sizes: map[string]int{"N": 2, "One": 1, "K": 2}, Index: map[string]int{}}
	flatBound, flatErr := flat.Bound()
	atomsBound, atomsErr := atoms.Bound()
	if flatBound == nil || atomsBound == nil || flatBound.Unit != nil {
		t.Fatalf("want a global bound, got %v and %v", flatErr, atomsErr)
	}
	randomTensors(env, rng, flatBound.Global, atomsBound.Global)
	if want, got := Eval(flatBound.Global, env), Eval(atomsBound.Global, env); math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
		t.Errorf("the bound: %.15g with per-point factors, %.15g multiplied out", got, want)
	}
	for k, o := range flat.Objectives {
		oa := atoms.Objectives[k]
		if o.Latent.Name != oa.Latent.Name {
			t.Fatalf("objective %d: %s and %s", k, o.Latent.Name, oa.Latent.Name)
		}
		bigTree = 0
		dhAtoms := Diff(oa.TraceGrad(), oa.Latent.Name, []Index{oa.B})
		bigTree = math.Inf(1)
		dhFlat := Diff(o.TraceGrad(), o.Latent.Name, []Index{o.B})
		bigTree = 10000
		pairs := []struct {
			what       string
			flat, atom Expr
		}{
			{"f", o.F, oa.F}, {"gradient", o.Grad, oa.Grad}, {"Hessian", o.Hess, oa.Hess},
			{"trace", o.Trace(), oa.Trace()}, {"trace gradient", o.TraceGrad(), oa.TraceGrad()},
			{"trace Hessian", dhFlat, dhAtoms},
		}
		for _, p := range pairs {
			randomTensors(env, rng, p.flat, p.atom)
		}
		for _, p := range pairs {
			// the free indices A and B run over θ's components
			for ia := 0; ia < env.Sizes[o.Dim]; ia++ {
				for ib := 0; ib < env.Sizes[o.Dim]; ib++ {
					env.Index[o.A.Name], env.Index[o.B.Name] = ia, ib
					env.Index[oa.A.Name], env.Index[oa.B.Name] = ia, ib
					want, got := Eval(p.flat, env), Eval(p.atom, env)
					if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
						t.Errorf("%s's %s at (%d, %d): %.15g with per-point factors, %.15g multiplied out", o.Latent.Name, p.what, ia, ib, got, want)
					}
				}
			}
		}
		if a, f := dagSize(dhAtoms), dagSize(dhFlat); f > 1 && a >= f {
			t.Errorf("%s: the trace Hessian has %d distinct subexpressions with per-point factors, %d multiplied out", o.Latent.Name, a, f)
		}
	}
}

// randomTensors gives every tensor the expressions read and env lacks
// random values in (-1, 1) (covariances: symmetric, read in canonical
// order), shaped by the sizes of the indices reading them.
func randomTensors(env *Env, rng *rand.Rand, es ...Expr) {
	var names []string
	dims := map[string][]int{}
	for _, e := range es {
		Visit(e, func(x Expr) {
			tn, ok := x.(*Tensor)
			if !ok || tn.Name[0] == '#' || env.Tensors[tn.Name] != nil || dims[tn.Name] != nil {
				return
			}
			d := make([]int, len(tn.Idx))
			for k, ix := range tn.Idx {
				d[k] = env.Sizes[ix.(*Ix).I.Size]
			}
			names = append(names, tn.Name)
			dims[tn.Name] = d
		})
	}
	sort.Strings(names)
	for _, name := range names {
		n := 1
		for _, d := range dims[name] {
			n *= d
		}
		v := &Value{Dims: dims[name], Data: make([]float64, n)}
		for k := range v.Data {
			v.Data[k] = 2*rng.Float64() - 1
		}
		env.Tensors[name] = v
	}
}
