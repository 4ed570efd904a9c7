package derive

import (
	"fmt"
	"sort"
	"strings"
)

// This file is the expectation engine: E_q[e] for an expression e over
// several mean-field factors. Expectations are exact where a rule applies —
// linearity, independence of distinct factors, the moments each family's
// table entry lists (E[log z] of a Dirichlet, E[x] and E[log x] of a Gamma,
// E[θθᵀ] = Σ + μμᵀ of a Gaussian), E[exp(aᵀθ + c)] = exp(aᵀμ + c + ½aᵀΣa)
// and exact quadratic forms for Gaussian θ, sums over the categories of a
// categorical — and otherwise use the second-order Taylor expansion of
// Wang & Blei's Eq. 19, E[g(θ)] ≈ g(μ) + ½Tr{∇²g(μ)Σ}. Every term is
// recorded with the rule used, so `vigen check` can say which are exact.

// QFactor is one factor q(v) of the mean-field family.
type QFactor struct {
	Var    string   // the latent variable
	Family string   // a family of Dists: MvNormal (Gaussian), Dirichlet, Gamma, Categorical, ...
	Dims   []string // the latent's dimensions
	// Params are the variational parameters in the family's argument
	// order (Gaussian: mean, cov; Dirichlet: concentration; Gamma: shape,
	// rate; Categorical: probabilities over the last dimension K).
	Params []Val
	K      string // Categorical: the size of the category dimension
	// Moments are the expected sufficient statistics E_q[t(v)] = ∇a(φ) of
	// a conjugate factor, by statistic ("log x", "x", ...), as tensors the
	// generated code recomputes after each update of q (MomentStats gives
	// their order). Expectations read them instead of recomputing them
	// from the parameters (ψ(λ) − ψ(Σλ) once per update, not per read).
	Moments     map[string]Val
	MomentStats []string
	// Rows marks the factors of a latent with one Gaussian per unit,
	// read as a whole by a statement indexing it by one of its own plates
	// (a two-plate model's W[d] read in z[n]'s objective): Dims is [U, P],
	// the mean v.mean[u, a], and the covariance v.cov[u, a, b] with δ over
	// the unit (distinct units are independent under q).
	Rows bool
	// row marks a factor sliced from a Rows one at one unit
	// (expecter.sliceRows): its parameters' At select that unit.
	row bool
}

// Tensors are q's parameter tensors followed by its moment tensors.
func (q *QFactor) Tensors() []Val {
	out := append([]Val(nil), q.Params...)
	for _, s := range q.MomentStats {
		out = append(out, q.Moments[s])
	}
	return out
}

// GaussianQ is q(v) = N(mean, cov) for a vector latent v of length dim,
// with parameters read from the tensors v.mean and v.cov.
func GaussianQ(v, dim string) *QFactor {
	return &QFactor{Var: v, Family: "MvNormal", Dims: []string{dim}, Params: []Val{
		tensorVal1(v+".mean", dim), {Dims: []string{dim, dim}, Tensor: v + ".cov", At: func(sel []Expr) Expr { return TSym(v+".cov", sel[0], sel[1]) }},
	}}
}

// RowsGaussianQ is the factors q(v[u]) = N(mean[u], cov[u]), u = 1..units,
// of a per-unit Gaussian latent read as a whole (QFactor.Rows).
func RowsGaussianQ(v, units, dim string) *QFactor {
	return &QFactor{Var: v, Family: "MvNormal", Dims: []string{units, dim}, Rows: true, Params: []Val{
		tensorValN(v+".mean", []string{units, dim}),
		tensorValN(v+".cov", []string{units, dim, dim}),
	}}
}

// DirichletQ is q(v) = Dirichlet(v.param) over the last of dims.
func DirichletQ(v string, dims ...string) *QFactor {
	return &QFactor{Var: v, Family: "Dirichlet", Dims: dims, Params: []Val{tensorValN(v+".param", dims)}}
}

// GammaQ is q(v) = Gamma(v.shape, v.rate), elementwise over dims.
func GammaQ(v string, dims ...string) *QFactor {
	return &QFactor{Var: v, Family: "Gamma", Dims: dims, Params: []Val{tensorValN(v+".shape", dims), tensorValN(v+".rate", dims)}}
}

