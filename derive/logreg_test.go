package derive

import (
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

func TestLogregForms(t *testing.T) {
	d, err := Derive(logregModel())
	if err != nil {
		t.Fatal(err)
	}
	o := d.Objectives[0]
	for _, c := range []struct {
		name string
		e    Expr
	}{{"f", o.F}, {"grad", o.Grad}, {"hess", o.Hess}, {"trace", o.Trace}, {"traceGrad", o.TraceGrad}} {
		t.Logf("%s = %s", c.name, String(c.e))
	}
}
