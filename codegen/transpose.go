package codegen

import (
	"strings"

	"github.com/vigen-go/vigen/derive"
	"github.com/vigen-go/vigen/spec/ir"
)

// auxReads rewrites, in a kernel's expression, reads of model tensors
// (data, consts, params) that a data point makes into reads of aux values
// computed with the others (computeAux, between and after M-steps):
//
//   - a matrix read at a data-given column for each of its rows, β[k, w[n]]
//     for every topic k, reads its transposed copy (transposedOf): the K
//     values a data point reads are then one contiguous row instead of K
//     cache lines a vocabulary apart (reads along a row keep the matrix);
//   - log of a tensor read at a data-given index reads its elementwise
//     logarithm (loggedOf): CTM's ELBO takes log β_k,w for every topic at
//     every entry, K·(entries) logarithms per evaluation against K·V once
//     per M-step.
//
// local holds the kernel's own parameters, never rewritten. The rewrite
// rebuilds e, renaming its bound indices, so it is done only where a read
// changes, and other kernels print as they did.
func (g *gen) auxReads(e derive.Expr, local map[string]tensorInfo) derive.Expr {
	rewrite := func(x derive.Expr) (derive.Expr, bool) {
		if t, ok := x.(*derive.Tensor); ok {
			if name, ok := g.columnRead(t, local); ok {
				return derive.T(name, t.Idx...), true
			}
			return nil, false
		}
		return g.logRead(x, local)
	}
	any := false
	derive.Visit(e, func(x derive.Expr) {
		if !any {
			_, any = rewrite(x)
		}
	})
	if !any {
		return e
	}
	return derive.Rewrite(e, rewrite)
}

// columnRead reports whether t reads a model matrix at a data-given column
// (see auxReads), and if so the name of its transposed copy.
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

// logRead reports whether x is log of a read of a model tensor at a
// data-given index, and if so its rewrite: a read of the log of the tensor,
// or of its transposed copy where the read is a column (columnRead).
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
	v := g.m.Lookup(t.Name)
	if !gathered || v == nil || v.Type.Kind == ir.Int || v.Role != ir.RoleParam && v.Role != ir.RoleConst && v.Role != ir.RoleData {
		return nil, false
	}
	name := t.Name
	if tn, ok := g.columnRead(t, local); ok {
		name = tn
	}
	info, ok := g.tensors[name]
	if !ok || len(info.Dims) != len(t.Idx) {
		return nil, false
	}
	return derive.T(g.loggedOf(name, v, info), t.Idx...), true
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
