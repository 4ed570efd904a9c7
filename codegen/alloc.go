package codegen

import (
	"fmt"
	"strings"

	"github.com/vigen-go/vigen/spec/ir"
)

// alloc is an array (or Copies arrays) whose length is the product of Dims
// (size names, or "@w" for the entries of bag w) that the generated code
// allocates once the sizes are known: an entry of the list of
// runtime.Sizes.CheckAllocs.
type alloc struct {
	What   string
	Dims   []string
	Copies int
}

// atLeastCtx checks that the size Size is at least Min, Why saying what
// needs it (runtime.Sizes.AtLeast).
type atLeastCtx struct {
	Size  string
	Min   int
	Why   string
	Exact bool // the size must be exactly Min (runtime.Sizes.Exactly)
}

// sizeEqCtx checks that the size Size is Const plus the sizes Plus, the
// length of the vector What built in the model (runtime.Sizes.Equals).
type sizeEqCtx struct {
	Size  string
	Const int
	Plus  []string
	What  string
}

// allocCheck returns the checks, for NewModel right after the sizes are
// resolved, that refuse sizes a fit cannot run with: minimums checks the
// sizes that must be at least 1, and allocs is the list, beyond the arrays
// of the data table (runtime.DataTable.CheckAllocs: data, consts and
// params), of the arrays for which the fit would allocate more than
// runtime.MemoryLimit (runtime.Sizes.CheckAllocs): inverses, transposes
// (transposedOf), groupings
// and, unless f is nil (kernels only), those of Fit: every array newState
// allocates, times three for the copy Fit keeps of the last finite
// iteration and the Result, and the per-unit bookkeeping. Each array's
// length is a product of sizes, so this bounds every makeslice in the
// generated code up to the small per-worker scratch (one unit's vectors
// and matrices).
func (g *gen) allocCheck(f *fitGen) (minimums []atLeastCtx, allocs []alloc) {
	var as []alloc
	for _, a := range g.d.Aux {
		if a.Op == "inv" {
			as = append(as, alloc{"the inverse of " + a.Arg, []string{a.Dim, a.Dim}, 1})
		}
	}
	for _, a := range g.transAux {
		what := "the transpose of " + a.Arg
		if a.Op == "log" {
			what = "the logarithm of " + a.Arg
		}
		as = append(as, alloc{what, g.tensors[a.Arg].Dims, 1})
	}
	for _, o := range g.d.Objectives {
		if len(o.Groups) > 0 {
			as = append(as, alloc{"the points of each " + o.Unit.Size, []string{o.Unit.Size}, 1})
		}
	}
	if f != nil {
		for _, qi := range f.qs {
			what := fmt.Sprintf("q(%s)", qi.v.Name)
			for k := range qi.fields {
				as = append(as, alloc{what, f.paramDims(qi, k), 3})
			}
			for range qi.mfields {
				as = append(as, alloc{what + " moments", f.paramDims(qi, 0), 3})
			}
		}
		if f.unit != nil {
			as = append(as, alloc{"the units' bookkeeping", []string{f.unit.Size}, 3})
		}
	}
	// Only bags have "@" dimensions the check can measure; drop any other,
	// and scalars.
	kept := as[:0]
	for _, a := range as {
		ok := len(a.Dims) > 0 // a scalar's few numbers need no check
		for _, d := range a.Dims {
			if name, isEntries := strings.CutPrefix(d, "@"); isEntries {
				v := g.m.Lookup(name)
				ok = ok && v != nil && v.Type.Class == ir.Bag && g.dataField[name] != ""
			} else {
				ok = ok && g.sizeGo[d] != ""
			}
		}
		if ok {
			kept = append(kept, a)
		}
	}
	as = kept
	// A simplex has no points of length 0, and a categorical latent in
	// 1..K no outcomes for K = 0 (the updates would divide by zero or not
	// end), so those sizes must be at least 1.
	atLeast := map[string]bool{}
	for _, v := range g.m.Vars {
		t := v.Type
		switch {
		case t.Class == ir.Simplex && len(t.Dims) > 0 && !atLeast[t.Dims[len(t.Dims)-1]]:
			d := t.Dims[len(t.Dims)-1]
			atLeast[d] = true
			minimums = append(minimums, atLeastCtx{Size: d, Min: 1, Why: fmt.Sprintf("it is the length of the simplex %s (%s)", v.Name, v.Pos)})
		case v.Role == ir.RoleLatent && t.Kind == ir.Int && t.Range != nil && t.Range[1].Size != "" && t.Range[0].Size == "" && !atLeast[t.Range[1].Size]:
			atLeast[t.Range[1].Size] = true
			minimums = append(minimums, atLeastCtx{Size: t.Range[1].Size, Min: t.Range[0].Value,
				Why: fmt.Sprintf("it bounds the values %s of the latent %s (%s)", fmtRange(t), v.Name, v.Pos)})
		}
	}
	all := append(append(minimums, literalIndexMinimums(g.m)...), mixtureWeightSizes(g.m)...)
	// A literal dimension's length is known here: the checker rejects the
	// models that would fail these checks, so the others need no code.
	checks := all[:0]
	for _, c := range all {
		if v := g.m.Lookup(c.Size); v != nil && v.Fixed && (v.SizeDefault == c.Min || !c.Exact && v.SizeDefault > c.Min) {
			continue
		}
		checks = append(checks, c)
	}
	return checks, as
}

