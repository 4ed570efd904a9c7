package derive

import (
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/spec"
	"github.com/vigen-go/vigen/spec/ir"
)

// pointModels read literal coordinates of small latents: their parts get
// point terms. TestPointTermsMatchTrees adds issue 39's mixlit, from
// codegen's generation-cost suite.
var pointModels = map[string]string{
	"mix3": `model mix3
size N
data y : real[N]
latent a : real[3] nonconjugate laplace
latent mu : real[3] nonconjugate delta
a ~ Normal(0, 1)
mu ~ Normal(0, 5)
for n in 1:N {
  y[n] ~ Mixture(softmax(a), Normal(mu[1], 1), Normal(mu[2], 1), Normal(mu[3], 1))
}
`,
	"scalars": `model scalars
size N
data x : real[N]
data y : real[N]
latent a : real nonconjugate laplace
latent b : real nonconjugate delta
latent s : real<lower=0> nonconjugate laplace
a ~ Normal(0, 2)
b ~ StudentT(3, 0, 1)
s ~ HalfCauchy(2)
for n in 1:N {
  y[n] ~ Normal(a + b * x[n] + exp(a * b) * x[n] * x[n], s)
}
`,
}

// pointEnv gives every tensor the expressions read a random value: data
// and latents normal, covariances random SPD; a scalar is a vector of one.
func pointEnv(t *testing.T, m *ir.Model, rng *rand.Rand, sizes map[string]int, es ...Expr) *Env {
	env := &Env{Sizes: sizes, Index: map[string]int{}, Tensors: map[string]*Value{}}
	dimsOf := func(v *ir.Var) []int {
		var d []int
		for _, s := range v.Type.Dims {
			n, ok := sizes[s]
			if !ok {
				if n, ok = fixedSize(s); !ok {
					t.Fatalf("no size %s", s)
				}
			}
			d = append(d, n)
		}
		if len(d) == 0 {
			d = []int{1}
		}
		return d
	}
	for _, e := range es {
		Visit(e, func(x Expr) {
			tn, ok := x.(*Tensor)
			if !ok || tn.Name[0] == '#' || env.Tensors[tn.Name] != nil {
				return
			}
			name, part, _ := strings.Cut(tn.Name, ".")
			v := m.Lookup(name)
			if v == nil {
				t.Fatalf("no variable for tensor %s", tn.Name)
			}
			d := dimsOf(v)
			n := 1
			for _, k := range d {
				n *= k
			}
			val := &Value{Dims: d, Data: make([]float64, n)}
			switch part {
			case "cov":
				k := d[len(d)-1]
				val = &Value{Dims: []int{k, k}, Data: make([]float64, k*k)}
				a := make([]float64, k*k)
				for i := range a {
					a[i] = 0.4 * rng.NormFloat64()
				}
				for i := range k {
					for j := range k {
						s := 0.0
						for l := range k {
							s += a[i*k+l] * a[j*k+l]
						}
						if i == j {
							s += 0.05
						}
						val.Data[i*k+j] = s
					}
				}
			default:
				for i := range val.Data {
					val.Data[i] = rng.NormFloat64()
					if part != "" || v.Role == ir.RoleLatent {
						val.Data[i] *= 0.5
					}
				}
			}
			env.Tensors[tn.Name] = val
		})
	}
	return env
}

// pointSum evaluates node x of pt's group gr summed over its plates.
func pointSum(pt *PointTerm, gr PointGroup, x int, env *Env) float64 {
	g := pt.Graph
	vars := make([]float64, len(g.Vars))
	for k, v := range g.Vars {
		vars[k] = Eval(v.At, env)
	}
	leaf := func(e Expr) float64 { return Eval(e, env) }
	var sum func(k int) float64
	sum = func(k int) float64 {
		if k == len(gr.Plates) {
			return g.EvalGraph(x, vars, leaf)
		}
		j := gr.Plates[k]
		lo, n := 0, 0
		if size, l, h, ok := SizeRange(j.Size); ok {
			lo, n = l, env.Sizes[size]+h
		} else {
			n = env.Sizes[j.Size]
		}
		s := 0.0
		for i := lo; i < n; i++ {
			env.Index[j.Name] = i
			s += sum(k + 1)
		}
		delete(env.Index, j.Name)
		return s
	}
	return sum(0)
}

