package derive

import (
	"fmt"
	"strings"

	"github.com/vigen-go/vigen/spec/ir"
)

// This file derives the per-token predictive distribution of a bag-of-words
// model, for held-out evaluation by document completion (Blei & Lafferty
// 2007; Wang & Blei 2013, §5.1). A model has one when a bag data variable w
// is drawn as
//
//	for d in 1:D {
//	  for n in w[d] {
//	    z[d, n] ~ Categorical(Q)
//	    w[d, n] ~ Categorical(P)    # P reads z[d, n]
//	  }
//	}
//
// with z a local Categorical latent. Under q, with z's own factor replaced by
// a fresh draw for a new token of document d,
//
//	p(w_dn = v | d) ≈ Σ_k E_q[Q_k] · E_q[P_v | z = k],
//
// which treats the factors of Q and P as independent (mean field) and takes
// each expectation with the expectation engine: exact where a rule applies
// (the Dirichlet mean α_k/Σα of LDA's θ and β; a param read as its
// estimate), otherwise by an approximation its label names (E[softmax(θ)]
// under a Gaussian q(θ) by the Taylor expansion of Eq. 19, as for the CTM).

// Predictive is the per-token predictive of a bag data variable.
type Predictive struct {
	Bag   *ir.Var    // the bag data variable w
	Draw  *ir.Factor // w[d, n] ~ Categorical(P)
	Local *ir.Var    // z, the Categorical latent P reads
	Mixer *ir.Factor // z[d, n] ~ Categorical(Q)
	Unit  Index      // d
	// K runs over z's categories, V over w's terms; both are free in the
	// expressions below (and Unit in Mix).
	K, V Index
	// Mix is E_q[Q_k] for document Unit; Topic is E_q[P_v | z = k], the
	// same for every document.
	Mix, Topic             Expr
	MixInputs, TopicInputs []*QFactor
	// MixRules and TopicRules are how the expectations were taken (empty
	// when the expression reads no latent).
	MixRules, TopicRules []Approx
}

// Exact reports whether both expectations are exact.
func (p *Predictive) Exact() bool {
	for _, a := range append(append([]Approx(nil), p.MixRules...), p.TopicRules...) {
		if !a.Exact {
			return false
		}
	}
	return true
}

// RuleSummary says in words how the expectations of rules were taken:
// "reads no latent" when there are none, the distinct rules otherwise.
func RuleSummary(rules []Approx) string {
	if len(rules) == 0 {
		return "reads no latent (constants and param estimates)"
	}
	var out []string
	seen := map[string]bool{}
	for _, a := range rules {
		if !seen[a.Rule] {
			seen[a.Rule] = true
			out = append(out, a.Rule)
		}
	}
	if len(out) == 1 && len(rules) == 1 {
		return out[0]
	}
	return strings.Join(out, "; ")
}

// predictive derives the model's per-token predictive, or says why it has
// none: a positioned error whose message ends in a hint.
func (b *Builder) predictive(qs map[string]*QFactor) (p *Predictive, err error) {
	m := b.Model
	defer recoverLowerError(&p, &err)
	var bags []*ir.Var
	for _, v := range m.VarsWithRole(ir.RoleData) {
		if v.Type.Class == ir.Bag {
			bags = append(bags, v)
		}
	}
	const shape = "\thint: held-out evaluation needs a bag data variable w drawn as `w[d, n] ~ Categorical(P)` inside `for d in 1:D { for n in w[d] { ... } }`, with P reading a Categorical latent z drawn in the same loops as `z[d, n] ~ Categorical(Q)`, as in LDA"
	if len(bags) == 0 {
		return nil, ir.Errorf(m.NamePos, "model %s has no bag data variable (`data w : bag[D] of 1..V`), so it has no held-out evaluation by document completion\n%s", m.Name, shape)
	}
	var errs []error
	for _, w := range bags {
		p, err := b.bagPredictive(w, qs)
		if err == nil {
			return p, nil
		}
		errs = append(errs, fmt.Errorf("%w\n%s", err, shape))
	}
	return nil, ir.Join(errs...)
}

