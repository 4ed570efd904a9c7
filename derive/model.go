package derive

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"

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
	Latent        *ir.Var
	Dim           string // size of θ
	A, B          Index
	CovName       string
	F, Grad, Hess Expr
	// trace and traceGrad are Trace and TraceGrad, derived on first use
	// (deltaOnce): only the delta method needs them, and they hold third
	// derivatives of f.
	trace, traceGrad Expr
	deltaOnce        sync.Once
	// ta, tb are the bound indices of Trace.
	ta, tb Index
	// Factors are the statements f is built from: θ's prior first, then its
	// children, in source order.
	Factors []*ir.Factor
	// Parts splits F, Grad, Hess, Trace and TraceGrad by factor (they are
	// the sums of the parts), so generated code can say which statement
	// each loop implements.
	Parts []*Part
	// Unit is the plate index selecting the unit for a per-unit latent
	// θ[d] (d is then free in every expression and θ is read as the unit's
	// vector), or nil for a global latent.
	Unit *Index
	// Groups are the groupings through which statements outside the
	// unit's plate read θ[g[n]] (group.go).
	Groups []*Grouping
	// Inputs are the variational factors of the other latents f reads
	// through expectations (Eq. 12's E_q(z)), and Expectations how each
	// expectation was taken.
	Inputs       []*QFactor
	Expectations []Approx
	// Conjugate marks the objective of a latent declared conjugate with a
	// Gaussian prior (MvNormal, MvNormalPrec: Conjugacy.Joint), whose f
	// has been proved quadratic: its update is the closed form of Eq. 18,
	// Σ = −(∇²f)⁻¹ and μ = Σ∇f(0), not Laplace or delta (closedGaussian).
	Conjugate bool
	// NCVMP is f split for non-conjugate variational message passing
	// (ncvmp.go), for a latent declared `nonconjugate ncvmp` (which fails
	// to derive with a positioned error where f cannot be split); nil
	// otherwise. Laplace and delta remain available for such a latent as
	// run-time methods.
	NCVMP *Projection
	// Collapsed, if set, is f with the unit's categorical latent maximized
	// out (see collapse.go): the generated code uses it to start each
	// unit's coordinate ascent at the fixed point of the θ/z alternation.
	Collapsed *Collapsed
}

// Part is one factor's contribution to an Objective.
type Part struct {
	Factor        *ir.Factor
	F, Grad, Hess Expr
	// Point is the part as a graph per data point (point.go), for a
	// statement that reads literal coordinates of small latents; nil
	// otherwise. Kernels evaluate it instead of F, Grad, Hess and the
	// delta terms.
	Point            *PointTerm
	trace, traceGrad Expr // see Objective.Trace
}

// Trace is Tr{∇²f(θ) Σ} = Σ_ab Hess_ab Σ_ab (Eq. 17), Σ the tensor
// CovName: the delta method's correction. It is derived on first use, with
// TraceGrad, for every part of o.
func (o *Objective) Trace() Expr {
	o.deriveDelta()
	return o.trace
}

// TraceGrad is ∂Trace/∂θ_A, the third-derivative contraction (never a
// p×p×p tensor), derived on first use.
func (o *Objective) TraceGrad() Expr {
	o.deriveDelta()
	return o.traceGrad
}

// Trace is the part's share of its Objective's Trace; o is the Objective
// the part belongs to.
func (p *Part) Trace(o *Objective) Expr {
	o.deriveDelta()
	return p.trace
}

// TraceGrad is the part's share of its Objective's TraceGrad.
func (p *Part) TraceGrad(o *Objective) Expr {
	o.deriveDelta()
	return p.traceGrad
}