// TestPointTermsMatchTrees: a part's point term gives the same f, ∇f and
// ∇²f as its index-notation tree (Eq. 12 with the Eq. 19 expectations),
// and the delta objective of Eq. 17 the same value as f + ½Tr{∇²f C} of
// the tree, with a gradient and Hessian that match finite differences of
// that value.
func TestPointTermsMatchTrees(t *testing.T) {
	mixlit, err := os.ReadFile("../codegen/testdata/gencost/mixlit.vi")
	if err != nil {
		t.Fatal(err)
	}
	models := map[string]string{"mixlit": string(mixlit)}
	maps.Copy(models, pointModels)
	for name, src := range models {
		t.Run(name, func(t *testing.T) {
			m, err := spec.Load(name+".vi", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			d, err := Derive(m)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(1, 2))
			points := 0
			for _, o := range d.Objectives {
				for _, p := range o.Parts {
					if p.Point == nil {
						continue
					}
					points++
					pt := p.Point
					var es []Expr
					for _, v := range pt.Graph.Vars {
						es = append(es, v.At)
					}
					for _, n := range pt.Graph.Nodes {
						if n.Op == OpLeaf {
							es = append(es, n.Leaf)
						}
					}
					trace := p.Trace(o)
					env := pointEnv(t, m, rng, map[string]int{"N": 7}, append(es, p.F, p.Grad, p.Hess, trace)...)
					k := len(pt.X)
					sum := func(node func(gr PointGroup) int) float64 {
						s := 0.0
						for _, gr := range pt.Groups {
							s += pointSum(pt, gr, node(gr), env)
						}
						return s
					}
					what := o.Latent.Name + " " + p.Factor.Pos.String()
					check := func(label string, got, want float64, tol float64) {
						t.Helper()
						if math.Abs(got-want) > tol*(1+math.Abs(want)) {
							t.Errorf("%s %s: point term %.15g, tree %.15g", what, label, got, want)
						}
					}
					check("f", sum(func(gr PointGroup) int { return gr.Value }), Eval(p.F, env), 1e-12)
					for a := range k {
						env.Index[o.A.Name] = a
						check("grad["+strconv.Itoa(a)+"]", sum(func(gr PointGroup) int { return pt.Gradient(gr.Value, a) }), Eval(p.Grad, env), 1e-11)
						for b := range k {
							env.Index[o.B.Name] = b
							check("hess["+strconv.Itoa(a)+","+strconv.Itoa(b)+"]", sum(func(gr PointGroup) int { return pt.Hessian(gr.Value, a, b) }), Eval(p.Hess, env), 1e-10)
						}
					}
					delete(env.Index, o.A.Name)
					delete(env.Index, o.B.Name)
					delta := func(gr PointGroup) int { return pt.DeltaValue(gr.Value, o.CovName) }
					check("delta value", sum(delta), Eval(p.F, env)+0.5*Eval(trace, env), 1e-11)
					// the delta objective's derivatives by central differences
					theta := env.Tensors[o.Latent.Name].Data
					const h = 1e-4
					for a := range k {
						x := theta[a]
						theta[a] = x + h
						up := sum(delta)
						theta[a] = x - h
						down := sum(delta)
						theta[a] = x
						check("delta grad["+strconv.Itoa(a)+"] (central difference)", sum(func(gr PointGroup) int { return pt.Gradient(delta(gr), a) }), (up-down)/(2*h), 1e-6)
						for b := range k {
							theta[a] = x + h
							up := sum(func(gr PointGroup) int { return pt.Gradient(delta(gr), b) })
							theta[a] = x - h
							down := sum(func(gr PointGroup) int { return pt.Gradient(delta(gr), b) })
							theta[a] = x
							check("delta hess["+strconv.Itoa(a)+","+strconv.Itoa(b)+"] (central difference)", sum(func(gr PointGroup) int { return pt.Hessian(delta(gr), a, b) }), (up-down)/(2*h), 1e-6)
						}
					}
				}
			}
			if points == 0 {
				t.Fatal("no part has a point term")
			}
		})
	}
}

// TestRenamable: two terms over the same plates merge into one loop by
// renaming one's plates to the other's, which must not turn two plates into
// one (Σ_i,j g(i, j) renamed i→j, then j→i, is Σ_i g(i, i)).
func TestRenamable(t *testing.T) {
	i, j, n, m := Index{Name: "i", Size: "N"}, Index{Name: "j", Size: "N"}, Index{Name: "n", Size: "N"}, Index{Name: "m", Size: "N"}
	for _, c := range []struct {
		from, to []Index
		want     bool
	}{
		{[]Index{n}, []Index{m}, true},
		{[]Index{i, j}, []Index{i, j}, true},
		{[]Index{i, j}, []Index{n, m}, true},
		{[]Index{j, i}, []Index{i, j}, false},
		{[]Index{n, i}, []Index{i, m}, false},
	} {
		if got := renamable(c.from, c.to); got != c.want {
			t.Errorf("renamable(%v, %v) = %v, want %v", c.from, c.to, got, c.want)
		}
	}
}
