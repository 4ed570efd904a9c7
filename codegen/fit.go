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
	v       *ir.Var
	q       *derive.QFactor
	obj     *derive.Objective
	upd     *derive.Update
	local   bool
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
	qs     []*qInfo
	byT    map[string]*qInfo // q parameter tensor → its latent
	unit   *derive.Index
	sb     strings.Builder
	fnames *namer
	// hoist lists the exponentials of global moments that categorical
	// updates read, kept in the state (see findHoisted).
	hoist   []*hoisted
	hoistOf map[string]*hoisted // by moment tensor
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
}

func (g *gen) fitCode() (string, *fitGen, error) {
	d := g.d
	if d.BoundErr != nil {
		return "", nil, d.BoundErr
	}
	if d.MStepErr != nil {
		return "", nil, d.MStepErr
	}
	f := &fitGen{g: g, d: d, byT: map[string]*qInfo{}, unit: d.Bound.Unit, fnames: newNamer("rng", "hess", "grad", "prev", "curv", "cov")}
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
			qi.local = qi.obj.Unit != nil
		case qi.upd != nil:
			qi.local = qi.upd.Unit != nil
			if err := f.checkUpdate(qi); err != nil {
				return "", nil, err
			}
		default:
			return "", nil, ir.Errorf(v.Pos, "no update for latent %s", v.Name)
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
		if qi.obj != nil {
			qi.method = f.fnames.get(unexported(q.Var) + "Method")
		}
		f.qs = append(f.qs, qi)
	}
	f.findHoisted()
	f.emit()
	return f.sb.String(), f, nil
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

func (f *fitGen) p(format string, args ...any) { fmt.Fprintf(&f.sb, format, args...) }

// dim is the Go expression for the length of a dimension of q's tensors.
func (f *fitGen) dim(name string) string {
	if strings.HasPrefix(name, "@") {
		return "len(m." + f.g.goName[name[1:]+".term"] + ")"
	}
	return "m." + f.g.sizeGo[name]
}

// paramDims are the dimensions of q's k-th parameter tensor as stored in
// the state (per-unit Gaussians get the unit dimension in front).
func (f *fitGen) paramDims(qi *qInfo, k int) []string {
	dims := qi.q.Params[k].Dims
	if qi.q.IsGaussianVector() && qi.local {
		return append([]string{f.unit.Size}, dims...)
	}
	return dims
}

func (f *fitGen) length(dims []string) string {
	if len(dims) == 0 {
		return "1"
	}
	parts := make([]string, len(dims))
	for k, d := range dims {
		parts[k] = f.dim(d)
	}
	return strings.Join(parts, "*")
}

// arg is the Go expression passing the q parameter tensor t to a kernel:
// a per-unit Gaussian's slice for unit d, or the whole array.
func (f *fitGen) arg(t string, unit string) string {
	qi := f.byT[t]
	k := 0
	for n, p := range qi.q.Tensors() {
		if p.Tensor == t {
			k = n
		}
	}
	all := append(append([]string(nil), qi.fields...), qi.mfields...)
	field := "q." + all[k]
	if qi.q.IsGaussianVector() && qi.local {
		n := f.length(qi.q.Params[k].Dims)
		return fmt.Sprintf("%s[%s*%s : (%s+1)*%s]", field, unit, n, unit, n)
	}
	return field
}

func (f *fitGen) args(qs []*derive.QFactor, unit string) string {
	var out []string
	for _, q := range qs {
		for _, p := range q.Tensors() {
			out = append(out, f.arg(p.Tensor, unit))
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
		} else {
			f.emitConjugateUpdate(qi)
		}
	}
	f.emitLoops()
	f.emitELBO()
	f.emitResult()
	f.emitFingerprint()
	f.emitParams()
	f.emitMSteps()
	f.emitSVI()
	f.emitHeldout()
	for _, qi := range f.qs {
		if qi.upd != nil {
			f.sb.WriteString(f.updateKernel(qi))
		}
		if len(qi.mfields) > 0 {
			f.emitMoments(qi)
		}
	}
	f.sb.WriteString(f.boundKernels())
}

func (f *fitGen) pos(v *ir.Var) string {
	return fmt.Sprintf("%s:%d:%d", v.Pos.File, v.Pos.Line, v.Pos.Col)
}

