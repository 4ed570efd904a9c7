package derive

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vigen-go/vigen/golden"
	"github.com/vigen-go/vigen/spec"
)

// Derivatives of long chains of primitives (issue 17): the chain rule
// keeps the product of a chain's partials as nested group(…) factors, so
// that derivatives stay linear in the depth of the chain. These tests check
// that the sharing changes no value, and that sizes are linear.

// chainModel is a regression whose linear predictor goes through depth
// applications of wrap (a format with one %s): into a Bernoulli if bern,
// else into a Normal mean.
func chainModel(wrap string, depth int, bern bool) string {
	pred := "dot(x[n], theta)"
	for k := 0; k < depth; k++ {
		pred = fmt.Sprintf(wrap, pred)
	}
	ytype, stmt := "real[N]", fmt.Sprintf("y[n] ~ Normal(%s, 1)", pred)
	if bern {
		ytype, stmt = "int[N] in 0..1", fmt.Sprintf("y[n] ~ Bernoulli(%s)", pred)
	}
	return fmt.Sprintf("model chain\nsize N, P\ndata x : real[N, P]\ndata y : %s\nlatent theta : real[P] nonconjugate laplace\ntheta ~ Normal(0, 1)\nfor n in 1:N {\n  %s\n}\n", ytype, stmt)
}

func deriveChain(t *testing.T, wrap string, depth int, bern bool) *Objective {
	t.Helper()
	m, err := spec.Load("chain.vi", []byte(chainModel(wrap, depth, bern)))
	if err != nil {
		t.Fatal(err)
	}
	d, err := Derive(m)
	if err != nil {
		t.Fatal(err)
	}
	return d.Objectives[0]
}

func chainEnv(rng *rand.Rand, n, p int, bern bool) *Env {
	env := logregEnv(rng, n, p)
	x := env.Tensors["x"].Data
	for i := range x {
		x[i] *= 0.3 // keep log(3 + …) chains well inside their domain
	}
	if !bern {
		for i := range env.Tensors["y"].Data {
			env.Tensors["y"].Data[i] = rng.NormFloat64()
		}
	}
	return env
}

func TestDeepChainDerivativesMatchFiniteDifferences(t *testing.T) {
	golden.SlowTier(t)
	for _, c := range []struct {
		wrap  string
		depth int
		bern  bool
	}{
		// deep enough for groups nested in groups; Eval walks the
		// expressions as trees, whose size is exponential in the depth
		{"logistic(%s)", 7, true},
		{"log(3 + %s)", 9, false},
		{"exp(0.5 * logistic(%s))", 4, false},
	} {
		t.Run(fmt.Sprintf("%s×%d", c.wrap, c.depth), func(t *testing.T) {
			o := deriveChain(t, c.wrap, c.depth, c.bern)
			// the delta-method Hessian the generated code uses (codegen's
			// objectiveKernel): ∂/∂θ_b of the trace gradient
			h4 := Diff(o.TraceGrad(), "theta", []Index{o.B})
			rng := rand.New(rand.NewPCG(3, uint64(c.depth)))
			const p = 2
			for trial := 0; trial < 2; trial++ {
				env := chainEnv(rng, 3, p, c.bern)
				fdCheck(t, "grad", o.F, o.Grad, o.A, "theta", env, 1e-6)
				for a := 0; a < p; a++ {
					env.Index[o.A.Name] = a
					fdCheck(t, "hess column", o.Grad, o.Hess, o.B, "theta", env, 1e-5)
					fdCheck(t, "delta hess column", o.TraceGrad(), h4, o.B, "theta", env, 1e-5)
				}
				delete(env.Index, o.A.Name)
				fdCheck(t, "trace grad", o.Trace(), o.TraceGrad(), o.A, "theta", env, 1e-5)
				for _, e := range []Expr{o.F, o.Grad, o.Hess, o.Trace(), o.TraceGrad()} {
					env.Index[o.A.Name], env.Index[o.B.Name] = 0, 1
					if v := Eval(e, env); math.IsNaN(v) || math.IsInf(v, 0) {
						t.Fatalf("%s = %v at a test point", String(e), v)
					}
				}
				delete(env.Index, o.A.Name)
				delete(env.Index, o.B.Name)
			}
		})
	}
}

// dagSize counts the distinct subexpressions of e (by key).
func dagSize(e Expr) int {
	seen := map[string]bool{}
	Visit(e, func(x Expr) { seen[x.Key()] = true })
	return len(seen)
}

// The fourth derivative of a chain of depth 2k is about twice as large as
// that of depth k: linear, where expanding the chain's product made it grow
// like a power of the depth (8× from 5 to 10 deep for logistic).
func TestDeepChainDerivativesGrowLinearly(t *testing.T) {
	for _, wrap := range []string{"logistic(%s)", "log(3 + %s)"} {
		var sizes []int
		for _, depth := range []int{5, 10} {
			o := deriveChain(t, wrap, depth, wrap == "logistic(%s)")
			sizes = append(sizes, dagSize(Diff(o.TraceGrad(), "theta", []Index{o.B})))
		}
		if r := float64(sizes[1]) / float64(sizes[0]); r > 3 {
			t.Errorf("%s: the delta-method Hessian has %d distinct subexpressions at depth 5 and %d at depth 10 (×%.1f, want ≤ ×3)", wrap, sizes[0], sizes[1], r)
		}
	}
}