// CategoricalQ is q(v) = Categorical(v.prob) for an integer latent with
// dims, taking values 1..k; v.prob has dims followed by k.
func CategoricalQ(v, k string, dims ...string) *QFactor {
	return &QFactor{Var: v, Family: "Categorical", Dims: dims, K: k, Params: []Val{tensorValN(v+".prob", append(append([]string(nil), dims...), k))}}
}

func tensorVal1(name, dim string) Val {
	return Val{Dims: []string{dim}, Tensor: name, At: func(sel []Expr) Expr { return T(name, sel...) }}
}

func tensorValN(name string, dims []string) Val {
	return Val{Dims: dims, Tensor: name, At: func(sel []Expr) Expr { return T(name, sel...) }}
}

// Approx records how one term's expectation was taken.
type Approx struct {
	Term  string // the term, printed
	Rule  string // the rule applied
	Exact bool
}

type expecter struct {
	b   *Builder
	qs  map[string]*QFactor
	log []Approx
}

// Expect returns E_q[e] and the rules it used, one entry per term. The
// expression is nil when some term has no rule (the log says which).
func (b *Builder) Expect(e Expr, qs []*QFactor) (Expr, []Approx) {
	x := &expecter{b: b, qs: map[string]*QFactor{}}
	for _, q := range qs {
		x.qs[q.Var] = q
	}
	r := x.expect(e)
	return r, x.log
}

