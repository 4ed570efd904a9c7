package codegen

import (
	"fmt"
	"strings"

	"github.com/vigen-go/vigen/derive"
)

// This file emits what a tempered fit (runtime.Tempered: annealing and
// variational tempering, Mandt et al. 2016) needs of a model besides SVI's
// split of the global natural parameters: the inverse temperatures the
// local updates read, and E_q[log p(x_d, z_d | β)] of one unit. A model
// tempering does not apply to gets NoTemper, saying why. The tempered local
// updates themselves are in emitConjugateUpdate: with invT = 1 they take
// the untempered path, so an untempered fit is unchanged bit for bit.

// temperReason says why tempering does not apply to the model, or "".
func (f *fitGen) temperReason() string {
	if f.unit == nil {
		return "it has no unit plate (a loop `for d in 1:D` holding local latents) whose likelihood terms a temperature could divide"
	}
	var why []string
	for _, qi := range f.qs {
		switch {
		case qi.obj != nil:
			why = append(why, fmt.Sprintf("%s (%s) has a Gaussian factor fitted by Newton steps, and tempering covers conditionally conjugate models (§3.1), whose updates are closed forms", qi.v.Name, f.pos(qi.v)))
		case qi.local && !qi.upd.Normalize && !hasNaturalMaps(qi.q.Family):
			why = append(why, fmt.Sprintf("the local %s (%s) is %s, whose natural parameters a temperature cannot divide", qi.v.Name, f.pos(qi.v), qi.q.Family))
		case qi.local && !qi.upd.Normalize && !derive.ConstantBase(qi.q.Family):
			why = append(why, fmt.Sprintf("the local %s (%s) is %s, whose base measure depends on its value, so its tempered update is not its natural parameters divided by T", qi.v.Name, f.pos(qi.v), qi.q.Family))
		case qi.local && qi.upd.NoTemperReason != "":
			why = append(why, qi.upd.NoTemperReason)
		}
	}
	if len(f.msteps) > 0 {
		why = append(why, "it has params, and tempering does not cover their M-steps yet")
	}
	if len(why) == 0 {
		if r := f.sviReason(); r != "" {
			why = append(why, r)
		} else if len(f.sviGlobals()) == 0 {
			why = append(why, "it has no global latents: each unit is fitted exactly on its own, so there is nothing to anneal")
		}
	}
	return strings.Join(why, "; ")
}

// emitTemper prints caModel's runtime.Tempered methods, or NoTemper.
func (f *fitGen) emitTemper() {
	w := f.w
	if !f.temper {
		w.Func([]string{"NoTemper says why annealing and variational tempering do not apply to", "the model."},
			"(a *caModel) NoTemper() string", func() { w.Return(fmt.Sprintf("%q", f.temperReason())) })
		return
	}
	w.Func([]string{"Tempering returns the inverse temperatures the local updates and", "UnitNatural read (runtime.Tempered)."},
		w.Sf("(a *caModel) Tempering() *%s", rt("Temper")), func() { w.Return("&a.temper") })
	f.emitCollapsed()
	w.Func([]string{"UnitLogJoint returns E_q[log p] of unit d's statements, the part of the",
		"ELBO a temperature divides (Mandt et al. 2016, Eq. 4)."},
		"(a *caModel) UnitLogJoint(q *state, d int) float64", func() {
			w.Return(fmt.Sprintf("a.m.logJointUnit(%s)", joinArgs("d", f.argsFor("logJointUnit", f.bound.LocalInputs, "d"))))
		})
	f.emitUnitNormalizers()
}

// lvtTable is a simplex latent whose rows' Jensen tables
// (derive.LSPTensor) a unit normalizer reads.
type lvtTable struct {
	qi   *qInfo
	goV  string   // the table's variable in UnitLogNormalizers
	dims []string // the table's dimensions: the latent's without the last
}

func (f *fitGen) lvtTables() []lvtTable {
	var out []lvtTable
	for _, v := range f.bound.TemperedNormTables {
		for _, qi := range f.qs {
			if qi.v.Name == v {
				dims := qi.q.Params[0].Dims
				out = append(out, lvtTable{qi: qi, goV: unexported(f.g.upper(v)) + "LSP", dims: dims[:len(dims)-1]})
			}
		}
	}
	return out
}

