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
			w.Return(fmt.Sprintf("a.m.logJointUnit(%s)", joinArgs("d", f.args(f.bound.LocalInputs, "d"))))
		})
}

// temperKernel prints logJointUnit.
func (f *fitGen) temperKernel() string {
	if !f.temper {
		return ""
	}
	b := f.bound
	return f.g.emitKernel(kernelSpec{Name: "logJointUnit", Scalar: true, Unit: f.unit,
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
