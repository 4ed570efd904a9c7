package derive

import (
	"fmt"
	"strings"

	"github.com/vigen-go/vigen/spec/ir"
)

// This file derives the closed-form updates of conjugate latents (Wang &
// Blei's Eq. 18). For a latent z whose declared family has sufficient
// statistics t(z), the expected log joint restricted to z's Markov blanket
// must be linear in t(z):
//
//	E_q(−z)[log p(z | pa) + Σ_children log p(child | z, …)] = ⟨η, t(z)⟩ + const,
//
// and then the optimal q(z) is the family with natural parameter η. The
// compiler checks linearity symbolically — every read of z is replaced by
// the statistic it is (log z, z, log(1−z), or the one-hot indicator of a
// categorical), no read may be left over, and the second derivative in the
// statistics must vanish — and reads η off as the first derivative.

// Update is the closed-form coordinate update of one conjugate latent.
type Update struct {
	Latent *ir.Var
	Q      *QFactor
	// Unit is the plate index of a local latent (one inside `for d in 1:D`
	// whose Markov blanket lies inside the same plate), updated one unit
	// at a time with d free in every expression; nil for a global latent.
	Unit *Index
	// At indexes q's parameter tensors: Params[j] is the new value of
	// Q.Params[j] at At. The unit index appears as itself.
	At     []Index
	Params []Expr
	// Normalize is set for categorical latents: Params[0] holds
	// log-probabilities up to a constant over the last index (terms
	// constant in the category have been dropped) and q is their softmax.
	Normalize bool
	// Moments are the new E_q[t(z)] at At, one per Q.MomentStats, from the
	// new parameters.
	Moments []Expr
	// Natural is η per sufficient statistic of the family (before any
	// expectation was taken, for reports), Dropped the terms of a
	// categorical η that are constant in the category.
	Natural, Dropped []Expr
	Factors          []*ir.Factor
	// Inputs are the variational factors of the other latents η reads,
	// and Expectations how each expectation was taken.
	Inputs       []*QFactor
	Expectations []Approx
	// SVI is a global update split for stochastic variational inference
	// (svi.go), or nil with NoSVIReason saying why it cannot be (nil and ""
	// for local updates and models without a unit plate).
	SVI         *SVIPart
	NoSVIReason string
	// Untempered is, for a local update, the part of E_q[η] (one entry per
	// sufficient statistic; a categorical's log-probabilities) from the
	// statements of its Markov blanket that tempering leaves alone
	// (Untempered: priors of continuous local latents), reading
	// UntemperedInputs; nil when there are none. A tempered update is
	// Untempered + (E_q[η] − Untempered)/T.
	// NoTemperReason says why the update cannot be tempered, or "".
	Untempered       []Expr
	UntemperedInputs []*QFactor
	NoTemperReason   string
}

// ConjugateParamNames names the variational parameters of a family, in
// the order of QFactor.Params (nil for a family that is not conjugate).
func ConjugateParamNames(family string) []string {
	if d := Dists[family]; d != nil && d.Conj != nil {
		return d.Conj.Params
	}
	return nil
}

// ConjugateFamilies lists the families a latent can be declared conjugate
// in (those of the table with a Conjugacy), sorted.
func ConjugateFamilies() []string {
	var out []string
	for _, name := range DistNames() {
		if Dists[name].Conj != nil {
			out = append(out, name)
		}
	}
	return out
}

// NaturalMaps gives the two conversions SVI steps between (FitSVI), for one
// element of a conjugate factor of family: toEta[k] is its natural
// parameter η_k (ExpFam's Eta) as a function of q's parameters, read as
// the scalar tensors p(0), p(1), …, and toParams[j] is q's parameter j
// (Conj.FromNatural) as a function of the natural parameters, read as the
// tensors e(0), e(1), …. ok is false for a family SVI cannot step (one
// without FromNatural: Categorical).
func NaturalMaps(family string, p, e func(k int) Expr) (toEta, toParams []Expr, ok bool) {
	d := Dists[QFamily(family)]
	if d == nil || d.ExpFam == nil || d.Conj == nil || d.Conj.FromNatural == nil {
		return nil, nil, false
	}
	var dims []string
	if d.Value.Shape != "" {
		dims = []string{"K"} // a vector family: one component of it
	}
	sel := make([]Expr, len(dims))
	for k := range sel {
		sel[k] = N(0)
	}
	args := make([]Val, len(d.Conj.Params))
	for j := range args {
		t := p(j)
		args[j] = Val{Dims: dims, At: func([]Expr) Expr { return t }}
	}
	b := &Builder{}
	etas := make([]Expr, len(d.ExpFam.Stats))
	for k, st := range d.ExpFam.Stats {
		toEta = append(toEta, st.Eta(b, args).At(sel))
		etas[k] = e(k)
	}
	return toEta, d.Conj.FromNatural(etas), true
}