func (f *fitGen) emitTypes() {
	f.p("\n// Latent holds the fitted q of each latent variable.\ntype Latent struct {\n")
	for _, qi := range f.qs {
		typ := "*runtime.Factor"
		doc := fmt.Sprintf("q(%s), %s", qi.v.Name, qi.q.Family)
		if qi.q.IsGaussianVector() {
			typ, doc = "*runtime.Gaussian", fmt.Sprintf("q(%s) = N(mean, cov)", qi.v.Name)
			if qi.local {
				typ, doc = "[]*runtime.Gaussian", doc+", one per unit "+f.unit.Name
			}
		}
		f.p("\t// %s is %s (%s).\n\t%s %s `json:%q`\n", qi.field, doc, f.pos(qi.v), qi.field, typ, qi.v.Name)
	}
	f.p("}\n\n// state is the variational distribution q being fitted, with scratch\n// space for the updates.\ntype state struct {\n")
	for _, qi := range f.qs {
		f.p("\t%s []float64 // q(%s) (%s)\n", strings.Join(qi.fields, ", "), qi.v.Name, qi.q.Family)
		if len(qi.mfields) > 0 {
			f.p("\t%s []float64 // E_q[t(%s)]: %s\n", strings.Join(qi.mfields, ", "), qi.v.Name, strings.Join(qi.q.MomentStats, "; "))
		}
		for _, h := range f.hoistedOf(qi) {
			f.p("\t%s []float64 // exp(%s), read by categorical updates\n", h.field, f.momentField(h))
		}
		if qi.obj != nil {
			f.p("\t%s string\n", qi.method)
			if qi.local {
				f.p("\t%sStarted []bool // per unit: whether its covariance has been set by an update\n", qi.fields[0])
			}
		}
	}
	f.p("\trng *rand.Rand\n}\n")
	f.p("\n// scratch is one worker's space for the updates of one unit at a time,\n// and the trouble it met.\ntype scratch struct {\n")
	for _, qi := range f.qs {
		if qi.obj != nil {
			f.p("\truntime.GaussianWork\n")
			break
		}
	}
	f.p("\tprev []float64\n\ttrouble runtime.Trouble\n}\n")
}

