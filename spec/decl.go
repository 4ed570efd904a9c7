package spec

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/alecthomas/participle/v2/lexer"

	"github.com/vigen-go/vigen/spec/ir"
)

// roles maps declaration keywords to roles.
var roles = map[string]ir.Role{
	"data":   ir.RoleData,
	"const":  ir.RoleConst,
	"param":  ir.RoleParam,
	"latent": ir.RoleLatent,
}

// typeCtor describes a type name of the language.
type typeCtor struct {
	kind    ir.Kind
	class   ir.Class
	minDims int    // fewest dimensions allowed
	maxDims int    // most dimensions allowed; -1 for no limit
	rangeKw string // keyword introducing a range ("in", "of"), "" if none allowed
	needsRg bool   // the range is required
	bagDims bool   // a dimension may name a bag (one entry per token)
	example string // shown in hints
}

// typeCtors is the table of type names.
var typeCtors = map[string]typeCtor{
	"real":    {kind: ir.Real, class: ir.Plain, maxDims: -1, bagDims: true, example: "real[N]"},
	"int":     {kind: ir.Int, class: ir.Plain, maxDims: -1, rangeKw: "in", bagDims: true, example: "int[N] in 0..1"},
	"cov":     {kind: ir.Real, class: ir.Cov, minDims: 1, maxDims: -1, example: "cov[P]"},
	"simplex": {kind: ir.Real, class: ir.Simplex, minDims: 1, maxDims: -1, example: "simplex[K]"},
	// ordered vectors (Stan's ordered, positive_ordered): the last
	// dimension is increasing; fitted on the unconstrained scale
	"ordered":          {kind: ir.Real, class: ir.Plain, minDims: 1, maxDims: -1, example: "ordered[K]"},
	"positive_ordered": {kind: ir.Real, class: ir.Plain, minDims: 1, maxDims: -1, example: "positive_ordered[K]"},
	"bag":              {kind: ir.Int, class: ir.Bag, minDims: 1, maxDims: 1, rangeKw: "of", needsRg: true, example: "bag[D] of 1..V"},
}

// methods maps the word after `nonconjugate` to a treatment.
var methods = map[string]ir.Treatment{
	"laplace": ir.Laplace,
	"delta":   ir.Delta,
	"ncvmp":   ir.NCVMP,
}

const treatmentHint = "write `conjugate`, `nonconjugate laplace`, `nonconjugate delta` or `nonconjugate ncvmp` after the type"

// blankHint explains why `_` cannot be a name.
const blankHint = "`_` is reserved (it is Go's blank identifier, which generated code cannot read); give it a descriptive name"

// checkName rejects the one name the generated code cannot hold, `_`.
// Every other name works: the code generator mangles names that collide
// with its own (codegen/names.go).
func (c *checker) checkName(id *Ident) {
	if id.Name == "_" {
		c.errorf(id.Pos, blankHint, "`_` cannot be a name")
	}
}

// declare enters every declared name, reporting duplicates.
func (c *checker) declare(decls []Decl) {
	var sizes, others []*symbol
	add := func(id *Ident, s *symbol) bool {
		if id == nil {
			return false
		}
		c.checkName(id)
		if old, dup := c.syms[id.Name]; dup {
			c.errorf(id.Pos, "every name is declared once; rename one of the two", "%s redeclared (first declared as %s at %s)", id.Name, describe(old.v), c.where(old.v.Pos))
			return false
		}
		c.syms[id.Name] = s
		return true
	}
	for _, d := range decls {
		switch d := d.(type) {
		case *SizeDecl:
			for i, id := range d.Names {
				s := &symbol{v: &ir.Var{Name: id.Name, Role: ir.RoleSize, Pos: c.pos(id.Pos)}, ok: true}
				if i < len(d.Defaults) && d.Defaults[i] != nil {
					s.v.SizeDefault, _ = c.sizeLiteral(d.Defaults[i], "the default of size "+id.Name,
						"a size's default is a whole number of at least 1, as in `size "+id.Name+" = 2`; leave it out if the data always give "+id.Name)
				}
				if add(id, s) {
					sizes = append(sizes, s)
				}
			}
		case *VarDecl:
			if d.Name == nil || d.Type == nil {
				continue
			}
			s := &symbol{v: &ir.Var{Name: d.Name.Name, Role: roles[d.Role], Pos: c.pos(d.Name.Pos)}, decl: d}
			if add(d.Name, s) {
				others = append(others, s)
			}
		}
	}
	c.order = append(sizes, others...)
	for _, s := range c.order {
		c.model.Vars = append(c.model.Vars, s.v)
	}
}