// QFamily is the family of q for a conjugate latent whose prior is in
// family: family itself, or the family it is a special case of
// (Conjugacy.Family).
func QFamily(family string) string {
	if d := Dists[family]; d != nil && d.Conj != nil && d.Conj.Family != "" {
		return d.Conj.Family
	}
	return family
}

// TableQ is q(v) for a conjugate latent with a prior in family (q in
// QFamily(family)), with parameters read from the tensors v.<name> (see
// Conjugacy.Params); vector families run over the last of dims.
func TableQ(v, family string, dims ...string) *QFactor {
	family = QFamily(family)
	names := ConjugateParamNames(family)
	q := &QFactor{Var: v, Family: family, Dims: dims}
	for _, n := range names {
		q.Params = append(q.Params, tensorValN(v+"."+n, dims))
	}
	if d := Dists[family]; d != nil && d.ExpFam != nil && d.Conj != nil && !d.Conj.Normalize {
		q.Moments = map[string]Val{}
		for _, st := range d.ExpFam.Stats {
			if _, ok := d.Expect[st.Name]; ok && st.Moment != "" {
				q.MomentStats = append(q.MomentStats, st.Name)
				q.Moments[st.Name] = tensorValN(v+"."+st.Moment, dims)
			}
		}
	}
	return q
}

// MomentName is the short name of the tensor holding E[stat] of q (the
// statistic's Moment in q's table entry).
func (q *QFactor) MomentName(stat string) string {
	if d := Dists[q.Family]; d != nil && d.ExpFam != nil {
		for _, st := range d.ExpFam.Stats {
			if st.Name == stat {
				return st.Moment
			}
		}
	}
	return ""
}

// MomentExprs are E_q[t(v)] for each of q's moment tensors at the element
// at, from q's parameters.
func (b *Builder) MomentExprs(q *QFactor, at []Index) []Expr {
	sel := make([]Expr, len(at))
	for k, i := range at {
		sel[k] = IxE(i)
	}
	out := make([]Expr, len(q.MomentStats))
	for k, st := range q.MomentStats {
		out[k] = momentOf(b, q, Dists[q.Family].Expect[st], sel)
	}
	return out
}

// localUnit returns the plate index of a local latent: one drawn inside
// `for d in 1:D` as v[d, …], with every child inside the same plate. It
// returns nil for a global latent.
func (b *Builder) localUnit(v *ir.Var) *Index {
	prior := b.Model.Prior(v.Name)
	if prior == nil || len(prior.Plates) == 0 || len(prior.Target.Index) == 0 || len(v.Type.Dims) < 1 {
		return nil
	}
	ix, ok := prior.Target.Index[0].(*ir.Index)
	p := prior.Plates[0]
	if !ok || ix.Name != p.Index || p.Bag != nil || p.Size != v.Type.Dims[0] {
		return nil
	}
	u := &Index{Name: p.Index, Size: p.Size, Plate: true}
	for _, c := range b.Model.Children(v.Name) {
		if len(c.Plates) > 0 && c.Plates[0].Index == p.Index {
			if !readsOwnUnit(c, v.Name, p.Index) {
				// θ[g[d]] inside the loop: unit d's statement feeds another
				// unit's factor, so θ is updated as a whole
				return nil
			}
			continue
		}
		// a Gaussian θ[m] may also be read as θ[g[n]] (group.go)
		if !v.Treatment.Nonconjugate() && !ConjugateGaussian(b.Model, v) {
			return nil
		}
		if g, err := b.grouping(c, v.Name, *u); err != nil || g == nil && !innerUnitPlate(c, *u) {
			return nil
		}
	}
	return u
}

// readsOwnUnit reports whether every read of the variable name in the
// statement c is at the unit's own index first, name[d, …] for the loop
// index d.
func readsOwnUnit(c *ir.Factor, name, d string) bool {
	ok := true
	check := func(e ir.Expr) {
		ir.Walk(e, func(x ir.Expr) {
			r, isRef := x.(*ir.Ref)
			if !isRef || r.Var.Name != name {
				return
			}
			if len(r.Index) == 0 {
				ok = false
				return
			}
			if ix, isIx := r.Index[0].(*ir.Index); !isIx || ix.Name != d {
				ok = false
			}
		})
	}
	if !c.IsTerm() {
		check(c.Target)
	}
	for _, a := range c.Args {
		check(a)
	}
	return ok
}

