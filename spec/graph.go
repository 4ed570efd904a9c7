package spec

import (
	"fmt"
	"sort"
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
		if v.Role == ir.RoleLatent && len(v.Type.Dims) > 0 && c.pieces(s) {
			continue
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

// piece is the part of a latent's first dimension one of its `~`
// statements draws: from the element Lo (1-based) to Hi, or to its size
// plus Hi when ToSize (the statement `x[1] ~ …` draws 1..1, the loop
// `for t in 2:T { x[t] ~ … }` draws 2..T+0).
type piece struct {
	f      *ir.Factor
	lo, hi int
	toSize bool
}

// elements writes p as "element 1" or "elements 2..T".
func (p piece) elements() string {
	if !p.toSize && p.hi == p.lo {
		return "element " + p.String()
	}
	return "elements " + p.String()
}

func (p piece) String() string {
	end := fmt.Sprint(p.hi)
	if p.toSize {
		end = p.f.Target.Var.Type.Dims[0]
		if p.hi != 0 {
			end += fmt.Sprintf("%+d", p.hi)
		}
	}
	if !p.toSize && p.hi == p.lo {
		return fmt.Sprint(p.lo)
	}
	return fmt.Sprintf("%d..%s", p.lo, end)
}

// pieces checks a latent vector drawn by statements that each cover part
// of its first dimension, at a literal index (x[1]) or in a loop over part
// of its size (for t in 2:T): together they must draw every element
// exactly once. It reports whether it handled s (false when s's priors
// draw the whole variable, or the variable's elements through indices it
// cannot place, which are checked as usual).
func (c *checker) pieces(s *symbol) bool {
	v := s.v
	var ps []piece
	partial := false
	for _, f := range s.priors {
		p, ok := priorPiece(f)
		if !ok {
			return false
		}
		partial = partial || p.lo != 1 || !p.toSize || p.hi != 0
		ps = append(ps, p)
	}
	if !partial {
		return false
	}
	hint := "draw each element of " + v.Name + " by exactly one `~`, as in `" + v.Name + "[1] ~ Normal(0, 10)` and `for t in 2:" + v.Type.Dims[0] + " { " + v.Name + "[t] ~ Normal(" + v.Name + "[t-1], q) }`"
	sort.SliceStable(ps, func(a, b int) bool { return ps[a].lo < ps[b].lo })
	next := 1 // the first element not drawn yet, while the ends are literal
	for k, p := range ps {
		switch {
		case k > 0 && ps[k-1].toSize:
			c.errorAt(p.f.Pos, hint, "this statement draws %s of latent %s, which the statement at %s may draw too (it draws %s)", p.elements(), v.Name, c.where(ps[k-1].f.Pos), ps[k-1])
			return true
		case p.lo < next:
			c.errorAt(p.f.Pos, hint, "this statement draws %s of latent %s, which the statement at %s draws too (it draws %s)", p.elements(), v.Name, c.where(ps[k-1].f.Pos), ps[k-1])
			return true
		case p.lo > next:
			c.errorAt(p.f.Pos, hint, "latent %s has no distribution for its %s (this statement draws %s)", v.Name, piece{f: p.f, lo: next, hi: p.lo - 1}.elements(), p)
			return true
		}
		next = p.hi + 1
	}
	last := ps[len(ps)-1]
	switch {
	case !last.toSize:
		c.errorAt(last.f.Pos, hint, "latent %s has no distribution for its elements after %d, up to %s (this statement draws %s)", v.Name, last.hi, v.Type.Dims[0], last)
	case last.hi == -1:
		c.errorAt(last.f.Pos, hint, "latent %s has no distribution for its last element (this statement draws %s)", v.Name, last)
	case last.hi < 0:
		c.errorAt(last.f.Pos, hint, "latent %s has no distribution for its last %d elements (this statement draws %s)", v.Name, -last.hi, last)
	}
	return true
}

// priorPiece is the part of its target's first dimension f draws, if f
// indexes it by a literal or by the index of a loop over that dimension.
func priorPiece(f *ir.Factor) (piece, bool) {
	t := f.Target
	if t == nil {
		return piece{}, false // reported where it is written
	}
	if len(t.Index) == 0 {
		return piece{f: f, lo: 1, toSize: true}, len(f.Plates) == 0
	}
	switch x := t.Index[0].(type) {
	case *ir.Num:
		return piece{f: f, lo: int(x.Value), hi: int(x.Value)}, true
	case *ir.Index:
		for _, p := range f.Plates {
			if p.Index == x.Name && p.Bag == nil && p.Size == t.Var.Type.Dims[0] {
				return piece{f: f, lo: 1 + p.Lo, hi: p.Hi, toSize: true}, true
			}
		}
	}
	return piece{}, false
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