func (f *fitGen) emitNewState() {
	f.p("\n// newState allocates q and sets its starting point: opts.Start if given,\n")
	f.p("// otherwise Gaussian means 0 with identity covariances, uniform categorical\n")
	f.p("// probabilities, and other parameters drawn near 1 from opts.Seed.\n")
	f.p("func (m *Model) newState(opts Options) (*state, error) {\n\tq := &state{rng: runtime.NewRand(opts.Seed)}\n")
	for _, qi := range f.qs {
		for k, fl := range qi.fields {
			f.p("\tq.%s = make([]float64, %s)\n", fl, f.length(f.paramDims(qi, k)))
		}
		for _, fl := range qi.mfields {
			f.p("\tq.%s = make([]float64, %s)\n", fl, f.length(f.paramDims(qi, 0)))
		}
		for _, h := range f.hoistedOf(qi) {
			f.p("\tq.%s = make([]float64, %s)\n", h.field, f.length(f.paramDims(qi, 0)))
		}
		switch qi.q.Family {
		case "MvNormal":
			n := f.dim(qi.q.Dims[0])
			if qi.local {
				f.p("\tfor d := 0; d < %s; d++ {\n\t\truntime.Identity(q.%s[d*%s*%s:(d+1)*%s*%s], %s)\n\t}\n", f.dim(f.unit.Size), qi.fields[1], n, n, n, n, n)
				f.p("\tq.%sStarted = make([]bool, %s)\n", qi.fields[0], f.dim(f.unit.Size))
			} else {
				f.p("\truntime.Identity(q.%s, %s)\n", qi.fields[1], n)
			}
			f.p("\tq.%s = %q\n\tif opts.Method != \"\" {\n\t\tq.%s = opts.Method\n\t}\n", qi.method, qi.v.Treatment.String(), qi.method)
			f.p("\tif q.%s != \"laplace\" && q.%s != \"delta\" {\n\t\treturn nil, fmt.Errorf(\"%s: unknown method %%q for %s (want laplace or delta)\", q.%s)\n\t}\n",
				qi.method, qi.method, f.g.m.Name, qi.v.Name, qi.method)
		case "Categorical":
			f.p("\truntime.Fill(q.%s, 1/float64(%s))\n", qi.fields[0], f.dim(qi.q.K))
		default:
			for _, fl := range qi.fields {
				f.p("\truntime.InitPositive(q.rng, q.%s)\n", fl)
			}
		}
	}
	f.p("\tif opts.Start != nil {\n\t\tif err := q.start(m, opts.Start); err != nil {\n\t\t\treturn nil, err\n\t\t}\n\t}\n")
	for _, qi := range f.qs {
		if len(qi.mfields) == 0 {
			continue
		}
		if qi.local {
			f.p("\tfor d := 0; d < %s; d++ {\n\t\tm.moments%s(q, d)\n\t}\n", f.dim(f.unit.Size), qi.upper)
		} else {
			f.p("\tm.moments%s(q)\n", qi.upper)
		}
	}
	f.p("\treturn q, nil\n}\n")
	// start
	f.p("\n// start copies q from a previous result, checking its shapes.\nfunc (q *state) start(m *Model, r *Result) error {\n")
	for _, qi := range f.qs {
		if qi.q.IsGaussianVector() {
			n := f.dim(qi.q.Dims[0])
			if qi.local {
				f.p("\tif len(r.Latent.%s) != %s {\n\t\treturn fmt.Errorf(\"start: latent %%q has %%d units, want %%d\", %q, len(r.Latent.%s), %s)\n\t}\n", qi.field, f.dim(f.unit.Size), qi.v.Name, qi.field, f.dim(f.unit.Size))
				f.p("\tfor d, g := range r.Latent.%s {\n\t\tmean, cov, err := g.Flat(%q, %s)\n\t\tif err != nil {\n\t\t\treturn err\n\t\t}\n", qi.field, qi.v.Name, n)
				f.p("\t\tcopy(q.%s[d*%s:], mean)\n\t\tcopy(q.%s[d*%s*%s:], cov)\n\t\tq.%sStarted[d] = true\n\t}\n", qi.fields[0], n, qi.fields[1], n, n, qi.fields[0])
			} else {
				f.p("\t{\n\t\tmean, cov, err := r.Latent.%s.Flat(%q, %s)\n\t\tif err != nil {\n\t\t\treturn err\n\t\t}\n\t\tcopy(q.%s, mean)\n\t\tcopy(q.%s, cov)\n\t}\n", qi.field, qi.v.Name, n, qi.fields[0], qi.fields[1])
			}
			continue
		}
		names := derive.ConjugateParamNames(qi.q.Family)
		for k, fl := range qi.fields {
			f.p("\tif v, err := r.Latent.%s.Param(%q, %q, len(q.%s)); err != nil {\n\t\treturn err\n\t} else {\n\t\tcopy(q.%s, v)\n\t}\n", qi.field, qi.v.Name, names[k], fl, fl)
		}
	}
	f.p("\treturn nil\n}\n")
}

// emitCopyState writes caModel's Copy, which runtime.FitCA uses to keep the
// state of the last completed iteration, and NonFinite, which checks it.
func (f *fitGen) emitCopyState() {
	var floats []string
	for _, qi := range f.qs {
		floats = append(append(floats, qi.fields...), qi.mfields...)
	}
	f.p("\n// Copy copies src into dst, reusing dst's arrays, and returns dst; a nil\n// dst is allocated.\nfunc (a *caModel) Copy(dst, src *state) *state {\n\tif dst == nil {\n\t\tdst = new(state)\n\t}\n\tq := src\n")
	copied := floats
	for _, h := range f.hoist {
		copied = append(copied, h.field)
	}
	for _, fl := range copied {
		f.p("\tdst.%s = append(dst.%s[:0], q.%s...)\n", fl, fl, fl)
	}
	for _, qi := range f.qs {
		if qi.obj != nil {
			f.p("\tdst.%s = q.%s\n", qi.method, qi.method)
			if qi.local {
				f.p("\tdst.%sStarted = append(dst.%sStarted[:0], q.%sStarted...)\n", qi.fields[0], qi.fields[0], qi.fields[0])
			}
		}
	}
	f.p("\tdst.rng = q.rng\n\treturn dst\n}\n")
	f.p("\n// NonFinite names the first parameter of q that is NaN or infinite, or\n// returns \"\".\nfunc (a *caModel) NonFinite(q *state) string {\n")
	for _, fl := range floats {
		f.p("\tif i := runtime.FirstNonFinite(q.%s); i >= 0 {\n\t\treturn fmt.Sprintf(\"%s[%%d] = %%v\", i+1, q.%s[i])\n\t}\n", fl, fl, fl)
	}
	f.p("\treturn \"\"\n}\n")
}