// qIndices returns one index per dimension of q's parameter tensors: the
// unit itself for the unit's dimension, an index over the unit's entries
// for a bag dimension, fresh indices otherwise.
func (b *Builder) qIndices(q *QFactor, unit *Index) ([]Index, error) {
	dims := q.Dims
	if q.IsCategorical() {
		dims = append(append([]string(nil), dims...), q.K)
	}
	var at []Index
	for k, d := range dims {
		switch {
		case k == 0 && unit != nil && d == unit.Size:
			at = append(at, *unit)
		case strings.HasPrefix(d, "@"):
			if unit == nil || k != 0 {
				return nil, ir.Errorf(b.Model.Lookup(q.Var).Pos, "latent %s has one value per entry of bag %s, so every statement that reads it must be inside the loop over documents that draws it", q.Var, d[1:]).Hintf("read %s only inside that loop, `for d in 1:D { for n in %s[d] { ... } }`, with the index names of its `~` statement", q.Var, d[1:])
			}
			at = append(at, Index{Name: b.Fresh("n", d).Name, Size: RaggedSize(d[1:], *unit), Plate: true})
		default:
			at = append(at, b.Fresh("i", d))
		}
	}
	return at, nil
}

// conjugateUpdate derives the update of the conjugate latent v.
func (b *Builder) conjugateUpdate(v *ir.Var, qs map[string]*QFactor) (*Update, error) {
	prior := b.Model.Prior(v.Name)
	if prior == nil {
		return nil, ir.Errorf(v.Pos, "latent %s has no prior", v.Name).Hintf("give it a distribution with `~`")
	}
	q := qs[v.Name]
	if q == nil {
		return nil, ir.Errorf(v.Pos, "latent %s is declared conjugate, but its prior %s is not a family with closed-form updates (%s)", v.Name, prior.Dist, strings.Join(ConjugateFamilies(), ", ")).Hintf("give it one of those priors, or %s", nonconjugateAdvice(v.Name, len(v.Type.Dims) == 0))
	}
	u := &Update{Latent: v, Q: q, Unit: b.localUnit(v), Normalize: q.IsCategorical()}
	at, err := b.qIndices(q, u.Unit)
	if err != nil {
		return nil, err
	}
	u.At = at
	u.Factors = append([]*ir.Factor{prior}, b.Model.Children(v.Name)...)
	expected, err := b.expectedNatural(u, qs, prior)
	if err != nil {
		return nil, err
	}
	u.Moments = b.MomentExprs(q, at)
	if u.Normalize {
		// Expectations can produce more terms constant in the category
		// (ψ(Σγ) of a Dirichlet's E[log θ_k]).
		keep, dropped := splitByIndex(expected[0], at[len(at)-1])
		expected[0], u.Dropped = keep, append(u.Dropped, dropped...)
		u.Params = expected
	} else {
		u.Params = Dists[q.Family].Conj.FromNatural(expected)
	}
	return u, nil
}

// expectedNatural sets u.Natural to η, the natural parameter of u.Q's
// family summed over the statements u.Factors, each checked to be linear
// in the family's sufficient statistics, and returns E_q(−z)[η] (Eq. 18).
// pos positions errors about expectations.
func (b *Builder) expectedNatural(u *Update, qs map[string]*QFactor, pos *ir.Factor) ([]Expr, error) {
	v, q, at := u.Latent, u.Q, u.At
	var stats []string
	if q.IsCategorical() {
		stats = []string{"onehot"}
	} else {
		for _, s := range Dists[q.Family].ExpFam.Stats {
			stats = append(stats, s.Name)
		}
	}
	eta := make([][]Expr, len(stats))
	for _, f := range u.Factors {
		// A latent with one value per bag entry stands for count tokens
		// alike; its update is that of one token.
		b.unit, b.perEntry = u.Unit, bagDim(b.Model, v) > 0
		lp, err := b.FactorLogDensity(f)
		b.unit, b.perEntry = nil, false
		if err != nil {
			return nil, err
		}
		if fv := b.perUnitOutside(lp, v.Name, u.Unit, qs); fv != nil {
			return nil, perUnitReadError(f, readerOf(v), v, fv, b.Model.Prior(fv.Name))
		}
		parts, err := b.naturalParts(lp, q, stats, at, f)
		if err != nil {
			return nil, err
		}
		for k := range parts {
			eta[k] = append(eta[k], parts[k])
		}
	}
	if lh := b.logBaseOf(q, at); lh != nil {
		// log p(x | η) = log h(x) + ⟨η, t(x)⟩ − a(η): a base measure that
		// reads x (the LogNormal's −log x) is not part of η.
		parts, err := b.naturalParts(Neg(lh), q, stats, at, pos)
		if err != nil {
			return nil, err
		}
		for k := range parts {
			eta[k] = append(eta[k], parts[k])
		}
	}
	natural := make([]Expr, len(stats))
	for k := range eta {
		natural[k] = Add(eta[k]...)
	}
	if u.Normalize {
		// Terms with no category index are the same for every category and
		// cancel in the normalization (in the CTM, the log-sum-exp).
		natural[0], u.Dropped = splitByIndex(natural[0], at[len(at)-1])
	}
	u.Natural = natural
	// Eq. 18: E_q(−z)[η].
	expected := make([]Expr, len(natural))
	for k, e := range natural {
		x, err := b.expectOthers(e, v.Name, u.Unit, qs, pos, u)
		if err != nil {
			return nil, err
		}
		expected[k] = x
	}
	return expected, nil
}