// lvtReason says why the model's units have no tempered normalizers for
// local variational tempering, or "".
func (f *fitGen) lvtReason() string {
	b := f.bound
	if b.NoTemperedNorm != "" {
		return b.NoTemperedNorm
	}
	if b.LocalTemperedNorm == nil {
		return "its unit plate has no statements that a temperature divides"
	}
	for _, t := range f.lvtTables() {
		if t.qi.q.Family != "Dirichlet" {
			return fmt.Sprintf("%s (%s) is a probability vector with a %s factor, and the tempered normalizer of a Categorical over it is taken under a Dirichlet one", t.qi.v.Name, f.pos(t.qi.v), t.qi.q.Family)
		}
	}
	// a unit's function fills its own rows of a local latent's table only
	bad := ""
	derive.Visit(b.LocalTemperedNorm, func(x derive.Expr) {
		t, ok := x.(*derive.Tensor)
		if !ok {
			return
		}
		v, ok := derive.LSPLatent(t.Name)
		if !ok {
			return
		}
		for _, qi := range f.qs {
			if qi.v.Name != v || !qi.local {
				continue
			}
			if ix, ok := t.Idx[0].(*derive.Ix); len(t.Idx) == 0 || !ok || ix.I.Name != f.unit.Name {
				bad = fmt.Sprintf("%s (%s) is read at another unit's row", v, f.pos(qi.v))
			}
		}
	})
	return bad
}

// emitUnitNormalizers prints UnitLogNormalizers (runtime.UnitNormalizer),
// or NoLocalTemper.
func (f *fitGen) emitUnitNormalizers() {
	w := f.w
	if !f.lvt {
		w.Func([]string{"NoLocalTemper says why local variational tempering does not apply to", "the model."},
			"(a *caModel) NoLocalTemper() string", func() { w.Return(fmt.Sprintf("%q", f.lvtReason())) })
		return
	}
	tables := f.lvtTables()
	w.Func([]string{"UnitLogNormalizers returns the function writing, for unit d and each",
		"temperature T_m of grid, the log normalizer of the unit's tempered density:",
		"Σ over its statements of E_q[log ∫ p(x | args)^(1/T) dx], each statement",
		"tempered and normalized on its own (Mandt et al. 2016, §2.4, Eq. 10), with",
		"Jensen's bound log Σ_v E_q[p_v^(1/T)] for a Categorical over a simplex",
		"latent (runtime.UnitNormalizer). The tables of global latents are filled",
		"here, those of the unit's own latents by the function, unit by unit; they",
		"are kept from one call to the next (a.lsp)."},
		"(a *caModel) UnitLogNormalizers(q *state, grid []float64) func(d int, out []float64)", func() {
			w.P("m := a.m")
			w.Pf("invT := %s(grid)", rt("InverseTemperatures"))
			for i, t := range tables {
				full := t.qi.q.Params[0].Dims
				w.Pf("%s := a.lsp.Table(%d, invT, %s, %s)", t.goV, i, f.length(t.dims), f.dim(full[len(full)-1]))
				if !t.qi.local {
					w.Pf("%s.FillAll(q.%s, %s(a.opts.Workers))", t.goV, t.qi.fields[0], rt("Workers"))
				}
			}
			w.Block("return func(d int, out []float64)", func() {
				for _, t := range tables {
					if t.qi.local {
						if per := f.length(t.dims[1:]); per == "1" {
							w.Pf("%s.Fill(q.%s, d, d+1)", t.goV, t.qi.fields[0])
						} else {
							w.Pf("%s.Fill(q.%s, d*%s, (d+1)*%s)", t.goV, t.qi.fields[0], per, per)
						}
					}
				}
				var tabs []string
				for _, t := range tables {
					tabs = append(tabs, t.goV+".At[i]")
				}
				w.Block("for i, s := range invT", func() {
					w.Pf("out[i] = m.logNormUnit(%s)", joinArgs("d", "s", f.argsFor("logNormUnit", f.bound.TemperedNormInputs, "d"), strings.Join(tabs, ", ")))
				})
			})
		})
	w.Pf("var _ %s[*state] = (*caModel)(nil)", rt("UnitNormalizer"))
	w.P()
}