// unitParam returns, for a local latent, the unit parameter of its update
// method and the unit argument of its kernels (empty for a global one).
func (f *fitGen) unitParam(qi *qInfo) (param, arg string) {
	if qi.local {
		return ", d int", "d, "
	}
	return "", ""
}

func (f *fitGen) emitGaussianUpdate(qi *qInfo) {
	o := qi.obj
	n := f.dim(o.Dim)
	param, unitArg := f.unitParam(qi)
	inputs := f.args(o.Inputs, "d")
	if inputs != "" {
		inputs = ", " + inputs
	}
	f.p("\n// gaussian%s is q(%s) (%s)", qi.upper, qi.v.Name, f.pos(qi.v))
	if qi.local {
		f.p(" of unit d")
	}
	f.p(",\n// with the kernels of its Laplace and delta updates.\n")
	f.p("func (m *Model) gaussian%s(q *state%s) runtime.GaussianFactor {\n", qi.upper, param)
	mean, cov := "q."+qi.fields[0], "q."+qi.fields[1]
	started := "nil"
	if qi.local {
		f.p("\tp := %s\n", n)
		mean, cov = mean+"[d*p:(d+1)*p]", cov+"[d*p*p:(d+1)*p*p]"
		started = fmt.Sprintf("&q.%sStarted[d]", qi.fields[0])
	}
	f.p("\treturn runtime.GaussianFactor{\n\t\tMean: %s, Cov: %s,\n\t\tDelta: q.%s == \"delta\", Started: %s,\n", mean, cov, qi.method, started)
	if unitArg == "" && inputs == "" {
		f.p("\t\tF: m.%sF, DeltaF: m.%sDelta,\n", qi.upper, qi.upper)
	} else {
		f.p("\t\tF:      func(x, g, h []float64) float64 { return m.%sF(%sx%s, g, h) },\n", qi.upper, unitArg, inputs)
		f.p("\t\tDeltaF: func(x, cov, g, h []float64) float64 { return m.%sDelta(%sx, cov%s, g, h) },\n", qi.upper, unitArg, inputs)
	}
	if c := o.Collapsed; c != nil && qi.local {
		f.p("\t\tCollapsed: func(x, g, h []float64) float64 { return m.%sCollapsed(d, x, g, h) },\n", qi.upper)
		if c.DeltaCollapses {
			f.p("\t\tCollapsesDelta: true,\n")
		}
	}
	f.p("\t}\n}\n")
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

func (f *fitGen) emitConjugateUpdate(qi *qInfo) {
	u := qi.upd
	param, unitArg := f.unitParam(qi)
	lo, hi, rowSlice := f.rows(qi)
	f.p("\n// update%s sets q(%s) (%s) to its optimum given the other factors, the\n", qi.upper, qi.v.Name, f.pos(qi.v))
	f.p("// closed form of Eq. 18")
	if qi.local {
		f.p(", for unit d")
	}
	f.p(", and returns the relative change of its parameters.\nfunc (m *Model) update%s(q *state, w *scratch%s) float64 {\n\tlo, hi := %s, %s\n", qi.upper, param, lo, hi)
	f.p("\tprev := runtime.Grow(&w.prev, %s)\n", rowsTimes(len(qi.fields)))
	var outs []string
	for k, fl := range qi.fields {
		dst := "prev"
		if k > 0 {
			dst = "prev[" + rowsTimes(k) + ":]"
		}
		f.p("\tcopy(%s, q.%s[lo:hi])\n\tclear(q.%s[lo:hi])\n", dst, fl, fl)
		if rowSlice {
			outs = append(outs, fmt.Sprintf("q.%s[lo:hi]", fl))
		} else {
			outs = append(outs, "q."+fl)
		}
	}
	inputs := f.args(u.Inputs, "d")
	if inputs != "" {
		inputs += ", "
	}
	if u.Normalize {
		// exp(η) as a product of the terms' exponentials: no exp or log per
		// entry where a term is the log of data (exp(log β) = β) or does
		// not depend on the entry. If a row under- or overflows, the
		// log-domain kernel and a max-shifted softmax redo the unit.
		expInputs := inputs
		for _, t := range terms(u.Params[0]) {
			if tt, ok := t.(*derive.Tensor); ok && f.hoistOf[tt.Name] != nil {
				expInputs += "q." + f.hoistOf[tt.Name].field + ", "
			}
		}
		f.p("\tm.%sNaturalExp(%s%s%s)\n", qi.upper, unitArg, expInputs, strings.Join(outs, ", "))
		f.p("\tif !runtime.NormalizeRows(q.%s[lo:hi], %s) {\n\t\tclear(q.%s[lo:hi])\n", qi.fields[0], f.dim(qi.q.K), qi.fields[0])
		f.p("\t\tm.%sNatural(%s%s%s)\n", qi.upper, unitArg, inputs, strings.Join(outs, ", "))
		f.p("\t\truntime.SoftmaxRows(q.%s[lo:hi], %s)\n\t}\n", qi.fields[0], f.dim(qi.q.K))
	} else {
		f.p("\tm.%sNatural(%s%s%s)\n", qi.upper, unitArg, inputs, strings.Join(outs, ", "))
	}
	if len(qi.mfields) > 0 {
		unit := ""
		if qi.local {
			unit = ", d"
		}
		f.p("\tm.moments%s(q%s)\n", qi.upper, unit)
	}
	f.p("\tchange := 0.0\n")
	for k, fl := range qi.fields {
		f.p("\tchange = math.Max(change, runtime.L2Change(q.%s[lo:hi], prev[%s:%s]))\n", fl, rowsTimes(k), rowsTimes(k+1))
	}
	f.p("\treturn change\n}\n")
}

// updateCall is the statement updating qi inside a loop that tracks the
// largest change.
func (f *fitGen) updateCall(qi *qInfo, indent string) string {
	unitArg := ""
	if qi.local {
		unitArg = ", d"
	}
	if qi.upd != nil {
		return fmt.Sprintf("%s// %s: closed form (Eq. 18)\n%schange = math.Max(change, m.update%s(q, w%s))\n", indent, qi.v.Name, indent, qi.upper, unitArg)
	}
	return fmt.Sprintf("%s// %s: Laplace or delta\n%schange = math.Max(change, w.Step(w.trouble, %q, m.gaussian%s(q%s), opts.Newton))\n",
		indent, qi.v.Name, indent, qi.v.Name, qi.upper, unitArg)
}

func (f *fitGen) emitLoops() {
	var local, global []*qInfo
	for _, qi := range f.qs {
		if qi.local {
			local = append(local, qi)
		} else {
			global = append(global, qi)
		}
	}
	if f.unit != nil {
		if len(local) == 1 && local[0].obj == nil {
			f.p("\n// UpdateUnit is Fig. 1's inner loop for unit d: the closed-form update\n// (Eq. 18) of its one local factor, %s, which is at its optimum after it.\n", local[0].v.Name)
			f.p("func (a *caModel) UpdateUnit(q *state, w *scratch, d int) bool {\n\ta.m.update%s(q, w, d)\n\treturn true\n}\n", local[0].upper)
		} else {
			f.p("\n// UpdateUnit is Fig. 1's inner loop for unit d: it updates the unit's\n// local factors in turn until their largest relative change is below\n")
			f.p("// opts.LocalTol, and reports whether they settled within opts.LocalMaxIter\n// sweeps.\n")
			f.emitUnitSweeps(local)
		}
	}
	if len(global) == 0 {
		f.p("\n// UpdateGlobals is never called: the model has no global factors.\nfunc (a *caModel) UpdateGlobals(*state, *scratch) float64 { return 0 }\n")
	} else {
		f.emitUpdateGlobals(global)
	}
	// The shape of the coordinate ascent. One pass is a fixed point without
	// global factors (each unit ran to its own), and with one global
	// Gaussian factor and nothing else updated by Laplace (the delta method
	// alternates μ and Σ, so it iterates).
	var shape []string
	if f.unit != nil {
		shape = append(shape, "Units: "+strings.Replace(f.dim(f.unit.Size), "m.", "a.m.", 1))
	}
	if len(global) > 0 {
		shape = append(shape, "Globals: true")
	}
	if len(f.d.MSteps) > 0 {
		shape = append(shape, "EM: !a.opts.FixParams")
	}
	switch {
	case len(global) == 0:
		shape = append(shape, "OnePass: true")
	case f.unit == nil && len(global) == 1 && global[0].obj != nil:
		shape = append(shape, fmt.Sprintf("OnePass: q.%s == \"laplace\"", global[0].method))
	}
	f.p("\n// Shape describes the model's coordinate ascent.\nfunc (a *caModel) Shape(q *state) runtime.CAShape {\n\treturn runtime.CAShape{%s}\n}\n", strings.Join(shape, ", "))
	if f.unit == nil {
		f.p("\n// UpdateUnit is never called: the model has no units.\nfunc (a *caModel) UpdateUnit(*state, *scratch, int) bool { return true }\n")
	}
	var ms []string
	for _, qi := range f.qs {
		if qi.obj != nil {
			ms = append(ms, "q."+qi.method)
		} else {
			ms = append(ms, `"conjugate"`)
		}
	}
	f.p("\n// methods lists the update of each latent, for Result.Method.\nfunc (q *state) methods() string {\n\treturn strings.Join([]string{%s}, \",\")\n}\n", strings.Join(ms, ", "))
}

// emitUpdateGlobals writes UpdateGlobals, which updates the global factors.
func (f *fitGen) emitUpdateGlobals(global []*qInfo) {
	f.p("\n// UpdateGlobals updates the global factors in turn and returns their\n// largest relative change.\n")
	f.p("func (a *caModel) UpdateGlobals(q *state, w *scratch) float64 {\n")
	f.p("\tm := a.m\n")
	for _, qi := range global {
		if qi.obj != nil {
			f.p("\topts := a.opts\n")
			break
		}
	}
	f.p("\tchange := 0.0\n")
	for _, qi := range global {
		f.sb.WriteString(f.updateCall(qi, "\t"))
	}
	f.p("\treturn change\n}\n")
}

// emitFingerprint writes the Model's fingerprint method: a hash of each
// size and each data or constant variable as loaded (the options and the
// params are added by runtime.Settings.Fingerprint and the Result).
func (f *fitGen) emitFingerprint() {
	f.p("\n// fingerprint hashes the sizes, data and constants as loaded, the data\n")
	f.p("// part of the fit's fingerprint (runtime.Settings.Fingerprint).\n")
	f.p("func (m *Model) fingerprint() map[string]string {\n\treturn map[string]string{\n")
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
		f.p("\t\t%q: runtime.HashValues(%s),\n", v.Name, strings.Join(fields, ", "))
	}
	f.p("\t}\n}\n")
}

