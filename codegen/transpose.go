package codegen

import (
	"strings"

	"github.com/vigen-go/vigen/derive"
	"github.com/vigen-go/vigen/spec/ir"
)

// transposedReads rewrites, in a kernel's expression, every read of a
// model matrix (data, const or param) at a data-given column for each of
// its rows, β[k, w[n]] for every topic k, into a read of its transposed
// copy, an aux value computed with the others (transposedOf): the K values
// a data point reads are then one contiguous row instead of K cache lines
// a vocabulary apart. Reads along a row (β[k, v] for every v) keep the
// matrix as it is. local holds the kernel's own parameters, never
// rewritten.
func (g *gen) transposedReads(e derive.Expr, local map[string]tensorInfo) derive.Expr {
	// (the rewrite rebuilds e, renaming its bound indices: only where a
	// read changes, so that other kernels print as they did)
	any := false
	derive.Visit(e, func(x derive.Expr) {
		if t, ok := x.(*derive.Tensor); ok && !any {
			_, any = g.columnRead(t, local)
		}
	})
	if !any {
		return e
	}
	return derive.RenameTensorsIf(e, func(t *derive.Tensor) (string, bool) { return g.columnRead(t, local) })
}

// columnRead reports whether t reads a model matrix at a data-given column
// (see transposedReads), and if so the name of its transposed copy.
func (g *gen) columnRead(t *derive.Tensor, local map[string]tensorInfo) (string, bool) {
	if len(t.Idx) != 2 || t.Sym || t.Int || strings.HasPrefix(t.Name, TempPrefix) {
		return "", false
	}
	if _, ok := local[t.Name]; ok {
		return "", false
	}
	if _, ok := t.Idx[0].(*derive.Ix); !ok {
		return "", false
	}
	if _, ok := t.Idx[1].(*derive.Ix); ok {
		return "", false
	}
	v := g.m.Lookup(t.Name)
	info, ok := g.tensors[t.Name]
	if v == nil || !ok || len(info.Dims) != 2 || v.Type.Kind == ir.Int {
		return "", false
	}
	switch v.Role {
	case ir.RoleData, ir.RoleConst, ir.RoleParam:
		return g.transposedOf(v, info), true
	}
	return "", false
}

// loggedReads rewrites, in a kernel's expression, log(x[…]) of a model
// tensor (or of a transposed copy, transposedReads) read per data point
// into a read of its elementwise logarithm, an aux value computed with the
// others (loggedOf): CTM's ELBO takes log β_k,w for every topic at every
// term of every document, which is K·(entries) logarithms per evaluation
// against K·V once per M-step.
func (g *gen) loggedReads(e derive.Expr, local map[string]tensorInfo) derive.Expr {
	any := false
	derive.Visit(e, func(x derive.Expr) {
		if !any {
			_, any = g.logRead(x, local)
		}
	})
	if !any {
		return e
	}
	return derive.Rewrite(e, func(x derive.Expr) (derive.Expr, bool) { return g.logRead(x, local) })
}

// logRead reports whether x is log of a read of a model tensor (or aux
// copy) at a data-given index, and if so its rewrite.
func (g *gen) logRead(x derive.Expr, local map[string]tensorInfo) (derive.Expr, bool) {
	c, ok := x.(*derive.Call)
	if !ok || c.Prim.Name != "log" || len(c.Args) != 1 {
		return nil, false
	}
	t, ok := c.Args[0].(*derive.Tensor)
	if !ok || t.Sym || t.Int || len(t.Idx) == 0 || strings.HasPrefix(t.Name, TempPrefix) {
		return nil, false
	}
	if _, ok := local[t.Name]; ok {
		return nil, false
	}
	gathered := false
	for _, i := range t.Idx {
		if _, plain := i.(*derive.Ix); !plain {
			gathered = true
		}
	}
	info, ok := g.tensors[t.Name]
	if !gathered || !ok || len(info.Dims) != len(t.Idx) {
		return nil, false
	}
	base := strings.TrimSuffix(t.Name, transposeSuffix)
	v := g.m.Lookup(base)
	if v == nil || v.Type.Kind == ir.Int || v.Role != ir.RoleParam && v.Role != ir.RoleConst && v.Role != ir.RoleData {
		return nil, false
	}
	return derive.T(g.loggedOf(t.Name, v, info), t.Idx...), true
}

// loggedOf registers (once) the elementwise logarithm of tensor name (a
// model tensor of variable v, or its transposed copy) as an aux value and
// returns its tensor name.
func (g *gen) loggedOf(name string, v *ir.Var, info tensorInfo) string {
	logName := name + ".log"
	if _, ok := g.tensors[logName]; ok {
		return logName
	}
	c := auxCtx{Go: g.fields.get(g.goName[name] + "Log"), Type: "[]float64", Op: "log", Src: g.goName[name], What: "data", Arg: v.Name}
	c.Doc = "log of " + g.goName[name] + ", for the kernels that read it per data point"
	if v.Role == ir.RoleParam {
		c.What, c.Param = "param", true
	}
	g.goName[logName] = c.Go
	g.tensors[logName] = tensorInfo{Go: "@" + logName, Dims: info.Dims, Trans: info.Trans}
	g.transAux = append(g.transAux, c)
	return logName
}

// transposeSuffix names the transposed copy of a matrix in expressions.
const transposeSuffix = ".T"

// transposedOf registers (once) the transposed copy of matrix v as an aux
// value and returns its tensor name.
func (g *gen) transposedOf(v *ir.Var, info tensorInfo) string {
	name := v.Name + transposeSuffix
	if _, ok := g.tensors[name]; ok {
		return name
	}
	c := auxCtx{Go: g.fields.get(g.lower(v.Name) + "T"), Type: "[]float64", Op: "trans", Src: g.goName[v.Name],
		N: g.sizeGo[info.Dims[0]], What: "data", Arg: v.Name}
	c.Doc = v.Name + " transposed, for the kernels that read a column of it per data point"
	if v.Role == ir.RoleParam {
		c.What, c.Param = "param", true
	}
	g.goName[name] = c.Go
	g.tensors[name] = tensorInfo{Go: "@" + name, Dims: info.Dims, Trans: true}
	g.transAux = append(g.transAux, c)
	return name
}