// logBaseOf is log h(v) of q's family at the element at, or nil when it
// does not depend on v (every family but the LogNormal) or q normalizes.
func (b *Builder) logBaseOf(q *QFactor, at []Index) Expr {
	d := q.dist()
	if q.IsCategorical() || d.ExpFam == nil || d.ExpFam.LogBase == nil {
		return nil
	}
	sel := make([]Expr, len(at))
	for k, i := range at {
		sel[k] = IxE(i)
	}
	lh := d.ExpFam.LogBase(b, scalar(T(q.Var, sel...)), nil)
	if !DependsOn(lh, q.Var) {
		return nil
	}
	return lh
}

// splitByIndex splits a sum into the terms with k free and the others.
func splitByIndex(e Expr, k Index) (Expr, []Expr) {
	var keep, rest []Expr
	for _, t := range terms(e) {
		if hasFree(t, k) {
			keep = append(keep, t)
		} else {
			rest = append(rest, t)
		}
	}
	return Add(keep...), rest
}

// terms lists the terms of a sum.
func terms(e Expr) []Expr {
	if a, ok := e.(*AddNode); ok {
		return a.Terms
	}
	if isZero(e) {
		return nil
	}
	return []Expr{e}
}

// naturalParts returns one factor's contribution to each natural parameter
// of q, or a positioned error saying why the factor is not linear in q's
// sufficient statistics.
func (b *Builder) naturalParts(lp Expr, q *QFactor, stats []string, at []Index, f *ir.Factor) ([]Expr, error) {
	v := q.Var
	orig := lp
	var tensors []string
	if q.IsCategorical() {
		// Any function of a categorical is linear in its indicator:
		// g(z) = Σ_k [z = k] g(k). E over z alone turns every read into a
		// sum over categories weighted by the tensor z.prob.
		if r := acrossEntries(lp, v); r != nil {
			// e.g. sum(z) in the statement of z[n]: the update of one entry
			// would need the others' distribution, not only its own.
			return nil, ir.Errorf(f.Pos, "%s is declared conjugate (Categorical), but this statement reads it as %s, across several of its entries, not only at the entry it is drawn for", v, String(r)).Hintf("read %s at one entry per statement, the entry the statement is drawn for, as in beta[%s[n]] or x[%s[n]] (an int latent cannot be declared nonconjugate)", v, v, v)
		}
		x := &expecter{b: b, qs: map[string]*QFactor{v: q}}
		e := x.expect(lp)
		if e == nil {
			why := "it reads " + v + " in a way that is not a function of one of its entries"
			for _, l := range x.log {
				if !l.Exact {
					why = l.Rule + " (" + l.Term + ")"
				}
			}
			return nil, ir.Errorf(f.Pos, "%s is declared conjugate (Categorical), but this statement is not linear in its indicator: %s", v, why).Hintf("read %s at one entry per statement, the entry the statement is drawn for, as in beta[%s[n]] or x[%s[n]] (an int latent cannot be declared nonconjugate)", v, v, v)
		}
		lp = e
		tensors = []string{q.Params[0].Tensor}
	} else if g := Dists[q.Family].Conj.Quadratic; g != "" {
		return b.polynomialParts(lp, q, g, at, f)
	} else {
		for _, s := range stats {
			tensors = append(tensors, v+".t("+s+")")
		}
		lp = replaceTensorStats(lp, v, stats, tensors)
		var left Expr
		Visit(lp, func(y Expr) {
			if t, ok := y.(*Tensor); ok && t.Name == v && left == nil {
				left = t
			}
		})
		if left != nil {
			return nil, ir.Errorf(f.Pos, "%s is declared conjugate with %s, but this statement reads it as %s, which is not one of the %s sufficient statistics (%s)", v, b.priorOf(q), readOf(lp, v), q.Family, strings.Join(statNames(stats, v), ", ")).Hintf("give it a prior conjugate to this statement, or %s", nonconjugateAdvice(v, len(q.Dims) == 0))
		}
	}
	out := make([]Expr, len(tensors))
	for k, t := range tensors {
		d := Diff(lp, t, at)
		for _, t2 := range tensors {
			at2 := make([]Index, len(at))
			for n, i := range at {
				at2[n] = Index{Name: i.Name + "'", Size: i.Size, Plate: i.Plate}
			}
			if !isZero(Diff(d, t2, at2)) {
				return nil, notLinear(f, q, b.priorOf(q), stats, orig)
			}
		}
		out[k] = d
	}
	return out, nil
}