// deriveDelta derives Trace and TraceGrad of every part and of o, once.
// A latent whose kernels need no delta method never pays for the third
// derivatives (issue 39: only the kernels a model needs).
func (o *Objective) deriveDelta() {
	o.deltaOnce.Do(func() {
		var ts, tgs []Expr
		for _, p := range o.Parts {
			// Tr{HΣ} = Σ_ab H_ab Σ_ab (Σ symmetric); the Hessian's free
			// indices are renamed to bound ones so A stays free for the
			// gradient.
			h := Subst(Subst(p.Hess, o.A, o.ta), o.B, o.tb)
			p.trace = Sum([]Index{o.ta, o.tb}, Mul(h, TSym(o.CovName, IxE(o.ta), IxE(o.tb))))
			p.traceGrad = Diff(p.trace, o.Latent.Name, []Index{o.A})
			ts, tgs = append(ts, p.trace), append(tgs, p.traceGrad)
		}
		o.trace, o.traceGrad = Add(ts...), Add(tgs...)
	})
}

// Derivation is the result of deriving a model: the objectives and updates
// of its latents, which every generated package needs. What a Fit needs
// beyond them, the ELBO and the M-steps of the params, is read through
// Bound and MSteps, which return why it could not be derived as an error:
// kernels-only generation does without them.
type Derivation struct {
	Model      *ir.Model
	Objectives []*Objective
	Updates    []*Update
	// Q is the variational factor of every latent, in declaration order.
	Q   []*QFactor
	Aux []Aux
	// Predictive is the per-token predictive of a bag data variable, for
	// held-out evaluation (predictive.go), or nil; NoPredictiveReason then
	// says why the model has none, as positioned lines with a hint. It is
	// not an error: such a model fits, without held-out evaluation.
	Predictive         *Predictive
	NoPredictiveReason string
	// Predictions is what predictions of new observations need
	// (pointwise.go), or nil; NoPredictionsReason then says why, as a
	// positioned line with a hint.
	Predictions         *Predictions
	NoPredictionsReason string
	// Joint is the log joint density at a point, for the diagnostic of
	// the joint q of a model whose latents are all global Gaussian factors
	// (pointwise.go), or nil.
	Joint *Joint

	bound    *Bound
	boundErr error
	mSteps   []*MStep
	mStepErr error
}

// Bound returns the ELBO of the model, or why it could not be derived: a
// positioned error. Only Fit needs it.
func (d *Derivation) Bound() (*Bound, error) { return d.bound, d.boundErr }

// MSteps returns the updates of the params (variational EM), in
// declaration order, or why some param has none: a positioned error.
func (d *Derivation) MSteps() ([]*MStep, error) { return d.mSteps, d.mStepErr }

// tooLargeError is the positioned error of a derivation stopped by its
// node budget while deriving the statement at pos (the model's file if
// none).
func tooLargeError(m *ir.Model, pos ir.Pos, tl tooLarge) error {
	if pos.File == "" {
		pos = ir.Pos{File: m.File}
	}
	return ir.Errorf(pos, "the model is too large for vigen's derivative code: deriving this statement's contribution built more than %d expression nodes", tl.limit).
		Hintf("its derivatives are written out as trees, which grow exponentially with the depth of an expression that reads a value more than once (a chain of lets each reading the previous one twice, a mixture of many components, many scalar latents read by one statement); vigen refuses it rather than run out of memory, until its derivative code grows linearly with the model (issue 39). Shorter chains, fewer components, or scalar latents gathered into one vector latent fit")
}

// CovTensor is the name under which an objective's Trace reads Σ.
func CovTensor(latent string) string { return latent + ".cov" }

