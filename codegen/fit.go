package codegen

import (
	"fmt"
	"strings"

	"github.com/vigen-go/vigen/derive"
	"github.com/vigen-go/vigen/spec/ir"
)

// This file emits the coordinate ascent of Wang & Blei's Fig. 1 for a
// derived model: the variational state, its initialization, one update
// method per latent (Laplace or delta for nonconjugate latents, the
// closed form of Eq. 18 for conjugate ones), the inner loop over a unit's
// local latents, the global updates and the ELBO.

// qInfo is what the generated code knows about one latent's factor.
type qInfo struct {
	v     *ir.Var
	q     *derive.QFactor
	obj   *derive.Objective
	upd   *derive.Update
	local bool
	// side: a nonconjugate latent with one Gaussian per unit of a loop
	// other than the unit plate (derive.Derivation.SidePlates), updated
	// unit by unit after the units (UpdatePlateUnit)
	side    bool
	fields  []string // state fields, one per q.Params
	mfields []string // state fields, one per q.MomentStats (E_q[t(v)])
	field   string   // Result.Latent field
	upper   string   // exported latent name, for method names
	method  string   // state field holding a nonconjugate latent's method
}

// fitGen emits the Fit machinery.
type fitGen struct {
	g      *gen
	d      *derive.Derivation
	bound  *derive.Bound   // d.Bound()
	msteps []*derive.MStep // d.MSteps()
	qs     []*qInfo
	byT    map[string]*qInfo // q parameter tensor → its latent
	unit   *derive.Index
	w      *goFile
	fnames *namer
	// hoist lists the exponentials of global moments that categorical
	// updates read, kept in the state (see findHoisted).
	hoist   []*hoisted
	hoistOf map[string]*hoisted // by moment tensor
	// randomStart are the per-unit latents read whole by another per-unit
	// latent's objective (derive.QFactor.Rows): their means start from
	// N(0, 1) draws, since zero means for both are a fixed point of the
	// alternation (PPCA's z and W).
	randomStart map[string]bool
	// temper: the model can be tempered (temperReason is ""); its local
	// conjugate updates take the unit's inverse temperature.
	temper bool
	// lvt: the model also supplies its units' tempered normalizers for
	// local variational tempering (lvtReason is "").
	lvt bool
	// gibbs: SVI applies and so does its Gibbs local step (gibbsReason is
	// ""); the scratch space holds the sums of the kept draws.
	gibbs bool
}

// hoisted is exp(E_q[t]) of a global factor's moment tensor that a
// categorical update reads as a whole term of its log-probabilities (LDA's
// exp(E[log β_kw])): it is computed once whenever the factor changes, not
// once per entry and sweep.
type hoisted struct {
	qi     *qInfo
	tensor string // the moment tensor
	name   string // the tensor name of its exponential in kernels
	field  string // the state field
	dims   []string
	// trans: a matrix the categorical update reads at a data-given column
	// (E[log β_k,w] at a document's term w, for every k) is stored
	// transposed, so that each read is one contiguous row.
	trans bool
}

// fitCode writes the Fit machinery of the model into the returned
// fitGen's goFile.
func (g *gen) fitCode() (*fitGen, error) {
	d := g.d
	bound, err := d.Bound()
	if err != nil {
		return nil, err
	}
	msteps, err := d.MSteps()
	if err != nil {
		return nil, err
	}
	f := &fitGen{g: g, d: d, bound: bound, msteps: msteps, byT: map[string]*qInfo{}, unit: bound.Unit, w: newGoFile(), fnames: newNamer("rng", "hess", "grad", "prev", "curv", "cov")}
	objs := map[string]*derive.Objective{}
	for _, o := range d.Objectives {
		objs[o.Latent.Name] = o
	}
	upds := map[string]*derive.Update{}
	for _, u := range d.Updates {
		upds[u.Latent.Name] = u
	}
	latentNames := newNamer()
	for _, q := range d.Q {
		v := g.m.Lookup(q.Var)
		qi := &qInfo{v: v, q: q, obj: objs[q.Var], upd: upds[q.Var], upper: g.upper(q.Var), field: latentNames.get(g.upper(q.Var))}
		switch {
		case qi.obj != nil:
			qi.local = qi.obj.Unit != nil && sameIndex(*qi.obj.Unit, *f.unit)
			qi.side = qi.obj.Unit != nil && !qi.local
		case qi.upd != nil:
			qi.local = qi.upd.Unit != nil
			if err := f.checkUpdate(qi); err != nil {
				return nil, err
			}
		default:
			return nil, ir.Errorf(v.Pos, "no update for latent %s", v.Name)
		}
		for _, p := range q.Params {
			fl := f.fnames.get(localName(p.Tensor))
			qi.fields = append(qi.fields, fl)
			f.byT[p.Tensor] = qi
		}
		for _, st := range q.MomentStats {
			t := q.Moments[st].Tensor
			qi.mfields = append(qi.mfields, f.fnames.get(localName(t)))
			f.byT[t] = qi
		}
		if qi.obj != nil && !qi.obj.Conjugate {
			qi.method = f.fnames.get(unexported(q.Var) + "Method")
		}
		f.qs = append(f.qs, qi)
	}
	f.randomStart = map[string]bool{}
	for _, o := range d.Objectives {
		if o.Unit == nil {
			continue
		}
		for _, q := range o.Inputs {
			if q.Rows {
				f.randomStart[q.Var] = true
			}
		}
	}
	f.findHoisted()
	f.temper = f.temperReason() == ""
	f.lvt = f.temper && f.lvtReason() == ""
	f.gibbs = f.sviReason() == "" && f.gibbsReason() == ""
	f.emit()
	return f, nil
}

// sameIndex reports whether two plate indices are the same loop.
func sameIndex(a, b derive.Index) bool { return a.Name == b.Name && a.Size == b.Size }

// perUnit returns the loop of a latent with one Gaussian per unit (local
// to the unit plate or to a side plate), or nil.
func (f *fitGen) perUnit(qi *qInfo) *derive.Index {
	if qi.obj != nil && qi.obj.Unit != nil {
		return qi.obj.Unit
	}
	return nil
}

// findHoisted sets f.hoist: the global moment tensors that are whole terms
// of a categorical update's log-probabilities.
func (f *fitGen) findHoisted() {
	f.hoistOf = map[string]*hoisted{}
	for _, qi := range f.qs {
		if qi.upd == nil || !qi.upd.Normalize {
			continue
		}
		for _, t := range terms(qi.upd.Params[0]) {
			tt, ok := t.(*derive.Tensor)
			if !ok || f.hoistOf[tt.Name] != nil {
				continue
			}
			owner := f.byT[tt.Name]
			if owner == nil || owner == qi || owner.local {
				continue
			}
			for k, st := range owner.q.MomentStats {
				if owner.q.Moments[st].Tensor == tt.Name {
					h := &hoisted{qi: owner, tensor: tt.Name, name: "exp(" + tt.Name + ")",
						field: f.fnames.get(owner.mfields[k] + "Exp"), dims: owner.q.Moments[st].Dims}
					if len(tt.Idx) == 2 && len(h.dims) == 2 {
						_, plain := tt.Idx[1].(*derive.Ix)
						h.trans = !plain
					}
					f.hoist = append(f.hoist, h)
					f.hoistOf[tt.Name] = h
				}
			}
		}
	}
}

// hoistedOf lists the hoisted exponentials of qi's moments.
func (f *fitGen) hoistedOf(qi *qInfo) []*hoisted {
	var out []*hoisted
	for _, h := range f.hoist {
		if h.qi == qi {
			out = append(out, h)
		}
	}
	return out
}

// checkUpdate rejects updates whose parameter tensors the printer cannot
// address yet (rank above two).
func (f *fitGen) checkUpdate(qi *qInfo) error {
	free := f.updateFree(qi.upd)
	if len(free) > 2 {
		return ir.Errorf(qi.v.Pos, "latent %s has %d dimensions besides its unit; conjugate latents of rank above 2 are not supported by the code generator yet", qi.v.Name, len(free))
	}
	return nil
}

// updateFree returns the indices an update's kernel loops over: At without
// the unit, which selects a row slice instead.
func (f *fitGen) updateFree(u *derive.Update) []derive.Index {
	if u.Unit != nil && u.At[0].Name == u.Unit.Name {
		return u.At[1:]
	}
	return u.At
}

// dim is the Go expression for the length of a dimension of q's tensors.
func (f *fitGen) dim(name string) string {
	if strings.HasPrefix(name, "@") {
		return "len(m." + f.g.goName[name[1:]+".term"] + ")"
	}
	if name == derive.ScalarSize {
		return "1"
	}
	if size, lo, hi, ok := derive.SizeRange(name); ok {
		return fmt.Sprintf("max(0, m.%s%+d)", f.g.sizeGo[size], hi-lo)
	}
	return "m." + f.g.sizeGo[name]
}

