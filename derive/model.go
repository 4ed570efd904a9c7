package derive

import (
	"fmt"

	"github.com/vigen-go/vigen/spec/ir"
)

// Objective is everything the Laplace and delta-method updates of one
// nonconjugate latent θ need (Wang & Blei §3.1–3.2):
//
//	F         f(θ) = log p(θ) + Σ_children E_q[log p(child | θ, …)]   (Eq. 12)
//	Grad      ∂f/∂θ_A                                                 (free index A)
//	Hess      ∂²f/∂θ_A∂θ_B                                            (free A, B)
//	Trace     Tr{∇²f(θ) Σ} = Σ_ab Hess_ab Σ_ab, Σ the tensor CovName (Eq. 17)
//	TraceGrad ∂ Trace/∂θ_A: the third-derivative contraction, never a p×p×p tensor
type Objective struct {
	Latent           *ir.Var
	Dim              string // size of θ
	A, B             Index
	CovName          string
	F, Grad, Hess    Expr
	Trace, TraceGrad Expr
	// Factors are the statements f is built from: θ's prior first, then its
	// children, in source order.
	Factors []*ir.Factor
	// Parts splits F, Grad, Hess, Trace and TraceGrad by factor (they are
	// the sums of the parts), so generated code can say which statement
	// each loop implements.
	Parts []*Part
}

// Part is one factor's contribution to an Objective.
type Part struct {
	Factor                          *ir.Factor
	F, Grad, Hess, Trace, TraceGrad Expr
}

// Derivation is the result of deriving a model.
type Derivation struct {
	Model      *ir.Model
	Objectives []*Objective
	Aux        []Aux
}

// CovTensor is the name under which an objective's Trace reads Σ.
func CovTensor(latent string) string { return latent + ".cov" }

// Derive builds the objective of every nonconjugate latent of m. Models
// outside what the code generator supports yet get a positioned error.
func Derive(m *ir.Model) (*Derivation, error) {
	b := NewBuilder(m)
	d := &Derivation{Model: m}
	var errs []error
	covered := map[*ir.Factor]bool{}
	for _, v := range m.VarsWithRole(ir.RoleLatent) {
		if !v.Treatment.Nonconjugate() {
			errs = append(errs, fmt.Errorf("%s: latent %s is declared %s; conjugate updates are not supported by the code generator yet", v.Pos, v.Name, v.Treatment))
			continue
		}
		obj, err := b.objective(v)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, f := range obj.Factors {
			covered[f] = true
		}
		d.Objectives = append(d.Objectives, obj)
	}
	for _, v := range m.VarsWithRole(ir.RoleParam) {
		errs = append(errs, fmt.Errorf("%s: param %s: point-estimated parameters are not supported by the code generator yet", v.Pos, v.Name))
	}
	if len(errs) == 0 {
		for _, f := range m.Factors {
			if !covered[f] {
				errs = append(errs, fmt.Errorf("%s: this statement involves no nonconjugate latent; such models are not supported by the code generator yet", f.Pos))
			}
		}
	}
	if len(errs) > 0 {
		return nil, joinErrors(errs)
	}
	d.Aux = b.Aux
	return d, nil
}

func (b *Builder) objective(v *ir.Var) (*Objective, error) {
	if v.Type.Kind != ir.Real || v.Type.Class != ir.Plain || len(v.Type.Dims) != 1 {
		return nil, fmt.Errorf("%s: nonconjugate latent %s must be a real vector (real[P]) for now", v.Pos, v.Name)
	}
	prior := b.Model.Prior(v.Name)
	if prior == nil {
		return nil, fmt.Errorf("%s: latent %s has no prior", v.Pos, v.Name)
	}
	if len(prior.Plates) > 0 || len(prior.Target.Index) > 0 {
		return nil, fmt.Errorf("%s: latent %s is drawn inside a plate; per-unit latents are not supported by the code generator yet", prior.Pos, v.Name)
	}
	o := &Objective{Latent: v, Dim: v.Type.Dims[0], CovName: CovTensor(v.Name)}
	o.Factors = append([]*ir.Factor{prior}, b.Model.Children(v.Name)...)
	o.A = b.Fresh("a", o.Dim)
	o.B = b.Fresh("b", o.Dim)
	ta, tb := b.Fresh("a", o.Dim), b.Fresh("b", o.Dim)
	var fs, gs, hs, ts, tgs []Expr
	for _, f := range o.Factors {
		lp, err := b.FactorLogDensity(f)
		if err != nil {
			return nil, err
		}
		p := &Part{Factor: f, F: lp}
		p.Grad = Diff(p.F, v.Name, []Index{o.A})
		p.Hess = Diff(p.Grad, v.Name, []Index{o.B})
		// Tr{HΣ} = Σ_ab H_ab Σ_ab (Σ symmetric); the Hessian's free indices
		// are renamed to bound ones so A stays free for the gradient.
		h := Subst(Subst(p.Hess, o.A, ta), o.B, tb)
		p.Trace = Sum([]Index{ta, tb}, Mul(h, TSym(o.CovName, IxE(ta), IxE(tb))))
		p.TraceGrad = Diff(p.Trace, v.Name, []Index{o.A})
		o.Parts = append(o.Parts, p)
		fs, gs, hs, ts, tgs = append(fs, p.F), append(gs, p.Grad), append(hs, p.Hess), append(ts, p.Trace), append(tgs, p.TraceGrad)
	}
	o.F, o.Grad, o.Hess, o.Trace, o.TraceGrad = Add(fs...), Add(gs...), Add(hs...), Add(ts...), Add(tgs...)
	return o, nil
}

type errorList []error

func (l errorList) Error() string {
	s := ""
	for k, e := range l {
		if k > 0 {
			s += "\n"
		}
		s += e.Error()
	}
	return s
}

func joinErrors(errs []error) error {
	if len(errs) == 1 {
		return errs[0]
	}
	return errorList(errs)
}