func (f *fitGen) emitELBO() {
	b := f.d.Bound
	f.p("\n// ELBO is the evidence lower bound E_q[log p] + H[q], with Eq. 19's\n")
	f.p("// expansion where no exact rule applies (Eq. 21 for the Gaussian factors).\n")
	f.p("// Units are evaluated on `workers` goroutines into perUnit and summed in\n// unit order, so the value does not depend on the schedule.\n")
	f.p("func (a *caModel) ELBO(q *state, workers int, perUnit []float64) float64 {\n\tm := a.m\n\ttotal := m.elboGlobal(%s)\n", f.args(b.GlobalInputs, ""))
	for _, qi := range f.qs {
		if qi.q.IsGaussianVector() && !qi.local {
			f.p("\ttotal += runtime.GaussianEntropy(q.%s, %s)\n", qi.fields[1], f.dim(qi.q.Dims[0]))
		}
	}
	if f.unit != nil {
		f.p("\truntime.ParallelFor(%s, workers, func(_, d int) {\n\t\tv := m.elboUnit(d, %s)\n", f.dim(f.unit.Size), f.args(b.LocalInputs, "d"))
		for _, qi := range f.qs {
			if qi.q.IsGaussianVector() && qi.local {
				n := f.dim(qi.q.Dims[0])
				f.p("\t\tv += runtime.GaussianEntropy(q.%s[d*%s*%s:(d+1)*%s*%s], %s)\n", qi.fields[1], n, n, n, n, n)
			}
		}
		f.p("\t\tperUnit[d] = v\n\t})\n\tfor _, v := range perUnit {\n\t\ttotal += v\n\t}\n")
	}
	f.p("\treturn total\n}\n")
}