// paramDims are the dimensions of q's k-th parameter tensor as stored in
// the state (per-unit Gaussians get the unit dimension in front).
func (f *fitGen) paramDims(qi *qInfo, k int) []string {
	dims := qi.q.Params[k].Dims
	if u := f.perUnit(qi); qi.q.IsGaussianVector() && u != nil {
		return append([]string{u.Size}, dims...)
	}
	return dims
}

func (f *fitGen) length(dims []string) string {
	if len(dims) == 0 {
		return "1"
	}
	var parts []string
	for _, d := range dims {
		if d != derive.ScalarSize { // a scalar latent's one element
			parts = append(parts, f.dim(d))
		}
	}
	if len(parts) == 0 {
		return "1"
	}
	return strings.Join(parts, "*")
}

// arg is the Go expression passing the q parameter tensor t to a kernel:
// a per-unit Gaussian's slice for unit d, or the whole array.
func (f *fitGen) arg(q *derive.QFactor, t string, unit string) string {
	qi := f.byT[t]
	k := 0
	for n, p := range qi.q.Tensors() {
		if p.Tensor == t {
			k = n
		}
	}
	all := append(append([]string(nil), qi.fields...), qi.mfields...)
	field := "q." + all[k]
	if qi.q.IsGaussianVector() && qi.local && !q.Rows {
		// a per-unit latent read whole (derive.QFactor.Rows) is passed whole
		n := f.length(qi.q.Params[k].Dims)
		return fmt.Sprintf("%s[%s*%s : (%s+1)*%s]", field, unit, n, unit, n)
	}
	return field
}

func (f *fitGen) args(qs []*derive.QFactor, unit string) string {
	return f.argsFor("", qs, unit)
}

// argsFor are the arguments of qs's tensors that the trimmed kernel named
// kernel takes (kernelSpec.Trim): all but those it does not read.
func (f *fitGen) argsFor(kernel string, qs []*derive.QFactor, unit string) string {
	var out []string
	seen := map[string]bool{}
	for _, q := range qs {
		for _, p := range q.Tensors() {
			if !seen[p.Tensor] && !f.g.drop[kernel][p.Tensor] {
				out = append(out, f.arg(q, p.Tensor, unit))
			}
			seen[p.Tensor] = true
		}
	}
	return strings.Join(out, ", ")
}

func (f *fitGen) emit() {
	f.emitTypes()
	f.emitNewState()
	f.emitCopyState()
	for _, qi := range f.qs {
		if qi.obj != nil {
			f.emitGaussianUpdate(qi)
			if qi.obj.NCVMP != nil {
				f.emitNCVMPFactor(qi)
			}
		} else {
			f.emitConjugateUpdate(qi)
		}
	}
	f.emitDiagnose()
	f.emitLoops()
	f.emitELBO()
	f.emitResult()
	f.emitELBOQuadrature()
	f.emitFingerprint()
	f.emitParams()
	f.emitMSteps()
	f.emitSVI()
	f.emitTemper()
	f.emitHeldout()
	f.emitPredict()
	f.emitJoint()
	for _, qi := range f.qs {
		if qi.upd != nil {
			f.w.Raw(f.updateKernel(qi))
		}
		if len(qi.mfields) > 0 {
			f.emitMoments(qi)
		}
	}
	f.w.Raw(f.boundKernels())
	f.w.Raw(f.temperKernel())
	f.w.Raw(f.lvtKernel())
}

func (f *fitGen) pos(v *ir.Var) string {
	return fmt.Sprintf("%s:%d:%d", v.Pos.File, v.Pos.Line, v.Pos.Col)
}

func (f *fitGen) emitTypes() {
	w := f.w
	w.P()
	w.Doc("Latent holds the fitted q of each latent variable.")
	w.Block("type Latent struct", func() {
		for _, qi := range f.qs {
			typ := "*" + w.Sf("%s", rt("Factor"))
			doc := fmt.Sprintf("q(%s), %s", qi.v.Name, qi.q.Family)
			if derive.ScalarGaussian(qi.v) {
				typ, doc = "*"+w.Sf("%s", rt("Normal")), fmt.Sprintf("q(%s) = N(mean, sd²)", qi.v.Name)
			} else if qi.q.IsGaussianVector() {
				typ, doc = "*"+w.Sf("%s", rt("Gaussian")), fmt.Sprintf("q(%s) = N(mean, cov)", qi.v.Name)
				if u := f.perUnit(qi); u != nil {
					typ, doc = "[]"+typ, doc+", one per unit "+u.Name
				}
			}
			w.Pf("// %s is %s (%s).", qi.field, doc, f.pos(qi.v))
			if f.perToken(qi) {
				w.Pf("// A per-token latent: nil (JSON null) unless Options.Keep names it.")
			}
			w.Pf("%s %s `json:%q`", qi.field, typ, qi.v.Name)
		}
	})
	w.P()
	w.Doc("state is the variational distribution q being fitted, with scratch", "space for the updates.")
	w.Block("type state struct", func() {
		for _, qi := range f.qs {
			w.Pf("%s []float64 // q(%s) (%s)", strings.Join(qi.fields, ", "), qi.v.Name, qi.q.Family)
			if len(qi.mfields) > 0 {
				w.Pf("%s []float64 // E_q[t(%s)]: %s", strings.Join(qi.mfields, ", "), qi.v.Name, strings.Join(qi.q.MomentStats, "; "))
			}
			for _, h := range f.hoistedOf(qi) {
				if h.trans {
					w.Pf("%s []float64 // exp(%s), transposed, read by categorical updates", h.field, f.momentField(h))
				} else {
					w.Pf("%s []float64 // exp(%s), read by categorical updates", h.field, f.momentField(h))
				}
			}
			if qi.method != "" {
				w.Pf("%s string", qi.method)
			}
			if qi.obj != nil {
				if f.perUnit(qi) != nil {
					w.Pf("%sStarted []bool // per unit: whether its covariance has been set by an update", qi.fields[0])
				}
			}
		}
		w.Pf("rng *%s", goRand.Ident("Rand"))
	})
	w.P()
	w.Doc("scratch is one worker's space for the updates of one unit at a time,", "and the trouble it met.")
	w.Block("type scratch struct", func() {
		for _, qi := range f.qs {
			if qi.obj != nil {
				w.P(rt("GaussianWork"))
				break
			}
		}
		w.P("prev []float64")
		if f.keepsUntempered() {
			w.P("keep []float64 // a tempered update's untempered natural parameters")
		}
		if f.gibbs {
			w.P("gibbs []float64 // GibbsUnit's sums of the categorical locals' kept draws")
		}
		w.P("trouble ", rt("Trouble"))
	})
}

