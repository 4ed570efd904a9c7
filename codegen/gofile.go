package codegen

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/scanner"
	"go/token"
	"sort"
	"strconv"
	"strings"
)

// This file is a small Go-writing layer for the glue of a generated
// package (Fit, SVI, M-steps, held-out evaluation), in the spirit of
// protogen's GeneratedFile: lines are written with P and Pf, package-level
// identifiers of other packages are GoIdents that record their import when
// printed, and a few statement helpers fold what is known while generating
// (constant conditions, zero offsets, unit factors, else after return), so
// that such artifacts never reach the output. Indentation is left to
// go/format.

// goImportPath is the import path of a package that generated code uses.
type goImportPath string

// The packages generated code may import.
const (
	goContext goImportPath = "context"
	goFmt     goImportPath = "fmt"
	goIO      goImportPath = "io"
	goMath    goImportPath = "math"
	goRand    goImportPath = "math/rand/v2"
	goStrings goImportPath = "strings"
	goTime    goImportPath = "time"
	goRuntime goImportPath = "github.com/vigen-go/vigen/runtime"
)

// knownImports are the packages generated code may use; text not written
// through a goFile (foreignImports) is searched for their names.
var knownImports = []goImportPath{goContext, goFmt, goIO, goMath, goRand, goStrings, goTime, goRuntime}

// Ident is the identifier name declared by package p.
func (p goImportPath) Ident(name string) GoIdent { return GoIdent{ImportPath: p, Name: name} }

// packageName is the name p's package is referred to by: its path's last
// element, or the one before a major-version suffix (math/rand/v2 → rand).
func (p goImportPath) packageName() string {
	parts := strings.Split(string(p), "/")
	last := parts[len(parts)-1]
	if len(parts) > 1 && len(last) > 1 && last[0] == 'v' && strings.Trim(last[1:], "0123456789") == "" {
		return parts[len(parts)-2]
	}
	return last
}

// GoIdent is a package-level Go identifier of another package, printed
// qualified (runtime.Fill) by a goFile, which records its import.
type GoIdent struct {
	ImportPath goImportPath
	Name       string
}

// rt is the runtime identifier name.
func rt(name string) GoIdent { return goRuntime.Ident(name) }

// goFile is Go source being written, with the imports its GoIdents need.
type goFile struct {
	sb      bytes.Buffer
	imports map[goImportPath]bool
	// returned says the last statement written was a return, so that an
	// else branch after it is written as the statements following the if.
	returned bool
	// declared are the names Define declared in the current function.
	declared map[string]bool
}

func newGoFile() *goFile { return &goFile{imports: map[goImportPath]bool{}} }

// String returns the source written so far.
func (w *goFile) String() string { return w.sb.String() }

// text is v as Go source: a GoIdent qualified, its import recorded; a
// goBool's source; a string as it is; anything else as fmt.Sprint.
func (w *goFile) text(v any) any {
	switch v := v.(type) {
	case GoIdent:
		w.imports[v.ImportPath] = true
		return v.ImportPath.packageName() + "." + v.Name
	case goBool:
		return v.src
	}
	return v
}

// P writes its arguments and a newline.
func (w *goFile) P(args ...any) {
	for _, a := range args {
		fmt.Fprint(&w.sb, w.text(a))
	}
	w.sb.WriteByte('\n')
	w.returned = false
}

// Pf writes a line of Go source, code formatted as by fmt.Sprintf with
// GoIdent and goBool arguments printed as Go source. (code is not an
// error message: vigen's messages are collected from their formats.)
func (w *goFile) Pf(code string, args ...any) {
	for k, a := range args {
		args[k] = w.text(a)
	}
	fmt.Fprintf(&w.sb, code, args...)
	w.sb.WriteByte('\n')
	w.returned = false
}

// Sf is Pf's formatting without writing: a Go expression for a later line,
// with the imports of its GoIdents recorded.
func (w *goFile) Sf(code string, args ...any) string {
	for k, a := range args {
		args[k] = w.text(a)
	}
	return fmt.Sprintf(code, args...)
}

