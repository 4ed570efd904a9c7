package derive

import (
	"fmt"

	"github.com/vigen-go/vigen/spec/ir"
)

// This file derives the M-steps of variational EM: each `param` node is
// set to the maximum of the expected complete log likelihood
// E_q[log p(x, z, θ | params)] + log p(params), with q held fixed. Two
// shapes have closed forms and are recognized here, one entry each in
// mStepKinds:
//
//   - counts: a simplex param read only through the log of its entries
//     (Categorical(beta[z]) and the like). The objective is linear in
//     log β, Σ_kv η_kv log β_kv, so β_k ∝ η_k: the expected counts, plus
//     α − 1 under a Dirichlet(α) prior (MAP). η is computed exactly as the
//     natural parameter of a conjugate Dirichlet update (Eq. 18).
//   - gaussian: the mean and covariance (or precision) arguments of one
//     MvNormal/MvNormalPrec statement `x[d] ~ MvNormal(mu, Sigma)` over a
//     plate, x a per-unit Gaussian latent or data. The objective depends on
//     q only through n, Σ_d E[x_d] and Σ_d E[x_d x_dᵀ] (each unit's Σ_d
//     included), and under a Normal prior on the mean and a Wishart prior
//     on the precision the MAP is App. C's pair of closed forms.

// MStep is the update of one point-estimated parameter, or of the
// parameters of one statement that are estimated together.
type MStep struct {
	Kind   string     // an entry of MStepKinds
	Params []*ir.Var  // the parameters it sets
	Pos    ir.Pos     // the statement or declaration it comes from
	Counts *Update    // kind "counts": Params[0] ∝ Counts.Params[0] row by row
	Gauss  *GaussStep // kind "gaussian"
	// Numeric (kind "numeric") is the expected complete log likelihood as
	// a function of Params[0], with its gradient and Hessian: the same
	// f of Eq. 12 a global nonconjugate latent has, maximized by Newton's
	// method instead of approximated around its maximum.
	Numeric *Objective
	// Online (kind "counts", in a model with a unit plate) splits Counts
	// for online EM, the params' side of stochastic variational inference
	// (mstep_svi.go); NoOnlineReason says why it could not be (positioned).
	Online         *OnlineCounts
	NoOnlineReason string
}

// GaussStep describes a Gaussian M-step: the statement `Target[Unit] ~
// MvNormal(Mean, Cov)` (or MvNormalPrec(Mean, Prec)).
type GaussStep struct {
	Stmt      *ir.Factor
	Target    *ir.Var // a per-unit Gaussian latent, or data real[D, P]
	Unit      Index
	Dim       string  // P
	Mean, Cov *ir.Var // the arguments; either may be a const instead of a param
	Precision bool    // Cov is a precision matrix (MvNormalPrec)
	// Priors, if declared: Mean ~ MvNormal(MeanPrior[0], MeanPrior[1]),
	// Prec ~ Wishart(CovPrior[0], CovPrior[1]). The arguments are consts.
	MeanPrior, CovPrior []*ir.Var
}

// MStepKinds describes each kind of M-step, for reports.
var MStepKinds = map[string]string{
	"counts":   "rows proportional to expected counts (plus α − 1 under a Dirichlet prior, plus optional smoothing)",
	"gaussian": "mean and covariance from expected sufficient statistics (MAP under Normal/Wishart priors, optional shrinkage)",
	"numeric":  "Newton's method on the expected complete log likelihood with its derived gradient and Hessian (MAP under a declared prior)",
}

// numericEligible reports whether a param without a closed-form M-step can
// be maximized numerically: an unconstrained real scalar or vector.
func numericEligible(v *ir.Var) bool {
	return v.Type.Kind == ir.Real && v.Type.Class == ir.Plain && len(v.Type.Dims) <= 1
}