func (f *fitGen) emitNewState() {
	w := f.w
	doc := []string{"newState allocates q and sets its starting point: opts.Start if given,",
		"otherwise Gaussian means 0 with identity covariances, uniform categorical",
		"probabilities, and other parameters drawn near 1 from opts.Seed."}
	for _, qi := range f.qs {
		if f.randomStart[qi.v.Name] {
			doc[2] = "probabilities, and other parameters drawn near 1 from opts.Seed (the"
			doc = append(doc, "means of per-unit latents read by each other's updates are drawn from",
				"N(0, 1) instead: zero means for both would be a fixed point).")
			break
		}
	}
	w.Func(doc, "(m *Model) newState(opts Options) (*state, error)", func() {
		w.Pf("q := &state{rng: %s(opts.Seed)}", rt("NewRand"))
		for _, qi := range f.qs {
			for k, fl := range qi.fields {
				w.Pf("q.%s = make([]float64, %s)", fl, f.length(f.paramDims(qi, k)))
			}
			for _, fl := range qi.mfields {
				w.Pf("q.%s = make([]float64, %s)", fl, f.length(f.paramDims(qi, 0)))
			}
			for _, h := range f.hoistedOf(qi) {
				w.Pf("q.%s = make([]float64, %s)", h.field, f.length(f.paramDims(qi, 0)))
			}
			switch qi.q.Family {
			case "MvNormal":
				n := f.dim(qi.q.Dims[0])
				if u := f.perUnit(qi); u != nil {
					w.Block(fmt.Sprintf("for d := 0; d < %s; d++", f.dim(u.Size)), func() {
						w.Pf("%s(q.%s[d*%s*%s:(d+1)*%s*%s], %s)", rt("Identity"), qi.fields[1], n, n, n, n, n)
					})
					w.Pf("q.%sStarted = make([]bool, %s)", qi.fields[0], f.dim(u.Size))
					if f.randomStart[qi.v.Name] {
						// zero means for both factors are a fixed point
						w.P(f.shardInit(qi, 0, "InitNormal"))
					}
				} else {
					w.Pf("%s(q.%s, %s)", rt("Identity"), qi.fields[1], n)
				}
				if qi.method == "" {
					break // conjugate: closed form, whatever opts.Method
				}
				w.Pf("q.%s = %q", qi.method, qi.v.Treatment.String())
				w.If(cond(`opts.Method != ""`), func() { w.Pf("q.%s = opts.Method", qi.method) })
				methods := []string{"laplace"}
				if f.g.hasDelta(qi.obj) {
					methods = append(methods, "delta")
				} else {
					// the delta kernels are generated on request only
					// (Options.Methods): say how to get them
					w.If(cond(w.Sf(`q.%s == "delta"`, qi.method)), func() {
						w.Return("nil", w.Sf(`%s("%s: method delta for %s needs the delta method's kernels, which this package was generated without; generate it with vigen gen -methods delta (vigen run -method delta does)")`, goFmt.Ident("Errorf"), f.g.m.Name, qi.v.Name))
					})
				}
				if qi.obj != nil && qi.obj.NCVMP != nil {
					methods = append(methods, "ncvmp") // its kernels are generated only when declared
				}
				var unknown []string
				for _, meth := range methods {
					unknown = append(unknown, fmt.Sprintf("q.%s != %q", qi.method, meth))
				}
				want := strings.Join(methods[:len(methods)-1], ", ") + " or " + methods[len(methods)-1]
				w.If(cond(strings.Join(unknown, " && ")), func() {
					w.Return("nil", w.Sf(`%s("%s: unknown method %%q for %s (want %s)", q.%s)`, goFmt.Ident("Errorf"), f.g.m.Name, qi.v.Name, want, qi.method))
				})
			case "Categorical":
				w.Pf("%s(q.%s, 1/float64(%s))", rt("Fill"), qi.fields[0], f.dim(qi.q.K))
			default:
				for k := range qi.fields {
					w.P(f.shardInit(qi, k, "InitPositive"))
				}
			}
		}
		w.If(cond("opts.Start != nil"), func() { w.IfErr("err := q.start(m, opts.Start)", "nil", "err") })
		for _, qi := range f.qs {
			if len(qi.mfields) == 0 {
				continue
			}
			if qi.local {
				w.Block(fmt.Sprintf("for d := 0; d < %s; d++", f.dim(f.unit.Size)), func() { w.Pf("m.moments%s(q, d)", qi.upper) })
			} else {
				w.Pf("m.moments%s(q)", qi.upper)
			}
		}
		for _, qi := range f.qs {
			if !f.perToken(qi) {
				continue
			}
			w.If(cond(w.Sf("opts.Start != nil && opts.Start.Latent.%s == nil", qi.field)), func() {
				// a resumed run continues exactly only with the state it had
				w.If(cond("opts.Resume != nil"), func() {
					w.Return("nil", w.Sf(`%s("resume: the result leaves out %s; resume from a checkpoint, which holds every latent, or from a fit with Options.Keep naming %s")`, goFmt.Ident("Errorf"), qi.v.Name, qi.v.Name))
				})
				w.Pf("// a start that left %s out (Options.Keep): %s at its optimum given", qi.v.Name, qi.v.Name)
				w.P("// the other factors (its closed-form update)")
				w.P("w := new(scratch)")
				args := ""
				if f.temper && qi.local {
					args = ", 1"
				}
				if qi.local {
					w.Block(w.Sf("for d := 0; d < %s; d++", f.dim(f.unit.Size)), func() {
						w.Pf("m.update%s(q, w, d%s)", qi.upper, args)
					})
				} else {
					w.Pf("m.update%s(q, w)", qi.upper)
				}
			})
		}
		w.Return("q", "nil")
	})
	w.Func([]string{"start copies q from a previous result, checking its shapes."}, "(q *state) start(m *Model, r *Result) error", func() {
		for _, qi := range f.qs {
			if qi.q.IsGaussianVector() {
				n := f.dim(qi.q.Dims[0])
				if u := f.perUnit(qi); u != nil {
					units := f.dim(u.Size)
					w.If(cond(fmt.Sprintf("len(r.Latent.%s) != %s", qi.field, units)), func() {
						w.Return(w.Sf(`%s("start: latent %%q has %%d units, want %%d", %q, len(r.Latent.%s), %s)`, goFmt.Ident("Errorf"), qi.v.Name, qi.field, units))
					})
					w.Block(fmt.Sprintf("for d, g := range r.Latent.%s", qi.field), func() {
						w.Pf("mean, cov, err := g.Flat(%q, %s)", qi.v.Name, n)
						w.CheckErr("err")
						w.Pf("copy(q.%s[d*%s:], mean)", qi.fields[0], n)
						w.Pf("copy(q.%s[d*%s*%s:], cov)", qi.fields[1], n, n)
						w.Pf("q.%sStarted[d] = true", qi.fields[0])
					})
				} else {
					w.Block("", func() {
						if derive.ScalarGaussian(qi.v) {
							w.Pf("mean, cov, err := r.Latent.%s.Flat(%q)", qi.field, qi.v.Name)
						} else {
							w.Pf("mean, cov, err := r.Latent.%s.Flat(%q, %s)", qi.field, qi.v.Name, n)
						}
						w.CheckErr("err")
						w.Pf("copy(q.%s, mean)", qi.fields[0])
						w.Pf("copy(q.%s, cov)", qi.fields[1])
					})
				}
				continue
			}
			names := derive.ConjugateParamNames(qi.q.Family)
			copyParams := func() {
				for k, fl := range qi.fields {
					w.Define("v, err", fmt.Sprintf("r.Latent.%s.Param(%q, %q, len(q.%s))", qi.field, qi.v.Name, names[k], fl))
					w.CheckErr("err")
					w.Pf("copy(q.%s, v)", fl)
				}
			}
			if f.perToken(qi) {
				// a result that left it out (Options.Keep): its start stands
				w.If(cond(w.Sf("r.Latent.%s != nil", qi.field)), copyParams)
				continue
			}
			copyParams()
		}
		w.Return("nil")
	})
}

// perToken says whether qi is a per-token latent: a conjugate factor
// local to a bag's entries (a topic model's z), which results leave out
// unless Options.Keep names it.
func (f *fitGen) perToken(qi *qInfo) bool {
	if qi.q.IsGaussianVector() || derive.ScalarGaussian(qi.v) {
		return false
	}
	for _, d := range qi.q.Params[0].Dims {
		if strings.HasPrefix(d, "@") {
			return true
		}
	}
	return false
}

// anyPerToken says whether the model has per-token latents.
func (f *fitGen) anyPerToken() bool {
	for _, qi := range f.qs {
		if f.perToken(qi) {
			return true
		}
	}
	return false
}

// latentCall prints q.latent(m) for state q and model m, keeping every
// per-token latent.
func (f *fitGen) latentCall(q, m string) string {
	if f.anyPerToken() {
		return fmt.Sprintf("%s.latent(%s, nil)", q, m)
	}
	return fmt.Sprintf("%s.latent(%s)", q, m)
}

// emitCopyState writes caModel's Copy, which runtime.FitCA uses to keep the
// state of the last completed iteration, and NonFinite, which checks it.
func (f *fitGen) emitCopyState() {
	w := f.w
	var floats, copied []string
	for _, qi := range f.qs {
		floats = append(append(floats, qi.fields...), qi.mfields...)
		if !f.perToken(qi) {
			copied = append(append(copied, qi.fields...), qi.mfields...)
		}
	}
	doc := []string{"Copy copies src into dst, reusing dst's arrays, and returns dst; a nil", "dst is allocated."}
	if f.anyPerToken() {
		doc = []string{"Copy copies src into dst, reusing dst's arrays, and returns dst; a nil",
			"dst is allocated. Per-token latents are copied only where the result",
			"keeps them (Options.Keep)."}
	}
	w.Func(doc,
		"(a *caModel) Copy(dst, src *state) *state", func() {
			w.If(cond("dst == nil"), func() { w.P("dst = new(state)") })
			w.P("q := src")
			for _, h := range f.hoist {
				copied = append(copied, h.field)
			}
			for _, fl := range copied {
				w.Pf("dst.%s = append(dst.%s[:0], q.%s...)", fl, fl, fl)
			}
			// a per-token latent only where the result keeps it
			for _, qi := range f.qs {
				if !f.perToken(qi) {
					continue
				}
				w.If(cond(w.Sf("a.opts.Copies(%q)", qi.v.Name)), func() {
					for _, fl := range append(append([]string(nil), qi.fields...), qi.mfields...) {
						w.Pf("dst.%s = append(dst.%s[:0], q.%s...)", fl, fl, fl)
					}
				})
			}
			for _, qi := range f.qs {
				if qi.method != "" {
					w.Pf("dst.%s = q.%s", qi.method, qi.method)
				}
				if qi.obj != nil {
					if f.perUnit(qi) != nil {
						w.Pf("dst.%sStarted = append(dst.%sStarted[:0], q.%sStarted...)", qi.fields[0], qi.fields[0], qi.fields[0])
					}
				}
			}
			w.P("dst.rng = q.rng")
			w.Return("dst")
		})
	w.Func([]string{"NonFinite names the first parameter of q that is NaN or infinite, or", `returns "".`},
		"(a *caModel) NonFinite(q *state) string", func() {
			for _, fl := range floats {
				w.Block(w.Sf("if i := %s(q.%s); i >= 0", rt("FirstNonFinite"), fl), func() {
					w.Return(w.Sf(`%s("%s[%%d] = %%v", i+1, q.%s[i])`, goFmt.Ident("Sprintf"), fl, fl))
				})
			}
			w.Return(`""`)
		})
}