// resolveTypes resolves declared types: bags first, since other types may
// name a bag as a dimension.
func (c *checker) resolveTypes() {
	for pass := 0; pass < 2; pass++ {
		for _, s := range c.order {
			if s.decl == nil || (s.decl.Type.Name != nil && s.decl.Type.Name.Name == "bag") != (pass == 0) {
				continue
			}
			s.v.Type, s.ok = c.resolveType(s)
		}
	}
}

func (c *checker) resolveType(s *symbol) (ir.Type, bool) {
	te := s.decl.Type
	if te.Name == nil {
		return ir.Type{}, false
	}
	ctor, known := typeCtors[te.Name.Name]
	if !known {
		c.errorf(te.Name.Pos, "types are "+strings.Join(sortedKeys(typeCtors), ", ")+suggestSuffix(te.Name.Name, sortedKeys(typeCtors)),
			"unknown type %s", te.Name.Name)
		return ir.Type{}, false
	}
	ok := true
	t := ir.Type{Kind: ctor.kind, Class: ctor.class}
	if ctor.class == ir.Bag && s.v.Role != ir.RoleData {
		c.errorf(te.Name.Pos, "declare it `data "+s.v.Name+" : bag[D] of 1..V`", "only data can be a bag, but %s is %s", s.v.Name, s.v.Role)
		ok = false
	}
	if len(te.Dims) < ctor.minDims || ctor.maxDims >= 0 && len(te.Dims) > ctor.maxDims {
		want := "at least " + strconv.Itoa(ctor.minDims)
		if ctor.maxDims == ctor.minDims {
			want = "exactly " + strconv.Itoa(ctor.minDims)
		}
		c.errorf(te.Name.Pos, "for example `"+ctor.example+"`", "%s takes %s dimension(s), got %d", te.Name.Name, want, len(te.Dims))
		ok = false
	}
	for i, b := range te.Dims {
		d, dok := c.dim(b, ctor, t.Dims)
		_ = i
		ok = ok && dok
		t.Dims = append(t.Dims, d)
	}
	if ctor.class == ir.Cov && len(t.Dims) > 0 {
		t.Dims = append(t.Dims, t.Dims[len(t.Dims)-1])
	}
	if r := te.Range; r != nil {
		switch {
		case ctor.rangeKw == "":
			c.errorf(r.Pos, "remove the range, or declare it `int` if its values are integers in a range", "%s takes no range: only int types have `in LO..HI` and bags `of 1..V`", te.Name.Name)
			ok = false
		case r.Keyword != ctor.rangeKw:
			c.errorf(r.Pos, "write `"+ctor.example+"`", "%s takes `%s LO..HI`, not `%s`", te.Name.Name, ctor.rangeKw, r.Keyword)
			ok = false
		default:
			lo, lok := c.bound(r.Lo)
			hi, hok := c.bound(r.Hi)
			ok = ok && lok && hok
			if lok && hok {
				t.Range = &[2]ir.Bound{lo, hi}
				if lo.Size == "" && hi.Size == "" && lo.Value > hi.Value {
					c.errorf(r.Lo.Pos, "a range LO..HI needs LO ≤ HI", "empty range %d..%d", lo.Value, hi.Value)
					ok = false
				}
				if ctor.class == ir.Bag && (lo.Size != "" || lo.Value != 1 || hi.Size == "") {
					c.errorf(r.Pos, "write `bag[D] of 1..V` with V the vocabulary size", "bag term ids must range over 1..SIZE")
					ok = false
				}
			}
		}
	} else if ctor.needsRg {
		c.errorf(te.Pos, "write `"+ctor.example+"`", "%s needs its term range `of 1..V`", te.Name.Name)
		ok = false
	}
	return t, ok
}