// numericMStep derives the objective of a real vector param: log p(v), if
// v has a prior, plus the expectation under q of every statement reading v.
func (b *Builder) numericMStep(v *ir.Var, qs map[string]*QFactor) (*MStep, error) {
	if len(b.Model.Children(v.Name)) == 0 {
		return nil, ir.Errorf(v.Pos, "param %s is never read, so it has no M-step", v.Name).Hintf("remove it, or use it in a statement")
	}
	for _, f := range b.Model.Children(v.Name) {
		for _, l := range b.Model.VarsWithRole(ir.RoleLatent) {
			if q := qs[l.Name]; q != nil && q.IsGaussianVector() && len(l.Type.Dims) == 2 && mentionsVar(f, l.Name) {
				hint := "Newton's method on a param reads global latents only"
				if f.Target != nil && f.Target.Var == l && (f.Dist == "MvNormal" || f.Dist == "MvNormalPrec") {
					hint = fmt.Sprintf("make the %s's mean a param of its own (%s(mu, ...) with param mu has a closed-form M-step) and compute %s from it after the fit", f.Dist, f.Dist, v.Name)
				}
				return nil, ir.Errorf(f.Pos, "param %s has no M-step here: Newton's method cannot read the per-unit latent %s in this statement yet", v.Name, l.Name).Hintf("%s", hint)
			}
		}
	}
	o, err := b.objective(v, qs)
	if err != nil {
		return nil, err
	}
	return &MStep{Kind: "numeric", Params: []*ir.Var{v}, Pos: v.Pos, Numeric: o}, nil
}