// unitParam returns, for a local latent, the unit parameter of its update
// method and the unit argument of its kernels (empty for a global one).
func (f *fitGen) unitParam(qi *qInfo) (param, arg string) {
	if qi.local || qi.side {
		return ", d int", "d, "
	}
	return "", ""
}

func (f *fitGen) emitGaussianUpdate(qi *qInfo) {
	w := f.w
	o := qi.obj
	n := f.dim(o.Dim)
	param, unitArg := f.unitParam(qi)
	// the inputs each kernel takes, after a comma
	inputsOf := func(kernel string) string {
		if in := f.argsFor(kernel, o.Inputs, "d"); in != "" {
			return ", " + in
		}
		return ""
	}
	inF, inDelta, inTarget := inputsOf(qi.upper+"F"), inputsOf(qi.upper+"Delta"), inputsOf(qi.upper+"Target")
	of := ""
	if qi.local || qi.side {
		of = " of unit d"
	}
	doc := []string{fmt.Sprintf("gaussian%s is q(%s) (%s)%s,", qi.upper, qi.v.Name, f.pos(qi.v), of), "with the kernels of its Laplace and delta updates."}
	w.Func(doc, w.Sf("(m *Model) gaussian%s(q *state%s) %s", qi.upper, param, rt("GaussianFactor")), func() {
		mean, cov := "q."+qi.fields[0], "q."+qi.fields[1]
		started := "nil"
		if qi.local || qi.side {
			w.Pf("p := %s", n)
			mean, cov = mean+"[d*p:(d+1)*p]", cov+"[d*p*p:(d+1)*p*p]"
			started = fmt.Sprintf("&q.%sStarted[d]", qi.fields[0])
		}
		w.P("return ", rt("GaussianFactor"), "{")
		w.Pf("Mean: %s, Cov: %s,", mean, cov)
		switch {
		case o.Conjugate:
			w.Pf(`Closed: true, Started: %s,`, started)
			if unitArg == "" && inF == "" {
				w.Pf("F: m.%sF,", qi.upper)
			} else {
				w.Pf("F: func(x, g, h []float64) float64 { return m.%sF(%sx%s, g, h) },", qi.upper, unitArg, inF)
			}
		default:
			delta := f.g.hasDelta(o)
			if delta {
				w.Pf(`Delta: q.%s == "delta", Started: %s,`, qi.method, started)
			} else {
				w.Pf(`Started: %s,`, started)
			}
			if unitArg == "" && inF == "" && inDelta == "" && inTarget == "" {
				if delta {
					w.Pf("F: m.%sF, DeltaF: m.%sDelta, Target: m.%sTarget,", qi.upper, qi.upper, qi.upper)
				} else {
					w.Pf("F: m.%sF, Target: m.%sTarget,", qi.upper, qi.upper)
				}
			} else {
				w.Pf("F: func(x, g, h []float64) float64 { return m.%sF(%sx%s, g, h) },", qi.upper, unitArg, inF)
				if delta {
					w.Pf("DeltaF: func(x, cov, g, h []float64) float64 { return m.%sDelta(%sx, cov%s, g, h) },", qi.upper, unitArg, inDelta)
				}
				w.Pf("Target: func(x []float64) float64 { return m.%sTarget(%sx%s) },", qi.upper, unitArg, inTarget)
			}
		}
		if o.NCVMP != nil {
			w.Pf("NCVMP: m.ncvmp%s(q),", qi.upper)
		}
		if c := o.Collapsed; c != nil && qi.local {
			w.Pf("Collapsed: func(x, g, h []float64) float64 { return m.%sCollapsed(d, x, g, h) },", qi.upper)
			w.Pf("CollapsedValue: func(x []float64) float64 { return m.%sCollapsedValue(d, x) },", qi.upper)
			if c.DeltaCollapses {
				w.P("CollapsesDelta: true,")
			}
		}
		w.P("}")
	})
}

// emitDiagnose writes caModel's DiagnoseFactors and DiagnoseGaussian
// (runtime.Diagnosed): the nonconjugate Gaussian factors, whose Target the
// approximation diagnostic checks them against.
func (f *fitGen) emitDiagnose() {
	var qs []*qInfo
	for _, qi := range f.qs {
		if qi.obj != nil && !qi.obj.Conjugate {
			qs = append(qs, qi)
		}
	}
	if len(qs) == 0 {
		return
	}
	w := f.w
	w.Func([]string{"DiagnoseFactors lists the nonconjugate Gaussian factors, which the", "approximation diagnostic checks (runtime.Diagnose)."},
		w.Sf("(a *caModel) DiagnoseFactors() []%s", rt("DiagnoseFactor")), func() {
			var items []string
			readsM := false // a unit count reads the model's size
			for _, qi := range qs {
				// a latent with an improper flat prior: the fit checks
				// that its posterior is proper (runtime.Improper)
				flat := ""
				if derive.ImproperFlat(f.g.m, qi.v) {
					flat = ", Flat: true"
				}
				if u := f.perUnit(qi); u != nil {
					items = append(items, fmt.Sprintf("{Latent: %q, PerUnit: true, Units: %s%s}", qi.v.Name, f.dim(u.Size), flat))
					readsM = true
				} else {
					items = append(items, fmt.Sprintf("{Latent: %q%s}", qi.v.Name, flat))
				}
			}
			if readsM {
				w.P("m := a.m")
			}
			w.Return(w.Sf("[]%s{%s}", rt("DiagnoseFactor"), strings.Join(items, ", ")))
		})
	w.Func([]string{"DiagnoseGaussian is the k-th factor DiagnoseFactors lists, in state q", "(of unit d for a per-unit latent)."},
		w.Sf("(a *caModel) DiagnoseGaussian(q *state, k, d int) %s", rt("GaussianFactor")), func() {
			w.Block("switch k", func() {
				for k, qi := range qs {
					w.Pf("case %d:", k)
					if f.perUnit(qi) != nil {
						w.Pf("	return a.m.gaussian%s(q, d)", qi.upper)
					} else {
						w.Pf("	return a.m.gaussian%s(q)", qi.upper)
					}
				}
			})
			w.Return(w.Sf("%s{}", rt("GaussianFactor")))
		})
}

// rows returns Go expressions for the part of q's parameter arrays an
// update writes: [lo, hi) in elements, and whether the kernel gets that
// part as its own slice (a unit's row) or the whole array.
func (f *fitGen) rows(qi *qInfo) (lo, hi string, rowSlice bool) {
	u := qi.upd
	dims := qi.q.Params[0].Dims
	if u.Unit == nil {
		return "0", "len(q." + qi.fields[0] + ")", false
	}
	rest := f.length(dims[1:])
	if bag, parent, ok := u.At[0].Ragged(); ok && parent.Name == u.Unit.Name {
		off := "m." + f.g.goName[bag+".off"]
		return fmt.Sprintf("%s[d]*%s", off, rest), fmt.Sprintf("%s[d+1]*%s", off, rest), false
	}
	return "d*" + rest, "(d+1)*" + rest, true
}

// unitRows is how an update or moments method of q(v) reaches the part of
// q's arrays it writes: all of them, or for a local latent unit d's rows.
type unitRows struct {
	param, arg string // the method's unit parameter and its kernels' unit argument (unitParam)
	lo, hi     string // the part written, [lo, hi) in elements (rows)
	rowSlice   bool   // the kernels get that part as its own slice
	forUnit    string // " for unit d" for a local latent, for doc comments
}

func (f *fitGen) unitRows(qi *qInfo) unitRows {
	var r unitRows
	r.param, r.arg = f.unitParam(qi)
	r.lo, r.hi, r.rowSlice = f.rows(qi)
	if qi.local {
		r.forUnit = " for unit d"
	}
	return r
}

// out is the argument through which a kernel writes q's array field.
func (r unitRows) out(field string) string {
	if r.rowSlice {
		return "q." + field + "[lo:hi]"
	}
	return "q." + field
}

