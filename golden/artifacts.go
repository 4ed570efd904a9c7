package golden

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"path"
	"regexp"
	"strconv"
	"strings"
)

// glueArtifacts are traces of code assembled from strings without regard
// for what it says (issue 17): constant conditions, zero offsets and
// bounds, unit factors, additions of zero.
var glueArtifacts = []string{"!false", "true &&", "&& true", "|| false", "false ||", "[0:", "_ = change"}

// glueArtifactREs are the artifacts that need context: 0*(x) but not
// t10*(x) or 2.0*(x); x*1) but not x*10); += 0.0 but not += 0.01.
var glueArtifactREs = []*regexp.Regexp{regexp.MustCompile(`(^|[^\w.])0\*\(`), regexp.MustCompile(`\*1\)`),
	regexp.MustCompile(`[-+]= 0(\.0*)?([^\w.]|$)`)}

// Artifacts lists, as "line N: what: the line", the traces of string
// assembly in the generated Go file src: glueArtifacts, an else after a
// branch that ends in return, a loop whose body always leaves on its first
// pass, and an import the file does not use. A file that does not parse
// is one artifact.
func Artifacts(src []byte) []string {
	var out []string
	lines := strings.Split(string(src), "\n")
	for n, line := range lines {
		for _, a := range glueArtifacts {
			if strings.Contains(line, a) {
				out = append(out, fmt.Sprintf("line %d: %q: %s", n+1, a, strings.TrimSpace(line)))
			}
		}
		for _, re := range glueArtifactREs {
			if re.MatchString(line) {
				out = append(out, fmt.Sprintf("line %d: %q: %s", n+1, re.String(), strings.TrimSpace(line)))
			}
		}
		if n > 0 && strings.HasPrefix(strings.TrimSpace(line), "} else") && strings.HasPrefix(strings.TrimSpace(lines[n-1]), "return") {
			out = append(out, fmt.Sprintf("line %d: else after return: %s", n+1, strings.TrimSpace(line)))
		}
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, 0)
	if err != nil {
		return append(out, "does not parse: "+err.Error())
	}
	used := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if id, ok := n.X.(*ast.Ident); ok {
				used[id.Name] = true
			}
		case *ast.ForStmt:
			out = append(out, firstPassExit(fset, n.Body)...)
		case *ast.RangeStmt:
			out = append(out, firstPassExit(fset, n.Body)...)
		}
		return true
	})
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		name := path.Base(p)
		if strings.HasPrefix(name, "v") && strings.Trim(name[1:], "0123456789") == "" {
			name = path.Base(path.Dir(p)) // math/rand/v2
		}
		if imp.Name != nil {
			name = imp.Name.Name
		}
		if !used[name] && name != "_" {
			out = append(out, fmt.Sprintf("line %d: import %s is not used", fset.Position(imp.Pos()).Line, imp.Path.Value))
		}
	}
	return out
}

// firstPassExit reports a loop body whose last statement leaves the loop
// unconditionally (return or an unlabeled break): the loop never repeats.
func firstPassExit(fset *token.FileSet, body *ast.BlockStmt) []string {
	if len(body.List) == 0 {
		return nil
	}
	last := body.List[len(body.List)-1]
	switch s := last.(type) {
	case *ast.ReturnStmt:
	case *ast.BranchStmt:
		if s.Tok != token.BREAK || s.Label != nil {
			return nil
		}
	default:
		return nil
	}
	return []string{fmt.Sprintf("line %d: the loop always leaves on its first pass", fset.Position(last.Pos()).Line)}
}

// The size lint (issue 39): two traces of derivative code that does not
// grow linearly with the model, counted rather than forbidden while the
// examples still have them (TestLintRatchet holds each example's counts
// and lets them only fall).

// OneTripLoops lists, as "line N: ...", the for loops of the Go file src
// that run exactly once, `for i := 0; i < 1; i++` (a scalar generated as a
// one-element vector): an init `X := a`, a condition `X < a+1` or
// `X <= a` and a post `X++` or `X += 1`, with a an integer literal. A file
// that does not parse is one entry.
func OneTripLoops(src []byte) []string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, 0)
	if err != nil {
		return []string{"does not parse: " + err.Error()}
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		if s, ok := n.(*ast.ForStmt); ok && oneTrip(s) {
			out = append(out, fmt.Sprintf("line %d: the loop runs once: %s", fset.Position(s.Pos()).Line, loopHeader(fset, s)))
		}
		return true
	})
	return out
}

