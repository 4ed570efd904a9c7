package codegen

import (
	"fmt"
	"math"
	"regexp"
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
// The domains are read from derive's distribution table (Dist.Constraints
// and Dist.Support, the text vigen check shows), so the table is the one
// place that states them; TestDomainsParse checks that every clause there
// is understood.

// domainSpec is an interval parsed from the table: lo < x < hi (or ≤). A
// bound may be a size letter of the family's shape patterns plus a
// constant (Wishart's dof > K − 1).
type domainSpec struct {
	lo, hi             float64
	loOpen, hiOpen     bool
	loLetter, hiLetter string
	text               string // as written in the table
}

var (
	numRE    = `(-?[0-9]+(?:\.[0-9]+)?)`
	boundRE  = `([A-Z])(?: ([−+-]) ([0-9]+(?:\.[0-9]+)?))?|` + numRE
	oneSided = regexp.MustCompile(`^(\w+) ([<>]|≤|≥) (?:` + boundRE + `)$`)
	twoSided = regexp.MustCompile(`^` + numRE + ` (<|≤) (\w+) (<|≤) ` + numRE + `$`)
	// structural clauses are enforced by the declared types (simplex, cov,
	// int ranges) or are the unconstrained reals.
	structural = regexp.MustCompile(`simplex|positive definite|∈`)
)

// parseDomains parses a comma-separated list of clauses from the table into
// the domain of each name. A clause that is neither an interval nor
// structural is an error.
func parseDomains(clauses string) (map[string]domainSpec, error) {
	out := map[string]domainSpec{}
	for _, c := range splitClauses(clauses) {
		c = strings.TrimSpace(c)
		d := domainSpec{lo: math.Inf(-1), hi: math.Inf(1), loOpen: true, hiOpen: true, text: c}
		if m := twoSided.FindStringSubmatch(c); m != nil {
			d.lo, _ = strconv.ParseFloat(m[1], 64)
			d.hi, _ = strconv.ParseFloat(m[5], 64)
			d.loOpen, d.hiOpen = m[2] == "<", m[4] == "<"
			out[m[3]] = d
			continue
		}
		if m := oneSided.FindStringSubmatch(c); m != nil {
			name, op := m[1], m[2]
			var v float64
			letter := m[3]
			if letter != "" {
				if m[5] != "" {
					v, _ = strconv.ParseFloat(m[5], 64)
					if m[4] != "+" {
						v = -v
					}
				}
			} else {
				v, _ = strconv.ParseFloat(m[6], 64)
			}
			switch op {
			case ">", "≥":
				d.lo, d.loOpen, d.loLetter = v, op == ">", letter
			default:
				d.hi, d.hiOpen, d.hiLetter = v, op == "<", letter
			}
			out[name] = d
			continue
		}
		if structural.MatchString(c) || c == "" {
			continue
		}
		return nil, fmt.Errorf("cannot read the clause %q", c)
	}
	return out, nil
}

// splitClauses splits a list at the commas outside braces ("y ∈ {0, 1}" is
// one clause).
func splitClauses(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '{', '(':
			depth++
		case '}', ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// requirement renders d for messages: "> 0", "≥ 0", "in (0, 1)".
func (d domainSpec) requirement() string {
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	bound := func(letter string, v float64) string {
		if letter == "" {
			return num(v)
		}
		switch {
		case v < 0:
			return letter + " − " + num(-v)
		case v > 0:
			return letter + " + " + num(v)
		}
		return letter
	}
	loInf, hiInf := math.IsInf(d.lo, -1) && d.loLetter == "", math.IsInf(d.hi, 1) && d.hiLetter == ""
	switch {
	case !loInf && !hiInf:
		l, r := map[bool]string{true: "(", false: "["}[d.loOpen], map[bool]string{true: ")", false: "]"}[d.hiOpen]
		return "in " + l + bound(d.loLetter, d.lo) + ", " + bound(d.hiLetter, d.hi) + r
	case !loInf:
		return map[bool]string{true: "> ", false: "≥ "}[d.loOpen] + bound(d.loLetter, d.lo)
	case !hiInf:
		return map[bool]string{true: "< ", false: "≤ "}[d.hiOpen] + bound(d.hiLetter, d.hi)
	}
	return "a real number"
}

// domainChecks returns the Go code, for the end of NewModel, that checks
// every data, const and given param appearing whole (indexed only by loop
// variables) as a constrained argument of a distribution, or as the target
// of a distribution with a constrained support: a call of
// runtime.CheckDomains with a table of the checks, one line each.
func (g *gen) domainChecks() string {
	var sb strings.Builder
	seen := map[string]bool{}
	for _, f := range g.m.Factors {
		dist := derive.Dists[f.Dist]
		fam := ir.Families[f.Dist]
		if dist == nil || fam == nil {
			continue
		}
		cons, err := parseDomains(dist.Constraints)
		if err != nil {
			g.errs = append(g.errs, ir.Errorf(f.Pos, "codegen: the constraints of %s: %v", f.Dist, err))
			continue
		}
		for k, p := range fam.Params {
			if d, ok := cons[p.Name]; ok && k < len(f.Args) {
				if v, ok := g.literal(f.Args[k]); ok {
					if !d.holds(v) {
						g.errs = append(g.errs, ir.Errorf(f.Args[k].Position(), "the %s of %s is %s, which must be %s", p.Name, f.Dist, strconv.FormatFloat(v, 'g', -1, 64), d.requirement()).
							Hintf("give it a value in that domain (spec/README.md lists the constraints of every distribution)"))
					}
					continue
				}
				g.domainCheck(&sb, seen, f, f.Args[k], d, fmt.Sprintf("it is the %s of %s at %s", p.Name, f.Dist, f.Args[k].Position()))
			}
		}
		support, err := parseDomains(dist.Support)
		if err != nil {
			g.errs = append(g.errs, ir.Errorf(f.Pos, "codegen: the support of %s: %v", f.Dist, err))
			continue
		}
		if d, ok := support[fam.Value.Name]; ok && f.Target != nil {
			g.domainCheck(&sb, seen, f, f.Target, d, fmt.Sprintf("it is drawn from %s at %s", f.Dist, f.Pos))
		}
	}
	if sb.Len() == 0 {
		return ""
	}
	return "\tif err := runtime.CheckDomains([]runtime.DomainCheck{\n" + sb.String() + "\t}); err != nil {\n\t\treturn nil, err\n\t}"
}

// domainCheck emits the table entry (runtime.DomainCheck) of the check of
// one argument e of f against d, if e reads a data, const or param
// variable whole.
func (g *gen) domainCheck(sb *strings.Builder, seen map[string]bool, f *ir.Factor, e ir.Expr, d domainSpec, what string) {
	r, ok := e.(*ir.Ref)
	if !ok {
		return
	}
	v := r.Var
	role := map[ir.Role]string{ir.RoleData: "data", ir.RoleConst: "const", ir.RoleParam: "param"}[v.Role]
	goName, loaded := g.goName[v.Name]
	if role == "" || !loaded || v.Type.Class == ir.Bag {
		return
	}
	for _, ix := range r.Index {
		if _, ok := ix.(*ir.Index); !ok {
			return // a part of the array (x[1], x[g[n]]): its other entries may be anything
		}
	}
	lo, hi := fmt.Sprint(d.lo), fmt.Sprint(d.hi)
	text := strconv.Quote(d.requirement())
	for _, b := range []struct {
		letter string
		v      float64
		expr   *string
	}{{d.loLetter, d.lo, &lo}, {d.hiLetter, d.hi, &hi}} {
		if b.letter == "" {
			if math.IsInf(b.v, 0) {
				*b.expr = fmt.Sprintf("math.Inf(%d)", int(math.Copysign(1, b.v)))
			}
			continue
		}
		size := g.letterSize(f, b.letter)
		if size == "" || g.sizeGo[size] == "" {
			return
		}
		*b.expr = "float64(m." + g.sizeGo[size] + ")"
		if b.v > 0 {
			*b.expr += " + " + fmt.Sprint(b.v)
		} else if b.v < 0 {
			*b.expr += " - " + fmt.Sprint(-b.v)
		}
		req := strings.Replace(d.requirement(), b.letter, size, 1)
		text = fmt.Sprintf("fmt.Sprintf(%q, %s)", strings.ReplaceAll(req, "%", "%%")+" = %v", *b.expr)
	}
	entry := []string{fmt.Sprintf("Role: %q, Name: %q", role, v.Name)}
	if len(v.Type.Dims) == 0 {
		entry = append(entry, fmt.Sprintf("Values: []float64{m.%s}", goName))
	} else {
		entry = append(entry, "Values: m."+goName)
		if derive.BagDim(g.m, v) == 0 {
			var dims []string
			for _, s := range v.Type.Dims {
				dims = append(dims, "m."+g.sizeGo[s])
			}
			entry = append(entry, "Shape: []int{"+strings.Join(dims, ", ")+"}")
		}
	}
	entry = append(entry, fmt.Sprintf("Domain: runtime.Domain{Lo: %s, Hi: %s, LoOpen: %v, HiOpen: %v, Text: %s}", lo, hi, d.loOpen, d.hiOpen, text),
		fmt.Sprintf("What: %q", what))
	if v.Role == ir.RoleParam {
		// A param not in the data is started by Fit, in its domain.
		entry = append(entry, fmt.Sprintf("Absent: d.%s == nil", g.dataField[v.Name]))
	}
	check := "{" + strings.Join(entry, ", ") + "}"
	if seen[check] {
		return
	}
	seen[check] = true
	fmt.Fprintf(sb, "\t\t%s,\n", check)
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

// holds reports whether v lies in d; bounds given by a size letter are
// not known before the data and count as met.
func (d domainSpec) holds(v float64) bool {
	if math.IsNaN(v) {
		return false
	}
	if d.loLetter == "" && (v < d.lo || d.loOpen && v == d.lo) {
		return false
	}
	if d.hiLetter == "" && (v > d.hi || d.hiOpen && v == d.hi) {
		return false
	}
	return true
}