func (f *fitGen) emitConjugateUpdate(qi *qInfo) {
	w := f.w
	u := qi.upd
	r := f.unitRows(qi)
	forUnit := ""
	if qi.local {
		forUnit = "," + r.forUnit
	}
	doc := []string{fmt.Sprintf("update%s sets q(%s) (%s) to its optimum given the other factors, the", qi.upper, qi.v.Name, f.pos(qi.v)),
		fmt.Sprintf("closed form of Eq. 18%s, and returns the relative change of its parameters.", forUnit)}
	tempered := f.temper && qi.local
	param := r.param
	if tempered && u.Untempered == nil {
		doc = append(doc, "At inverse temperature invT ≠ 1 its natural parameters are multiplied by",
			"invT (Mandt et al. 2016, §3.2): every statement it appears in is inside",
			"the unit plate, whose log density the temperature divides.")
	} else if tempered {
		doc = append(doc, "At inverse temperature invT ≠ 1 the natural parameters its statements give",
			"are multiplied by invT (Mandt et al. 2016, §3.2), but for those of the priors",
			"of continuous local latents, which tempering leaves alone (derive.Untempered).")
	}
	if tempered {
		param += ", invT float64"
	}
	w.Func(doc, fmt.Sprintf("(m *Model) update%s(q *state, w *scratch%s) float64", qi.upper, param), func() {
		w.Pf("lo, hi := %s, %s", r.lo, r.hi)
		w.Pf("prev := %s(&w.prev, %s)", rt("Grow"), times(len(qi.fields), "hi-lo"))
		var outs []string
		for k, fl := range qi.fields {
			w.Pf("copy(%s, q.%s[lo:hi])", sliceExpr("prev", times(k, "hi-lo"), ""), fl)
			w.Pf("clear(q.%s[lo:hi])", fl)
			outs = append(outs, r.out(fl))
		}
		inputs := f.argsFor(qi.upper+"Natural", u.Inputs, "d")
		if inputs != "" {
			inputs += ", "
		}
		if u.Normalize {
			// exp(η) as a product of the terms' exponentials: no exp or log per
			// entry where a term is the log of data (exp(log β) = β) or does
			// not depend on the entry. If a row under- or overflows, the
			// log-domain kernel and a max-shifted softmax redo the unit.
			expInputs := f.argsFor(qi.upper+"NaturalExp", u.Inputs, "d")
			if expInputs != "" {
				expInputs += ", "
			}
			for _, t := range terms(u.Params[0]) {
				if tt, ok := t.(*derive.Tensor); ok && f.hoistOf[tt.Name] != nil {
					expInputs += "q." + f.hoistOf[tt.Name].field + ", "
				}
			}
			untempered := func() {
				w.Pf("m.%sNaturalExp(%s%s%s)", qi.upper, r.arg, expInputs, strings.Join(outs, ", "))
				w.Block(w.Sf("if !%s(q.%s[lo:hi], %s)", rt("NormalizeRows"), qi.fields[0], f.dim(qi.q.K)), func() {
					w.Pf("clear(q.%s[lo:hi])", qi.fields[0])
					w.Pf("m.%sNatural(%s%s%s)", qi.upper, r.arg, inputs, strings.Join(outs, ", "))
					w.Pf("%s(q.%s[lo:hi], %s)", rt("SoftmaxRows"), qi.fields[0], f.dim(qi.q.K))
				})
			}
			if tempered {
				w.P("if invT != 1 { // tempered: softmax(η/T), in the log domain")
				w.Pf("m.%sNatural(%s%s%s)", qi.upper, r.arg, inputs, strings.Join(outs, ", "))
				if u.Untempered != nil {
					keep := f.emitKeep(qi, r)
					w.Pf("%s(q.%s[lo:hi], %s, %s, invT)", rt("TemperSoftmaxRowsKeep"), qi.fields[0], keep[0], f.dim(qi.q.K))
				} else {
					w.Pf("%s(q.%s[lo:hi], %s, invT)", rt("TemperSoftmaxRows"), qi.fields[0], f.dim(qi.q.K))
				}
				w.P("} else {")
				untempered()
				w.P("}")
			} else {
				untempered()
			}
		} else {
			w.Pf("m.%sNatural(%s%s%s)", qi.upper, r.arg, inputs, strings.Join(outs, ", "))
			if tempered {
				var fs []string
				for _, fl := range qi.fields {
					fs = append(fs, "q."+fl+"[lo:hi]")
				}
				w.If(cond("invT != 1"), func() {
					if u.Untempered == nil {
						w.P("// tempered: natural parameters η/T")
						w.Pf("%s(invT, %s, %s, %s)", rt("TemperNatural"), naturalFunc(qi.q.Family, true), naturalFunc(qi.q.Family, false), strings.Join(fs, ", "))
						return
					}
					w.P("// tempered: η_prior + (η − η_prior)/T, the prior's part η_prior kept")
					ks := f.emitKeep(qi, r)
					w.Pf("%s(invT, %s, %s, [][]float64{%s}, %s)", rt("TemperNaturalKeep"), naturalFunc(qi.q.Family, true), naturalFunc(qi.q.Family, false), strings.Join(ks, ", "), strings.Join(fs, ", "))
				})
			}
		}
		if len(qi.mfields) > 0 {
			unit := ""
			if qi.local {
				unit = ", d"
			}
			w.Pf("m.moments%s(q%s)", qi.upper, unit)
		}
		// runtime.L2Change is never negative (or NaN), so the largest change
		// needs no 0 to start from.
		change := ""
		for k, fl := range qi.fields {
			c := w.Sf("%s(q.%s[lo:hi], %s)", rt("L2Change"), fl, sliceExpr("prev", times(k, "hi-lo"), times(k+1, "hi-lo")))
			if k == 0 {
				change = c
			} else {
				change = w.Sf("%s(%s, %s)", goMath.Ident("Max"), change, c)
			}
		}
		w.Return(change)
	})
}

// updateCall writes the statement updating qi inside a loop that tracks
// the largest change.
func (f *fitGen) updateCall(qi *qInfo) {
	unitArg := ""
	if qi.local || qi.side {
		unitArg = ", d"
	}
	if qi.upd != nil {
		if f.temper && qi.local {
			unitArg += ", invT"
		}
		f.w.Pf("// %s: closed form (Eq. 18)", qi.v.Name)
		f.w.Pf("change = %s(change, m.update%s(q, w%s))", goMath.Ident("Max"), qi.upper, unitArg)
		return
	}
	f.w.Pf("// %s: Laplace or delta", qi.v.Name)
	f.w.Pf("change = %s(change, w.Step(w.trouble, %q, m.gaussian%s(q%s), opts.Newton))", goMath.Ident("Max"), qi.v.Name, qi.upper, unitArg)
}

func (f *fitGen) emitLoops() {
	w := f.w
	var local, side, global []*qInfo
	for _, qi := range f.qs {
		switch {
		case qi.local:
			local = append(local, qi)
		case qi.side:
			side = append(side, qi)
		default:
			global = append(global, qi)
		}
	}
	if len(side) > 0 {
		f.emitPlateUnits(side)
	}
	if f.unit != nil {
		if len(local) == 1 && local[0].obj == nil {
			w.Func([]string{"UpdateUnit is Fig. 1's inner loop for unit d: the closed-form update",
				fmt.Sprintf("(Eq. 18) of its one local factor, %s, which is at its optimum after it.", local[0].v.Name)},
				"(a *caModel) UpdateUnit(q *state, w *scratch, d int) bool", func() {
					if f.temper {
						w.Pf("a.m.update%s(q, w, d, a.temper.At(d))", local[0].upper)
					} else {
						w.Pf("a.m.update%s(q, w, d)", local[0].upper)
					}
					w.Return("true")
				})
		} else {
			f.emitUnitSweeps(local)
		}
	}
	if len(global) == 0 {
		w.P()
		w.Doc("UpdateGlobals is never called: the model has no global factors.")
		w.P("func (a *caModel) UpdateGlobals(*state, *scratch) float64 { return 0 }")
	} else {
		f.emitUpdateGlobals(global)
	}
	// The shape of the coordinate ascent. One pass is a fixed point without
	// global factors (each unit ran to its own), and with one global
	// Gaussian factor and nothing else updated by Laplace (the delta method
	// alternates μ and Σ, so it iterates).
	shape := []string{}
	field := func(name string, b goBool) {
		if !b.isConst(false) {
			shape = append(shape, name+": "+b.src)
		}
	}
	if f.unit != nil {
		shape = append(shape, "Units: "+strings.Replace(f.dim(f.unit.Size), "m.", "a.m.", 1))
	}
	if len(side) > 0 {
		var ns []string
		for _, qi := range side {
			ns = append(ns, strings.Replace(f.dim(qi.obj.Unit.Size), "m.", "a.m.", 1))
		}
		shape = append(shape, "Plates: []int{"+strings.Join(ns, ", ")+"}")
	}
	field("Globals", constBool(len(global) > 0))
	field("EM", constBool(len(f.msteps) > 0).and(cond("!a.opts.FixParams")))
	onePass := constBool(len(global) == 0 && len(side) == 0)
	if f.unit == nil && len(global) == 1 && global[0].obj != nil {
		onePass = constBool(true) // a closed-form update
		if global[0].method != "" {
			onePass = cond(fmt.Sprintf("q.%s == \"laplace\"", global[0].method))
		}
	}
	field("OnePass", onePass)
	w.Func([]string{"Shape describes the model's coordinate ascent."}, w.Sf("(a *caModel) Shape(q *state) %s", rt("CAShape")), func() {
		w.Return(w.Sf("%s{%s}", rt("CAShape"), strings.Join(shape, ", ")))
	})
	if f.unit == nil {
		w.P()
		w.Doc("UpdateUnit is never called: the model has no units.")
		w.P("func (a *caModel) UpdateUnit(*state, *scratch, int) bool { return true }")
	}
	var ms []string
	for _, qi := range f.qs {
		if qi.method != "" {
			ms = append(ms, "q."+qi.method)
		} else {
			ms = append(ms, `"conjugate"`)
		}
	}
	w.Func([]string{"methods lists the update of each latent, for Result.Method."}, "(q *state) methods() string", func() {
		w.Return(w.Sf(`%s([]string{%s}, ",")`, goStrings.Ident("Join"), strings.Join(ms, ", ")))
	})
}