func statNames(stats []string, v string) []string {
	names := make([]string, len(stats))
	for k, s := range stats {
		names[k] = statName(s, v)
	}
	return names
}

func statName(stat, v string) string {
	if stat == "onehot" {
		return "the indicator of " + v
	}
	return strings.ReplaceAll(stat, "x", v)
}

// replaceTensorStats replaces the reads of v that are sufficient
// statistics by reads of the statistic's tensor.
func replaceTensorStats(e Expr, v string, stats, tensors []string) Expr {
	if s, sel := matchStat(e, v); s != "" {
		for k, name := range stats {
			if name == s {
				return T(tensors[k], sel...)
			}
		}
	}
	return mapChildren(e, func(c Expr) Expr { return replaceTensorStats(c, v, stats, tensors) })
}

// readOf prints the smallest non-statistic expression around a leftover
// read of v, for error messages.
func readOf(e Expr, v string) string {
	var best Expr
	var walk func(e, parent Expr)
	walk = func(e, parent Expr) {
		if best != nil {
			return
		}
		if t, ok := e.(*Tensor); ok && t.Name == v {
			best = t
			if c, ok := parent.(*Call); ok {
				best = c
			}
			return
		}
		for _, c := range Children(e) {
			walk(c, e)
		}
	}
	walk(e, nil)
	if best == nil {
		return v
	}
	return String(best)
}

// perUnitOutside returns a latent with one Gaussian factor per unit that e,
// part of the update of self (local to unit, or global if unit is nil),
// reads, if it is not local to the same unit: Expect cannot read it there.
func (b *Builder) perUnitOutside(e Expr, self string, unit *Index, qs map[string]*QFactor) *ir.Var {
	for _, fv := range b.Model.VarsWithRole(ir.RoleLatent) {
		q := qs[fv.Name]
		if fv.Name == self || q == nil || !q.IsGaussianVector() || len(fv.Type.Dims) != 2 || !DependsOn(e, fv.Name) {
			continue
		}
		if u := b.localUnit(fv); unit == nil || u == nil || u.Name != unit.Name {
			return fv
		}
	}
	return nil
}

// expectOthers takes E_q[e] over every latent other than self that e reads,
// reading per-unit Gaussian latents as the unit's vector.
func (b *Builder) expectOthers(e Expr, self string, unit *Index, qs map[string]*QFactor, f *ir.Factor, u *Update) (Expr, error) {
	var others []*QFactor
	for _, fv := range b.Model.VarsWithRole(ir.RoleLatent) {
		if fv.Name == self || !DependsOn(e, fv.Name) {
			continue
		}
		q := qs[fv.Name]
		if q == nil {
			return nil, noFactorError(f.Pos, "the update of "+self, fv)
		}
		if q.IsGaussianVector() && len(fv.Type.Dims) == 2 {
			// expectedNatural has rejected reads outside the unit
			e = unitView(e, fv.Name, *unit)
		}
		others = append(others, q)
	}
	r, err := b.expectAt(e, others, &u.Expectations, f.Pos, "in the update of "+self)
	if err != nil {
		return nil, err
	}
	u.Inputs = addInputs(u.Inputs, others)
	return r, nil
}

// ConjugateGaussian reports whether v is a latent declared conjugate with a
// prior whose family is Gaussian over the whole vector (Conjugacy.Joint:
// MvNormal, MvNormalPrec). It gets the Gaussian factor N(μ, Σ) and the
// objective of a nonconjugate latent, updated in closed form
// (closedGaussian).
func ConjugateGaussian(m *ir.Model, v *ir.Var) bool {
	if v.Role != ir.RoleLatent || v.Treatment != ir.Conjugate {
		return false
	}
	prior := m.Prior(v.Name)
	if prior == nil {
		return false
	}
	d := Dists[prior.Dist]
	return d != nil && d.Conj != nil && d.Conj.Joint
}

