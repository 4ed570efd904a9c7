package derive

import "github.com/vigen-go/vigen/spec/ir"

// positiveLatents are the conjugate latents whose prior family has log x
// among its sufficient statistics, so every value of them is positive
// (Gamma, InverseGamma, Exponential, LogNormal, Beta, Dirichlet).
func (b *Builder) positiveLatents() map[string]bool {
	if b.positive != nil {
		return b.positive
	}
	out := map[string]bool{}
	b.positive = out
	for _, v := range b.Model.VarsWithRole(ir.RoleLatent) {
		if v.Treatment != ir.Conjugate {
			continue
		}
		prior := b.Model.Prior(v.Name)
		if prior == nil {
			continue
		}
		d := Dists[prior.Dist]
		if d == nil || d.Conj == nil {
			continue
		}
		if d.Conj.Family != "" {
			d = Dists[d.Conj.Family]
		}
		if d.ExpFam == nil {
			continue
		}
		for _, s := range d.ExpFam.Stats {
			if s.Name == "log x" {
				out[v.Name] = true
			}
		}
	}
	return out
}

// splitPositiveLogs rewrites log(c · x) as log(c) + log(x) where x is a read
// of a latent known to be positive (positiveLatents): a known multiplier
// such as an exposure, y[i] ~ Poisson(t[i] * theta[i]), then leaves the
// statement linear in theta's statistics log θ and θ, and the conjugate
// update and the ELBO take it exactly. Factors exp(a) are positive too:
// log(c·exp(a)) = log c + a. It is an identity wherever the
// density is defined: x > 0 and c·x > 0 give c > 0.
func splitPositiveLogs(e Expr, positive map[string]bool) Expr {
	return Memoized(func(e Expr, rec func(Expr) Expr) Expr {
		e = mapChildren(e, rec)
		c, ok := e.(*Call)
		if !ok || c.Prim.Name != "log" {
			return e
		}
		m, ok := c.Args[0].(*MulNode)
		if !ok {
			return e
		}
		var pos, rest []Expr
		for _, f := range m.Factors {
			if t, ok := f.(*Tensor); ok && positive[t.Name] {
				pos = append(pos, f)
			} else if c, ok := f.(*Call); ok && c.Prim.Name == "exp" {
				pos = append(pos, f) // a constrained latent's exp(u), say
			} else {
				rest = append(rest, f)
			}
		}
		if len(pos) == 0 {
			return e
		}
		terms := []Expr{}
		if len(rest) > 0 {
			terms = append(terms, Call1("log", Mul(rest...)))
		}
		for _, f := range pos {
			terms = append(terms, Call1("log", f))
		}
		return Add(terms...)
	})(e)
}
