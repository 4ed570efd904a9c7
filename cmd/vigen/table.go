package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/vigen-go/vigen/derive"
	"github.com/vigen-go/vigen/spec/ir"
)

// treatmentDoc says how the generated code fits a latent of each treatment.
var treatmentDoc = map[string]string{
	"conjugate": "conjugate: closed-form update (Eq. 18)",
	"laplace":   "nonconjugate: Laplace (Eq. 14), Newton on f, Σ = −∇²f⁻¹",
	"delta":     "nonconjugate: delta method (Eq. 17), Newton on f + ½Tr{∇²f Σ}",
	"ncvmp":     "nonconjugate: NCVMP (Knowles & Minka 2011, Eq. 7), Gauss–Hermite messages per projection",
}

// writeTable prints the model's nodes (role, type, distribution, plates
// and treatment) and, for each latent, the expectations its update takes
// and whether each is exact or a Taylor approximation.
func writeTable(w io.Writer, d *derive.Derivation) {
	m := d.Model
	prior := map[string]*ir.Factor{}
	for _, f := range m.Factors {
		if !f.IsTerm() {
			prior[f.Target.Var.Name] = f
		}
	}
	q := map[string]*derive.QFactor{}
	for _, f := range d.Q {
		q[f.Var] = f
	}
	msteps := map[string]*derive.MStep{}
	steps, _ := d.MSteps() // a param without one is shown as such
	for _, s := range steps {
		for _, p := range s.Params {
			msteps[p.Name] = s
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "node\trole\ttype\tdistribution\tplates\ttreatment")
	var sizes []string
	for _, v := range m.Vars {
		if v.Role == ir.RoleSize && !v.Fixed && v.SizeDefault == 0 {
			sizes = append(sizes, v.Name)
		}
	}
	if len(sizes) > 0 {
		fmt.Fprintf(tw, "%s\tsize\tint\t—\t—\tfrom the data\n", strings.Join(sizes, ", "))
	}
	// A size with a default gets a row of its own; a literal dimension
	// (the 2 of ordered[2]) none: the types show it.
	for _, v := range m.Vars {
		if v.Role == ir.RoleSize && !v.Fixed && v.SizeDefault > 0 {
			fmt.Fprintf(tw, "%s\tsize\tint = %d\t—\t—\tfrom the data, else its default %d\n", v.Name, v.SizeDefault, v.SizeDefault)
		}
	}
	for _, v := range m.Vars {
		if v.Role == ir.RoleSize {
			continue
		}
		dist, plates := "—", "—"
		if f := prior[v.Name]; f != nil {
			dist, plates = f.Dist, platesString(f.Plates)
		} else if v.Role == ir.RoleLatent {
			// Stan's implicit improper flat prior, with `factor` terms
			// if statements give its density
			dist = "improper flat prior"
			for _, f := range m.Children(v.Name) {
				if f.IsTerm() {
					dist = "factor + improper flat prior"
					break
				}
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", v.Name, v.Role, v.TypeString(), dist, plates, treatment(v, prior[v.Name], q[v.Name], msteps[v.Name]))
	}
	tw.Flush()

	fmt.Fprintln(w, "\nexpectations under q")
	any := false
	show := func(name string, es []derive.Approx) {
		for _, e := range es {
			fmt.Fprintf(w, "  %s: E_q[%s]: %s\n", name, e.Term, approxHow(e))
			any = true
		}
	}
	for _, o := range d.Objectives {
		show(o.Latent.Name, o.Expectations)
	}
	for _, u := range d.Updates {
		show(u.Latent.Name, u.Expectations)
	}
	if !any {
		fmt.Fprintln(w, "  none: no update reads another latent through a function")
	}
}

// approxHow says how an expectation was taken, the kind first: "exact:
// <rule>", or for an approximation derive's own words ("Taylor (Eq. 19) in
// θ", "approximate: the means of … substituted"), which name what the code
// does.
func approxHow(e derive.Approx) string {
	how := e.Rule
	if e.Exact && !strings.HasPrefix(how, "exact") {
		return "exact (" + how + ")"
	}
	if !e.Exact && !strings.HasPrefix(how, "Taylor") && !strings.HasPrefix(how, "approximate") {
		return "approximate (" + how + ")"
	}
	return how
}

// treatment describes how the generated code handles v.
func treatment(v *ir.Var, f *ir.Factor, q *derive.QFactor, s *derive.MStep) string {
	switch v.Role {
	case ir.RoleData:
		if f != nil {
			return "observed"
		}
		return "covariate (read, not modelled)"
	case ir.RoleConst:
		if v.Default != nil {
			return "fixed; default if not in the data"
		}
		return "fixed; given in the data"
	case ir.RoleParam:
		if s == nil {
			return "fixed (no M-step)"
		}
		return "point estimate: M-step, " + s.Kind
	case ir.RoleLatent:
		t := treatmentDoc[v.Treatment.String()]
		if q != nil && q.IsGaussianVector() && v.Treatment == ir.Conjugate {
			t += ", f quadratic: Σ = −∇²f⁻¹, μ = Σ∇f(0)"
		}
		switch {
		case q != nil && derive.ScalarGaussian(v):
			t += ", q = Normal"
		case q != nil:
			t += ", q = " + q.Family
		}
		return t
	}
	return ""
}

// platesString prints a factor's plates as its loop headers: "d in 1:D,
// n in w[d]".
func platesString(ps []ir.Plate) string {
	if len(ps) == 0 {
		return "—"
	}
	parts := make([]string, len(ps))
	for i, p := range ps {
		if p.Bag != nil {
			var idx []string
			for _, x := range p.Bag.Index {
				if ix, ok := x.(*ir.Index); ok {
					idx = append(idx, ix.Name)
				} else {
					idx = append(idx, "…")
				}
			}
			parts[i] = fmt.Sprintf("%s in %s[%s]", p.Index, p.Bag.Var.Name, strings.Join(idx, ", "))
		} else {
			parts[i] = fmt.Sprintf("%s in %s", p.Index, p.Range())
		}
	}
	return strings.Join(parts, ", ")
}
