package derive

import (
	"github.com/vigen-go/vigen/spec/ir"
)

// checkPriorSupport checks that a nonconjugate latent's Gaussian factor
// lives where its prior puts mass: a Gaussian covers all of ℝ, so a latent
// whose prior draws positive values (HalfCauchy, Gamma, …) must be declared
// with a lower bound, and one on an interval with both bounds, so that
// the Gaussian is on the unconstrained scale (transform.go). Without the
// bound the objective would read the log of negative values: NaN, or a
// fit of the wrong model.
func checkPriorSupport(v *ir.Var, prior *ir.Factor) error {
	if prior == nil || prior.IsTerm() || !v.Treatment.Nonconjugate() {
		return nil
	}
	fam := ir.Families[prior.Dist]
	if fam == nil {
		return nil
	}
	t := v.Transform
	lo, hi := t != nil && t.Lo != nil, t != nil && t.Hi != nil
	num := func(e ir.Expr) (float64, bool) {
		n, ok := e.(*ir.Num)
		if !ok {
			return 0, false
		}
		return n.Value, true
	}
	var want string
	switch fam.Support {
	case ir.SupportPositive:
		if t != nil && t.Kind == ir.PositiveOrdered {
			return nil // positive by its transform
		}
		if lo {
			if a, ok := num(t.Lo); !ok || a >= 0 {
				return nil
			}
		}
		want = "real<lower=0>"
	case ir.SupportUnit:
		if lo && hi {
			a, aok := num(t.Lo)
			b, bok := num(t.Hi)
			if !aok || !bok || (a >= 0 && b <= 1) {
				return nil
			}
		}
		want = "real<lower=0, upper=1>"
	case ir.SupportInterval:
		if lo && hi {
			return nil
		}
		want = "real<lower=a, upper=b> with the bounds of its prior"
	default:
		return nil
	}
	decl := v.Type.String()
	if t != nil {
		decl = v.TypeString()
	}
	return ir.Errorf(prior.Pos, "%s has a %s prior, whose values are %s, but it is declared %s: its Gaussian factor would put mass where the prior has none", v.Name, prior.Dist, supportWords(fam.Support), decl).
		Hintf("declare it %s: vigen then fits the Gaussian on the unconstrained scale (%s) and adds the log-Jacobian", v.DeclWithDims(want), unconstrainedWords(fam.Support, v.Name))
}

func unconstrainedWords(s ir.Support, v string) string {
	if s == ir.SupportPositive {
		return "log " + v
	}
	return "the logit of " + v + "'s position between the bounds"
}

func supportWords(s ir.Support) string {
	switch s {
	case ir.SupportPositive:
		return "positive"
	case ir.SupportUnit:
		return "in (0, 1)"
	}
	return "between its bounds"
}
