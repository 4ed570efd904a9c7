package spec

import (
	"math"
	"strconv"
	"strings"

	"github.com/vigen-go/vigen/spec/ir"
)

// checkArgDomains reports a variable passed directly as a distribution
// argument whose declared values are not inside the argument's domain: a
// latent declared `real` that is the sd of a Normal (sd > 0) makes the
// log density read log(sd) at negative values, and the fit's ELBO NaN in
// its first iteration. The domains are the families' Constraints
// (ir.Family); a variable's values are what its declaration says
// (declaredRange). Expressions (exp(sigma), a + b) are not checked: their
// range is not the checker's to tell, and data values are checked when
// they are loaded (codegen's domain checks), so only what the declaration
// rules out is reported here.
func (c *checker) checkArgDomains() {
	for _, f := range c.model.Factors {
		c.argDomains(f.Dist, f.Args)
	}
}

// argDomains checks the arguments args of family dist, and those of the
// distributions among them (the components of a Mixture).
func (c *checker) argDomains(dist string, args []ir.Expr) {
	fam := ir.Families[dist]
	if fam == nil {
		return
	}
	domains, err := ir.ParseDomains(fam.Constraints)
	if err != nil {
		return // every family's clauses parse (ir's TestDomainsParse)
	}
	for k, a := range args {
		if d, ok := a.(*ir.DistArg); ok {
			c.argDomains(d.Dist, d.Args)
			continue
		}
		p := paramAt(fam, k)
		dom, ok := domains[p.Name]
		r, isRef := a.(*ir.Ref)
		if !ok || !isRef {
			continue
		}
		lo, hi, known := c.declaredRange(r.Var)
		if !known {
			continue
		}
		// a declared end equal to an open end of the domain passes: a
		// latent's transform never reaches its bound, and a data value
		// on it is refused when the data is loaded, naming the index
		below := dom.LoLetter == "" && lo < dom.Lo
		above := dom.HiLetter == "" && hi > dom.Hi
		if below || above {
			c.domainError(dist, p.Name, r, dom, lo, hi)
		}
	}
}

// domainError reports r, the argument param of dist, whose declared values
// lo..hi reach outside dom.
func (c *checker) domainError(dist, param string, r *ir.Ref, dom ir.Interval, lo, hi float64) {
	v := r.Var
	decl := "`" + v.TypeString() + "`"
	if math.IsInf(lo, -1) && math.IsInf(hi, 1) {
		decl += ", which allows every real number"
	}
	want := wantedType(dom)
	hint := "declare it " + v.DeclWithDims(want)
	if v.Type.Kind == ir.Int {
		hint = "declare its range `in LO..HI` inside that domain"
	} else if v.Role == ir.RoleLatent {
		hint += " (vigen then fits its Gaussian on the unconstrained scale and adds the log-Jacobian)"
		if want == "real<lower=0>" {
			hint += ", or pass a positive expression of it, such as exp(" + exprString(r) + ")"
		}
	}
	c.errorAt(r.Pos, hint, "%s's %s must be %s, but %s %s is declared %s",
		dist, param, dom.Requirement(), v.Role, v.Name, decl)
}

// declaredRange is the interval lo..hi a variable's declaration allows
// its values, and whether the declaration says: its bounds
// (real<lower=0>), its class (a simplex's entries are in [0, 1]) or the
// range of an int. A nonconjugate latent declared `real` has a Gaussian
// factor over all of ℝ; if its prior's family draws from less than ℝ
// (HalfCauchy), derive reports the declaration against its prior
// (checkPriorSupport), so it is not known here. A conjugate latent's q is
// in its prior's family, and derive refuses a statement that reads it
// other than through that family's statistics (log p, 1/s², …), so it
// is not known here either. Data, consts and params declared without
// bounds are not known: their values are checked when they are loaded.
func (c *checker) declaredRange(v *ir.Var) (lo, hi float64, known bool) {
	lo, hi = math.Inf(-1), math.Inf(1)
	if t := v.Transform; t != nil {
		switch t.Kind {
		case ir.LowerBound, ir.UpperBound, ir.LowerUpper:
			var lok, hok bool = true, true
			if t.Lo != nil {
				lo, lok = constValue(t.Lo)
			}
			if t.Hi != nil {
				hi, hok = constValue(t.Hi)
			}
			if !lok || !hok {
				return 0, 0, false // a bound reading a const: not known here
			}
			return lo, hi, true
		case ir.PositiveOrdered:
			return 0, hi, true
		case ir.SimplexMap:
			return 0, 1, true
		case ir.Ordered:
			return lo, hi, true
		}
		return 0, 0, false
	}
	switch {
	case v.Type.Class == ir.Simplex:
		return 0, 1, true
	case v.Type.Class != ir.Plain:
		return 0, 0, false
	case v.Type.Kind == ir.Int:
		r := v.Type.Range
		if r == nil || r[0].Size != "" {
			return 0, 0, false
		}
		lo = float64(r[0].Value)
		if r[1].Size == "" {
			hi = float64(r[1].Value)
		}
		return lo, hi, true
	case v.Role != ir.RoleLatent || !v.Treatment.Nonconjugate():
		return 0, 0, false
	}
	if prior := c.model.Prior(v.Name); prior != nil && !prior.IsTerm() {
		if fam := ir.Families[prior.Dist]; fam == nil || fam.Support != ir.SupportReal {
			return 0, 0, false
		}
	}
	return lo, hi, true
}

// constValue is the value of a numeric bound: a number, or a negated one.
func constValue(e ir.Expr) (float64, bool) {
	switch x := e.(type) {
	case *ir.Num:
		return x.Value, true
	case *ir.Unary:
		if v, ok := constValue(x.X); ok && x.Op == '-' {
			return -v, true
		}
	}
	return 0, false
}

// wantedType is the declaration of a real variable whose values lie in dom.
func wantedType(dom ir.Interval) string {
	var b []string
	if dom.LoLetter == "" && !math.IsInf(dom.Lo, -1) {
		b = append(b, "lower="+numString(dom.Lo))
	}
	if dom.HiLetter == "" && !math.IsInf(dom.Hi, 1) {
		b = append(b, "upper="+numString(dom.Hi))
	}
	return "real<" + strings.Join(b, ", ") + ">"
}

// numString writes v as the language does: 0, 1, 0.5.
func numString(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