// oneTrip reports whether the loop s runs exactly once by its header.
func oneTrip(s *ast.ForStmt) bool {
	init, ok := s.Init.(*ast.AssignStmt)
	if !ok || init.Tok != token.DEFINE || len(init.Lhs) != 1 || len(init.Rhs) != 1 {
		return false
	}
	v, ok := init.Lhs[0].(*ast.Ident)
	if !ok {
		return false
	}
	lo, ok := intLit(init.Rhs[0])
	if !ok {
		return false
	}
	cond, ok := s.Cond.(*ast.BinaryExpr)
	if !ok {
		return false
	}
	if x, ok := cond.X.(*ast.Ident); !ok || x.Name != v.Name {
		return false
	}
	hi, ok := intLit(cond.Y)
	if !ok || !(cond.Op == token.LSS && hi == lo+1 || cond.Op == token.LEQ && hi == lo) {
		return false
	}
	switch p := s.Post.(type) {
	case *ast.IncDecStmt:
		x, ok := p.X.(*ast.Ident)
		return ok && x.Name == v.Name && p.Tok == token.INC
	case *ast.AssignStmt:
		if p.Tok != token.ADD_ASSIGN || len(p.Lhs) != 1 || len(p.Rhs) != 1 {
			return false
		}
		x, ok := p.Lhs[0].(*ast.Ident)
		one, isLit := intLit(p.Rhs[0])
		return ok && x.Name == v.Name && isLit && one == 1
	}
	return false
}

// intLit is the value of an integer literal.
func intLit(e ast.Expr) (int64, bool) {
	b, ok := e.(*ast.BasicLit)
	if !ok || b.Kind != token.INT {
		return 0, false
	}
	v, err := strconv.ParseInt(b.Value, 0, 64)
	return v, err == nil
}

// loopHeader prints a for loop's header, `for X := 0; X < 1; X++`.
func loopHeader(fset *token.FileSet, s *ast.ForStmt) string {
	var b strings.Builder
	b.WriteString("for ")
	for i, n := range []ast.Node{s.Init, s.Cond, s.Post} {
		if i > 0 {
			b.WriteString("; ")
		}
		if err := printer.Fprint(&b, fset, n); err != nil {
			return "for …"
		}
	}
	return b.String()
}

// UnusedParams lists, as "line N: F: parameter p is never read", the named
// parameters of the functions and methods of the Go file src that their
// body never refers to (a parameter of a generated kernel that the kernel
// does not need; `_` and unnamed parameters are not counted, receivers are
// not parameters). References are resolved by scope, so a local variable
// of the same name does not count as a use. A file that does not parse is
// one entry.
func UnusedParams(src []byte) []string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, 0)
	if err != nil {
		return []string{"does not parse: " + err.Error()}
	}
	var out []string
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		params := map[*ast.Object]bool{}
		for _, field := range fd.Type.Params.List {
			for _, name := range field.Names {
				if name.Name != "_" && name.Obj != nil {
					params[name.Obj] = false
				}
			}
		}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && id.Obj != nil {
				if _, ok := params[id.Obj]; ok {
					params[id.Obj] = true
				}
			}
			return true
		})
		name := fd.Name.Name
		if fd.Recv != nil && len(fd.Recv.List) > 0 {
			t := fd.Recv.List[0].Type
			if s, ok := t.(*ast.StarExpr); ok {
				t = s.X
			}
			if id, ok := t.(*ast.Ident); ok {
				name = id.Name + "." + name
			}
		}
		for _, field := range fd.Type.Params.List {
			for _, p := range field.Names {
				if used, ok := params[p.Obj]; ok && !used {
					out = append(out, fmt.Sprintf("line %d: %s: parameter %s is never read", fset.Position(p.Pos()).Line, name, p.Name))
				}
			}
		}
	}
	return out
}