// Derive builds the objective of every nonconjugate latent of m and the
// update of every conjugate one; models outside what the code generator
// supports yet get positioned errors, one per latent that cannot be
// fitted. The ELBO and the M-steps are derived too; their failures are
// returned by Derivation.Bound and MSteps. A failure inside vigen is
// returned as an error, never a panic.
func Derive(m *ir.Model) (d *Derivation, err error) {
	b := NewBuilder(m)
	defer startBudget()()
	defer func() {
		if r := recover(); r != nil {
			if tl, ok := r.(tooLarge); ok {
				d, err = nil, tooLargeError(m, b.at, tl)
				return
			}
			d, err = nil, ir.Errorf(ir.Pos{File: m.File}, "internal error in vigen while deriving (please report it with the model): %v", r)
		}
	}()
	d = &Derivation{Model: m}
	var errs []error
	qs := map[string]*QFactor{}
	for _, v := range m.VarsWithRole(ir.RoleLatent) {
		if q := b.qFactor(v); q != nil {
			qs[v.Name] = q
		}
	}
	for _, v := range m.VarsWithRole(ir.RoleLatent) {
		if q := qs[v.Name]; q != nil {
			d.Q = append(d.Q, q)
		}
		if !v.Treatment.Nonconjugate() {
			if err := conjugateInParts(v, m.Priors(v.Name)); err != nil {
				errs = append(errs, err)
				continue
			}
			if err := checkConjugateBound(v, m.Prior(v.Name)); err != nil {
				errs = append(errs, err)
				continue
			}
			if ConjugateGaussian(m, v) {
				obj, err := b.closedGaussian(v, qs)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				d.Objectives = append(d.Objectives, obj)
				continue
			}
			u, err := b.conjugateUpdate(v, qs)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			d.Updates = append(d.Updates, u)
			continue
		}
		if err := checkPriorSupport(v, m.Prior(v.Name)); err != nil {
			errs = append(errs, err)
			continue
		}
		obj, err := b.objective(v, qs)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		d.Objectives = append(d.Objectives, obj)
	}
	if len(errs) > 0 {
		return nil, ir.Join(errs...)
	}
	for _, o := range d.Objectives {
		if !o.Conjugate {
			o.Collapsed = b.collapse(o, d.Updates, qs)
		}
	}
	d.bound, d.boundErr = b.bound(d, qs)
	b.sviParts(d, qs)
	b.untemperedParts(d, qs)
	d.mSteps, d.mStepErr = b.mSteps(qs)
	b.onlineMSteps(d, qs)
	if p, reason := b.predictive(qs); p != nil {
		d.Predictive = p
	} else if reason != nil {
		d.NoPredictiveReason = reason.Error()
	}
	if p, reason := b.predictions(d); p != nil {
		d.Predictions = p
	} else if reason != nil {
		d.NoPredictionsReason = reason.Error()
	}
	d.Joint = b.joint(d)
	d.Aux = b.Aux
	return d, nil
}

// qFactor is the mean-field factor of a latent: Gaussian for nonconjugate
// vectors, and for conjugate latents the family of their prior.
func (b *Builder) qFactor(v *ir.Var) *QFactor {
	dims := v.Type.Dims
	if k := bagDim(b.Model, v); k > 0 {
		// one value per bag entry, stored flat
		dims = append([]string{"@" + dims[k]}, dims[k+1:]...)
	}
	if v.Treatment.Nonconjugate() || ConjugateGaussian(b.Model, v) {
		if scalarReal(v) {
			return GaussianQ(v.Name, ScalarSize)
		}
		if len(dims) == 1 {
			return GaussianQ(v.Name, dims[0])
		}
		if len(dims) == 2 && b.localUnit(v) != nil {
			// one Gaussian per unit, read as the unit's vector
			return GaussianQ(v.Name, dims[1])
		}
		return nil
	}
	prior := b.Model.Prior(v.Name)
	if prior == nil {
		return nil
	}
	d := Dists[prior.Dist]
	if d != nil && d.Conj != nil && d.Conj.Normalize {
		if v.Type.Range == nil {
			return nil
		}
		k := v.Type.Range[1].Size
		if k == "" {
			// a literal bound: the categories are a literal dimension
			// (simplex[2]), a size of its own named by the number
			k = v.Type.Range[1].String()
			if s := b.Model.Lookup(k); s == nil || !s.Fixed {
				return nil
			}
		}
		return CategoricalQ(v.Name, k, dims...)
	}
	if d != nil && d.Conj != nil && d.Conj.FromNatural != nil {
		return TableQ(v.Name, prior.Dist, dims...)
	}
	return nil
}