// closedGaussian derives the update of a latent θ declared conjugate with
// a Gaussian prior (ConjugateGaussian). Its natural parameters are those
// of t(θ) = (θ, θθᵀ) in the expected log joint f(θ) = E_q(−θ)[log p(θ, …)]
// (the objective of Eq. 12), which is linear in them exactly when f is
// quadratic in θ: then f(θ) = f(0) + η₁ᵀθ + θᵀη₂θ with η₁ = ∇f(0) and
// η₂ = ½∇²f, and q(θ) ∝ exp f(θ) is N(μ, Σ) with Σ = −(∇²f)⁻¹ = −½η₂⁻¹
// and μ = Ση₁ (Eq. 18). f is quadratic when ∇²f does not depend on θ,
// which is checked statement by statement, so that an error names the
// statement that is not. The objective is returned with Conjugate set:
// generated code computes the update as one Newton step, exact here.
func (b *Builder) closedGaussian(v *ir.Var, qs map[string]*QFactor) (*Objective, error) {
	prior := b.Model.Prior(v.Name)
	if qs[v.Name] == nil {
		return nil, ir.Errorf(v.Pos, "%s is declared conjugate with %s prior, which gives it one Gaussian factor over a vector, but it is neither one vector real[K] nor one vector per unit real[D, K] read only inside the loop that draws it or through a data index", v.Name, article(prior.Dist)).Hintf("declare %s as real[K] drawn whole, or draw %s[d] inside `for d in 1:D` and read it there or as %s[g[n]] with g : int[N] in 1..D data", v.Name, v.Name, v.Name)
	}
	o, err := b.objective(v, qs)
	if err != nil {
		return nil, err
	}
	for _, p := range o.Parts {
		if DependsOn(p.Hess, v.Name) {
			read := "a function of degree above two in it"
			if r := nonQuadraticRead(p.F, v.Name); r != nil {
				read = String(r)
			}
			return nil, ir.Errorf(p.Factor.Pos, "%s is declared conjugate with %s prior, whose closed-form update (Eq. 18) needs the expected log joint to be quadratic in %s, but this statement reads it through %s, which is not", v.Name, article(prior.Dist), v.Name, read).Hintf("%s: a Gaussian factor at the mode of f (Eq. 14) or by the delta method (Eq. 17)", nonconjugateAdvice(v.Name, false))
		}
	}
	o.Conjugate = true
	return o, nil
}

// article prefixes a family's name with its indefinite article (an
// MvNormal: the letters are spoken).
func article(family string) string {
	if strings.ContainsRune("AEIOU", rune(family[0])) || strings.HasPrefix(family, "Mv") {
		return "an " + family
	}
	return "a " + family
}

// nonQuadraticRead returns the smallest call in e through which it reads v
// other than as the square of an expression: the read that makes e more
// than quadratic in v; nil if there is none.
func nonQuadraticRead(e Expr, v string) Expr {
	if !DependsOn(e, v) {
		return nil
	}
	if c, ok := e.(*Call); ok {
		for _, a := range c.Args {
			if r := nonQuadraticRead(a, v); r != nil {
				return r
			}
		}
		if n, ok := c.Args[len(c.Args)-1].(*Num); c.Prim.Name == "pow" && ok && n.V == 2 {
			return nil
		}
		return c
	}
	for _, c := range Children(e) {
		if r := nonQuadraticRead(c, v); r != nil {
			return r
		}
	}
	return nil
}

// polynomialParts handles a family whose statistics are g(x) and g(x)²
// (the Normal, g(x) = x; the LogNormal, g(x) = log x): the log joint must
// be a quadratic polynomial in g of the scalar latent, and η₁ = ∂L/∂g at
// g = 0, η₂ = ½∂²L/∂g².
func (b *Builder) polynomialParts(lp Expr, q *QFactor, g string, at []Index, f *ir.Factor) ([]Expr, error) {
	v := q.Var
	stats := []string{g, g + "^2"}
	if g != "x" {
		stats[1] = "(" + g + ")^2"
	}
	u := v // the tensor standing for g(v)
	if g != "x" {
		u = v + ".t(" + g + ")"
		lp = replaceTensorStats(lp, v, []string{g}, []string{u})
		if DependsOn(lp, v) {
			return nil, ir.Errorf(f.Pos, "%s is declared conjugate with %s, but this statement reads it as %s, which is not one of the %s sufficient statistics (%s)", v, b.priorOf(q), readOf(lp, v), q.Family, strings.Join(statNames(stats, v), ", ")).Hintf("give it a prior conjugate to this statement, or %s", nonconjugateAdvice(v, len(at) == 0))
		}
	}
	// For an array latent (one independent factor per element, at the
	// element at), the statement must couple no two elements: its second
	// derivative in u[at], u[at'] must vanish unless at = at'.
	at2 := primed(at)
	d1 := Diff(lp, u, at)
	d2 := Diff(d1, u, at2)
	if !isZero(Diff(d2, u, primed(at2))) {
		return nil, notLinear(f, q, b.priorOf(q), stats, lp)
	}
	diag := diagonal(d2, at, at2)
	if diag == nil {
		return nil, ir.Errorf(f.Pos, "%s is declared conjugate with %s, one independent factor per element, but this statement couples different elements of it", v, b.priorOf(q)).Hintf("read one element of %s per statement, as %s[k] or %s[z[n]], or declare it `nonconjugate laplace`: a Gaussian factor over the whole vector", v, v, v)
	}
	zero := func(e Expr) Expr { return replaceTensorPure(e, u, func(*Tensor) Expr { return N(0) }) }
	return []Expr{zero(d1), Mul(N(0.5), diag)}, nil
}