// latents returns the latent variables e reads, sorted.
func (x *expecter) latents(e Expr) []string {
	seen := map[string]bool{}
	Visit(e, func(y Expr) {
		if t, ok := y.(*Tensor); ok && x.qs[t.Name] != nil {
			seen[t.Name] = true
		}
	})
	var out []string
	for v := range seen {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

func (x *expecter) record(e Expr, rule string, exact bool) {
	x.log = append(x.log, Approx{Term: String(e), Rule: rule, Exact: exact})
}

func (x *expecter) expect(e Expr) Expr {
	vs := x.latents(e)
	if len(vs) == 0 {
		return e
	}
	switch e := e.(type) {
	case *AddNode:
		ts := make([]Expr, len(e.Terms))
		for k, t := range e.Terms {
			if ts[k] = x.expect(t); ts[k] == nil {
				return nil
			}
		}
		return Add(ts...)
	case *SumNode:
		body := x.expect(e.Body)
		if body == nil {
			return nil
		}
		return Sum(e.Idx, body)
	}
	if x.readsRows(vs) {
		// c·Σ: term by term, so that each read of a factor read whole
		// meets sliceRows with its unit's index free
		if c, rest := coefRest(e); rest != nil {
			if sn, ok := rest.(*SumNode); ok {
				body := x.expect(sn.Body)
				if body == nil {
					return nil
				}
				return scaleAny(c, Sum(sn.Idx, body))
			}
		}
		if r, ok := x.sliceRows(e, vs); ok {
			return r
		}
		if v := x.rowsAtData(e); v != "" {
			x.record(e, "no rule: "+v+" read at several of its units through int data", false)
			return nil
		}
	}
	if len(vs) > 1 {
		// A term reading a categorical latent and others: sum over the
		// categories first (exact), then take the rest's expectation.
		for _, v := range vs {
			if q := x.qs[v]; q.IsCategorical() {
				if x.bindsSelection(e, q) {
					// c·Σ_n g(z[n]): by linearity, the categories are
					// summed over inside the sum that binds n.
					if r, ok := x.linear(e); ok {
						return r
					}
				}
				r := x.categorical(e, q)
				if r == nil {
					return nil
				}
				return x.expect(r)
			}
		}
	}
	if m, ok := e.(*MulNode); ok {
		// Independence: factors that read disjoint sets of latents are
		// independent under q, so the expectation of the product is the
		// product of the expectations of its connected groups.
		plain, groups := x.independentGroups(m.Factors)
		out := plain
		for _, g := range groups {
			var r Expr
			if vs := x.latents(g); len(vs) == 1 {
				r = x.single(g, x.qs[vs[0]])
			} else {
				r = x.joint(g)
			}
			if r == nil {
				return nil
			}
			out = append(out, r)
		}
		p := Mul(out...)
		if len(groups) > 1 && treeSize(p, bigTree) > bigTree {
			// Large (Mul multiplies out the Σ terms of the factors'
			// Taylor expansions, Eq. 19, with each other): the product of
			// the expectations with their per-point sums kept as factors
			// (atom.go).
			for k := len(plain); k < len(out); k++ {
				out[k] = atomize(out[k])
			}
			p = Mul(out...)
		}
		return p
	}
	if len(vs) > 1 {
		return x.joint(e)
	}
	return x.single(e, x.qs[vs[0]])
}

// sliceRows takes E[e] when e reads a per-unit latent through its
// factors as a whole (QFactor.Rows) at one unit only, v[i, ·] with the
// same index i everywhere: under q(v[i]) alone, as a vector, so that no
// Kronecker delta over units is left inside a Taylor expansion's sums.
func (x *expecter) sliceRows(e Expr, vs []string) (Expr, bool) {
	for _, v := range vs {
		q := x.qs[v]
		if !q.Rows {
			continue
		}
		var at Expr // the unit: a loop index, or int data at loop indices (group[n])
		same := true
		Visit(e, func(y Expr) {
			t, ok := y.(*Tensor)
			if !ok || t.Name != v {
				return
			}
			switch {
			case len(t.Idx) != 2:
				same = false
			case at == nil:
				at = t.Idx[0]
			case at.Key() != t.Idx[0].Key():
				same = false
			}
		})
		if at != nil {
			for _, i := range at.Free() {
				if !containsIndex(e.Free(), i) {
					same = false // (an index bound inside e is not one unit)
				}
			}
		}
		if !same || at == nil {
			continue
		}
		unit := at
		mean, cov := q.Params[0].Tensor, q.Params[1].Tensor
		row := &QFactor{Var: v, Family: q.Family, Dims: q.Dims[1:], row: true, Params: []Val{
			{Dims: q.Dims[1:], Tensor: mean, At: func(sel []Expr) Expr { return T(mean, append([]Expr{unit}, sel...)...) }},
			{Dims: []string{q.Dims[1], q.Dims[1]}, Tensor: cov, At: func(sel []Expr) Expr { return T(cov, unit, sel[0], sel[1]) }},
		}}
		sliced := replaceTensorPure(e, v, func(t *Tensor) Expr { return newTensor(v, t.Idx[1:], t.Sym, t.Int) })
		x.qs[v] = row
		r := x.expect(sliced)
		x.qs[v] = q
		return r, true
	}
	return nil, false
}

// readsRows reports whether one of the latents vs has a factor read whole
// (QFactor.Rows).
func (x *expecter) readsRows(vs []string) bool {
	for _, v := range vs {
		if x.qs[v].Rows {
			return true
		}
	}
	return false
}

// rowsAtData returns a latent with a factor read whole that e reads at a
// unit given by int data (group[n]), where only sliceRows has a rule, or "".
func (x *expecter) rowsAtData(e Expr) string {
	out := ""
	Visit(e, func(y Expr) {
		if t, ok := y.(*Tensor); ok && out == "" && x.qs[t.Name] != nil && x.qs[t.Name].Rows {
			if _, isIx := t.Idx[0].(*Ix); !isIx {
				out = t.Name
			}
		}
	})
	return out
}

// independentGroups splits the factors of a product into those that read
// no latent and groups that read disjoint sets of latents (the connected
// components of "reads a latent in common"), each group multiplied out, in
// the order of their first latent.
func (x *expecter) independentGroups(fs []Expr) (plain []Expr, groups []Expr) {
	parent := map[string]string{}
	var find func(v string) string
	find = func(v string) string {
		if parent[v] == v {
			return v
		}
		r := find(parent[v])
		parent[v] = r
		return r
	}
	reads := make([][]string, len(fs))
	for k, f := range fs {
		reads[k] = x.latents(f)
		for _, v := range reads[k] {
			if _, ok := parent[v]; !ok {
				parent[v] = v
			}
		}
		for _, v := range reads[k][min(1, len(reads[k])):] {
			a, b := find(reads[k][0]), find(v)
			if a != b {
				if b < a {
					a, b = b, a
				}
				parent[b] = a
			}
		}
	}
	byRoot := map[string][]Expr{}
	var roots []string
	for k, f := range fs {
		if len(reads[k]) == 0 {
			plain = append(plain, f)
			continue
		}
		r := find(reads[k][0])
		if byRoot[r] == nil {
			roots = append(roots, r)
		}
		byRoot[r] = append(byRoot[r], f)
	}
	sort.Strings(roots)
	for _, r := range roots {
		groups = append(groups, Mul(byRoot[r]...))
	}
	return plain, groups
}

// joint takes E[e] for a term that reads several latents jointly, as in
// (μ − θ_i)²: independent factors let it integrate one latent at a time.
// A term of degree ≤ 2 in a latent v has E_v[e] = e(E[v]) +
// ½Σ ∂²e/∂v_i∂v_j Cov(v_i, v_j) exactly, whatever q(v)'s family, so a
// polynomial of degree ≤ 2 in each latent (any mix of Gaussian, Normal,
// Gamma, ... factors) has an exact expectation from the factors' means and
// covariances. What is left after the latents that allow it are integrated
// goes to the single-latent rules, or, still joint, to Eq. 19.
func (x *expecter) joint(e Expr) Expr {
	switch e.(type) {
	case *AddNode, *SumNode:
		return x.expect(e) // a group that is one sum: term by term
	}
	for _, v := range x.latents(e) {
		if r := x.integrateQuadratic(e, x.qs[v]); r != nil {
			return x.expect(r)
		}
	}
	return x.taylor(e)
}

// integrateQuadratic is E over q(v) alone of e, exact when e is a
// polynomial of degree ≤ 2 in v (with coefficients that may read other
// latents); nil when it is not, or when q's table lacks the mean or the
// variance it needs.
func (x *expecter) integrateQuadratic(e Expr, q *QFactor) Expr {
	v := q.Var
	dims := q.Dims
	if q.IsSimplex() {
		dims = dims[:len(dims)-1]
	}
	at := func(p string) []Index {
		out := make([]Index, len(q.Dims))
		for k, d := range q.Dims {
			out[k] = x.b.Fresh(p, d)
		}
		return out
	}
	if !readsWhole(e, v, len(q.Dims)) {
		return nil // Diff needs every read to select one element
	}
	i, j := at("q"), at("q")
	d1 := Diff(e, v, i)
	d2 := Diff(d1, v, j)
	mean := x.meanOf(e, q)
	if mean == nil {
		return nil
	}
	if isZero(d2) {
		x.record(e, "exact: linear in "+v+", E["+v+"] substituted", true)
		return mean
	}
	if degreeAbove2(e, v, d2, at("q")) || len(dims) != len(q.Dims) {
		return nil // degree > 2, or a Dirichlet's correlated components
	}
	cov := x.covOf(q, i, j)
	if cov == nil {
		return nil
	}
	h := x.meanOf(d2, q)
	if h == nil {
		return nil
	}
	x.record(e, "exact: degree 2 in "+v+", E["+v+"] and Cov["+v+"] of q = "+q.familyName(), true)
	return Add(mean, Mul(N(0.5), Sum(append(append([]Index(nil), i...), j...), Mul(h, cov))))
}

// meanOf replaces every read of q's latent in e by its mean under q (exact
// for e linear in it); nil when q's table has no mean.
func (x *expecter) meanOf(e Expr, q *QFactor) Expr {
	if q.IsGaussianVector() {
		return x.atMean(e, q)
	}
	ok := true
	r := replaceTensor(e, q.Var, func(t *Tensor) Expr {
		if q.Moments["x"].Tensor != "" {
			return q.Moments["x"].At(t.Idx)
		}
		rule := Dists[q.Family].Expect["x"]
		if rule == nil {
			ok = false
			return t
		}
		return momentOf(x.b, q, rule, t.Idx)
	})
	if !ok {
		return nil
	}
	return r
}

// covOf is Cov_q(v[i], v[j]): the Gaussian's covariance tensor, or for an
// elementwise family the variance of its table entry on the diagonal; nil
// when the table has none.
func (x *expecter) covOf(q *QFactor, i, j []Index) Expr {
	if q.Rows {
		return Mul(Dlt(i[0], j[0]), q.Params[1].At([]Expr{IxE(i[0]), IxE(i[1]), IxE(j[1])}))
	}
	if q.IsGaussianVector() {
		return q.Params[1].At([]Expr{IxE(i[0]), IxE(j[0])})
	}
	rule := Dists[q.Family].Expect["var"]
	if rule == nil {
		return nil
	}
	sel := make([]Expr, len(i))
	deltas := make([]Expr, len(i))
	for k := range i {
		sel[k] = IxE(i[k])
		deltas[k] = Dlt(i[k], j[k])
	}
	return Mul(append(deltas, momentOf(x.b, q, rule, sel))...)
}

// single takes the expectation of e, which reads only the latent of q.
func (x *expecter) single(e Expr, q *QFactor) Expr {
	if !DependsOn(e, q.Var) {
		return e
	}
	if a, ok := e.(*AddNode); ok {
		ts := make([]Expr, len(a.Terms))
		for k, t := range a.Terms {
			if ts[k] = x.single(t, q); ts[k] == nil {
				return nil
			}
		}
		return Add(ts...)
	}
	if s, ok := e.(*SumNode); ok {
		body := x.single(s.Body, q)
		if body == nil {
			return nil
		}
		return Sum(s.Idx, body)
	}
	if m, ok := e.(*MulNode); ok && !q.IsGaussianVector() {
		// Factors that do not read the latent are constants under q. (The
		// Gaussian rules see whole terms, so that sums over the indices of
		// a quadratic form's Hessian can absorb its Kronecker deltas.)
		var cons, dep []Expr
		for _, f := range m.Factors {
			if DependsOn(f, q.Var) {
				dep = append(dep, f)
			} else {
				cons = append(cons, f)
			}
		}
		if len(cons) > 0 {
			if _, isNum := cons[0].(*Num); !isNum || len(cons) > 1 {
				r := x.single(Mul(dep...), q)
				if r == nil {
					return nil
				}
				return Mul(append(cons, r)...)
			}
		}
	}
	c, rest := coefRest(e)
	if rest == nil {
		return e
	}
	var r Expr
	switch {
	case isGaussian(q):
		if r = x.gaussian(rest, q); r == nil {
			r = x.byTable(rest, q)
		}
		if r == nil {
			r = x.expanded(rest, q)
		}
	case q.IsCategorical():
		r = x.categorical(rest, q)
	default:
		if r = x.byTable(rest, q); r == nil {
			// a polynomial of degree ≤ 2, from the mean and variance
			r = x.integrateQuadratic(rest, q)
		}
		if r == nil {
			r = x.quadraticInStat(rest, q)
		}
	}
	if r == nil {
		if isGaussian(q) {
			t := x.taylor(rest)
			if t == nil {
				return nil
			}
			return scaleAny(c, t)
		}
		x.record(rest, fmt.Sprintf("no rule for this function of %s under q = %s", q.Var, q.familyName()), false)
		return nil
	}
	return scaleAny(c, r)
}

// expanded takes E[e] under the Gaussian q term by term after
// multiplying e out (expandPoly), when every term then has an exact rule:
// E[(a − b·exp(u))²] from E[exp(u)] and E[exp(2u)]. It is nil otherwise,
// leaving e to the Taylor expansion.
func (x *expecter) expanded(e Expr, q *QFactor) Expr {
	ex := expandPoly(e)
	if ex == nil {
		return nil
	}
	n := len(x.log)
	var ts []Expr
	for _, t := range terms(ex) {
		c, rest := coefRest(t)
		var r Expr
		switch {
		case rest == nil || !DependsOn(rest, q.Var):
			r = t
		default:
			if r = x.single(rest, q); r != nil {
				r = scaleAny(c, r)
			}
		}
		if r == nil {
			x.log = x.log[:n]
			return nil
		}
		ts = append(ts, r)
	}
	for _, l := range x.log[n:] {
		if !l.Exact {
			x.log = x.log[:n]
			return nil
		}
	}
	x.log = append(x.log[:n], Approx{Term: String(e), Rule: "exact: multiplied out, each term by the rules of a Gaussian", Exact: true})
	return Add(ts...)
}

// byTable matches e against the statistics a family's table entry knows
// the expectation of: v, log v, 1/v, log(1−v), v².
func (x *expecter) byTable(e Expr, q *QFactor) Expr {
	d := Dists[q.Family]
	stat, sel := matchStat(e, q.Var)
	if stat == "" {
		return nil
	}
	rule, ok := d.Expect[stat]
	if !ok {
		return nil
	}
	x.record(e, fmt.Sprintf("exact: E[%s] of %s", stat, q.Family), true)
	if m, ok := q.Moments[stat]; ok {
		// kept up to date by the generated code after every update of q
		return m.At(sel)
	}
	return momentOf(x.b, q, rule, sel)
}

// momentOf is E[stat] of q at element sel from q's parameters.
func momentOf(b *Builder, q *QFactor, rule func(*Builder, []Val, []Expr) Expr, sel []Expr) Expr {
	if q.IsSimplex() {
		// Dirichlet over the last dimension: leading indices select the
		// vector, the last its component.
		lead := sel[:len(sel)-1]
		params := []Val{{Dims: q.Dims[len(q.Dims)-1:], At: func(s []Expr) Expr { return q.Params[0].At(append(append([]Expr(nil), lead...), s...)) }}}
		return rule(b, params, sel[len(sel)-1:])
	}
	params := make([]Val, len(q.Params))
	for k, p := range q.Params {
		p := p
		params[k] = scalar(p.At(sel))
	}
	return rule(b, params, nil)
}

// matchStat recognizes v[sel], log v[sel], 1/v[sel], log(1 − v[sel]) and
// v[sel]² in e.
func matchStat(e Expr, v string) (string, []Expr) {
	if t, ok := e.(*Tensor); ok && t.Name == v {
		return "x", t.Idx
	}
	c, ok := e.(*Call)
	if !ok {
		return "", nil
	}
	t, ok := c.Args[0].(*Tensor)
	switch c.Prim.Name {
	case "log":
		if ok && t.Name == v {
			return "log x", t.Idx
		}
	case "log1p":
		if m, mok := c.Args[0].(*MulNode); mok && len(m.Factors) == 2 {
			if n, nok := m.Factors[0].(*Num); nok && n.V == -1 {
				if t, tok := m.Factors[1].(*Tensor); tok && t.Name == v {
					return "log(1-x)", t.Idx
				}
			}
		}
	case "pow":
		if !ok || t.Name != v {
			return "", nil
		}
		if n, nok := c.Args[1].(*Num); nok {
			switch n.V {
			case -1:
				return "1/x", t.Idx
			case 2:
				return "x^2", t.Idx
			}
		}
	}
	return "", nil
}

// familyName names q's family for labels: a scalar latent's Gaussian over
// a one-element vector is a Normal.
func (q *QFactor) familyName() string {
	if q.IsGaussianVector() && len(q.Dims) == 1 && q.Dims[0] == ScalarSize {
		return "Normal"
	}
	return q.Family
}

// isGaussian reports whether q is a Gaussian factor: a multivariate q(θ) =
// N(μ, Σ) or a (elementwise) Normal.
func isGaussian(q *QFactor) bool { return q.dist().Gaussian }

// indices returns fresh indices over q's dimensions (none for a scalar).
func (x *expecter) indices(q *QFactor) []Index {
	out := make([]Index, len(q.Dims))
	for k, d := range q.Dims {
		out[k] = x.b.Fresh("q", d)
	}
	return out
}

// gaussian takes exact expectations under a Gaussian q where rules exist:
// polynomials of degree ≤ 2 (E[g] = g(μ) + ½Tr{∇²g Σ}, exact for them) and
// exp of a linear form, also written as a power or product of exps.
func (x *expecter) gaussian(e Expr, q *QFactor) Expr {
	v := q.Var
	if !readsWhole(e, v, len(q.Dims)) {
		return nil
	}
	i, j := x.indices(q), x.indices(q)
	grad := Diff(e, v, i)
	hess := Diff(grad, v, j)
	if !degreeAbove2(e, v, hess, x.indices(q)) {
		// Degree ≤ 2: the second-order expansion is exact.
		if !q.IsGaussianVector() {
			x.record(e, "exact: Normal moments up to second order", true)
		} else {
			x.record(e, "exact: Gaussian moments up to second order", true)
		}
		return Add(x.meanOf(e, q), Mul(N(0.5), Sum(append(append([]Index(nil), i...), j...), Mul(x.meanOf(hess, q), x.covOf(q, i, j)))))
	}
	// c·exp(l) with c free of v (a quadratic form in another variable,
	// say): c·E[exp(l)].
	var cons []Expr
	dep := e
	if m, ok := e.(*MulNode); ok {
		var fs []Expr
		for _, f := range m.Factors {
			if DependsOn(f, v) {
				fs = append(fs, f)
			} else {
				cons = append(cons, f)
			}
		}
		dep = Mul(fs...)
	}
	if l := expExponent(dep); l != nil {
		ga := Diff(l, v, i)
		if isZero(Diff(ga, v, j)) {
			// E[exp(aᵀθ + c)] = exp(aᵀμ + c + ½aᵀΣa)
			gb := ga
			for k := range i {
				gb = Subst(gb, i[k], j[k])
			}
			varL := Sum(append(append([]Index(nil), i...), j...), Mul(ga, x.covOf(q, i, j), gb))
			x.record(e, "exact: E[exp(linear)] of a Gaussian", true)
			return Mul(append(cons, Call1("exp", Add(x.meanOf(l, q), Mul(N(0.5), varL))))...)
		}
	}
	return nil
}

// expExponent returns l when e is exp(l), or a power exp(l)^c or a product
// of such factors written as one exp; nil otherwise.
func expExponent(e Expr) Expr {
	switch e := e.(type) {
	case *Call:
		switch e.Prim.Name {
		case "exp":
			return e.Args[0]
		case "pow":
			if c, ok := e.Args[1].(*Num); ok {
				if l := expExponent(e.Args[0]); l != nil {
					return Mul(c, l)
				}
			}
		}
	case *MulNode:
		ls := make([]Expr, len(e.Factors))
		for k, f := range e.Factors {
			if ls[k] = expExponent(f); ls[k] == nil {
				return nil
			}
		}
		return Add(ls...)
	}
	return nil
}

// taylor is Eq. 19: E[g(θ)] ≈ g(μ) + ½Tr{∇²g(μ)Σ}, over every Gaussian
// latent g reads (cross terms between distinct factors vanish, since they
// are independent); other latents are replaced by their means, a
// first-order approximation the label names.
func (x *expecter) taylor(e Expr) Expr {
	out := []Expr{x.atMeans(e)}
	var names, means []string
	for _, v := range x.latents(e) {
		q := x.qs[v]
		if !isGaussian(q) {
			if q.IsCategorical() {
				x.record(e, "no rule: a categorical latent inside a nonlinear function", false)
				return nil
			}
			means = append(means, v)
			continue
		}
		names = append(names, v)
		i, j := x.indices(q), x.indices(q)
		h := Diff(Diff(e, v, i), v, j)
		out = append(out, Mul(N(0.5), Sum(append(append([]Index(nil), i...), j...), Mul(x.atMeans(h), x.covOf(q, i, j)))))
	}
	var rule string
	switch {
	case len(means) == 0:
		rule = fmt.Sprintf("Taylor (Eq. 19) in %s", strings.Join(names, ", "))
	case len(names) == 0:
		rule = fmt.Sprintf("approximate: the means of %s substituted (first-order)", strings.Join(means, ", "))
	default:
		rule = fmt.Sprintf("Taylor (Eq. 19) in %s; the means of %s substituted (first-order)", strings.Join(names, ", "), strings.Join(means, ", "))
	}
	x.record(e, rule, false)
	return Add(out...)
}

// atMean replaces the Gaussian latent of q by its mean.
func (x *expecter) atMean(e Expr, q *QFactor) Expr {
	if q.row {
		return replaceTensorPure(e, q.Var, func(t *Tensor) Expr { return q.Params[0].At(t.Idx) })
	}
	return rename(e, q.Var, q.Params[0].Tensor)
}

// atMeans replaces every latent by its mean (Gaussian mean, Dirichlet and
// Gamma means by their table rules).
func (x *expecter) atMeans(e Expr) Expr {
	for _, v := range x.latents(e) {
		q := x.qs[v]
		switch {
		case isGaussian(q):
			e = x.meanOf(e, q)
		default:
			e = replaceTensor(e, v, func(t *Tensor) Expr {
				r := x.byTable(t, q)
				if r == nil {
					return t
				}
				return r
			})
		}
	}
	return e
}

// categorical takes E over z ~ Categorical(φ): a function of z[sel] becomes
// Σ_k φ[sel, k] f(k).
func (x *expecter) categorical(e Expr, q *QFactor) Expr {
	var sel []Expr
	Visit(e, func(y Expr) {
		if t, ok := y.(*Tensor); ok && t.Name == q.Var && sel == nil {
			sel = t.Idx
		}
	})
	if x.bindsSelection(e, q) {
		// φ[n, k] cannot move outside the sum over n that e holds.
		x.record(e, "no rule: "+q.Var+" is read inside a sum under a nonlinear function", false)
		return nil
	}
	k := x.b.Fresh("k", q.K)
	same := true
	body := replaceTensor(e, q.Var, func(t *Tensor) Expr {
		if len(t.Idx) != len(sel) {
			same = false
			return t
		}
		for n := range t.Idx {
			if t.Idx[n].Key() != sel[n].Key() {
				same = false
			}
		}
		return Add(IxE(k), N(1)) // the 1-based value k+1
	})
	if !same {
		return nil
	}
	body = normalizeSlots(body)
	x.record(e, "exact: sum over the categories of "+q.Var, true)
	return Sum([]Index{k}, Mul(q.Params[0].At(append(append([]Expr(nil), sel...), IxE(k))), body))
}

// bindsSelection reports whether e reads the categorical latent of q at an
// index e itself binds (a sum over n of a function of z[n]).
func (x *expecter) bindsSelection(e Expr, q *QFactor) bool {
	bound := false
	Visit(e, func(y Expr) {
		if t, ok := y.(*Tensor); ok && t.Name == q.Var {
			for _, s := range t.Idx {
				for _, i := range s.Free() {
					if !hasFree(e, i) {
						bound = true
					}
				}
			}
		}
	})
	return bound
}

// linear takes E[c·X] = c·E[X] for a product of latent-free factors c and
// one sum X (the simplifier pulls constants out of a plate's sum, as in
// −½·Σ_n (y[n] − μ[z[n]])²·τ), so that the sum is taken term by term and a
// categorical read z[n] is summed over inside the sum that binds n.
func (x *expecter) linear(e Expr) (Expr, bool) {
	m, ok := e.(*MulNode)
	if !ok {
		return nil, false
	}
	var plain, rest []Expr
	for _, f := range m.Factors {
		if len(x.latents(f)) == 0 {
			plain = append(plain, f)
		} else {
			rest = append(rest, f)
		}
	}
	if len(rest) != 1 {
		return nil, false
	}
	switch rest[0].(type) {
	case *SumNode, *AddNode:
	default:
		return nil, false
	}
	r := x.expect(rest[0])
	if r == nil {
		return nil, true
	}
	return Mul(append(plain, r)...), true
}

// normalizeSlots turns index slots holding (k + 1) back into the index k
// (a 1-based value used as an index).
func normalizeSlots(e Expr) Expr {
	switch e.(type) {
	case *Tensor, *IDelta: // their children are the index slots
		return mapChildren(e, slotOf)
	}
	return mapChildren(e, normalizeSlots)
}

func slotOf(s Expr) Expr {
	if a, ok := s.(*AddNode); ok && len(a.Terms) == 2 {
		if ix, ok := a.Terms[0].(*Ix); ok {
			if n, ok := a.Terms[1].(*Num); ok && n.V == 1 {
				return ix
			}
		}
	}
	return s
}

// rename replaces reads of tensor from by reads of tensor to.
func rename(e Expr, from, to string) Expr {
	return replaceTensorPure(e, from, func(t *Tensor) Expr { return newTensor(to, t.Idx, t.Sym, t.Int) })
}

// replaceTensorPure is replaceTensor for an fn without side effects: each
// distinct subexpression is rewritten once (by key), however many times
// it occurs.
func replaceTensorPure(e Expr, v string, fn func(*Tensor) Expr) Expr {
	return Memoized(func(e Expr, rec func(Expr) Expr) Expr {
		if t, ok := e.(*Tensor); ok && t.Name == v {
			return fn(t)
		}
		return mapChildren(e, rec)
	})(e)
}

// replaceTensor rebuilds e with every read of tensor v replaced by fn's.
func replaceTensor(e Expr, v string, fn func(*Tensor) Expr) Expr {
	if t, ok := e.(*Tensor); ok && t.Name == v {
		return fn(t)
	}
	return mapChildren(e, func(c Expr) Expr { return replaceTensor(c, v, fn) })
}

// readsWhole reports whether every read of the tensor v in e has rank
// indices, so that derivatives by one of its elements are defined.
func readsWhole(e Expr, v string, rank int) bool {
	ok := true
	Visit(e, func(y Expr) {
		if t, isT := y.(*Tensor); isT && t.Name == v && len(t.Idx) != rank {
			ok = false
		}
	})
	return ok
}
