package spec

import (
	"strings"

	"github.com/vigen-go/vigen/spec/ir"
)

// checkPriors checks that every latent has exactly one `~` statement with it
// as target, and every other variable at most one.
func (c *checker) checkPriors() {
	for _, s := range c.order {
		v := s.v
		// A nonconjugate latent with no `~` has Stan's implicit improper
		// flat prior (on the constrained scale); statements reading it
		// must make its posterior proper.
		if v.Role == ir.RoleLatent && len(s.priors) == 0 && !((c.termRead[v.Name] || s.read) && v.Treatment.Nonconjugate()) {
			hint := "give it a distribution with `" + v.Name + " ~ ...` (inside loops over its leading dimensions if it is an array)"
			switch {
			case c.termRead[v.Name]:
				hint = "a conjugate latent's q is in the family of its `~` prior, which `factor` statements do not give: " + hint + ", or declare it nonconjugate"
			case v.Treatment.Nonconjugate():
				c.errorAt(v.Pos, hint, "latent %s has no prior and no statement reads it: its posterior would be its improper flat prior", v.Name)
				continue
			case s.read:
				hint = "a conjugate latent's q is in the family of its `~` prior: " + hint + ", or declare it nonconjugate to give it an improper flat prior"
			}
			c.errorAt(v.Pos, hint, "latent %s has no prior", v.Name)
		}
		for _, f := range s.priors[min(1, len(s.priors)):] {
			what := "distribution"
			if v.Role == ir.RoleLatent || v.Role == ir.RoleParam {
				what = "prior"
			}
			c.errorAt(f.Pos, "a variable is the target of exactly one `~`; use loops to cover its elements",
				"%s has a second %s (the first is at %s)", describe(v), what, c.where(s.priors[0].Pos))
		}
	}
}

// checkUsage reports data never used and consts and params never read.
func (c *checker) checkUsage() {
	for _, s := range c.order {
		v := s.v
		switch {
		case v.Role == ir.RoleData && !s.read && len(s.priors) == 0:
			c.errorAt(v.Pos, "remove it, or use it in a `~` statement", "data %s is never used", v.Name)
		case (v.Role == ir.RoleConst || v.Role == ir.RoleParam) && !s.read:
			c.errorAt(v.Pos, "remove it", "%s is never used", describe(v))
		}
	}
}

// checkCycles reports variables whose distribution depends on themselves,
// directly or through the distributions of other variables. Each cycle is
// reported once, at the first factor (in source order) on it.
func (c *checker) checkCycles() {
	reported := map[string]bool{}
	for _, s := range c.order {
		if len(s.priors) == 0 || reported[s.v.Name] {
			continue
		}
		path := c.pathTo(s, s.v.Name)
		if path == nil {
			continue
		}
		for _, n := range path {
			reported[n] = true
		}
		c.errorAt(s.priors[0].Pos, "a variable's distribution cannot depend on the variable itself, directly or through others",
			"cycle: the distribution of %s depends on %s itself (%s)", s.v.Name, s.v.Name, strings.Join(path, " → "))
	}
}

// pathTo finds, breadth first, a dependency path from s back to the
// variable called goal, returned as names from s to goal; nil if none.
func (c *checker) pathTo(s *symbol, goal string) []string {
	parent := map[string]string{}
	queue := []*symbol{s}
	seen := map[string]bool{}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, d := range cur.deps {
			if d.Name == goal {
				path := []string{goal}
				for n := cur.v.Name; n != goal; n = parent[n] {
					path = append([]string{n}, path...)
				}
				return append([]string{goal}, path...)
			}
			if seen[d.Name] {
				continue
			}
			seen[d.Name] = true
			parent[d.Name] = cur.v.Name
			if next := c.syms[d.Name]; next != nil {
				queue = append(queue, next)
			}
		}
	}
	return nil
}