// mSteps derives the M-step of every param of the model.
func (b *Builder) mSteps(qs map[string]*QFactor) ([]*MStep, error) {
	done := map[string]bool{}
	var out []*MStep
	var errs []error
	for _, v := range b.Model.VarsWithRole(ir.RoleParam) {
		if done[v.Name] {
			continue
		}
		var s *MStep
		var err error
		switch {
		case v.Type.Class == ir.Simplex:
			s, err = b.countsMStep(v, qs)
		default:
			s, err = b.gaussMStep(v, qs)
			if err != nil && numericEligible(v) {
				// no closed form: Newton's method on the derived objective
				var nerr error
				if s, nerr = b.numericMStep(v, qs); nerr == nil {
					err = nil
				} else {
					err = fmt.Errorf("%w\n%v", err, nerr)
				}
			}
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, p := range s.Params {
			done[p.Name] = true
		}
		out = append(out, s)
	}
	if len(errs) > 0 {
		return nil, ir.Join(errs...)
	}
	return out, nil
}

// countsMStep derives β_k ∝ η_k for a simplex param.
func (b *Builder) countsMStep(v *ir.Var, qs map[string]*QFactor) (*MStep, error) {
	factors := b.Model.Children(v.Name)
	if len(factors) == 0 {
		return nil, ir.Errorf(v.Pos, "param %s is never read, so it has no M-step", v.Name).Hintf("remove it, or use it in a statement")
	}
	if p := b.Model.Prior(v.Name); p != nil {
		if p.Dist != "Dirichlet" {
			return nil, ir.Errorf(p.Pos, "the prior of simplex param %s must be a Dirichlet for its closed-form M-step", v.Name).Hintf("remove the prior, or make it a Dirichlet")
		}
		factors = append([]*ir.Factor{p}, factors...)
	}
	q := TableQ(v.Name, "Dirichlet", v.Type.Dims...)
	u := &Update{Latent: v, Q: q, Factors: factors}
	at, err := b.qIndices(q, nil)
	if err != nil {
		return nil, err
	}
	u.At = at
	expected, err := b.expectedNatural(u, qs, factors[0])
	if err != nil {
		// err speaks of a conjugate latent's prior; say what holds for a param
		return nil, ir.Errorf(v.Pos, "simplex param %s has a closed-form M-step only when every statement reads it through the log of its entries, as Categorical(%s[k]) does", v.Name, v.Name).Hintf("read it as the probabilities of a Categorical or Multinomial, or declare it `const` and give it in the data")
	}
	u.Params = expected
	return &MStep{Kind: "counts", Params: []*ir.Var{v}, Pos: v.Pos, Counts: u}, nil
}

// gaussMStep recognizes v as an argument of one MvNormal statement over a
// plate and derives the M-step of that statement's params.
func (b *Builder) gaussMStep(v *ir.Var, qs map[string]*QFactor) (*MStep, error) {
	noForm := func(pos ir.Pos, why string) error {
		return ir.Errorf(pos, "param %s has no closed-form M-step: %s", v.Name, why).Hintf("closed forms exist for simplex params read as probabilities and for the mean and covariance of an MvNormal over a plate, and a real vector param is maximized by Newton's method; declare this one `const` or make it a latent")
	}
	var stmt *ir.Factor
	for _, f := range b.Model.Children(v.Name) {
		if stmt != nil {
			return nil, noForm(f.Pos, "it is read by more than one statement")
		}
		stmt = f
	}
	if stmt == nil {
		return nil, ir.Errorf(v.Pos, "param %s is never read, so it has no M-step", v.Name).Hintf("remove it, or use it in a statement")
	}
	if stmt.Dist != "MvNormal" && stmt.Dist != "MvNormalPrec" {
		what := "a " + stmt.Dist
		if stmt.IsTerm() {
			what = "a factor statement"
		}
		return nil, noForm(stmt.Pos, "it is read by "+what+", not an MvNormal")
	}
	g := &GaussStep{Stmt: stmt, Precision: stmt.Dist == "MvNormalPrec"}
	args := make([]*ir.Var, 2)
	for k, a := range stmt.Args[:2] {
		r, ok := a.(*ir.Ref)
		if !ok || len(r.Index) > 0 || (r.Var.Role != ir.RoleParam && r.Var.Role != ir.RoleConst) {
			if ir.Mentions(a, v.Name) {
				return nil, noForm(a.Position(), "it must be a whole argument of the MvNormal, not part of an expression")
			}
			return nil, noForm(a.Position(), "the other argument must be a param or a const, named without indices")
		}
		args[k] = r.Var
	}
	g.Mean, g.Cov = args[0], args[1]
	if g.Mean == v && len(v.Type.Dims) != 1 {
		// a scalar mean broadcasts, but its M-step would be another one
		return nil, noForm(stmt.Args[0].Position(), fmt.Sprintf("the mean of the MvNormal is %s, of type %s, not a vector", v.Name, v.Type))
	}
	// The target: x[d] over `for d in 1:D`, alone in its plate.
	t := stmt.Target
	if len(stmt.Plates) != 1 || len(t.Index) != 1 {
		return nil, noForm(stmt.Pos, "the MvNormal must draw one vector per unit, x[d] inside `for d in 1:D`")
	}
	ix, ok := t.Index[0].(*ir.Index)
	if !ok || ix.Name != stmt.Plates[0].Index || stmt.Plates[0].Bag != nil {
		return nil, noForm(stmt.Pos, "the MvNormal must draw one vector per unit, x[d] inside `for d in 1:D`")
	}
	g.Target, g.Unit, g.Dim = t.Var, Index{Name: ix.Name, Size: stmt.Plates[0].Size, Plate: true}, t.Var.Type.Dims[1]
	switch {
	case t.Var.Role == ir.RoleData:
	case t.Var.Role == ir.RoleLatent && qs[t.Var.Name] != nil && qs[t.Var.Name].IsGaussianVector() && len(t.Var.Type.Dims) == 2:
	default:
		return nil, noForm(stmt.Pos, fmt.Sprintf("its target %s must be data or a nonconjugate latent with one Gaussian per unit", t.Var.Name))
	}
	s := &MStep{Kind: "gaussian", Pos: stmt.Pos, Gauss: g}
	for k, a := range args {
		if a.Role != ir.RoleParam {
			continue
		}
		s.Params = append(s.Params, a)
		p := b.Model.Prior(a.Name)
		if p == nil {
			continue
		}
		want := [2]string{"MvNormal", "Wishart"}[k]
		if k == 1 && !g.Precision {
			return nil, ir.Errorf(p.Pos, "a prior on the covariance %s has no closed-form M-step", a.Name).Hintf("put a Wishart prior on a precision (MvNormalPrec) instead")
		}
		if p.Dist != want {
			return nil, ir.Errorf(p.Pos, "the prior of %s must be %s for the closed-form M-step (App. C) of the MvNormal at %s", a.Name, map[string]string{"MvNormal": "an MvNormal", "Wishart": "a Wishart"}[want], stmt.Pos).Hintf("write `%s ~ %s(...)` with const arguments, or remove the prior", a.Name, want)
		}
		var pv []*ir.Var
		for _, pa := range p.Args {
			r, ok := pa.(*ir.Ref)
			if !ok || len(r.Index) > 0 || r.Var.Role != ir.RoleConst {
				return nil, ir.Errorf(pa.Position(), "the arguments of %s's prior must be consts named without indices", a.Name).Hintf("declare them `const` and pass their names")
			}
			pv = append(pv, r.Var)
		}
		if k == 0 {
			g.MeanPrior = pv
		} else {
			g.CovPrior = pv
		}
	}
	return s, nil
}
