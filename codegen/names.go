package codegen

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"sort"
	"strings"
	"unicode"

	"github.com/vigen-go/vigen/spec/ir"
)

// goReserved is the one table of identifiers the generator uses itself:
// Go's predeclared names, the packages generated code imports, and every
// name the generated package declares (types, functions, constants and
// methods of Model, state and Params; templates/model.go.tmpl and the
// emitters in this package). Every namer starts with these taken, so a
// name from the model (a Model or Data field, a kernel's local) never
// shadows or collides with one: it gets a trailing underscore instead.
// Names built from a model name (updateTheta, ThetaF) are kept apart by
// stems below. A generator name missing here still cannot clash: generate
// checks the generated package (declaredTwice) and takes a clashing name
// from the model's; the table saves that second generation.
var goReserved = map[string]bool{
	// predeclared
	"bool": true, "byte": true, "cap": true, "close": true, "complex": true, "copy": true,
	"error": true, "false": true, "float32": true, "float64": true, "int": true, "len": true,
	"make": true, "max": true, "min": true, "new": true, "nil": true, "panic": true, "print": true,
	"println": true, "real": true, "string": true, "true": true, "uint": true, "append": true,
	"clear": true, "iota": true, "any": true, "rune": true, "imag": true, "delete": true,
	"recover": true, "comparable": true, "complex64": true, "complex128": true, "float": true,
	"int8": true, "int16": true, "int32": true, "int64": true, "uint8": true, "uint16": true,
	"uint32": true, "uint64": true, "uintptr": true,
	// imported packages (stdImports and the runtime)
	"math": true, "runtime": true, "fmt": true, "io": true, "time": true, "context": true,
	"strings": true, "rand": true,
	// package-level declarations of the generated package
	"Data": true, "LoadData": true, "Model": true, "NewModel": true, "Options": true,
	"Result": true, "LoadResult": true, "Latent": true, "Params": true, "Fit": true,
	"state": true, "scratch": true, "caModel": true,
	// methods of Model
	"MStep": true, "computeAux": true, "withOwnParams": true, "ownParams": true,
	"startParams": true, "paramsResult": true, "newState": true,
	"elboGlobal": true, "elboUnit": true, "mstep": true, "fingerprint": true,
	// fields of Model
	"dataFP": true,
	// methods of state and Params
	"start": true, "methods": true, "latent": true, "Into": true,
}

// stemPrefixes and stemSuffixes make the names of the methods generated
// for one latent or param from its stem S: updateS, SF, SNatural, ... No
// suffix ends another, so distinct stems give distinct method names.
var (
	stemPrefixes = []string{"update", "moments", "gaussian", "mstep", "solve"}
	stemSuffixes = []string{"F", "Delta", "Collapsed", "CollapsedValue", "Target", "Natural", "NaturalExp", "Moments", "Counts", "Objective"}
)

// stemMethods are the method names generated from stem.
func stemMethods(stem string) []string {
	var out []string
	for _, p := range stemPrefixes {
		out = append(out, p+stem)
	}
	for _, s := range stemSuffixes {
		out = append(out, stem+s)
	}
	return out
}

// modelStems gives every name the model declares its stem: an exported Go
// identifier, unique within the model, from which its Data, Params and
// Latent fields (the stem), its Model field (the stem with the first letter
// lower-cased) and its methods (stemMethods) are made. The stem is the name
// with its first letter upper-cased (theta → Theta); a name starting with _
// gets an X in front (_x → X_x); a stem already given to an earlier
// declaration (theta, then Theta), or whose methods would be the
// generator's own (a latent whose stem would make a generated method name
// such as gaussianX twice), gets trailing underscores.
//
// A stem that is in avoid, or whose lower-cased form is, gets trailing
// underscores too: generate passes the names that clashed with the
// generator's own in the generated package (declaredTwice).
func modelStems(m *ir.Model, avoid map[string]bool) map[string]string {
	stems := map[string]string{}
	used := map[string]bool{}
	for _, v := range m.Vars {
		s := exported(v.Name)
		switch {
		case v.Fixed:
			s = "Size" + v.Name // a literal dimension, "2"
		case s[0] == '_':
			s = "X" + s
		}
		for used[s] || reservedMethod(s) || avoid[s] || avoid[lowerFirst(s)] {
			s += "_"
		}
		used[s] = true
		stems[v.Name] = s
	}
	return stems
}

