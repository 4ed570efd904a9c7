package derive

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vigen-go/vigen/spec/ir"
)

// TestProjectionLogreg: logistic regression's f splits into the quadratic
// part (the MvNormal prior and Σ_n y_n x_nᵀθ) and one projection term with
// rows x_n and g(u) = −log(1+e^u); evaluated at random points, the parts
// sum to f, and G1, G2 are g's derivatives.
func TestProjectionLogreg(t *testing.T) {
	m := logregModel()
	m.Lookup("theta").Treatment = ir.NCVMP
	d, err := Derive(m)
	if err != nil {
		t.Fatal(err)
	}
	o := d.Objectives[0]
	pr := o.NCVMP
	if len(pr.Terms) != 1 {
		t.Fatalf("%d projection terms, want 1", len(pr.Terms))
	}
	pt := pr.Terms[0]
	t.Logf("row = %s; g = %s; g' = %s; g'' = %s", String(pt.Row), String(pt.G), String(pt.G1), String(pt.G2))
	rng := rand.New(rand.NewPCG(1, 2))
	const N, P = 5, 3
	env := logregEnv(rng, N, P)
	theta := env.Tensors["theta"].Data
	want := Eval(o.F, env)
	var got float64
	for _, q := range pr.Quad {
		got += Eval(q.F, env)
	}
	x := env.Tensors["x"].Data
	y := env.Tensors["y"].Data
	uv := make([]float64, N)
	env.Tensors[pt.U] = &Value{Dims: []int{N}, Data: uv}
	for n := 0; n < N; n++ {
		var u float64
		for a := 0; a < P; a++ {
			env.Index[pt.Idx.Name], env.Index[o.A.Name] = n, a
			r := Eval(pt.Row, env)
			if math.Abs(r-x[n*P+a]) > 1e-15 {
				t.Fatalf("row[%d][%d] = %v, want x = %v", n, a, r, x[n*P+a])
			}
			u += r * theta[a]
		}
		uv[n] = u
		env.Index[pt.Idx.Name] = n
		g, g1, g2 := Eval(pt.G, env), Eval(pt.G1, env), Eval(pt.G2, env)
		s := 1 / (1 + math.Exp(-u))
		if math.Abs(g+math.Log1p(math.Exp(u))) > 1e-12 || math.Abs(g1+s) > 1e-12 || math.Abs(g2+s*(1-s)) > 1e-12 {
			t.Errorf("n=%d: g, g', g'' = %v, %v, %v; want %v, %v, %v (y = %v)", n, g, g1, g2, -math.Log1p(math.Exp(u)), -s, -s*(1-s), y[n])
		}
		got += g
	}
	if math.Abs(got-want) > 1e-10*math.Max(1, math.Abs(want)) {
		t.Errorf("quadratic part + projections = %v, f = %v", got, want)
	}
}