func (f *fitGen) emitResult() {
	f.p("\n// latent copies q into the result's form.\nfunc (q *state) latent(m *Model) Latent {\n\tvar l Latent\n")
	for _, qi := range f.qs {
		switch {
		case qi.q.IsGaussianVector() && qi.local:
			n := f.dim(qi.q.Dims[0])
			f.p("\tl.%s = make([]*runtime.Gaussian, %s)\n\tfor d := range l.%s {\n", qi.field, f.dim(f.unit.Size), qi.field)
			f.p("\t\tl.%s[d] = runtime.NewGaussian(\"MvNormal\", q.%s[d*%s:(d+1)*%s], q.%s[d*%s*%s:(d+1)*%s*%s])\n\t}\n", qi.field, qi.fields[0], n, n, qi.fields[1], n, n, n, n)
		case qi.q.IsGaussianVector():
			f.p("\tl.%s = runtime.NewGaussian(\"MvNormal\", q.%s, q.%s)\n", qi.field, qi.fields[0], qi.fields[1])
		default:
			dims := qi.q.Params[0].Dims
			var shape []string
			for _, d := range dims {
				shape = append(shape, f.dim(d))
			}
			var ps []string
			for k, fl := range qi.fields {
				ps = append(ps, fmt.Sprintf("%q, q.%s", derive.ConjugateParamNames(qi.q.Family)[k], fl))
			}
			f.p("\tl.%s = runtime.NewFactor(%q, []int{%s}, %s)\n", qi.field, qi.q.Family, strings.Join(shape, ", "), strings.Join(ps, ", "))
		}
	}
	f.p("\treturn l\n}\n")
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
	code := f.g.emitKernel(kernelSpec{Name: name, Doc: doc, Unit: unit, Params: params, Outputs: outs})
	if u.Normalize {
		var factors []derive.Expr
		expParams := params[: len(params)-len(outs) : len(params)-len(outs)]
		for _, t := range terms(u.Params[0]) {
			if tt, ok := t.(*derive.Tensor); ok && f.hoistOf[tt.Name] != nil {
				h := f.hoistOf[tt.Name]
				factors = append(factors, derive.T(h.name, tt.Idx...))
				expParams = append(expParams, kernelParam{Want: h.field, Tensor: h.name, Dims: h.dims})
				continue
			}
			factors = append(factors, derive.Call1("exp", t))
		}
		expParams = append(expParams, params[len(params)-len(outs):]...)
		expOut := outs[0]
		expOut.Expr = derive.Mul(factors...)
		doc := []string{fmt.Sprintf("%sNaturalExp adds into its output exp(η), the unnormalized probabilities", qi.upper),
			fmt.Sprintf("of the optimal q(%s), as the product of its terms' exponentials (see %s).", qi.v.Name, name)}
		code += f.g.emitKernel(kernelSpec{Name: qi.upper + "NaturalExp", Doc: doc, Unit: unit, Params: expParams, Outputs: []Output{expOut}})
	}
	return code
}