// dim resolves one dimension of a type: a size, or (where allowed) a bag,
// meaning one entry per token of each document; a bag dimension must
// follow the bag's own dimensions.
func (c *checker) dim(b *Bound, ctor typeCtor, before []string) (string, bool) {
	if !b.IsName() || b.Neg {
		n, ok := c.sizeLiteral(b, "dimension "+boundText(b),
			"a dimension is a size name (`real[K]`) or a whole number of at least 1 (`ordered[2]`)")
		if !ok {
			return "", false
		}
		return c.fixedSize(n, b.Pos), true
	}
	s := c.syms[b.Text]
	switch {
	case s == nil:
		c.errorf(b.Pos, "declare it with `size "+b.Text+"`"+suggestSuffix(b.Text, c.namesWithRole(ir.RoleSize)), "undeclared size %s", b.Text)
		return "", false
	case s.v.Role == ir.RoleSize:
		return b.Text, true
	case ctor.bagDims && s.decl != nil && s.decl.Type.Name != nil && s.decl.Type.Name.Name == "bag":
		bagDims := s.v.Type.Dims
		n := len(bagDims)
		if !s.ok || n == 0 {
			return b.Text, false
		}
		if len(before) < n || strings.Join(before[len(before)-n:], ",") != strings.Join(bagDims, ",") {
			c.errorf(b.Pos, "write e.g. `int["+strings.Join(append(append([]string{}, bagDims...), b.Text), ", ")+"]`",
				"bag dimension %s must follow the bag's own dimensions [%s]", b.Text, strings.Join(bagDims, ", "))
			return b.Text, false
		}
		return b.Text, true
	default:
		c.errorf(b.Pos, "declare a size with `size "+b.Text+"`, or use an existing one", "%s is %s, not a size", b.Text, roleNouns[s.v.Role])
		return "", false
	}
}

// maxSizeLiteral is the largest number a dimension or a size default may
// be written as; larger sizes come from the data.
const maxSizeLiteral = 1 << 30

// sizeLiteral reads b, a literal dimension (the 2 of ordered[2]) or a size
// default (`size K = 2`), as a whole number of at least 1, reporting what
// (e.g. "dimension 0") with hint otherwise.
func (c *checker) sizeLiteral(b *Bound, what, hint string) (int, bool) {
	digits := b.Text != "" && strings.Trim(b.Text, "0123456789") == ""
	n, err := strconv.Atoi(b.Text)
	switch {
	case b.IsName():
		c.errorf(b.Pos, hint, "%s must be a number, not the name %s", what, boundText(b))
	case !digits:
		c.errorf(b.Pos, hint, "%s must be a whole number", what)
	case b.Neg || n < 1:
		c.errorf(b.Pos, hint, "%s must be at least 1", what)
	case err != nil || n > maxSizeLiteral:
		c.errorf(b.Pos, "give a size this large in the data file instead", "%s is too large (at most %d)", what, maxSizeLiteral)
	default:
		return n, true
	}
	return 0, false
}

// fixedSize returns the name of the implicit fixed size of the literal
// dimension n, the number itself ("2"), declaring it at its first use:
// every real[2], ordered[2] and simplex[2] of the model shares it, and no
// declared name can clash with it.
func (c *checker) fixedSize(n int, p lexer.Position) string {
	name := strconv.Itoa(n)
	if _, ok := c.syms[name]; !ok {
		v := &ir.Var{Name: name, Role: ir.RoleSize, SizeDefault: n, Fixed: true, Pos: c.pos(p)}
		c.syms[name] = &symbol{v: v, ok: true}
		c.fixed = append(c.fixed, v)
	}
	return name
}

// addFixedSizes enters the implicit fixed sizes into the model, after the
// declared sizes, smallest first.
func (c *checker) addFixedSizes() {
	if len(c.fixed) == 0 {
		return
	}
	sort.Slice(c.fixed, func(i, j int) bool { return c.fixed[i].SizeDefault < c.fixed[j].SizeDefault })
	vars := c.model.Vars
	k := 0
	for k < len(vars) && vars[k].Role == ir.RoleSize {
		k++
	}
	out := append(append(append([]*ir.Var{}, vars[:k]...), c.fixed...), vars[k:]...)
	c.model.Vars = out
}

