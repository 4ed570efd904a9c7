package derive

import (
	"fmt"
	"maps"
	"slices"

	"github.com/vigen-go/vigen/spec/ir"
)

// This file derives what posterior predictions of new observations need:
// for each observed statement (a `~` statement whose target is data), its
// log density log p(y_i | θ) per observation i, and the conditional mean
// E[y_i | θ] from the family's table entry (Dist.Mean), both as
// expressions of the latents θ read at a point. Generated code evaluates
// them at q's means (the plug-in predictive) and at draws from q (Monte
// Carlo over q: log (1/S) Σ_s p(y_i | θ_s), the log pointwise predictive
// density of Gelman, Hwang & Vehtari 2014), for data with new rows.
//
// An observation is one iteration of the statement's loops and, for an
// elementwise family with an array target, one element of it: y[n] in
// `for n in 1:N { y[n] ~ Bernoulli(...) }`, y[i] in `y ~ Normal(mu, s)`.
//
// New observations can be scored this way when every latent they read is
// shared by them, not local to the rows of the data: a latent whose first
// dimension is the first (the rows) of an observed variable (a mixture's
// z[N], eight schools' theta[J] beside y[J]) would need its own inference
// for new rows. Those
// latents must also have a Gaussian factor (nonconjugate, or a conjugate
// MvNormal's), whose draws the runtime takes.

// Pointwise is one observed statement's per-observation log density and
// conditional mean.
type Pointwise struct {
	Factor *ir.Factor
	Var    *ir.Var // the observed data variable, the statement's target
	// Free are the observation's indices, free in LogLik and Mean: the
	// statement's plates, outermost first, then the elements of an array
	// target of an elementwise family. They index Var in this order.
	Free []Index
	// LogLik is log p(y_i | θ) with the normalizing constants.
	LogLik Expr
	// Mean is E[y_i | θ], or nil if the family has no Mean entry.
	Mean Expr
	// Latents are the latents LogLik reads, in declaration order.
	Latents []*ir.Var
}

// Predictions is what predictions of new observations need, or why a
// model cannot have them.
type Predictions struct {
	Stmts []*Pointwise
	// Latents are the latents any statement reads, in declaration order:
	// each has a Gaussian q, global or one per unit.
	Latents []*ir.Var
	// Omissible are the observed arrays new data may leave out (for
	// predictions without scores): those no statement reads as an
	// argument (an autoregression's y is read as its own lag) and whose
	// family has a mean to predict (Dist.Mean).
	Omissible []*ir.Var
}

// predictions derives the Predictions of the model, or returns why it has
// none, as a positioned error with a hint.
func (b *Builder) predictions(d *Derivation) (p *Predictions, err error) {
	m := b.Model
	defer recoverLowerError(&p, &err)
	gaussian := map[string]bool{}
	for _, o := range d.Objectives {
		gaussian[o.Latent.Name] = true
	}
	observedDims := map[string]bool{}
	p = &Predictions{}
	for _, f := range m.Factors {
		if f.IsTerm() {
			for _, v := range m.VarsWithRole(ir.RoleData) {
				if ir.Mentions(f.Args[0], v.Name) {
					return nil, ir.Errorf(f.Pos, "this `factor` statement reads the data %s, and predictions score `~` statements only", v.Name).Hintf("write the likelihood of %s as a `~` statement", v.Name)
				}
			}
			continue
		}
		if f.Target.Var.Role != ir.RoleData {
			continue
		}
		if dims := f.Target.Var.Type.Dims; len(dims) > 0 {
			observedDims[dims[0]] = true // the rows
		}
	}
	for _, f := range m.Factors {
		if f.IsTerm() || f.Target.Var.Role != ir.RoleData {
			continue
		}
		pw, err := b.pointwiseOf(f)
		if err != nil {
			return nil, err
		}
		for _, v := range pw.Latents { // a latent local to the rows first: no q would do
			if len(v.Type.Dims) > 0 && observedDims[v.Type.Dims[0]] {
				return nil, ir.Errorf(f.Pos, "the observations of %s read the latent %s, which has one value per %s, the rows of the observed data: new rows would need their own %s, inferred from them, which predictions do not do", f.Target.Var.Name, v.Name, v.Type.Dims[0], v.Name).Hintf("predictions score new rows of models whose latents are shared by the rows (regressions, hierarchical models with groups read through an index such as theta[group[n]])")
			}
		}
		for _, v := range pw.Latents {
			if !gaussian[v.Name] {
				hint := fmt.Sprintf("declare %s nonconjugate (a Gaussian factor) to predict with it", v.Name)
				if v.Type.Kind == ir.Int || v.Type.Class != ir.Plain {
					hint = fmt.Sprintf("%s is discrete or constrained to a simplex or covariance, which predictions cannot draw yet", v.Name)
				}
				return nil, ir.Errorf(f.Pos, "the observations of %s read the latent %s, which has no Gaussian factor (a nonconjugate latent's, or a conjugate MvNormal's) for predictions to draw from", f.Target.Var.Name, v.Name).Hintf("%s", hint)
			}
			if !slices.Contains(p.Latents, v) {
				p.Latents = append(p.Latents, v)
			}
		}
		p.Stmts = append(p.Stmts, pw)
	}
	if len(p.Stmts) == 0 {
		return nil, ir.Errorf(m.NamePos, "model %s has no observed data drawn by a `~` statement, so there is nothing to predict", m.Name)
	}
	order := map[string]int{}
	for i, v := range m.Vars {
		order[v.Name] = i
	}
	slices.SortFunc(p.Latents, func(a, b *ir.Var) int { return order[a.Name] - order[b.Name] })
	noMean := map[string]bool{} // predicted without a mean: nothing to say of it left out
	for _, st := range p.Stmts {
		if st.Mean == nil {
			noMean[st.Var.Name] = true
		}
	}
	for _, v := range m.VarsWithRole(ir.RoleData) {
		if m.Prior(v.Name) != nil && len(v.Type.Dims) > 0 && !readAsArgument(m, v.Name) && !noMean[v.Name] {
			p.Omissible = append(p.Omissible, v)
		}
	}
	return p, nil
}