// primed returns fresh copies of the indices at (i becomes i').
func primed(at []Index) []Index {
	out := make([]Index, len(at))
	for n, i := range at {
		out[n] = Index{Name: i.Name + "'", Size: i.Size, Plate: i.Plate}
	}
	return out
}

// diagonal returns e at at' = at when e vanishes unless at' = at, which it
// proves term by term from a factor δ(at, at') or a pair of indicators
// δ[x, at], δ[x, at'] of the same x; it returns nil when it cannot.
func diagonal(e Expr, at, at2 []Index) Expr {
	for k := range at {
		e = diagonal1(e, at[k], at2[k])
		if e == nil {
			return nil
		}
	}
	return e
}

func diagonal1(e Expr, i, j Index) Expr {
	if !hasFree(e, j) {
		if isZero(e) {
			return e
		}
		return nil
	}
	switch e := e.(type) {
	case *AddNode:
		out := make([]Expr, len(e.Terms))
		for k, t := range e.Terms {
			if out[k] = diagonal1(t, i, j); out[k] == nil {
				return nil
			}
		}
		return Add(out...)
	case *SumNode:
		if containsIndex(e.Idx, i) || containsIndex(e.Idx, j) {
			return nil
		}
		body := diagonal1(e.Body, i, j)
		if body == nil {
			return nil
		}
		return Sum(e.Idx, body)
	case *Delta:
		if (e.A == i && e.B == j) || (e.A == j && e.B == i) {
			return N(1)
		}
	case *MulNode:
		for k, f := range e.Factors {
			if d, ok := f.(*Delta); ok && ((d.A == i && d.B == j) || (d.A == j && d.B == i)) {
				rest := append(append([]Expr(nil), e.Factors[:k]...), e.Factors[k+1:]...)
				return Subst(Mul(rest...), j, i)
			}
		}
		for k, f := range e.Factors {
			d, ok := f.(*IDelta)
			if !ok || d.I != j {
				continue
			}
			for _, g := range e.Factors {
				if di, ok := g.(*IDelta); ok && di.I == i && di.X.Key() == d.X.Key() {
					rest := append(append([]Expr(nil), e.Factors[:k]...), e.Factors[k+1:]...)
					return Subst(Mul(rest...), j, i)
				}
			}
		}
		// one factor carries at': the others are left as they are
		var with []int
		for k, f := range e.Factors {
			if hasFree(f, j) {
				with = append(with, k)
			}
		}
		if len(with) == 1 {
			inner := diagonal1(e.Factors[with[0]], i, j)
			if inner == nil {
				return nil
			}
			fs := append([]Expr(nil), e.Factors...)
			fs[with[0]] = inner
			return Mul(fs...)
		}
	}
	return nil
}

// quadraticInStat is E over q(v) alone of e when q's family is quadratic
// in a statistic g(v) other than v (Conj.Quadratic: log v for the
// LogNormal) and e is a polynomial of degree ≤ 2 in g(v): exactly
// e(E[g]) + ½ e”·Var[g], with Var[g] = E[g²] − E[g]² from the table. It
// is nil otherwise.
func (x *expecter) quadraticInStat(e Expr, q *QFactor) Expr {
	d := q.dist()
	if d.Conj == nil || d.Conj.Quadratic == "" || d.Conj.Quadratic == "x" || len(q.Dims) > 0 {
		return nil
	}
	g := d.Conj.Quadratic
	u := q.Var + ".t(" + g + ")"
	orig := e
	e = replaceTensorStats(e, q.Var, []string{g}, []string{u})
	if DependsOn(e, q.Var) {
		return nil
	}
	d2 := Diff(Diff(e, u, nil), u, nil)
	if !isZero(Diff(d2, u, nil)) {
		return nil
	}
	moment := func(stat string) Expr {
		if m, ok := q.Moments[stat]; ok {
			return m.At(nil)
		}
		return momentOf(x.b, q, d.Expect[stat], nil)
	}
	m1, m2 := moment(g), moment("("+g+")^2")
	at := func(e Expr) Expr { return replaceTensorPure(e, u, func(*Tensor) Expr { return m1 }) }
	x.record(orig, fmt.Sprintf("exact: degree 2 in %s, its mean and variance under q = %s", statName(g, q.Var), q.Family), true)
	return Add(at(e), Mul(N(0.5), at(d2), Sub(m2, Pow(m1, N(2)))))
}