// bound resolves a range end: an int literal or a size.
func (c *checker) bound(b *Bound) (ir.Bound, bool) {
	if b.IsName() {
		if b.Neg {
			c.errorf(b.Pos, "range bounds are int literals or sizes, e.g. `in 1..K`", "a range bound cannot be a negated size")
			return ir.Bound{}, false
		}
		s := c.syms[b.Text]
		if s == nil || s.v.Role != ir.RoleSize {
			what := "not a declared size"
			if s != nil {
				what = roleNouns[s.v.Role] + ", not a size"
			}
			c.errorf(b.Pos, "range bounds are int literals or sizes, e.g. `in 1..K`", "range bound %s is %s", b.Text, what)
			return ir.Bound{}, false
		}
		return ir.Bound{Size: b.Text}, true
	}
	n, err := strconv.Atoi(b.Text)
	if err != nil {
		c.errorf(b.Pos, "range bounds are int literals or sizes, e.g. `in 0..1`", "range bound %s is not an integer", boundText(b))
		return ir.Bound{}, false
	}
	if b.Neg {
		n = -n
	}
	return ir.Bound{Value: n}, true
}

func boundText(b *Bound) string {
	if b.Neg {
		return "-" + b.Text
	}
	return b.Text
}

// checkDecls checks treatments and defaults.
func (c *checker) checkDecls() {
	for _, s := range c.order {
		d := s.decl
		if d == nil {
			continue
		}
		c.transform(s)
		c.treatment(s)
		if d.Default != nil {
			c.defaultValue(s)
		}
	}
}

func (c *checker) treatment(s *symbol) bool {
	d, v := s.decl, s.v
	tr := d.Treatment
	if v.Role != ir.RoleLatent {
		if tr != nil {
			c.errorf(tr.Pos, "declare it `latent`, or remove the treatment", "only latent variables take a treatment, but %s is %s", v.Name, v.Role)
			return false
		}
		return true
	}
	if tr == nil {
		c.errorf(d.Name.Pos, treatmentHint, "latent %s needs a treatment", v.Name)
		return false
	}
	if tr.Kind == "conjugate" {
		v.Treatment = ir.Conjugate
		if t := v.Transform; t != nil && !t.Kind.Elementwise() {
			c.errorf(tr.Pos, "declare it `nonconjugate laplace` (fitted on the unconstrained scale), or `real[...]` with a conjugate prior",
				"%s latent %s cannot be conjugate: no prior of the conjugate table has an ordered support", t.Text, v.Name)
			return false
		}
		return true
	}
	if tr.Method == nil {
		c.errorf(tr.Pos, "write `nonconjugate laplace`, `nonconjugate delta` or `nonconjugate ncvmp`", "nonconjugate needs a method")
		return false
	}
	m, ok := methods[tr.Method.Name]
	if !ok {
		c.errorf(tr.Method.Pos, "methods are laplace, delta, ncvmp"+suggestSuffix(tr.Method.Name, sortedKeys(methods)), "unknown nonconjugate method %s", tr.Method.Name)
		return false
	}
	v.Treatment = m
	if s.ok && v.Type.Class == ir.Simplex && v.Type.Kind == ir.Real {
		// fitted on the unconstrained scale (K − 1 coordinates)
		v.Transform = &ir.Transform{Kind: ir.SimplexMap, Text: "simplex"}
		return true
	}
	if s.ok && (v.Type.Kind != ir.Real || v.Type.Class != ir.Plain) {
		c.errorf(tr.Pos, "declare it `conjugate`, or make it real-valued", "nonconjugate latent %s must be real-valued, but it is %s", v.Name, v.Type)
		return false
	}
	return true
}