func (f *fitGen) boundKernels() string {
	b := f.d.Bound
	var sb strings.Builder
	sb.WriteString(f.g.emitKernel(kernelSpec{Name: "elboGlobal", Scalar: true,
		Doc:     []string{"elboGlobal is the part of the ELBO outside the unit plate: E_q[log p] of", "the global statements and the entropies of the global non-Gaussian factors."},
		Params:  inputParams(b.GlobalInputs),
		Outputs: []Output{{Target: "f", Expr: b.Global}}}))
	if f.unit != nil {
		sb.WriteString(f.g.emitKernel(kernelSpec{Name: "elboUnit", Scalar: true, Unit: f.unit,
			Doc:     []string{fmt.Sprintf("elboUnit is unit %s's part of the ELBO: E_q[log p] of the statements inside", f.unit.Name), "the unit plate and the entropies of the unit's non-Gaussian factors."},
			Params:  inputParams(b.LocalInputs),
			Outputs: []Output{{Target: "f", Expr: b.Local}}}))
	}
	return sb.String()
}

// emitMoments prints the method refreshing E_q[t(v)] after an update of
// q(v) (for unit d's rows of a local latent), and its kernel.
func (f *fitGen) emitMoments(qi *qInfo) {
	u := qi.upd
	param, unitArg := f.unitParam(qi)
	lo, hi, rowSlice := f.rows(qi)
	f.p("\n// moments%s recomputes E_q[t(%s)] = ∇a(φ) (%s) from q(%s)'s parameters", qi.upper, qi.v.Name, strings.Join(qi.q.MomentStats, "; "), qi.v.Name)
	if qi.local {
		f.p(" for unit d")
	}
	f.p(".\nfunc (m *Model) moments%s(q *state%s) {\n", qi.upper, param)
	var ins, outs []string
	for _, fl := range qi.fields {
		ins = append(ins, "q."+fl)
	}
	f.p("\tlo, hi := %s, %s\n", lo, hi)
	for _, fl := range qi.mfields {
		if rowSlice {
			outs = append(outs, fmt.Sprintf("q.%s[lo:hi]", fl))
		} else {
			outs = append(outs, "q."+fl)
		}
		f.p("\tclear(q.%s[lo:hi])\n", fl)
	}
	f.p("\tm.%sMoments(%s%s, %s)\n", qi.upper, unitArg, strings.Join(ins, ", "), strings.Join(outs, ", "))
	for _, h := range f.hoistedOf(qi) {
		f.p("\truntime.ExpTo(q.%s, q.%s)\n", h.field, f.momentField(h))
	}
	f.p("}\n")
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
		if rowSlice {
			dims = dims[1:]
		}
		params = append(params, kernelParam{Want: qi.q.MomentName(st), Tensor: key, Dims: dims, Out: true})
		outputs = append(outputs, Output{Target: key, Free: free, Expr: u.Moments[k]})
	}
	doc := []string{fmt.Sprintf("%sMoments adds E_q[t(%s)] (%s) into its outputs: the expected", qi.upper, qi.v.Name, strings.Join(qi.q.MomentStats, "; ")),
		"sufficient statistics other updates read. The caller zeroes the outputs."}
	f.sb.WriteString(f.g.emitKernel(kernelSpec{Name: qi.upper + "Moments", Doc: doc, Unit: u.Unit, Params: params, Outputs: outputs}))
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