// emitPlateUnits writes UpdatePlateUnit, which updates unit d of the k-th
// latent local to a loop other than the unit plate (runtime.CAPlates): the
// W-step of a two-plate model, after the units' z-step. A unit's update
// writes its own rows and reads the other latents' factors, which do not
// change meanwhile, so the units of one latent update in parallel.
func (f *fitGen) emitPlateUnits(side []*qInfo) {
	w := f.w
	w.Func([]string{"UpdatePlateUnit updates unit d of the k-th latent local to a loop other",
		"than the unit plate (Laplace or delta) and returns its relative change."},
		"(a *caModel) UpdatePlateUnit(q *state, w *scratch, k, d int) float64", func() {
			w.P("m, opts := a.m, a.opts")
			w.P("change := 0.0")
			w.Block("switch k", func() {
				for k, qi := range side {
					w.Pf("case %d:", k)
					f.updateCall(qi)
				}
			})
			w.Return("change")
		})
}

// emitUpdateGlobals writes UpdateGlobals, which updates the global factors.
func (f *fitGen) emitUpdateGlobals(global []*qInfo) {
	w := f.w
	w.Func([]string{"UpdateGlobals updates the global factors in turn and returns their", "largest relative change."},
		"(a *caModel) UpdateGlobals(q *state, w *scratch) float64", func() {
			w.P("m := a.m")
			for _, qi := range global {
				if qi.obj != nil {
					w.P("opts := a.opts")
					break
				}
			}
			w.P("change := 0.0")
			for _, qi := range global {
				f.updateCall(qi)
			}
			w.Return("change")
		})
}

// emitFingerprint writes the Model's fingerprint method: a hash of each
// size and each data or constant variable as loaded (the options and the
// params are added by runtime.Settings.Fingerprint and the Result).
func (f *fitGen) emitFingerprint() {
	w := f.w
	w.Func([]string{"fingerprint hashes the sizes, data and constants as loaded, the data",
		"part of the fit's fingerprint (runtime.Settings.Fingerprint)."},
		"(m *Model) fingerprint() map[string]string", func() {
			w.P("return map[string]string{")
			for _, v := range f.g.m.Vars {
				var fields []string
				switch v.Role {
				case ir.RoleSize:
					fields = []string{f.g.sizeGo[v.Name]}
				case ir.RoleData, ir.RoleConst:
					if off, ok := f.g.goName[v.Name+".off"]; ok && v.Type.Class == ir.Bag {
						fields = []string{off, f.g.goName[v.Name+".term"], f.g.goName[v.Name+".count"]}
					} else if gn, ok := f.g.goName[v.Name]; ok {
						fields = []string{gn}
					}
				}
				if len(fields) == 0 {
					continue
				}
				for k := range fields {
					fields[k] = "m." + fields[k]
				}
				w.Pf("%q: %s(%s),", v.Name, rt("HashValues"), strings.Join(fields, ", "))
			}
			w.P("}")
		})
}

func (f *fitGen) emitELBO() {
	w := f.w
	b := f.bound
	units := func() {
		w.Pf("%s(%s, workers, func(_, d int) {", rt("ParallelFor"), f.dim(f.unit.Size))
		w.Pf("v := m.elboUnit(%s)", joinArgs("d", f.argsFor("elboUnit", b.LocalInputs, "d")))
		for _, qi := range f.qs {
			if qi.q.IsGaussianVector() && qi.local {
				n := f.dim(qi.q.Dims[0])
				w.Pf("v += %s(q.%s[d*%s*%s:(d+1)*%s*%s], %s)", rt("GaussianEntropy"), qi.fields[1], n, n, n, n, n)
			}
		}
		w.P("perUnit[d] = v")
		w.P("})")
	}
	doc := []string{"ELBO is the evidence lower bound E_q[log p] + H[q], with Eq. 19's",
		"expansion where no exact rule applies (Eq. 21 for the Gaussian factors)."}
	if f.anyQuadratureELBO() {
		doc = append(doc, "The statements an NCVMP update integrates are integrated by Gauss–Hermite",
			"quadrature instead, whatever the method (state.elboQuadrature).")
	}
	w.Func(append(doc,
		"Units are evaluated on `workers` goroutines into perUnit and summed in",
		"unit order, so the value does not depend on the schedule."),
		"(a *caModel) ELBO(q *state, workers int, perUnit []float64) float64", func() {
			w.P("m := a.m")
			w.Pf("total := m.elboGlobal(%s)", f.argsFor("elboGlobal", b.GlobalInputs, ""))
			for _, qi := range f.qs {
				switch {
				case qi.q.IsGaussianVector() && qi.side:
					n := f.dim(qi.q.Dims[0])
					w.Block(fmt.Sprintf("for d := 0; d < %s; d++", f.dim(qi.obj.Unit.Size)), func() {
						w.Pf("total += %s(q.%s[d*%s*%s:(d+1)*%s*%s], %s)", rt("GaussianEntropy"), qi.fields[1], n, n, n, n, n)
					})
				case qi.q.IsGaussianVector() && !qi.local:
					w.Pf("total += %s(q.%s, %s)", rt("GaussianEntropy"), qi.fields[1], f.dim(qi.q.Dims[0]))
				}
			}
			for _, qi := range f.qs {
				if f.quadratureELBO(qi) {
					// by quadrature, as NCVMP integrates them: the bound it ascends
					w.Pf("total += m.projections%s(q).QuadratureGap(q.%s, q.%s, 0)", qi.upper, qi.fields[0], qi.fields[1])
				}
			}
			// a sharded fit's shards compute the units' parts alone
			sharded := f.unit != nil && f.shardReason() == ""
			if f.unit != nil {
				if sharded {
					w.P("a.UnitsELBO(q, workers, perUnit)")
				} else {
					units()
				}
				w.Block("for _, v := range perUnit", func() { w.P("total += v") })
			}
			w.Return("total")
		})
	if f.unit != nil && f.shardReason() == "" {
		w.Func([]string{"UnitsELBO writes each unit's part of the ELBO into perUnit, on",
			"`workers` goroutines: the units' part, without the global part, that a",
			"shard of a sharded fit computes (runtime.ShardUnitsELBO)."},
			"(a *caModel) UnitsELBO(q *state, workers int, perUnit []float64)", func() {
				w.P("m := a.m")
				units()
			})
	}
}

func (f *fitGen) emitResult() {
	w := f.w
	doc, sig := []string{"latent copies q into the result's form."}, "(q *state) latent(m *Model) Latent"
	if f.anyPerToken() {
		doc = []string{"latent copies q into the result's form, with the per-token latents", "keep says to keep (all with a nil keep)."}
		sig = "(q *state) latent(m *Model, keep func(string) bool) Latent"
	}
	w.Func(doc, sig, func() {
		w.P("var l Latent")
		for _, qi := range f.qs {
			switch {
			case f.perToken(qi):
				w.If(cond(w.Sf("keep == nil || keep(%q)", qi.v.Name)), func() { f.newFactor(qi) })
			case qi.q.IsGaussianVector() && f.perUnit(qi) != nil:
				n := f.dim(qi.q.Dims[0])
				w.Pf("l.%s = make([]*%s, %s)", qi.field, rt("Gaussian"), f.dim(f.perUnit(qi).Size))
				w.Block(fmt.Sprintf("for d := range l.%s", qi.field), func() {
					w.Pf(`l.%s[d] = %s("MvNormal", q.%s[d*%s:(d+1)*%s], q.%s[d*%s*%s:(d+1)*%s*%s])%s`, qi.field, rt("NewGaussian"), qi.fields[0], n, n, qi.fields[1], n, n, n, n, f.constrain(qi))
				})
			case derive.ScalarGaussian(qi.v):
				w.Pf(`l.%s = %s(q.%s, q.%s)%s`, qi.field, rt("NewNormal"), qi.fields[0], qi.fields[1], f.constrain(qi))
			case qi.q.IsGaussianVector():
				w.Pf(`l.%s = %s("MvNormal", q.%s, q.%s)%s`, qi.field, rt("NewGaussian"), qi.fields[0], qi.fields[1], f.constrain(qi))
			default:
				f.newFactor(qi)
			}
		}
		w.Return("l")
	})
}

