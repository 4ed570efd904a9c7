package codegen

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/vigen-go/vigen/derive"
	"github.com/vigen-go/vigen/spec/ir"
)

// This file emits the checks that data, consts and params given as
// distribution arguments lie in the arguments' domains (the sd of a Normal
// > 0, the concentration of a Dirichlet > 0, the dof of a Wishart > K − 1),
// and that data drawn from a distribution lie in its support (a Gamma's
// x > 0). Out of its domain a value makes the ELBO NaN, so without the check
// a fit ends in "not_finite" instead of a data error naming the value.
//
// The domains are read from the families' signatures (ir.Family's
// Constraints and SupportText, the text vigen check shows), so the table is the one
// place that states them; TestDomainsParse checks that every clause there
// is understood.

// domainCheckCtx is one entry (runtime.DomainCheck) of the table of
// checks that NewModel passes to runtime.CheckDomains: the values of the
// variable Name (Role data, const or param) in Model field Values (one
// number if Scalar; of the shape of the Model size fields Shape, if
// given) must lie in the domain Lo..Hi. Text is the requirement as
// messages show it or, if TextBound is set, a format whose %v is that
// bound's value; What says where the variable is an argument. Absent, for
// a param, is its Data field: a param not in the data is started by Fit,
// in its domain.
type domainCheckCtx struct {
	Role, Name, Values string
	Scalar             bool
	Shape              []string
	Lo, Hi             domainBound
	LoOpen, HiOpen     bool
	Text               string
	TextBound          *domainBound
	What, Absent       string
}

// domainBound is an end of a domain in generated code: Value, an infinity
// of the sign of Inf (if not 0), or the Model size field Size plus Add
// minus Sub.
type domainBound struct {
	Value    float64
	Inf      int
	Size     string
	Add, Sub float64
}

// domainChecks returns the checks, for the end of NewModel, of every data,
// const and given param appearing whole (indexed only by loop variables)
// as a constrained argument of a distribution, or as the target of a
// distribution with a constrained support: the table of
// runtime.CheckDomains, without repeats.
func (g *gen) domainChecks() []domainCheckCtx {
	var checks []domainCheckCtx
	seen := map[string]bool{}
	add := func(c *domainCheckCtx) {
		if c == nil {
			return
		}
		k := *c
		k.TextBound = nil // compared by value, below
		key := fmt.Sprint(k)
		if c.TextBound != nil {
			key += fmt.Sprint(*c.TextBound)
		}
		if !seen[key] {
			seen[key] = true
			checks = append(checks, *c)
		}
	}
	for _, v := range g.m.Vars {
		add(g.boundCheck(v))
	}
	factors := g.m.Factors
	for _, f := range g.m.Factors {
		// the components of a Mixture: their arguments' domains and
		// their support, for the mixture's target
		for _, a := range f.Args {
			if d, ok := a.(*ir.DistArg); ok {
				factors = append(factors, &ir.Factor{Plates: f.Plates, Target: f.Target, Dist: d.Dist, Args: d.Args, Pos: d.Pos})
			}
		}
	}
	for _, f := range factors {
		dist := derive.Dists[f.Dist]
		fam := ir.Families[f.Dist]
		if dist == nil || fam == nil {
			continue
		}
		cons, err := ir.ParseDomains(dist.Constraints)
		if err != nil {
			g.errs = append(g.errs, ir.Errorf(f.Pos, "codegen: the constraints of %s: %v", f.Dist, err))
			continue
		}
		// the arguments written as numbers, for the quantities the family
		// computes from them (derive.ArgRange) once each is in its domain
		vals, known := make([]float64, len(fam.Params)), make([]bool, len(fam.Params))
		anyKnown, inDomain := false, true
		for k, p := range fam.Params {
			if k >= len(f.Args) {
				break
			}
			v, lit := g.literal(f.Args[k])
			if lit {
				vals[k], known[k], anyKnown = v, true, true
			}
			if d, ok := cons[p.Name]; ok {
				if lit {
					if !d.Holds(v) {
						inDomain = false
						g.errs = append(g.errs, ir.Errorf(f.Args[k].Position(), "the %s of %s is %s, which must be %s", p.Name, f.Dist, strconv.FormatFloat(v, 'g', -1, 64), d.Requirement()).
							Hintf("give it a value in that domain (spec/README.md lists the constraints of every distribution)"))
					}
					continue
				}
				add(g.domainCheck(f, f.Args[k], d, fmt.Sprintf("it is the %s of %s at %s", p.Name, f.Dist, f.Args[k].Position())))
			}
		}
		if anyKnown && inDomain {
			if q := derive.ArgRange(f.Dist, vals, known); q != nil {
				var what []string
				for _, k := range q.Params {
					what = append(what, fmt.Sprintf("%s %s", fam.Params[k].Name, strconv.FormatFloat(vals[k], 'g', -1, 64)))
				}
				g.errs = append(g.errs, ir.Errorf(f.Args[q.Params[0]].Position(), "%s computes %s from its %s (for its %s), which %s", f.Dist, q.Quantity, strings.Join(what, " and "), q.Where, q.Problem()).
					Hintf("float64 holds non-zero magnitudes from 4.9e-324 to 1.8e308, and what a distribution computes from arguments written as numbers must stay in that range; rescale the model (the data in other units, a parameter on another scale)"))
			}
		}
		support, err := ir.ParseDomains(dist.SupportText)
		if err != nil {
			g.errs = append(g.errs, ir.Errorf(f.Pos, "codegen: the support of %s: %v", f.Dist, err))
			continue
		}
		if d, ok := support[fam.Value.Name]; ok && f.Target != nil {
			add(g.domainCheck(f, f.Target, d, fmt.Sprintf("it is drawn from %s at %s", f.Dist, f.Pos)))
		}
	}
	return checks
}