// priorOf names the prior of q's latent for messages: "a Gamma prior",
// or for a special case of q's family (Conjugacy.Family) "an Exponential
// prior (q = Gamma)".
func (b *Builder) priorOf(q *QFactor) string {
	p := b.Model.Prior(q.Var)
	if p == nil || p.Dist == q.Family {
		return "a " + q.Family + " prior"
	}
	article := "a"
	if strings.ContainsRune("AEIOU", rune(p.Dist[0])) {
		article = "an"
	}
	return fmt.Sprintf("%s %s prior (q = %s)", article, p.Dist, q.Family)
}

// notLinear explains why a statement is not linear in q's sufficient
// statistics, naming the first read of the latent that is not one.
func notLinear(f *ir.Factor, q *QFactor, prior string, stats []string, lp Expr) error {
	names := statNames(stats, q.Var)
	read := nonlinearRead(lp, q.Var, stats)
	what := "a nonlinear function of it"
	if read != nil {
		what = String(read)
	}
	return ir.Errorf(f.Pos, "%s is declared conjugate with %s, but this statement reads it through %s, which is not linear in the %s sufficient statistics (%s)", q.Var, prior, what, q.Family, strings.Join(names, ", ")).Hintf("give it a prior conjugate to this statement, or %s", nonconjugateAdvice(q.Var, len(q.Dims) == 0))
}

// nonconjugateAdvice is the hint to fit latent v with a Gaussian factor
// instead. A scalar cannot be declared nonconjugate as it is (that is an
// error of its own), so its advice says how to write it as a vector.
func nonconjugateAdvice(v string, scalar bool) string {
	if scalar {
		return fmt.Sprintf("fit it with a Gaussian factor: a scalar nonconjugate latent is written as a vector of one, `latent %s : real[One] nonconjugate laplace` with `size One` (One = 1 in the data), and read as sum(%s)", v, v)
	}
	return fmt.Sprintf("declare %s `nonconjugate laplace` (or `nonconjugate delta`)", v)
}

// nonlinearRead returns the smallest subexpression of e that reads v other
// than as one of the statistics: a function call of it, or a product of
// two of its reads.
func nonlinearRead(e Expr, v string, stats []string) Expr {
	if !DependsOn(e, v) {
		return nil
	}
	if s, _ := matchStat(e, v); s != "" {
		for _, name := range stats {
			if name == s {
				return nil
			}
		}
	}
	switch e := e.(type) {
	case *Tensor:
		for _, name := range stats {
			if name == "x" {
				return nil
			}
		}
		return e
	case *MulNode:
		n := 0
		for _, x := range e.Factors {
			if DependsOn(x, v) {
				n++
			}
		}
		if n > 1 {
			return e
		}
	case *Call:
		for _, a := range e.Args {
			if r := nonlinearRead(a, v, stats); r != nil {
				return r
			}
		}
		if e.Prim.Name == "pow" {
			if n, ok := e.Args[1].(*Num); ok && n.V == 2 {
				for _, name := range stats {
					if name == "x^2" {
						return e // (affine in x)² is quadratic
					}
				}
			}
		}
		return e
	}
	for _, c := range Children(e) {
		if r := nonlinearRead(c, v, stats); r != nil {
			return r
		}
	}
	return nil
}

// acrossEntries returns a read of the tensor v in e whose subscript uses an
// index that is not one of the statement's plates (a sum over v's entries,
// as sum(z) lowers to), or nil.
func acrossEntries(e Expr, v string) Expr {
	var found Expr
	Visit(e, func(y Expr) {
		t, ok := y.(*Tensor)
		if !ok || t.Name != v || found != nil {
			return
		}
		for _, s := range t.Idx {
			Visit(s, func(z Expr) {
				if ix, ok := z.(*Ix); ok && !ix.I.Plate {
					found = t
				}
			})
		}
	})
	return found
}

// ConstantBase reports whether the base measure h(x) of the q family of a
// conjugate latent with prior family does not depend on x (Normal, Gamma,
// Dirichlet, …, but not the LogNormal's 1/x). Tempering divides such a
// factor's natural parameters by T (Mandt et al. 2016, §3.2); with h(x)
// depending on x, the tempered optimum h(x)^(1/T)·exp(η·t(x)/T) is not
// h(x)·exp(η'·t(x)) with η' = η/T.
func ConstantBase(family string) bool {
	d := Dists[QFamily(family)]
	if d == nil || d.ExpFam == nil || d.ExpFam.LogBase == nil || d.Conj == nil {
		return false
	}
	var dims []string
	if d.Value.Shape != "" {
		dims = []string{"K"}
	}
	x := T("·x")
	val := Val{Dims: dims, At: func([]Expr) Expr { return x }}
	args := make([]Val, len(d.Conj.Params))
	for j := range args {
		t := T(fmt.Sprintf("·p%d", j))
		args[j] = Val{Dims: dims, At: func([]Expr) Expr { return t }}
	}
	return !DependsOn(d.ExpFam.LogBase(&Builder{}, val, args), "·x")
}