// newFactor prints the statement setting conjugate latent qi's field of
// the result to its factor (runtime.NewFactor).
func (f *fitGen) newFactor(qi *qInfo) {
	var shape []string
	for _, d := range qi.q.Params[0].Dims {
		shape = append(shape, f.dim(d))
	}
	var ps []string
	for k, fl := range qi.fields {
		ps = append(ps, fmt.Sprintf("%q, q.%s", derive.ConjugateParamNames(qi.q.Family)[k], fl))
	}
	f.w.Pf("l.%s = %s(%q, []int{%s}, %s)", qi.field, rt("NewFactor"), qi.q.Family, strings.Join(shape, ", "), strings.Join(ps, ", "))
}

// updateKernel prints the kernel computing a conjugate update's new
// parameters.
func (f *fitGen) updateKernel(qi *qInfo) string {
	u := qi.upd
	free := f.updateFree(u)
	_, _, rowSlice := f.rows(qi)
	params := inputParams(u.Inputs)
	var outs []Output
	origin := fmt.Sprintf("%s: latent %s", f.pos(qi.v), qi.v.Name)
	for k, p := range qi.q.Params {
		key := "out:" + p.Tensor
		dims := p.Dims
		if rowSlice {
			dims = dims[1:]
		}
		params = append(params, kernelParam{Want: derive.ConjugateParamNames(qi.q.Family)[k], Tensor: key, Dims: dims, Out: true})
		outs = append(outs, Output{Target: key, Free: free, Expr: u.Params[k], Origin: origin})
	}
	var doc []string
	name := qi.upper + "Natural"
	what := "the parameters of the optimal q(" + qi.v.Name + ")"
	if u.Normalize {
		what = "the log-probabilities (up to a constant per row) of the optimal q(" + qi.v.Name + ")"
	}
	doc = append(doc, fmt.Sprintf("%s adds into its output %s", name, what),
		"given the other factors: Eq. 18, E_q[η] summed over the Markov blanket:", "")
	for _, fc := range u.Factors {
		doc = append(doc, fmt.Sprintf("\t%s: %s", fc.Pos, fmtFactor(fc)))
	}
	if len(u.Dropped) > 0 {
		doc = append(doc, "", "Terms constant in the category cancel in the normalization and are not computed.")
	}
	if rowSlice {
		doc = append(doc, "", fmt.Sprintf("The outputs are unit %s's rows; the caller zeroes them.", u.Unit.Name))
	} else if u.Unit != nil {
		doc = append(doc, "", fmt.Sprintf("The outputs are whole arrays; only unit %s's rows are written, and the caller zeroes them.", u.Unit.Name))
	} else {
		doc = append(doc, "", "The caller zeroes the outputs.")
	}
	var unit *derive.Index
	if u.Unit != nil {
		unit = u.Unit
	}
	code := f.g.emitKernel(kernelSpec{Name: name, Doc: doc, Unit: unit, Params: params, Outputs: outs, Trim: true})
	if f.temper && u.Untempered != nil {
		code += f.untemperedKernel(qi, unit, free, rowSlice)
	}
	if u.Normalize {
		var factors []derive.Expr
		expParams := params[: len(params)-len(outs) : len(params)-len(outs)]
		for _, t := range terms(u.Params[0]) {
			if tt, ok := t.(*derive.Tensor); ok && f.hoistOf[tt.Name] != nil {
				h := f.hoistOf[tt.Name]
				factors = append(factors, derive.T(h.name, tt.Idx...))
				expParams = append(expParams, kernelParam{Want: h.field, Tensor: h.name, Dims: h.dims, Trans: h.trans})
				continue
			}
			factors = append(factors, derive.Call1("exp", t))
		}
		expParams = append(expParams, params[len(params)-len(outs):]...)
		expOut := outs[0]
		expOut.Expr = derive.Mul(factors...)
		doc := []string{fmt.Sprintf("%sNaturalExp adds into its output exp(η), the unnormalized probabilities", qi.upper),
			fmt.Sprintf("of the optimal q(%s), as the product of its terms' exponentials (see %s).", qi.v.Name, name)}
		code += f.g.emitKernel(kernelSpec{Name: qi.upper + "NaturalExp", Doc: doc, Unit: unit, Params: expParams, Outputs: []Output{expOut}, Trim: true})
	}
	return code
}

// emitKeep prints the computation of a tempered local update's
// untempered part (XNaturalUntempered) into the worker's keep buffer, and
// returns, per sufficient statistic, the Go slice of the unit's rows, laid
// out like the parameters' rows q.field[lo:hi].
func (f *fitGen) emitKeep(qi *qInfo, r unitRows) []string {
	w, u := f.w, qi.upd
	n := len(u.Untempered)
	in := f.args(u.UntemperedInputs, "d")
	if in != "" {
		in += ", "
	}
	var args, rows []string
	if r.rowSlice {
		// the kernel writes the unit's rows from 0
		w.Pf("keep := %s(&w.keep, %s)", rt("Grow"), times(n, "hi-lo"))
		w.P("clear(keep)")
		for k := range n {
			sl := sliceExpr("keep", times(k, "hi-lo"), times(k+1, "hi-lo"))
			args, rows = append(args, sl), append(rows, sl)
		}
	} else {
		// the kernel writes the unit's rows where they are in the whole array
		all := fmt.Sprintf("len(q.%s)", qi.fields[0])
		w.Pf("keep := %s(&w.keep, %s)", rt("Grow"), times(n, all))
		for k := range n {
			base := times(k, all)
			lo, hi := "lo", "hi"
			if base != "0" {
				lo, hi = base+"+lo", base+"+hi"
			}
			w.Pf("clear(keep[%s:%s])", lo, hi)
			args = append(args, sliceExpr("keep", base, times(k+1, all)))
			rows = append(rows, fmt.Sprintf("keep[%s:%s]", lo, hi))
		}
	}
	w.Pf("m.%sNaturalUntempered(%s%s%s)", qi.upper, r.arg, in, strings.Join(args, ", "))
	return rows
}

// keepsUntempered reports whether some tempered local update keeps the
// natural parameters of its prior (derive.Update.Untempered).
func (f *fitGen) keepsUntempered() bool {
	for _, qi := range f.qs {
		if f.temper && qi.local && qi.upd != nil && qi.upd.Untempered != nil {
			return true
		}
	}
	return false
}

// untemperedKernel prints XNaturalUntempered: the natural parameters that
// the statements of a local update's Markov blanket which tempering leaves
// alone (derive.Untempered) give, kept as they are by a tempered update.
func (f *fitGen) untemperedKernel(qi *qInfo, unit *derive.Index, free []derive.Index, rowSlice bool) string {
	u := qi.upd
	params := inputParams(u.UntemperedInputs)
	var outs []Output
	stats := derive.Dists[qi.q.Family].ExpFam.Stats
	for k, st := range stats {
		key := "out:keep" + fmt.Sprint(k)
		want := "eta"
		if len(stats) > 1 {
			want = fmt.Sprintf("eta%d", k+1)
		}
		dims := qi.q.Params[0].Dims
		if rowSlice {
			dims = dims[1:]
		}
		params = append(params, kernelParam{Want: want, Tensor: key, Dims: dims, Out: true})
		if n, ok := u.Untempered[k].(*derive.Num); ok && n.V == 0 {
			continue
		}
		outs = append(outs, Output{Target: key, Free: free, Expr: u.Untempered[k], Origin: fmt.Sprintf("%s: latent %s, E[η] of %s", f.pos(qi.v), qi.v.Name, st.Name)})
	}
	name := qi.upper + "NaturalUntempered"
	doc := []string{fmt.Sprintf("%s adds into its outputs the natural parameters of q(%s) that", name, qi.v.Name),
		"the statements tempering leaves alone give (the priors of continuous local",
		"latents; Eq. 18, E_q[η]), which a tempered update keeps:", ""}
	local := map[string]bool{}
	for _, q := range f.qs {
		local[q.v.Name] = q.local
	}
	for _, fc := range u.Factors {
		if derive.Untempered(fc, local) {
			doc = append(doc, fmt.Sprintf("\t%s: %s", fc.Pos, fmtFactor(fc)))
		}
	}
	if rowSlice {
		doc = append(doc, "", fmt.Sprintf("The outputs are unit %s's rows; the caller zeroes them.", u.Unit.Name))
	} else {
		doc = append(doc, "", fmt.Sprintf("The outputs are whole arrays; only unit %s's rows are written, and the caller zeroes them.", u.Unit.Name))
	}
	return f.g.emitKernel(kernelSpec{Name: name, Doc: doc, Unit: unit, Params: params, Outputs: outs})
}