// rowsTimes is k·(hi − lo) as Go source, the offset of the k-th saved
// block of a unit's rows: "", "hi-lo", "2*(hi-lo)", ...
func rowsTimes(k int) string {
	switch k {
	case 0:
		return ""
	case 1:
		return "hi-lo"
	}
	return fmt.Sprintf("%d*(hi-lo)", k)
}

// emitUnitSweeps prints UpdateUnit's sweeps over the unit's local factors
// until they settle.
func (f *fitGen) emitUnitSweeps(local []*qInfo) {
	f.p("func (a *caModel) UpdateUnit(q *state, w *scratch, d int) bool {\n\tm, opts := a.m, a.opts\n")
	for _, qi := range local {
		if qi.obj == nil || qi.obj.Collapsed == nil {
			continue
		}
		z := f.qOf(qi.obj.Collapsed.Z.Name)
		f.p("\t// Start %s at the fixed point of its alternation with %s\n\t// (runtime.GaussianWork.Collapse) and %s at its optimum there; the\n\t// sweeps below then confirm it.\n", qi.v.Name, z.v.Name, z.v.Name)
		f.p("\tif !opts.PlainSweeps {\n\t\tw.Collapse(m.gaussian%s(q, d), opts.Newton)\n", qi.upper)
		f.p("\t\tm.update%s(q, w, d)\n\t}\n", z.upper)
	}
	f.p("\tfor it := 1; it <= opts.LocalMaxIter; it++ {\n\t\tchange := 0.0\n")
	for _, qi := range local {
		f.sb.WriteString(f.updateCall(qi, "\t\t"))
	}
	switch {
	case len(local) == 1 && local[0].obj != nil:
		f.p("\t\t// A single local Gaussian is at its optimum after one Laplace\n\t\t// update; the delta method's objective depends on Σ, which is set\n")
		f.p("\t\t// after μ, so it sweeps to the fixed point of μ and Σ.\n")
		f.p("\t\tif q.%s == \"laplace\" || change < opts.LocalTol {\n\t\t\treturn true\n\t\t}\n\t}\n\treturn false\n}\n", local[0].method)
	default:
		f.p("\t\tif change < opts.LocalTol {\n\t\t\treturn true\n\t\t}\n\t}\n\treturn false\n}\n")
	}
}
