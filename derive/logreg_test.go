package derive

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vigen-go/vigen/spec/ir"
)

// logregModel builds the checked IR of Bayesian logistic regression by hand,
// so derive's tests do not depend on the parser.
func logregModel() *ir.Model {
	pos := ir.Pos{File: "logreg.vi", Line: 1, Col: 1}
	N := &ir.Var{Name: "N", Role: ir.RoleSize, Pos: pos}
	P := &ir.Var{Name: "P", Role: ir.RoleSize, Pos: pos}
	x := &ir.Var{Name: "x", Role: ir.RoleData, Type: ir.Type{Kind: ir.Real, Dims: []string{"N", "P"}}, Pos: pos}
	y := &ir.Var{Name: "y", Role: ir.RoleData, Type: ir.Type{Kind: ir.Int, Dims: []string{"N"}, Range: &[2]ir.Bound{{Value: 0}, {Value: 1}}}, Pos: pos}
	mu0 := &ir.Var{Name: "mu0", Role: ir.RoleConst, Type: ir.Type{Kind: ir.Real, Dims: []string{"P"}}, Pos: pos}
	S0 := &ir.Var{Name: "Sigma0", Role: ir.RoleConst, Type: ir.Type{Kind: ir.Real, Class: ir.Cov, Dims: []string{"P", "P"}}, Pos: pos}
	theta := &ir.Var{Name: "theta", Role: ir.RoleLatent, Type: ir.Type{Kind: ir.Real, Dims: []string{"P"}}, Treatment: ir.Laplace, Pos: pos}
	ref := func(v *ir.Var, idx ...ir.Expr) *ir.Ref {
		t := v.Type
		t.Dims = t.Dims[len(idx):]
		if v.Type.Class == ir.Cov {
			t.Class = ir.Cov
		}
		return &ir.Ref{Var: v, Index: idx, T: t, Pos: pos}
	}
	n := &ir.Index{Name: "n", Size: "N", Pos: pos}
	dot := &ir.Call{Func: "dot", Args: []ir.Expr{ref(x, n), ref(theta)}, T: ir.Type{Kind: ir.Real}, Pos: pos}
	lg := &ir.Call{Func: "logistic", Args: []ir.Expr{dot}, T: ir.Type{Kind: ir.Real}, Pos: pos}
	return &ir.Model{Name: "logreg", File: "logreg.vi",
		Vars: []*ir.Var{N, P, x, y, mu0, S0, theta},
		Factors: []*ir.Factor{
			{Target: ref(theta), Dist: "MvNormal", Args: []ir.Expr{ref(mu0), ref(S0)}, Pos: pos},
			{Plates: []ir.Plate{{Index: "n", Size: "N", Pos: pos}}, Target: ref(y, n), Dist: "Bernoulli", Args: []ir.Expr{lg}, Pos: pos},
		}}
}

// TestLogregForms: f is the log joint written out by hand,
//
//	−P/2·log 2π − ½ log|Σ0| − ½ (θ−μ0)ᵀΣ0⁻¹(θ−μ0) + Σ_n [y_n u_n − log(1+e^{u_n})],  u_n = x_nᵀθ,
//
// and the trace term is Tr{∇²f Σ} of the derived Hessian (the derivatives
// themselves are checked by finite differences and against Appendix C).
// It used to only log the forms.
func TestLogregForms(t *testing.T) {
	d, err := Derive(logregModel())
	if err != nil {
		t.Fatal(err)
	}
	o := d.Objectives[0]
	for _, c := range []struct {
		name string
		e    Expr
	}{{"f", o.F}, {"grad", o.Grad}, {"hess", o.Hess}, {"trace", o.Trace()}, {"traceGrad", o.TraceGrad()}} {
		t.Logf("%s = %s", c.name, String(c.e))
	}
	rng := rand.New(rand.NewPCG(5, 6))
	const n, p = 8, 3
	for trial := 0; trial < 3; trial++ {
		env := logregEnv(rng, n, p)
		x, y, th := env.Tensors["x"].Data, env.Tensors["y"].Data, env.Tensors["theta"].Data
		mu, inv, cov := env.Tensors["mu0"].Data, env.Tensors["Sigma0.inv"].Data, env.Tensors["theta.cov"].Data
		want := -float64(p)/2*math.Log(2*math.Pi) - 0.5*env.Tensors["Sigma0.logdet"].Data[0]
		for a := 0; a < p; a++ {
			for b := 0; b < p; b++ {
				want -= 0.5 * (th[a] - mu[a]) * inv[a*p+b] * (th[b] - mu[b])
			}
		}
		for i := 0; i < n; i++ {
			u := 0.0
			for k := 0; k < p; k++ {
				u += x[i*p+k] * th[k]
			}
			want += y[i]*u - math.Log1p(math.Exp(u))
		}
		if got := Eval(o.F, env); math.Abs(got-want) > 1e-10*math.Max(1, math.Abs(want)) {
			t.Errorf("trial %d: f = %.15g, the log joint by hand = %.15g", trial, got, want)
		}
		wantTrace := 0.0
		for a := 0; a < p; a++ {
			for b := 0; b < p; b++ {
				env.Index[o.A.Name], env.Index[o.B.Name] = a, b
				wantTrace += Eval(o.Hess, env) * cov[a*p+b]
			}
		}
		delete(env.Index, o.A.Name)
		delete(env.Index, o.B.Name)
		if got := Eval(o.Trace(), env); math.Abs(got-wantTrace) > 1e-10*math.Max(1, math.Abs(wantTrace)) {
			t.Errorf("trial %d: trace = %.15g, Tr{∇²f Σ} = %.15g", trial, got, wantTrace)
		}
	}
}