func (f *fitGen) boundKernels() string {
	b := f.bound
	var sb strings.Builder
	sb.WriteString(f.g.emitKernel(kernelSpec{Name: "elboGlobal", Scalar: true, Trim: true,
		Doc:     []string{"elboGlobal is the part of the ELBO outside the unit plate: E_q[log p] of", "the global statements and the entropies of the global non-Gaussian factors."},
		Params:  inputParams(b.GlobalInputs),
		Outputs: []Output{{Target: "f", Expr: b.Global}}}))
	if f.unit != nil {
		sb.WriteString(f.g.emitKernel(kernelSpec{Name: "elboUnit", Scalar: true, Unit: f.unit, Trim: true,
			Doc:     []string{fmt.Sprintf("elboUnit is unit %s's part of the ELBO: E_q[log p] of the statements inside", f.unit.Name), "the unit plate and the entropies of the unit's non-Gaussian factors."},
			Params:  inputParams(b.LocalInputs),
			Outputs: []Output{{Target: "f", Expr: b.Local}}}))
	}
	return sb.String()
}

// emitMoments prints the method refreshing E_q[t(v)] after an update of
// q(v) (for unit d's rows of a local latent), and its kernel.
func (f *fitGen) emitMoments(qi *qInfo) {
	w := f.w
	u := qi.upd
	r := f.unitRows(qi)
	doc := fmt.Sprintf("moments%s recomputes E_q[t(%s)] = ∇a(φ) (%s) from q(%s)'s parameters%s.", qi.upper, qi.v.Name, strings.Join(qi.q.MomentStats, "; "), qi.v.Name, r.forUnit)
	w.Func([]string{doc}, fmt.Sprintf("(m *Model) moments%s(q *state%s)", qi.upper, r.param), func() {
		var ins, outs []string
		for _, fl := range qi.fields {
			ins = append(ins, "q."+fl)
		}
		w.Pf("lo, hi := %s, %s", r.lo, r.hi)
		for _, fl := range qi.mfields {
			outs = append(outs, r.out(fl))
			w.Pf("clear(q.%s[lo:hi])", fl)
		}
		w.Pf("m.%sMoments(%s%s, %s)", qi.upper, r.arg, strings.Join(ins, ", "), strings.Join(outs, ", "))
		f.emitHoistedExps(qi)
	})
	free := f.updateFree(u)
	var params []kernelParam
	for _, p := range qi.q.Params {
		params = append(params, kernelParam{Want: localName(p.Tensor), Tensor: p.Tensor, Dims: p.Dims})
	}
	var outputs []Output
	for k, st := range qi.q.MomentStats {
		mt := qi.q.Moments[st]
		key := "out:" + mt.Tensor
		dims := mt.Dims
		if r.rowSlice {
			dims = dims[1:]
		}
		params = append(params, kernelParam{Want: qi.q.MomentName(st), Tensor: key, Dims: dims, Out: true})
		outputs = append(outputs, Output{Target: key, Free: free, Expr: u.Moments[k]})
	}
	kdoc := []string{fmt.Sprintf("%sMoments adds E_q[t(%s)] (%s) into its outputs: the expected", qi.upper, qi.v.Name, strings.Join(qi.q.MomentStats, "; ")),
		"sufficient statistics other updates read. The caller zeroes the outputs."}
	w.Raw(f.g.emitKernel(kernelSpec{Name: qi.upper + "Moments", Doc: kdoc, Unit: u.Unit, Params: params, Outputs: outputs}))
}

// emitHoistedExps prints the recomputation of qi's hoisted exponentials
// from its moments, after anything that sets them (an update, SSMF's point
// mass, a Gibbs draw).
func (f *fitGen) emitHoistedExps(qi *qInfo) {
	for _, h := range f.hoistedOf(qi) {
		if h.trans {
			f.w.Pf("%s(q.%s, q.%s, %s)", rt("ExpToTransposed"), h.field, f.momentField(h), f.dim(h.dims[0]))
			continue
		}
		f.w.Pf("%s(q.%s, q.%s)", rt("ExpTo"), h.field, f.momentField(h))
	}
}

// momentField is the state field of a hoisted exponential's moment.
func (f *fitGen) momentField(h *hoisted) string {
	for k, st := range h.qi.q.MomentStats {
		if h.qi.q.Moments[st].Tensor == h.tensor {
			return h.qi.mfields[k]
		}
	}
	panic("vigen: hoisted moment " + h.tensor + " not found")
}

// emitUnitSweeps prints UpdateUnit's sweeps over the unit's local factors
// until they settle.
func (f *fitGen) emitUnitSweeps(local []*qInfo) {
	w := f.w
	doc := []string{"UpdateUnit is Fig. 1's inner loop for unit d: it updates the unit's",
		"local factors in turn until their largest relative change is below",
		"opts.LocalTol, and reports whether they settled within opts.LocalMaxIter",
		"sweeps."}
	w.Func(doc, "(a *caModel) UpdateUnit(q *state, w *scratch, d int) bool", func() {
		w.P("m, opts := a.m, a.opts")
		if f.temper {
			w.P("invT := a.temper.At(d) // 1 untempered")
		}
		for _, qi := range local {
			if qi.obj == nil || qi.obj.Collapsed == nil {
				continue
			}
			z := f.qOf(qi.obj.Collapsed.Z.Name)
			w.Doc(fmt.Sprintf("Start %s at the fixed point of its alternation with %s", qi.v.Name, z.v.Name),
				fmt.Sprintf("(runtime.GaussianWork.Collapse) and %s at its optimum there; the", z.v.Name),
				"sweeps below then confirm it.")
			w.If(cond("!opts.PlainSweeps"), func() {
				w.Pf("w.Collapse(m.gaussian%s(q, d), opts.Newton)", qi.upper)
				w.Pf("m.update%s(q, w, d)", z.upper)
			})
		}
		w.Block("for it := 1; it <= opts.LocalMaxIter; it++", func() {
			w.P("change := 0.0")
			for _, qi := range local {
				f.updateCall(qi)
			}
			settled := cond("change < opts.LocalTol")
			if len(local) == 1 && local[0].obj != nil {
				w.Doc("A single local Gaussian is at its optimum after one Laplace",
					"update; the delta method's objective depends on Σ, which is set",
					"after μ, so it sweeps to the fixed point of μ and Σ.")
				if local[0].method == "" { // a closed-form update
					settled = constBool(true)
				} else {
					settled = cond(fmt.Sprintf("q.%s == \"laplace\"", local[0].method)).or(settled)
				}
			}
			w.If(settled, func() { w.Return("true") })
		})
		w.Return("false")
	})
}

// constrain returns, for a latent fitted on the unconstrained scale
// (derive/transform.go), the call adding the constrained summaries to its
// Gaussian in the result, `.Constrain(runtime.Transform{...})`; "" for
// any other latent. The bounds are constant expressions of the Model.
func (f *fitGen) constrain(qi *qInfo) string {
	v := qi.v
	if !derive.Transformed(v) {
		return ""
	}
	t := v.Transform
	return fmt.Sprintf(".Constrain(%s{Kind: %q, Lo: %s, Hi: %s})", f.w.Sf("%s", rt("Transform")), t.Kind.String(), f.g.boundGo(t.Lo), f.g.boundGo(t.Hi))
}

// boundGo returns the Go expression of a bound x of a constrained latent,
// a constant expression of the Model m (its consts and sizes); "0" for
// none.
func (g *gen) boundGo(x ir.Expr) string {
	if x == nil {
		return "0"
	}
	sizes := map[string]string{}
	for k, s := range g.sizeGo {
		sizes[k] = "m." + s
		if v := g.m.Lookup(k); v != nil && v.Fixed {
			sizes[k] = k // a literal dimension
		}
	}
	e, err := derive.NewBuilder(g.m).Lower(x, nil)
	if err != nil {
		g.errs = append(g.errs, err)
		return "0"
	}
	// the consts the bound reads are Model fields
	tensors := map[string]tensorInfo{}
	ir.Walk(x, func(x ir.Expr) {
		if r, ok := x.(*ir.Ref); ok && r.Var.Role == ir.RoleConst {
			tensors[r.Var.Name] = tensorInfo{Go: "m." + g.goName[r.Var.Name]}
		}
	})
	return newGoPrinter(tensors, sizes, map[string]bool{"m": true, "q": true, "l": true, "d": true}).expr(e, 0)
}