// defaultValue checks `= expr` on a const or param: a constant expression,
// scalar (broadcast) or shaped like the variable.
func (c *checker) defaultValue(s *symbol) bool {
	d, v := s.decl, s.v
	if v.Role != ir.RoleConst && v.Role != ir.RoleParam {
		hint := "declare it `const` to give it a default value"
		if v.Role == ir.RoleData {
			hint = "data values come from the data file; use `const` for a value with a default that data may override"
		}
		c.errorf(d.Default.Position(), hint, "%s cannot have a default value", describe(v))
		return false
	}
	x, ok := c.expr(d.Default, nil)
	if !ok || !c.value(x) {
		return false
	}
	constant := true
	ir.Walk(x, func(e ir.Expr) {
		if r, isRef := e.(*ir.Ref); isRef && constant && r.Var.Role != ir.RoleSize {
			constant = false
			c.errorAt(r.Pos, "defaults may use numbers, sizes, eye(SIZE), functions and arithmetic",
				"the default of %s must be a constant expression, but it reads %s", v.Name, describe(r.Var))
		}
	})
	if !constant || !c.noBuiltVector(x, "in the default of "+v.Name, "leave out the default and give the values in the data") {
		return false
	}
	v.Default = x
	if !s.ok {
		return true
	}
	if v.Type.Kind == ir.Int && !c.intDefault(v, x) {
		return false
	}
	xt := x.Typ()
	switch {
	case xt.Rank() == 0 && v.Type.Class == ir.Plain:
		return true
	case xt.Rank() == 0:
		hint := "e.g. `eye(" + lastDim(v.Type) + ")` or `0.01 * eye(" + lastDim(v.Type) + ")`"
		if v.Type.Class != ir.Cov {
			hint = "leave out the default and give the value in the data"
		}
		c.errorAt(x.Position(), hint, "a scalar cannot be the default of %s %s", v.Type, v.Name)
		return false
	case !sameDims(xt.Dims, v.Type.Dims):
		c.errorAt(x.Position(), "a default is a scalar (used for every element) or has the variable's shape",
			"the default of %s is %s, but %s is %s", v.Name, xt, v.Name, v.Type)
		return false
	}
	return true
}

// intDefault checks the default of an int variable: an integer literal,
// inside the variable's range where its bounds are numbers.
func (c *checker) intDefault(v *ir.Var, x ir.Expr) bool {
	n, ok := x.(*ir.Num)
	if !ok || n.Value != math.Trunc(n.Value) {
		c.errorAt(x.Position(), "write the default of an int as a whole number, e.g. `= 1`",
			"the default of %s (%s) must be a whole number", v.Name, v.Type)
		return false
	}
	if r := v.Type.Range; r != nil {
		lo, hi := r[0], r[1]
		if (lo.Size == "" && n.Value < float64(lo.Value)) || (hi.Size == "" && n.Value > float64(hi.Value)) {
			c.errorAt(x.Position(), "give a default inside the declared range, or widen the range",
				"the default %v of %s is outside %s..%s", n.Value, v.Name, lo, hi)
			return false
		}
	}
	return true
}

func lastDim(t ir.Type) string {
	if len(t.Dims) == 0 {
		return "P"
	}
	return t.Dims[len(t.Dims)-1]
}