// lvtKernel prints logNormUnit: one unit's tempered log normalizer at one
// inverse temperature.
func (f *fitGen) lvtKernel() string {
	if !f.lvt {
		return ""
	}
	b := f.bound
	params := inputParams(b.TemperedNormInputs)
	for _, t := range f.lvtTables() {
		params = append(params, kernelParam{Want: t.goV, Tensor: derive.LSPTensor(t.qi.v.Name), Dims: t.dims})
	}
	return f.g.emitKernel(kernelSpec{Name: "logNormUnit", Scalar: true, Unit: f.unit, Trim: true,
		Doc: []string{fmt.Sprintf("logNormUnit is the log normalizer of unit %s's tempered density at inverse", f.unit.Name),
			"temperature invT: Σ over the statements inside the unit plate of",
			"E_q[log ∫ p(x | args)^invT dx] (Jensen's bound for a Categorical over a",
			"simplex latent, read from its table of log Σ_v E_q[p_v^invT])."},
		Scalars: []kernelParam{{Want: "invT", Tensor: invTTensor}},
		Params:  params,
		Outputs: []Output{{Target: "f", Expr: b.LocalTemperedNorm}}})
}

// temperKernel prints logJointUnit.
func (f *fitGen) temperKernel() string {
	if !f.temper {
		return ""
	}
	b := f.bound
	return f.g.emitKernel(kernelSpec{Name: "logJointUnit", Scalar: true, Unit: f.unit, Trim: true,
		Doc:     []string{fmt.Sprintf("logJointUnit is E_q[log p] of the statements inside the unit plate for unit %s:", f.unit.Name), "elboUnit without the entropies."},
		Params:  inputParams(b.LocalInputs),
		Outputs: []Output{{Target: "f", Expr: b.LocalLogJoint}}})
}

// componentLatents are the global latents with one block per category of a
// local categorical latent (a mixture's component means, LDA's topics),
// with the Go expression of that count.
type componentLatents struct {
	k   string
	qis []*qInfo
}

func (f *fitGen) components() []componentLatents {
	var out []componentLatents
	seen := map[string]bool{}
	for _, z := range f.qs {
		if !z.local || z.upd == nil || !z.upd.Normalize || z.q.K == "" || seen[z.q.K] {
			continue
		}
		seen[z.q.K] = true
		c := componentLatents{k: f.dim(z.q.K)}
		for _, qi := range f.qs {
			if qi.local || qi.upd == nil || len(qi.q.Dims) == 0 || qi.q.Dims[0] != z.q.K {
				continue
			}
			if (qi.q.IsSimplex() || qi.q.IsCategorical()) && len(qi.q.Dims) == 1 {
				continue // one distribution over the categories, not one per category
			}
			c.qis = append(c.qis, qi)
		}
		if len(c.qis) > 0 {
			out = append(out, c)
		}
	}
	return out
}

// emitCollapsed prints Collapsed (runtime.Collapser) for a model with
// component latents.
func (f *fitGen) emitCollapsed() {
	w := f.w
	cs := f.components()
	if len(cs) == 0 {
		return
	}
	w.Func([]string{"Collapsed lists the global latents whose components (one per category of",
		"a categorical latent) are identical copies of one another: a fixed point",
		"of coordinate ascent that high temperatures can lead to (runtime.Collapser)."},
		"(a *caModel) Collapsed(q *state) []string", func() {
			w.P("m := a.m")
			w.P("var out []string")
			for _, c := range cs {
				for _, qi := range c.qis {
					var fs []string
					for _, fl := range qi.fields {
						fs = append(fs, "q."+fl)
					}
					w.If(cond(w.Sf("%s(%s, %s)", rt("IdenticalRows"), c.k, strings.Join(fs, ", "))), func() {
						w.Pf("out = append(out, %q)", qi.v.Name)
					})
				}
			}
			w.Return("out")
		})
}