// Doc writes text as // comment lines, one per element ("" for a blank
// comment line, a leading tab for an indented one).
func (w *goFile) Doc(lines ...string) {
	for _, l := range lines {
		if strings.HasPrefix(l, "\t") {
			w.P("//" + l)
		} else {
			w.P(strings.TrimRight("// "+l, " "))
		}
	}
}

// Raw writes Go source produced elsewhere (the kernels), recording the
// imports it refers to.
func (w *goFile) Raw(src string) {
	for p := range foreignImports(src) {
		w.imports[p] = true
	}
	w.sb.WriteString(src)
	w.returned = false
}

// Append writes o's source and records its imports.
func (w *goFile) Append(o *goFile) {
	for p := range o.imports {
		w.imports[p] = true
	}
	w.sb.Write(o.sb.Bytes())
	w.returned = false
}

// Block writes head {, the statements body writes, and }.
func (w *goFile) Block(head string, body func()) {
	w.P(head, " {")
	body()
	w.P("}")
}

// Func writes a function or method declaration: its doc comment, the
// signature sig (without func) and its body. Parameters the body does not
// use are renamed _ (blankUnused).
func (w *goFile) Func(doc []string, sig string, body func()) {
	w.P()
	w.Doc(doc...)
	w.declared = map[string]bool{}
	start := w.sb.Len()
	w.Block("func "+sig, body)
	w.declared = nil
	if src, ok := blankUnused(w.sb.Bytes()[start:]); ok {
		w.sb.Truncate(start)
		w.sb.Write(src)
	}
}

// blankUnused renames _ the parameters of the function declaration src
// that its body never names, and reports whether it changed anything (a
// src that does not parse is left to fail later with the whole file).
func blankUnused(src []byte) ([]byte, bool) {
	const pkg = "package p\n"
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", append([]byte(pkg), src...), parser.ParseComments)
	if err != nil || len(f.Decls) != 1 {
		return nil, false
	}
	fn, ok := f.Decls[0].(*ast.FuncDecl)
	if !ok || fn.Body == nil {
		return nil, false
	}
	named := map[string]bool{}
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			ast.Inspect(n.X, func(n ast.Node) bool {
				if id, ok := n.(*ast.Ident); ok {
					named[id.Name] = true
				}
				return true
			})
			return false // n.Sel is a field or method, not a parameter
		case *ast.Ident:
			named[n.Name] = true
		}
		return true
	})
	changed := false
	for _, field := range fn.Type.Params.List {
		for _, id := range field.Names {
			if id.Name != "_" && !named[id.Name] {
				id.Name, changed = "_", true
			}
		}
	}
	if !changed {
		return nil, false
	}
	var buf bytes.Buffer
	if err := format.Node(&buf, fset, f); err != nil {
		return nil, false
	}
	return bytes.TrimLeft(bytes.TrimPrefix(buf.Bytes(), []byte(pkg)), "\n"), true
}

// Define writes lhs := rhs, or lhs = rhs if Define declared every name of
// the comma-separated lhs before in the same function (inside Func), so
// that consecutive calls reuse the variables.
func (w *goFile) Define(lhs, rhs string) {
	op := "="
	for _, n := range strings.Split(lhs, ",") {
		if n = strings.TrimSpace(n); !w.declared[n] {
			op = ":="
		}
		if w.declared != nil {
			w.declared[n] = true
		}
	}
	w.P(lhs, " ", op, " ", rhs)
}

// Return writes a return statement of values.
func (w *goFile) Return(values ...string) {
	if len(values) == 0 {
		w.P("return")
	} else {
		w.P("return ", strings.Join(values, ", "))
	}
	w.returned = true
}

// If writes if cond { then }: nothing if cond is false, then's statements
// alone if it is true.
func (w *goFile) If(cond goBool, then func()) { w.IfElse(cond, then, nil) }

// IfElse writes if cond { then } else { els }, folding a constant cond to
// the branch taken and writing els after the if, without else, when then
// ends in a return.
func (w *goFile) IfElse(cond goBool, then, els func()) {
	switch {
	case cond.isConst(true):
		then()
		return
	case cond.isConst(false):
		if els != nil {
			els()
		}
		return
	}
	w.P("if ", cond.src, " {")
	then()
	if els == nil {
		w.P("}")
		return
	}
	if w.returned {
		w.P("}")
		els()
		return
	}
	w.P("} else {")
	els()
	w.P("}")
}