func sameDims(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// transform checks a type's constraint, Stan's `real<lower=a, upper=b>`
// (a and b constant scalar expressions) or the types ordered[K] and
// positive_ordered[K], and records it as v.Transform. Where it applies
// depends on the role: data and consts are checked against it when
// loaded; a nonconjugate latent is fitted on the unconstrained scale; a
// conjugate latent's bound must be its prior's support (derive checks
// that); params take none yet.
func (c *checker) transform(s *symbol) bool {
	d, v := s.decl, s.v
	te := d.Type
	if te.Name == nil {
		return false
	}
	var t *ir.Transform
	switch te.Name.Name {
	case "ordered":
		t = &ir.Transform{Kind: ir.Ordered, Text: "ordered"}
	case "positive_ordered":
		t = &ir.Transform{Kind: ir.PositiveOrdered, Text: "positive_ordered"}
	}
	if len(te.Bounds) > 0 {
		b0 := te.Bounds[0]
		if te.Name.Name != "real" {
			c.errorf(b0.Pos, "write the bounds on a real type, e.g. `real<lower=0>[N]`; an int takes a range, `int[N] in 0..10`",
				"%s takes no bounds `<lower=..., upper=...>`: only real does", te.Name.Name)
			return false
		}
		t = &ir.Transform{}
		ok := true
		var texts []string
		for _, b := range te.Bounds {
			if b.Name == nil {
				return false
			}
			texts = append(texts, b.Name.Name+"="+printExpr(b.Value, 0))
			var dst *ir.Expr
			switch b.Name.Name {
			case "lower":
				dst = &t.Lo
			case "upper":
				dst = &t.Hi
			default:
				c.errorf(b.Name.Pos, "write `<lower=a>`, `<upper=b>` or `<lower=a, upper=b>`"+suggestSuffix(b.Name.Name, []string{"lower", "upper"}),
					"unknown bound %s", b.Name.Name)
				ok = false
				continue
			}
			if *dst != nil {
				c.errorf(b.Name.Pos, "give each bound once", "%s bound given twice", b.Name.Name)
				ok = false
				continue
			}
			x, xok := c.boundExpr(v, b)
			if !xok {
				ok = false
				continue
			}
			*dst = x
		}
		if !ok {
			return false
		}
		t.Text = "<" + strings.Join(texts, ", ") + ">"
		switch {
		case t.Lo != nil && t.Hi != nil:
			t.Kind = ir.LowerUpper
			lo, lok := t.Lo.(*ir.Num)
			hi, hok := t.Hi.(*ir.Num)
			if lok && hok && lo.Value >= hi.Value {
				c.errorf(b0.Pos, "the lower bound must be below the upper bound", "empty bounds %s: %v ≥ %v", t.Text, lo.Value, hi.Value)
				return false
			}
		case t.Lo != nil:
			t.Kind = ir.LowerBound
		default:
			t.Kind = ir.UpperBound
		}
	}
	if t == nil {
		return true
	}
	switch v.Role {
	case ir.RoleParam:
		c.errorf(te.Pos, "declare it `latent "+v.Name+" : "+typeString(te)+" nonconjugate laplace` with a prior, or estimate the param on the unconstrained scale (e.g. its log) yourself",
			"param %s cannot be constrained (%s) yet: only data, consts and nonconjugate latents take constraints", v.Name, t.Text)
		return false
	case ir.RoleData, ir.RoleConst:
		if !t.Kind.Elementwise() {
			c.errorf(te.Name.Pos, "declare it `real[...]`; ordered types are for nonconjugate latents", "%s %s cannot be %s yet: only latents take ordered types", v.Role, v.Name, t.Text)
			return false
		}
	}
	v.Transform = t
	return true
}

// boundExpr checks the value of a bound: a scalar constant expression
// (numbers, consts, sizes and arithmetic).
func (c *checker) boundExpr(v *ir.Var, b *TypeBound) (ir.Expr, bool) {
	x, ok := c.expr(b.Value, nil)
	if !ok || !c.value(x) {
		return nil, false
	}
	constant := true
	ir.Walk(x, func(e ir.Expr) {
		if r, isRef := e.(*ir.Ref); isRef && constant && r.Var.Role != ir.RoleSize && r.Var.Role != ir.RoleConst {
			constant = false
			c.errorAt(r.Pos, "bounds may use numbers, consts, sizes, functions and arithmetic",
				"the %s bound of %s must be a constant expression, but it reads %s", b.Name.Name, v.Name, describe(r.Var))
		}
	})
	if !constant {
		return nil, false
	}
	if x.Typ().Rank() > 0 {
		c.errorAt(x.Position(), "give one number for all elements", "the %s bound of %s must be a scalar, but it is %s", b.Name.Name, v.Name, x.Typ())
		return nil, false
	}
	if n, isNum := foldNumber(x); isNum {
		return &ir.Num{Value: n, Pos: x.Position()}, true
	}
	return x, true
}

// foldNumber evaluates an expression of numbers and arithmetic (-1, 1/2).
func foldNumber(x ir.Expr) (float64, bool) {
	switch x := x.(type) {
	case *ir.Num:
		return x.Value, true
	case *ir.Unary:
		v, ok := foldNumber(x.X)
		return -v, ok
	case *ir.Binary:
		a, aok := foldNumber(x.X)
		b, bok := foldNumber(x.Y)
		if !aok || !bok {
			return 0, false
		}
		switch x.Op {
		case '+':
			return a + b, true
		case '-':
			return a - b, true
		case '*':
			return a * b, true
		case '/':
			if b != 0 {
				return a / b, true
			}
		case '^':
			return math.Pow(a, b), true
		}
	}
	return 0, false
}
