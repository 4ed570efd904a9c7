package codegen

import (
	"fmt"
	"sort"
	"strings"

	"github.com/vigen-go/vigen/derive"
	"github.com/vigen-go/vigen/spec/ir"
)

// Data-only sums of point terms (issue 39, item 3). A point term's loop
// adds, per data point, terms c·d(n) whose coefficient c does not depend
// on the point and whose d(n) reads data alone: the residual's variance
// terms b1Cov·vr1[n]² of a regression's scale, say. Σ_n c·d(n) is
// c·Σ_n d(n), and Σ_n d(n) is the same in every Newton step of every
// iteration: it is computed once per fit, with the other aux values
// (computeAux), and the loop keeps the rest.

// hoistedTerm is a term taken out of a point loop: target += c·aux (and
// mirror, a Hessian's other triangle, if set).
type hoistedTerm struct {
	target, mirror string
	coef           int
	aux            string
}

// splitHoistable splits the node x a loop over plates adds into its
// terms c·d(n) with d(n) a data-only sum aux (pointAux) and the rest, the
// node the loop still adds.
func (g *gen) splitHoistable(gr *derive.Graph, x int, plates []derive.Index) (rest int, hs []hoistedTerm) {
	terms := []int{x}
	if n := gr.Nodes[x]; n.Op == derive.OpAdd {
		terms = n.Args
	}
	var keep []int
	for _, t := range terms {
		n := gr.Nodes[t]
		if !n.Point {
			keep = append(keep, t) // the same at every point
			continue
		}
		var coef, data []int
		if n.Op == derive.OpMul {
			for _, a := range n.Args {
				if gr.Nodes[a].Point {
					data = append(data, a)
				} else {
					coef = append(coef, a)
				}
			}
		} else {
			data = []int{t}
		}
		ok := true
		for _, a := range data {
			ok = ok && gr.Nodes[a].Deps == 0
		}
		var aux string
		if ok {
			aux, ok = g.pointAux(gr, data, plates)
		}
		if !ok {
			keep = append(keep, t)
			continue
		}
		hs = append(hs, hoistedTerm{coef: gr.Mul(coef...), aux: aux})
	}
	return gr.Add(keep...), hs
}

// pointAux registers (once per expression) the aux value Σ_plates Π data,
// data nodes that read data and constants alone, and returns its tensor
// name; false if they read anything else (a variational parameter, a
// param an M-step changes).
func (g *gen) pointAux(gr *derive.Graph, data []int, plates []derive.Index) (string, bool) {
	fs := make([]derive.Expr, len(data))
	for k, a := range data {
		fs[k] = graphExpr(gr, a)
	}
	body := derive.Mul(fs...)
	var reads []string
	ok := true
	derive.Visit(body, func(x derive.Expr) {
		t, isT := x.(*derive.Tensor)
		if !isT || strings.HasPrefix(t.Name, "#") {
			return
		}
		name, _, _ := derive.Shifted(t.Name)
		v := g.m.Lookup(name)
		if v == nil || (v.Role != ir.RoleData && v.Role != ir.RoleConst) || g.goName[name] == "" {
			ok = false
			return
		}
		reads = append(reads, name)
	})
	if !ok {
		return "", false
	}
	sum := derive.Sum(plates, body)
	key := "sum:" + sum.Key()
	if _, done := g.tensors[key]; done {
		return key, true
	}
	field := g.fields.get(sumName(fs, reads))
	g.pointSums = append(g.pointSums, key)
	// the sum, printed over the Model's fields
	sizes := map[string]string{}
	for s, gn := range g.sizeGo {
		if v := g.m.Lookup(s); v != nil && v.Fixed {
			sizes[s] = s
		} else {
			sizes[s] = "m." + gn
		}
	}
	p := newGoPrinter(map[string]tensorInfo{}, sizes, map[string]bool{"m": true, "s": true})
	p.more = func(key string) (tensorInfo, bool) {
		t, ok := g.tensors[key]
		t.Go = "m." + g.goName[key]
		return t, ok && g.goName[key] != ""
	}
	var sb strings.Builder
	sort.Strings(reads)
	var guard []string
	for k, name := range reads {
		if k == 0 || reads[k-1] != name {
			guard = append(guard, "m."+g.goName[name]+" != nil")
		}
	}
	indent := "\t"
	if len(guard) > 0 {
		// Predict may be given the data without the observations
		fmt.Fprintf(&sb, "%sif %s {\n", indent, strings.Join(guard, " && "))
		indent += "\t"
	}
	fmt.Fprintf(&sb, "%svar s float64\n", indent)
	inner := indent
	for _, pl := range plates {
		sb.WriteString(inner)
		p.loopHead(&sb, &Loop{Idx: pl})
		inner += "\t"
	}
	fmt.Fprintf(&sb, "%ss += %s\n", inner, p.expr(body, 1))
	for range plates {
		inner = inner[:len(inner)-1]
		sb.WriteString(inner + "}\n")
	}
	fmt.Fprintf(&sb, "%sm.%s = s\n", indent, field)
	if len(guard) > 0 {
		sb.WriteString("\t}\n")
	}
	g.transAux = append(g.transAux, auxCtx{Go: field, Type: "float64", Op: "code", Src: strings.TrimRight(sb.String(), "\n"),
		Doc: "Σ over " + plateNames(plates) + " of " + derive.String(body) + ", a data-only sum the point terms' kernels read"})
	g.goName[key] = field
	g.tensors[key] = tensorInfo{Go: "@" + key}
	return key, true
}

func plateNames(ps []derive.Index) string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return strings.Join(out, ", ")
}

// graphExpr is node x of gr as a derive expression (leaves as they are).
func graphExpr(gr *derive.Graph, x int) derive.Expr {
	e := &pointEmitter{g: gr, named: map[int]string{}}
	return e.tree(x)
}

// sumName names the sum of the product of factors fs (reading the data
// reads) after what it sums: sumX for Σ_n x[n], sumXSq for Σ_n x[n]·x[n],
// sumXY for Σ_n x[n]·y[n]; a factor that is not a plain read adds the
// names of what it reads (sumLogY is not attempted).
func sumName(fs []derive.Expr, reads []string) string {
	count := map[string]int{}
	var order []string
	other := false
	for _, f := range fs {
		t, ok := f.(*derive.Tensor)
		if !ok {
			other = true
			continue
		}
		if count[t.Name] == 0 {
			order = append(order, t.Name)
		}
		count[t.Name]++
	}
	name := "sum"
	for _, n := range order {
		name += exported(localName(n))
		switch c := count[n]; {
		case c == 2:
			name += "Sq"
		case c > 2:
			name += fmt.Sprintf("Pow%d", c)
		}
	}
	if other {
		name += "Of"
		for _, r := range reads {
			name += exported(localName(r))
		}
	}
	return name
}