func (b *Builder) objective(v *ir.Var, qs map[string]*QFactor) (*Objective, error) {
	prior := b.Model.Prior(v.Name)
	if prior == nil && v.Role != ir.RoleParam && (len(v.Type.Dims) > 1 || len(b.Model.Children(v.Name)) == 0) {
		return nil, ir.Errorf(v.Pos, "latent %s has no prior", v.Name).Hintf("give it a distribution with `~`")
	}
	if prior == nil && Transformed(v) {
		prior = FlatPrior(v) // improper flat prior: the log-Jacobian alone
	}
	if Transformed(v) {
		if _, ok := Transforms[v.Transform.Kind]; !ok {
			return nil, transformError(v)
		}
	}
	if v.Type.Kind != ir.Real || v.Type.Class != ir.Plain || len(v.Type.Dims) > 2 {
		return nil, ir.Errorf(v.Pos, "nonconjugate latent %s must be a real scalar, a real vector real[P], or one vector per unit real[D, P]", v.Name).Hintf("%s", nonconjugateShapeHint(v))
	}
	o := &Objective{Latent: v, Dim: ScalarSize, CovName: CovTensor(v.Name)}
	if len(v.Type.Dims) > 0 {
		o.Dim = v.Type.Dims[len(v.Type.Dims)-1]
	}
	var groupOf map[*ir.Factor]*Grouping // the children read as θ[g[n]]
	if len(v.Type.Dims) == 2 {
		// A per-unit latent θ[d] drawn inside `for d in 1:D`: f is the
		// unit's part of the log joint, with d free, and θ[d] is read as
		// the unit's own vector.
		if len(prior.Plates) == 0 || len(prior.Target.Index) != 1 {
			d := strings.ToLower(v.Type.Dims[0])
			return nil, ir.Errorf(prior.Pos, "%s : real[%s, %s] is fitted with one Gaussian factor per unit of %s, so its prior must draw it one row at a time, as %s[%s] inside `for %s in 1:%s` and no other loop", v.Name, v.Type.Dims[0], v.Type.Dims[1], v.Type.Dims[0], v.Name, d, d, v.Type.Dims[0]).Hintf("write its prior as `for %s in 1:%s { %s[%s] ~ %s(...) }`", d, v.Type.Dims[0], v.Name, d, prior.Dist)
		}
		ix, ok := prior.Target.Index[0].(*ir.Index)
		if !ok {
			return nil, ir.Errorf(prior.Pos, "%s must be indexed by its plate's index", v.Name).Hintf("write it as x[d] inside `for d in 1:D`")
		}
		u := Index{Name: ix.Name, Size: v.Type.Dims[0], Plate: true}
		o.Unit = &u
		groupOf = map[*ir.Factor]*Grouping{}
		for _, c := range b.Model.Children(v.Name) {
			g, err := b.grouping(c, v.Name, u)
			if err != nil {
				return nil, err
			}
			if g != nil {
				o.Groups = append(o.Groups, g)
				groupOf[c] = g
			}
		}
	} else if priors := b.Model.Priors(v.Name); prior != nil && len(v.Type.Dims) == 1 && elementPriors(priors) {
		// drawn element by element: x[1] ~ …, for t in 2:T { x[t] ~ … }
		// (the checker proved the statements draw each element once)
		o.Factors = priors
	} else if prior != nil && (len(prior.Plates) > 0 || len(prior.Target.Index) > 0) {
		return nil, ir.Errorf(prior.Pos, "nonconjugate latent %s is drawn at an index vigen cannot place; a Gaussian vector latent is drawn whole, or element by element at literal indices and at the index of loops over its size", v.Name).Hintf("write its prior as one elementwise statement, as in `%s ~ Normal(m, s)`, or as `%s[1] ~ …` and `for t in 2:%s { %s[t] ~ … }`", v.Name, v.Name, v.Type.Dims[0], v.Name)
	}
	if prior != nil && o.Factors == nil {
		o.Factors = []*ir.Factor{prior}
	}
	o.Factors = append(o.Factors, b.Model.Children(v.Name)...)
	o.A = b.Fresh("a", o.Dim)
	o.B = b.Fresh("b", o.Dim)
	o.ta, o.tb = b.Fresh("a", o.Dim), b.Fresh("b", o.Dim)
	var fs, gs, hs []Expr
	for _, f := range o.Factors {
		if o.Unit != nil {
			b.unit = o.Unit
			b.group = groupOf[f]
		}
		lp, err := b.FactorLogDensity(f)
		b.unit, b.group = nil, nil
		if err != nil {
			return nil, err
		}
		if o.Unit != nil {
			lp = unitView(lp, v.Name, *o.Unit)
		}
		if v.Role == ir.RoleParam && scalarReal(v) {
			// a scalar param is read as a number everywhere else; its own
			// objective sees it as a one-element vector
			lp = b.scalarView(lp, v.Name)
		}
		// Eq. 12: f(θ) takes the expectation under q of every other latent.
		var others []*QFactor
		reads := TensorsRead(lp)
		for _, name := range slices.Sorted(maps.Keys(reads)) {
			if name != v.Name && qs[name] != nil {
				if fv := b.Model.Lookup(name); fv != nil && qs[name].IsGaussianVector() && len(fv.Type.Dims) == 2 {
					// another per-unit latent, read at a plate index of
					// the statement: its factors as a whole (two-plate
					// models, QFactor.Rows)
					rq := b.rowsQ(fv, lp, qs)
					if rq == nil {
						return nil, perUnitReadError(f, readerOf(v), v, fv, b.Model.Prior(name))
					}
					others = append(others, rq)
					continue
				}
				others = append(others, qs[name])
			}
		}
		for _, fv := range b.Model.VarsWithRole(ir.RoleLatent) {
			if fv.Name != v.Name && qs[fv.Name] == nil && reads[fv.Name] {
				return nil, noFactorError(f.Pos, "the objective of "+v.Name, fv)
			}
		}
		raw := lp // before expectations: a PointTerm takes them itself
		var log []Approx
		if len(others) > 0 {
			var e Expr
			e, log = b.Expect(lp, others)
			o.Expectations = append(o.Expectations, log...)
			if e == nil {
				return nil, expectFailure(f.Pos, log, "")
			}
			lp = e
			o.Inputs = addInputs(o.Inputs, others)
		}
		p := &Part{Factor: f, F: lp}
		// a point term with Eq. 19 taken on its graph where the rules
		// Expect took agree with it; otherwise of f after Expect, whose
		// expectations are then leaves (E[exp(linear)] of a log-scale,
		// a conjugate latent's moments)
		p.Point, _ = pointTerm(o, raw, others, log)
		if p.Point == nil && len(others) > 0 {
			p.Point, _ = pointTerm(o, lp, nil, nil)
		}
		p.Grad = Diff(p.F, v.Name, []Index{o.A})
		p.Hess = Diff(p.Grad, v.Name, []Index{o.B})
		o.Parts = append(o.Parts, p)
		fs, gs, hs = append(fs, p.F), append(gs, p.Grad), append(hs, p.Hess)
	}
	o.F, o.Grad, o.Hess = Add(fs...), Add(gs...), Add(hs...)
	if v.Role == ir.RoleLatent && v.Treatment == ir.NCVMP {
		var err error
		if o.NCVMP, err = b.projection(o); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// conjugateInParts is the error for a conjugate latent drawn by several
// statements or over part of its size (x[1] ~ …, for t in 2:T { x[t] ~ …
// }): its update is read off one prior.
func conjugateInParts(v *ir.Var, priors []*ir.Factor) error {
	for _, f := range priors {
		ranged := len(priors) > 1
		for _, p := range f.Plates {
			ranged = ranged || p.Ranged()
		}
		if ranged {
			return ir.Errorf(f.Pos, "conjugate latent %s is drawn in parts (by %d statements, or in a loop over part of its size): its update is read off one prior statement that draws every element", v.Name, len(priors)).Hintf("declare %s `nonconjugate laplace` (a Gaussian factor fits chains such as x[t] ~ Normal(x[t-1], q)), or draw it by one statement", v.Name)
		}
	}
	return nil
}

// elementPriors reports whether the statements drawing a latent vector
// draw it element by element, each at a literal index (x[1]) or at the
// index of its one loop (x[t] in `for t in 2:T`).
func elementPriors(priors []*ir.Factor) bool {
	for _, f := range priors {
		if len(f.Target.Index) != 1 {
			return false
		}
		switch x := f.Target.Index[0].(type) {
		case *ir.Num:
			if len(f.Plates) != 0 {
				return false
			}
		case *ir.Index:
			if len(f.Plates) != 1 || f.Plates[0].Index != x.Name || f.Plates[0].Bag != nil {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// rowsQ is the factor through which e reads fv, a latent with one
// Gaussian factor per unit (QFactor.Rows), when every read selects its
// unit by an index (a plate of the statement, summed or free), and fv is
// itself fitted unit by unit (an objective with a unit); nil otherwise.
// The same factor is returned for every statement.
func (b *Builder) rowsQ(fv *ir.Var, e Expr, qs map[string]*QFactor) *QFactor {
	if !fv.Treatment.Nonconjugate() && !ConjugateGaussian(b.Model, fv) || b.localUnit(fv) == nil {
		return nil
	}
	ok := true
	Visit(e, func(y Expr) {
		if t, isT := y.(*Tensor); isT && t.Name == fv.Name {
			if len(t.Idx) != 2 || !unitSelector(t.Idx[0]) {
				ok = false
			}
		}
	})
	if !ok {
		return nil
	}
	if b.rows == nil {
		b.rows = map[string]*QFactor{}
	}
	if q := b.rows[fv.Name]; q != nil {
		return q
	}
	q := RowsGaussianQ(fv.Name, fv.Type.Dims[0], qs[fv.Name].Dims[0])
	b.rows[fv.Name] = q
	return q
}

// unitSelector reports whether x can select a unit of a per-unit latent
// read whole: a loop index, or int data at loop indices (group[n]), which
// the expectation engine reads at one unit (expecter.sliceRows).
func unitSelector(x Expr) bool {
	switch x := x.(type) {
	case *Ix:
		return true
	case *Tensor:
		if !x.Int {
			return false
		}
		for _, i := range x.Idx {
			if _, ok := i.(*Ix); !ok {
				return false
			}
		}
		return true
	}
	return false
}

// ScalarSize is the size of the one-element vector as which a scalar
// nonconjugate latent (and a scalar param, in its own M-step) is fitted: its
// Gaussian factor is N(mean, cov) over a 1-vector. Generated code prints
// it as the constant 1; results report a scalar mean and sd. It is not
// "1", the name of the fixed size of a literal dimension real[1].
const ScalarSize = "1·"

// scalarReal reports whether v is a plain real scalar.
func scalarReal(v *ir.Var) bool {
	return v.Type.Kind == ir.Real && v.Type.Class == ir.Plain && len(v.Type.Dims) == 0
}

// ScalarGaussian reports whether v is a scalar latent with a Gaussian
// factor over a one-element vector (ScalarSize).
func ScalarGaussian(v *ir.Var) bool {
	return v.Role == ir.RoleLatent && v.Treatment.Nonconjugate() && scalarReal(v)
}

// scalarView rewrites the reads of the scalar v as Σ_i v[i] over the
// one-element ScalarSize, the form in which it is differentiated.
func (b *Builder) scalarView(e Expr, v string) Expr {
	return replaceTensorPure(e, v, func(t *Tensor) Expr {
		if len(t.Idx) > 0 {
			return t
		}
		i := b.Fresh("i", ScalarSize)
		return Sum([]Index{i}, T(v, IxE(i)))
	})
}

func sortedKeys(m map[string]*QFactor) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func containsQ(qs []*QFactor, q *QFactor) bool {
	for _, x := range qs {
		if x == q {
			return true
		}
	}
	return false
}

// unitView rewrites reads θ[u, i] of a per-unit latent as reads θ[i] of
// the unit's own vector.
func unitView(e Expr, v string, u Index) Expr {
	return replaceTensorPure(e, v, func(t *Tensor) Expr {
		if len(t.Idx) > 1 {
			if ix, ok := t.Idx[0].(*Ix); ok && ix.I.Name == u.Name {
				return newTensor(v, t.Idx[1:], t.Sym, t.Int)
			}
		}
		return t
	})
}

// expectFailure explains why the expectation of a statement could not be
// taken: the first term no rule covers (Taylor expansions always apply),
// with context such as "for the ELBO".
func expectFailure(pos ir.Pos, log []Approx, context string) error {
	if context != "" {
		context = " " + context
	}
	for _, l := range log {
		if !l.Exact && !strings.HasPrefix(l.Rule, "Taylor") {
			return ir.Errorf(pos, "cannot take the expectation of %s%s: %s", l.Term, context, l.Rule).Hintf("vigen takes expectations of polynomials, exp and the functions in its table; declare a latent read nonlinearly `nonconjugate` or rewrite the statement")
		}
	}
	return ir.Errorf(pos, "cannot take the expectation of this statement under q%s: no rule covers how it reads its latents together (a Categorical latent, for one, must be read at a single entry, as z[n])", context).Hintf("rewrite the statement so that it reads each Categorical latent at one entry; a real latent read nonlinearly can be declared `nonconjugate laplace`")
}

// nonconjugateShapeHint says how to write a latent of v's type that a
// Gaussian factor can fit. For a scalar it does not send the user back to
// `conjugate`, which is what led to this error when the prior is not
// conjugate to every statement reading v.
func nonconjugateShapeHint(v *ir.Var) string {
	if v.Type.Kind != ir.Real || v.Type.Class != ir.Plain {
		return fmt.Sprintf("a Gaussian factor fits real vectors only; declare %s `conjugate` with a prior from the conjugate table", v.Name)
	}
	return "split it into vectors of one plate each, real[P] or real[D, P]"
}

// perUnitReadError is the error for statement f, read by reader (the
// objective, update or M-step of v), that reads u, a latent with one
// Gaussian factor per unit drawn by uPrior, where no rule reads it: the
// objective of a nonconjugate latent reads u's factors (QFactor.Rows) where
// every read selects the unit by a loop index or by int data at loop
// indices, and a conjugate update reads them only inside its own loop over
// u's units (unitView).
func perUnitReadError(f *ir.Factor, reader string, v, u *ir.Var, uPrior *ir.Factor) error {
	separate := "fit one of them in a separate model and give its estimate to this one as `data`"
	d := strings.ToLower(u.Type.Dims[0])
	if uPrior != nil && len(uPrior.Plates) > 0 {
		d = uPrior.Plates[0].Index
	}
	hint := fmt.Sprintf("keep %s out of the statements that read %s, or %s", u.Name, v.Name, separate)
	if f == uPrior {
		hint = fmt.Sprintf("estimate %s's prior as params instead, `%s[%s] ~ MvNormal(mu0, Sigma0)` with `param mu0 : real[%s]` and `param Sigma0 : cov[%s]`: their M-step is in closed form (as in hierlogreg.vi)", u.Name, u.Name, d, u.Type.Dims[1], u.Type.Dims[1])
	}
	return ir.Errorf(f.Pos, "%s reads %s, which has one Gaussian factor per unit: vigen takes expectations under such factors in the objectives of nonconjugate latents, and in the updates of conjugate latents drawn in the same loop (as ctm.vi's z reads theta)", reader, u.Name).Hintf("%s", hint)
}

// readerOf names what derives v's new value: its objective, update or
// M-step, for errors.
func readerOf(v *ir.Var) string {
	switch {
	case v.Role == ir.RoleParam:
		return "the M-step of param " + v.Name
	case v.Treatment.Nonconjugate():
		return "the objective of " + v.Name
	}
	return "the update of " + v.Name
}

// noFactorError is the error for a statement that reads latent fv, which
// has no variational factor because its own declaration cannot be fitted
// (that declaration gets its own error).
func noFactorError(pos ir.Pos, reader string, fv *ir.Var) error {
	return ir.Errorf(pos, "%s reads latent %s, which has no variational factor: vigen cannot fit its declaration at %s (see the error reported there)", reader, fv.Name, fv.Pos).Hintf("fix the declaration of %s first; a latent is fitted when it is declared `conjugate` with a prior from the conjugate table, or `nonconjugate laplace` as a real vector", fv.Name)
}