// IfErr writes if stmt; err != nil { return values }, stmt a simple
// statement setting err (err := m.computeAux()).
func (w *goFile) IfErr(stmt string, values ...string) {
	w.P("if ", stmt, "; err != nil {")
	w.Return(values...)
	w.P("}")
}

// CheckErr writes if err != nil { return values }, after a statement that
// set err.
func (w *goFile) CheckErr(values ...string) {
	w.P("if err != nil {")
	w.Return(values...)
	w.P("}")
}

// goBool is a boolean Go expression, folded while it is built when any
// operand is a constant.
type goBool struct {
	src string
	// konst is "true" or "false" for a constant, else "".
	konst string
}

// cond is the boolean Go expression src.
func cond(src string) goBool { return goBool{src: src} }

// constBool is the constant b.
func constBool(b bool) goBool {
	return goBool{src: strconv.FormatBool(b), konst: strconv.FormatBool(b)}
}

func (b goBool) isConst(v bool) bool { return b.konst == strconv.FormatBool(v) }

// and is b && c, folded.
func (b goBool) and(c goBool) goBool { return b.join("&&", false, c) }

// or is b || c, folded.
func (b goBool) or(c goBool) goBool { return b.join("||", true, c) }

// join is b op c for the operator op whose absorbing constant is
// absorbing (false for &&, true for ||), folded: an operand equal to it is
// the result, its negation leaves the other operand.
func (b goBool) join(op string, absorbing bool, c goBool) goBool {
	switch {
	case b.isConst(absorbing) || c.isConst(!absorbing):
		return b
	case c.isConst(absorbing) || b.isConst(!absorbing):
		return c
	}
	return cond(b.src + " " + op + " " + c.src)
}

// times is k·x as Go source, for offsets of blocks of x elements: "0",
// x, or k*(x) (x parenthesized unless it is a single operand).
func times(k int, x string) string {
	switch k {
	case 0:
		return "0"
	case 1:
		return x
	}
	if strings.ContainsAny(x, "+-*/ ") {
		x = "(" + x + ")"
	}
	return fmt.Sprintf("%d*%s", k, x)
}

// sliceExpr is x[lo:hi] with a zero lo and an empty hi left out.
func sliceExpr(x, lo, hi string) string {
	if lo == "0" {
		lo = ""
	}
	if lo == "" && hi == "" {
		return x
	}
	return x + "[" + lo + ":" + hi + "]"
}

// foreignImports returns the known packages that src, Go source not written
// through a goFile (the template's skeleton, the kernels, the data glue),
// refers to: where a package's name, as an identifier not in a comment or
// a string and not itself selected, is followed by a selector.
func foreignImports(src string) map[goImportPath]bool {
	byName := map[string]goImportPath{}
	for _, p := range knownImports {
		byName[p.packageName()] = p
	}
	used := map[goImportPath]bool{}
	fset := token.NewFileSet()
	var sc scanner.Scanner
	sc.Init(fset.AddFile("", fset.Base(), len(src)), []byte(src), nil, 0)
	prev, last := "", token.ILLEGAL // an identifier not itself selected, and the last token
	for {
		_, tok, lit := sc.Scan()
		if tok == token.EOF {
			break
		}
		if p, ok := byName[prev]; ok && tok == token.PERIOD {
			used[p] = true
		}
		prev = ""
		if tok == token.IDENT && last != token.PERIOD {
			prev = lit
		}
		last = tok
	}
	return used
}

// importBlock is the body of the import declaration for the packages
// used: the standard library's, then the others, each group sorted.
func importBlock(used map[goImportPath]bool) string {
	var std, other []string
	for p := range used {
		if strings.Contains(strings.Split(string(p), "/")[0], ".") {
			other = append(other, strconv.Quote(string(p)))
		} else {
			std = append(std, strconv.Quote(string(p)))
		}
	}
	sort.Strings(std)
	sort.Strings(other)
	if len(std) > 0 && len(other) > 0 {
		std = append(std, "")
	}
	return strings.Join(append(std, other...), "\n\t")
}
