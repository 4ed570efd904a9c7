package golden

import (
	"fmt"
	"go/ast"
	"go/parser"
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