// bagPredictive derives the predictive of the bag data variable w.
func (b *Builder) bagPredictive(w *ir.Var, qs map[string]*QFactor) (*Predictive, error) {
	m := b.Model
	f := m.Prior(w.Name)
	if f == nil {
		return nil, ir.Errorf(w.Pos, "the bag %s is not drawn by any statement, so it has no held-out evaluation", w.Name)
	}
	d, n, ok := bagLoops(f, w)
	if !ok || f.Dist != "Categorical" {
		return nil, ir.Errorf(f.Pos, "the bag %s is not drawn as `%s[d, n] ~ Categorical(P)` directly inside `for d in 1:D { for n in %s[d] { ... } }`, so it has no held-out evaluation", w.Name, w.Name, w.Name)
	}
	// the Categorical latents P reads
	var z *ir.Var
	var zerr error
	ir.Walk(f.Args[0], func(e ir.Expr) {
		r, ok := e.(*ir.Ref)
		if !ok || r.Var.Role != ir.RoleLatent || qs[r.Var.Name] == nil || !qs[r.Var.Name].IsCategorical() {
			return
		}
		if z != nil && z != r.Var {
			zerr = ir.Errorf(f.Pos, "the distribution of %s reads two Categorical latents, %s and %s, so it has no held-out evaluation", w.Name, z.Name, r.Var.Name)
		}
		z = r.Var
		if len(r.Index) != 2 || !isIndex(r.Index[0], d.Index) || !isIndex(r.Index[1], n.Index) {
			zerr = ir.Errorf(r.Pos, "%s reads %s other than as %s[%s, %s], so it has no held-out evaluation", w.Name, z.Name, z.Name, d.Index, n.Index)
		}
	})
	if zerr != nil {
		return nil, zerr
	}
	if z == nil {
		return nil, ir.Errorf(f.Pos, "the distribution of %s reads no Categorical latent (a topic assignment z[%s, %s]), so it has no held-out evaluation", w.Name, d.Index, n.Index)
	}
	zf := m.Prior(z.Name)
	zd, zn, ok := bagLoops(zf, w)
	if !ok || zf.Dist != "Categorical" || zd.Index != d.Index || zd.Size != d.Size || zn.Index != n.Index {
		return nil, ir.Errorf(zf.Pos, "%s is not drawn as `%s[%s, %s] ~ Categorical(Q)` in the same loops as %s (%s), so it has no held-out evaluation", z.Name, z.Name, d.Index, n.Index, w.Name, f.Pos)
	}
	for _, v := range m.Vars {
		if v == w || v.Role == ir.RoleSize || v.Role == ir.RoleLatent && b.localUnit(v) != nil {
			continue
		}
		for _, dim := range v.Type.Dims {
			if dim == d.Size || dim == w.Name {
				return nil, ir.Errorf(v.Pos, "%s %s has a dimension %s, one entry per document or token of the training data, so the test documents have none and the model has no held-out evaluation", v.Role, v.Name, dim)
			}
		}
	}
	unit := Index{Name: d.Index, Size: d.Size, Plate: true}
	entry := Index{Name: n.Index, Size: RaggedSize(w.Name, unit), Plate: true}
	b.plates[d.Index], b.plates[n.Index] = unit, entry
	defer func() {
		delete(b.plates, d.Index)
		delete(b.plates, n.Index)
	}()
	p := &Predictive{Bag: w, Draw: f, Local: z, Mixer: zf, Unit: unit,
		K: b.Fresh("k", qs[z.Name].K), V: b.Fresh("v", f.Args[0].Typ().Dims[0])}
	topic, err := b.Lower(f.Args[0], []Expr{IxE(p.V)})
	if err != nil {
		return nil, err
	}
	topic = normalizeSlots(replaceTensor(topic, z.Name, func(*Tensor) Expr { return Add(IxE(p.K), N(1)) }))
	mix, err := b.Lower(zf.Args[0], []Expr{IxE(p.K)})
	if err != nil {
		return nil, err
	}
	if hasFree(topic, entry) || hasFree(mix, entry) {
		st := f
		if hasFree(mix, entry) {
			st = zf
		}
		return nil, ir.Errorf(st.Pos, "the distribution reads the entry index %s beyond %s[%s, %s] (per-token data or latents), so the predictive of a new token of a document is not defined", n.Index, z.Name, d.Index, n.Index)
	}
	if hasFree(topic, unit) {
		return nil, ir.Errorf(f.Pos, "the distribution of %s given %s reads the document %s beyond %s[%s, %s], and held-out evaluation supports only topics shared by all documents", w.Name, z.Name, d.Index, z.Name, d.Index, n.Index)
	}
	for _, r := range []struct {
		e     *Expr
		in    *[]*QFactor
		rules *[]Approx
		f     *ir.Factor
		unit  *Index
		what  string
	}{
		{&p.Mix, &p.MixInputs, &p.MixRules, zf, &unit, "the predictive's topic proportions"},
		{&p.Topic, &p.TopicInputs, &p.TopicRules, f, nil, "the predictive's topics"},
	} {
		e := mix
		if r.unit == nil {
			e = topic
		}
		if r.unit == nil {
			for _, v := range m.VarsWithRole(ir.RoleLatent) {
				if DependsOn(e, v.Name) && b.localUnit(v) != nil {
					return nil, ir.Errorf(f.Pos, "the distribution of %s given %s reads the local latent %s, and held-out evaluation supports only topics shared by all documents", w.Name, z.Name, v.Name)
				}
			}
		} else {
			for _, v := range m.VarsWithRole(ir.RoleLatent) {
				if DependsOn(e, v.Name) && qs[v.Name] != nil && qs[v.Name].IsCategorical() {
					return nil, ir.Errorf(zf.Pos, "the distribution of %s reads the Categorical latent %s, so the predictive of a new token is not defined", z.Name, v.Name)
				}
			}
		}
		u := &Update{}
		x, err := b.expectOthers(e, "", r.unit, qs, r.f, u)
		if err != nil {
			return nil, fmt.Errorf("%v (in %s)", err, r.what)
		}
		*r.e, *r.in, *r.rules = x, u.Inputs, u.Expectations
	}
	return p, nil
}

// bagLoops returns the plates of f when they are exactly `for d in 1:D {
// for n in w[d] { ... } }` and f draws v[d, n].
func bagLoops(f *ir.Factor, w *ir.Var) (d, n ir.Plate, ok bool) {
	if f == nil || len(f.Plates) != 2 {
		return d, n, false
	}
	d, n = f.Plates[0], f.Plates[1]
	if d.Bag != nil || n.Bag == nil || n.Bag.Var != w || len(n.Bag.Index) != 1 || !isIndex(n.Bag.Index[0], d.Index) {
		return d, n, false
	}
	if t := f.Target.Index; len(t) != 2 || !isIndex(t[0], d.Index) || !isIndex(t[1], n.Index) {
		return d, n, false
	}
	return d, n, true
}

func isIndex(e ir.Expr, name string) bool {
	x, ok := e.(*ir.Index)
	return ok && x.Name == name
}