// pointwiseOf derives one observed statement's Pointwise.
func (b *Builder) pointwiseOf(f *ir.Factor) (*Pointwise, error) {
	y := f.Target.Var
	for _, pl := range f.Plates {
		if pl.Bag != nil {
			return nil, ir.Errorf(f.Pos, "%s is a bag, whose documents are scored by document completion (held-out evaluation), not by predictions of rows", y.Name).Hintf("use -heldout-obs and -heldout")
		}
	}
	if len(f.Target.Index) != len(f.Plates) {
		return nil, pointwiseShapeError(f)
	}
	for k, ix := range f.Target.Index {
		i, ok := ix.(*ir.Index)
		if !ok || i.Name != f.Plates[k].Index {
			return nil, pointwiseShapeError(f)
		}
	}
	dist := Dists[f.Dist]
	if dist == nil {
		return nil, ir.Errorf(f.Pos, "the %s distribution is not supported by the code generator yet", f.Dist)
	}
	var mean Expr
	b.pointwise, b.free = true, nil
	defer func() { b.pointwise, b.free = false, nil }()
	lp, err := b.factorSum(f, func(x Val, args []Val) (Expr, error) {
		if dist.Mean != nil && x.Dist == nil && len(x.Dims) == 0 {
			mean = dist.Mean(scalars(args))
		}
		return dist.LogDensity(b, x, args)
	}, func(lp Expr) (Expr, error) { return splitPositiveLogs(lp, b.positiveLatents()), nil })
	if err != nil {
		return nil, err
	}
	if len(b.free) > 2 {
		return nil, ir.Errorf(f.Pos, "the observations of %s have %d indices; predictions handle at most 2", y.Name, len(b.free)).Hintf("write the statement one row at a time, inside a loop over the rows")
	}
	if len(b.free) == 2 {
		if _, lo, hi, ok := SizeRange(b.free[1].Size); ok && (lo != 0 || hi != 0) {
			return nil, ir.Errorf(f.Pos, "the inner loop of this statement runs over part of its size; predictions need it to run over all of it").Hintf("loop over the whole size, or swap the loops")
		}
	}
	pw := &Pointwise{Factor: f, Var: y, Free: b.free, LogLik: lp, Mean: mean}
	reads := TensorsRead(lp)
	if mean != nil {
		maps.Copy(reads, TensorsRead(mean))
	}
	for _, v := range b.Model.VarsWithRole(ir.RoleLatent) {
		if reads[v.Name] {
			pw.Latents = append(pw.Latents, v)
		}
	}
	return pw, nil
}

func pointwiseShapeError(f *ir.Factor) error {
	return ir.Errorf(f.Pos, "%s is indexed otherwise than by the loops around it, in order; predictions need each observation at the index of its loops", fmtRef(f.Target)).Hintf("write the statement as y[i] (or y[i, j]) inside `for i in 1:N` (and `for j in 1:M`)")
}

func fmtRef(r *ir.Ref) string {
	if len(r.Index) == 0 {
		return r.Var.Name
	}
	return fmt.Sprintf("%s[…]", r.Var.Name)
}

// readAsArgument reports whether a statement of m reads the variable
// called name in its arguments (its own statement's included: an
// autoregression's lags).
func readAsArgument(m *ir.Model, name string) bool {
	for _, f := range m.Factors {
		for _, a := range f.Args {
			if ir.Mentions(a, name) {
				return true
			}
		}
	}
	return false
}

// Joint is the log joint density log p(x, θ) of a model whose latents are
// all global with Gaussian factors, at a point θ of them: one part per
// statement, the log-Jacobians of constrained latents included. With q's
// factors it gives the approximation diagnostic of the joint q, the
// product of the mean-field factors, whose importance ratios
// log p(x, θ) − Σ log q(θ_i) see what each factor's own diagnostic cannot:
// the dependence between latents that mean field leaves out.
type Joint struct {
	Parts   []JointPart
	Latents []*ir.Var // in declaration order
}

// JointPart is one statement's log density, summed over its loops.
type JointPart struct {
	Factor *ir.Factor
	LogP   Expr
}

// joint derives the model's Joint, or nil when it has fewer than two
// latents or a latent without a global Gaussian factor (a conjugate
// factor, or one Gaussian per unit).
func (b *Builder) joint(d *Derivation) *Joint {
	m := b.Model
	latents := m.VarsWithRole(ir.RoleLatent)
	if len(latents) < 2 {
		return nil
	}
	global := map[string]bool{}
	for _, o := range d.Objectives {
		global[o.Latent.Name] = o.Unit == nil
	}
	for _, v := range latents {
		if !global[v.Name] {
			return nil
		}
	}
	j := &Joint{Latents: latents}
	for _, f := range m.Factors {
		lp, err := b.FactorLogDensity(f) // a statement it cannot lower: no joint
		if err != nil {
			return nil
		}
		j.Parts = append(j.Parts, JointPart{Factor: f, LogP: lp})
	}
	return j
}