// reservedMethod reports whether a method made from stem is one of the
// generator's own.
func reservedMethod(stem string) bool {
	for _, m := range stemMethods(stem) {
		if goReserved[m] {
			return true
		}
	}
	return false
}

// lowerFirst lower-cases the first letter of an identifier.
func lowerFirst(s string) string {
	r := []rune(s)
	r[0] = unicode.ToLower(r[0])
	return string(r)
}

var tempLike = regexp.MustCompile(`^t[0-9]+$`)

// namer hands out Go identifiers, unique within its scope.
type namer struct{ taken map[string]bool }

func newNamer(extra ...string) *namer {
	n := &namer{taken: map[string]bool{}}
	for k := range goReserved {
		n.taken[k] = true
	}
	for _, e := range extra {
		n.taken[e] = true
	}
	return n
}

// get returns a fresh identifier based on want.
func (n *namer) get(want string) string {
	g := sanitize(want)
	for n.taken[g] || token.IsKeyword(g) || tempLike.MatchString(g) {
		g += "_"
	}
	n.taken[g] = true
	return g
}

func sanitize(s string) string {
	var sb strings.Builder
	upNext := false
	for _, r := range s {
		switch {
		case r == '.' || r == '\'':
			upNext = true
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_':
			if upNext {
				r = unicode.ToUpper(r)
				upNext = false
			}
			sb.WriteRune(r)
		}
	}
	if sb.Len() == 0 {
		return "x"
	}
	return sb.String()
}

// unexported lower-cases the first letter.
func unexported(s string) string {
	s = sanitize(s)
	r := []rune(s)
	r[0] = unicode.ToLower(r[0])
	return string(r)
}

// exported capitalizes the first letter.
func exported(s string) string {
	s = sanitize(s)
	r := []rune(s)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

// keys are m's keys, sorted.
func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// declaredTwice returns the names, sorted, that the package in files
// declares twice in one scope: two package-level declarations, or two
// members (fields and methods) of one type. Go refuses such a package; the
// generator makes one when a name it makes from the model's is one of its
// own.
func declaredTwice(files []File) ([]string, error) {
	scopes, err := declarations(files)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, names := range scopes {
		for name, n := range names {
			if n > 1 && name != "_" && name != "init" {
				seen[name] = true
			}
		}
	}
	return keys(seen), nil
}

// declarations counts the names the package in files declares, by scope:
// "" for the package's, a type's name for its fields and methods.
func declarations(files []File) (map[string]map[string]int, error) {
	fset := token.NewFileSet()
	scopes := map[string]map[string]int{}
	declare := func(scope, name string) {
		if scopes[scope] == nil {
			scopes[scope] = map[string]int{}
		}
		scopes[scope][name]++
	}
	for _, f := range files {
		af, err := parser.ParseFile(fset, f.Name, f.Src, parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("codegen: generated code does not parse (a bug in vigen): %v", err)
		}
		for _, decl := range af.Decls {
			switch decl := decl.(type) {
			case *ast.FuncDecl:
				scope := ""
				if decl.Recv != nil {
					scope = receiverType(decl.Recv.List[0].Type)
				}
				declare(scope, decl.Name.Name)
			case *ast.GenDecl:
				for _, spec := range decl.Specs {
					switch spec := spec.(type) {
					case *ast.TypeSpec:
						declare("", spec.Name.Name)
						if st, ok := spec.Type.(*ast.StructType); ok {
							for _, field := range st.Fields.List {
								for _, n := range field.Names {
									declare(spec.Name.Name, n.Name)
								}
							}
						}
					case *ast.ValueSpec:
						for _, n := range spec.Names {
							declare("", n.Name)
						}
					}
				}
			}
		}
	}
	return scopes, nil
}

// receiverType is the name of a method's receiver type (T of *T or T).
func receiverType(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}