// mixtureWeightSizes are the checks that the simplex of weights of every
// Mixture has one entry per component: its length, a size, must be their
// number (or the weights would not sum to one over them).
func mixtureWeightSizes(m *ir.Model) []atLeastCtx {
	var out []atLeastCtx
	for _, f := range m.Factors {
		fam := ir.Families[f.Dist]
		if fam == nil || !fam.Variadic || len(f.Args) == 0 {
			continue
		}
		w := f.Args[0]
		if dims := w.Typ().Dims; len(dims) == 1 {
			k := len(f.Args) - len(fam.Params) + 1
			out = append(out, atLeastCtx{Size: dims[0], Min: k, Exact: true,
				Why: fmt.Sprintf("it is the length of the weights %s of the %s at %s, which has %d components", fmtIR(w), f.Dist, f.Pos, k)})
		}
	}
	return out
}

// literalIndexMinimums are the checks that every literal index (beta[2])
// is within its dimension: the size must be at least the largest literal
// that indexes it, named with the read that needs it.
func literalIndexMinimums(m *ir.Model) []atLeastCtx {
	need := map[string]atLeastCtx{}
	var order []string
	visit := func(e ir.Expr) {
		ir.Walk(e, func(x ir.Expr) {
			r, ok := x.(*ir.Ref)
			if !ok {
				return
			}
			for k, ix := range r.Index {
				n, ok := ix.(*ir.Num)
				if !ok || k >= len(r.Var.Type.Dims) {
					continue
				}
				d := r.Var.Type.Dims[k]
				if v := m.Lookup(d); v == nil || v.Role != ir.RoleSize {
					continue
				}
				c, seen := need[d]
				if !seen {
					order = append(order, d)
				}
				if !seen || int(n.Value) > c.Min {
					need[d] = atLeastCtx{Size: d, Min: int(n.Value), Why: fmt.Sprintf("%s at %s reads index %d of dimension %d of %s", fmtIR(r), r.Pos, int(n.Value), k+1, r.Var.Name)}
				}
			}
		})
	}
	for _, f := range m.Factors {
		if f.Target != nil { // nil for a `factor` term
			visit(f.Target)
		}
		for _, a := range f.Args {
			visit(a)
		}
	}
	var out []atLeastCtx
	for _, d := range order {
		out = append(out, need[d])
	}
	return out
}

// fmtRange writes an int type's range as in the model: 1..K.
func fmtRange(t ir.Type) string {
	b := func(x ir.Bound) string {
		if x.Size != "" {
			return x.Size
		}
		return fmt.Sprint(x.Value)
	}
	return b(t.Range[0]) + ".." + b(t.Range[1])
}