// domainCheck returns the table entry of the check of one argument e of f
// against d, or nil if e does not read a data, const or param variable
// whole.
func (g *gen) domainCheck(f *ir.Factor, e ir.Expr, d ir.Interval, what string) *domainCheckCtx {
	r, ok := e.(*ir.Ref)
	if !ok {
		return nil
	}
	v := r.Var
	role := map[ir.Role]string{ir.RoleData: "data", ir.RoleConst: "const", ir.RoleParam: "param"}[v.Role]
	goName, loaded := g.goName[v.Name]
	if role == "" || !loaded || v.Type.Class == ir.Bag {
		return nil
	}
	for _, ix := range r.Index {
		if _, ok := ix.(*ir.Index); !ok {
			return nil // a part of the array (x[1], x[g[n]]): its other entries may be anything
		}
	}
	c := &domainCheckCtx{Role: role, Name: v.Name, Values: goName, Scalar: len(v.Type.Dims) == 0,
		Lo: domainBound{Value: d.Lo}, Hi: domainBound{Value: d.Hi}, LoOpen: d.LoOpen, HiOpen: d.HiOpen, Text: d.Requirement(), What: what}
	for _, b := range []struct {
		letter string
		v      float64
		bound  *domainBound
	}{{d.LoLetter, d.Lo, &c.Lo}, {d.HiLetter, d.Hi, &c.Hi}} {
		if b.letter == "" {
			if math.IsInf(b.v, 0) {
				*b.bound = domainBound{Inf: int(math.Copysign(1, b.v))}
			}
			continue
		}
		size := g.letterSize(f, b.letter)
		if size == "" || g.sizeGo[size] == "" {
			return nil
		}
		*b.bound = domainBound{Size: g.sizeGo[size], Add: max(b.v, 0), Sub: max(-b.v, 0)}
		req := strings.Replace(d.Requirement(), b.letter, size, 1)
		tb := *b.bound
		c.Text, c.TextBound = strings.ReplaceAll(req, "%", "%%")+" = %v", &tb
	}
	if !c.Scalar && derive.BagDim(g.m, v) == 0 {
		for _, s := range v.Type.Dims {
			c.Shape = append(c.Shape, g.sizeGo[s])
		}
	}
	if v.Role == ir.RoleParam || g.omissible[v.Name] {
		c.Absent = g.dataField[v.Name] // a param left to Fit, data left to Predict
	}
	return c
}

// letterSize returns the size that the shape letter stands for in f: the
// first dimension of the target or argument whose pattern uses it.
func (g *gen) letterSize(f *ir.Factor, letter string) string {
	fam := ir.Families[f.Dist]
	sigs := append([]ir.ParamSig{fam.Value}, fam.Params...)
	exprs := append([]ir.Expr{f.Target}, f.Args...)
	for k, s := range sigs {
		if k >= len(exprs) || exprs[k] == nil || k == 0 && f.Target == nil {
			continue
		}
		for j, l := range strings.Split(s.Shape, "x") {
			if dims := exprs[k].Typ().Dims; l == letter && j < len(dims) {
				return dims[j]
			}
		}
	}
	return ""
}

