package derive

import (
	"github.com/vigen-go/vigen/spec/ir"
)

// Mixture(x; w, D₁(a₁), …, D_K(a_K)) = log Σ_k w_k p_k(x | a_k): a finite
// mixture with the discrete assignment summed out (Stan's log_mix). Each
// component's log density is its own table entry's; the sum is taken by
// logaddexp, stable however far apart the components' densities are. With
// two components a scalar weight w is the first one's (w, 1 − w); with K a
// simplex vector gives them all, and its length must be K (checked when
// the data is loaded). No rule makes its expectation exact: under q it is
// Taylor-expanded (Eq. 19) like any nonlinear term, and the Laplace and
// delta updates differentiate it.
var mixtureDist = mixtureEntry()

func mixtureEntry() *Dist {
	d := &Dist{Family: ir.Mixture, Latex: `\operatorname{Mix}`}
	// set after the table is built: the log density reads the components'
	// entries from it
	return d
}

func init() { mixtureDist.LogDensity = mixtureLogDensity }

// mixtureLogDensity is logaddexp over the components of log w_k + log p_k(x).
func mixtureLogDensity(b *Builder, x Val, args []Val) (Expr, error) {
	comps := args[1:]
	var pos ir.Pos
	if args[0].Src != nil {
		pos = args[0].Src.Position()
	}
	logw, err := mixtureLogWeights(pos, args[0], len(comps))
	if err != nil {
		return nil, err
	}
	var lp Expr
	for k, c := range comps {
		if c.Dist == nil {
			return nil, ir.Errorf(pos, "internal error in vigen: component %d of a Mixture is not a distribution (please report it with the model)", k+1)
		}
		d := Dists[c.Dist.Name] // the checker took it from the same table
		lk, err := d.LogDensity(b, x, c.Dist.Args)
		if err != nil {
			return nil, err
		}
		term := Add(logw[k], lk)
		if lp == nil {
			lp = term
		} else {
			lp = CallE(MustPrim("logaddexp"), lp, term)
		}
	}
	return lp, nil
}

// mixtureLogWeights returns log w_k for k components: log w and log(1 − w)
// for a scalar weight w of two, log w[k] for a simplex vector w.
func mixtureLogWeights(pos ir.Pos, w Val, k int) ([]Expr, error) {
	if len(w.Dims) == 0 {
		if k != 2 {
			return nil, ir.Errorf(pos, "internal error in vigen: a scalar Mixture weight with %d components (please report it with the model)", k)
		}
		s := w.Scalar()
		return []Expr{logE(s), Call1("log1p", Neg(s))}, nil
	}
	out := make([]Expr, k)
	for j := range out {
		out[j] = logE(w.At([]Expr{N(float64(j + 1))})) // a literal index, 1-based
	}
	return out, nil
}