// literal returns the value of a scalar argument written with numbers
// only (2, -1, 1 / sqrt(4)), folded as derive folds it.
func (g *gen) literal(e ir.Expr) (float64, bool) {
	if len(e.Typ().Dims) > 0 {
		return 0, false
	}
	pure := true
	ir.Walk(e, func(x ir.Expr) {
		switch x.(type) {
		case *ir.Ref, *ir.Index:
			pure = false
		}
	})
	if !pure {
		return 0, false
	}
	x, err := derive.NewBuilder(g.m).Lower(e, nil)
	if err != nil {
		return 0, false // derive reports it (division by zero, a domain error)
	}
	n, ok := x.(*derive.Num)
	if !ok {
		return 0, false
	}
	return n.V, true
}

// boundCheck returns the check of a data or const variable against its
// declared bounds (real<lower=a, upper=b>), as Stan checks data at load,
// or nil if it has none. Bounds are numbers here; a bound that reads a
// const or size is reported as not supported yet on data.
func (g *gen) boundCheck(v *ir.Var) *domainCheckCtx {
	t := v.Transform
	if t == nil || (v.Role != ir.RoleData && v.Role != ir.RoleConst) || !t.Kind.Elementwise() {
		return nil
	}
	d := ir.Interval{Lo: math.Inf(-1), Hi: math.Inf(1)}
	for _, b := range []struct {
		x   ir.Expr
		dst *float64
	}{{t.Lo, &d.Lo}, {t.Hi, &d.Hi}} {
		if b.x == nil {
			continue
		}
		val, ok := g.literal(b.x)
		if !ok {
			g.errs = append(g.errs, ir.Errorf(v.Pos, "the bounds of %s %s must be numbers: bounds reading consts or sizes are supported on latents only", v.Role, v.Name).
				Hintf("write the bound as a number, e.g. `real<lower=0>`"))
			return nil
		}
		*b.dst = val
	}
	goName, loaded := g.goName[v.Name]
	if !loaded {
		return nil
	}
	c := &domainCheckCtx{Role: v.Role.String(), Name: v.Name, Values: goName, Scalar: len(v.Type.Dims) == 0,
		Lo: domainBound{Value: d.Lo}, Hi: domainBound{Value: d.Hi}, Text: d.Requirement(), What: fmt.Sprintf("it is declared %s at %s", v.TypeString(), v.Pos)}
	for _, b := range []*domainBound{&c.Lo, &c.Hi} {
		if math.IsInf(b.Value, 0) {
			*b = domainBound{Inf: int(math.Copysign(1, b.Value))}
		}
	}
	if !c.Scalar {
		for _, s := range v.Type.Dims {
			c.Shape = append(c.Shape, g.sizeGo[s])
		}
	}
	return c
}

// boundsCheckCtx is the check at the end of NewModel
// (runtime.CheckBounds) of the bounds of a constrained latent that read
// consts or sizes, which the data give: Kind is the transform's, Lo and
// Hi the bounds' Go expressions, Text the bounds as declared and At the
// latent's position.
type boundsCheckCtx struct {
	Name, Text, At, Kind, Lo, Hi string
}

// boundsChecks returns the checks of the bounds of every constrained
// latent with a bound that is not a number (the checker refuses numbers
// that make the bounds empty).
func (g *gen) boundsChecks() []boundsCheckCtx {
	var out []boundsCheckCtx
	for _, v := range g.m.VarsWithRole(ir.RoleLatent) {
		t := v.Transform
		if t == nil || !derive.Transformed(v) || t.Lo == nil && t.Hi == nil {
			continue
		}
		literal := true
		for _, x := range []ir.Expr{t.Lo, t.Hi} {
			if x == nil {
				continue
			}
			if _, ok := g.literal(x); !ok {
				literal = false
			}
		}
		if literal {
			continue
		}
		out = append(out, boundsCheckCtx{Name: v.Name, Text: t.Text, At: fmt.Sprintf("%s:%d:%d", g.m.File, v.Pos.Line, v.Pos.Col),
			Kind: t.Kind.String(), Lo: g.boundGo(t.Lo), Hi: g.boundGo(t.Hi)})
	}
	return out
}
