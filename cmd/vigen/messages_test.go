package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// compilerMessage is one positioned error format of derive or codegen: a
// fmt.Errorf whose format starts with "%s: " (the position).
type compilerMessage struct {
	at     string // file:line in vigen's source
	format string
}

// compilerMessages lists the positioned error formats in the non-test Go
// files of derive/ and codegen/.
func compilerMessages(t *testing.T) []compilerMessage {
	t.Helper()
	var out []compilerMessage
	for _, dir := range []string{"derive", "codegen"} {
		files, _ := filepath.Glob(filepath.Join("..", "..", dir, "*.go"))
		fset := token.NewFileSet()
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) == 0 {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || sel.Sel.Name != "Errorf" {
					return true
				}
				lit, ok := call.Args[0].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil || !strings.HasPrefix(s, "%s: ") {
					return true
				}
				p := fset.Position(lit.Pos())
				out = append(out, compilerMessage{at: filepath.Join(dir, filepath.Base(p.Filename)) + ":" + strconv.Itoa(p.Line), format: s})
				return true
			})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].at < out[j].at })
	return out
}

// formatPattern turns a format into a regexp over one printed message:
// verbs match anything on the line.
func formatPattern(format string) *regexp.Regexp {
	verb := regexp.MustCompile(`%[-+# 0-9.]*[sdvqgfx]`)
	var sb strings.Builder
	last := 0
	for _, m := range verb.FindAllStringIndex(format, -1) {
		sb.WriteString(regexp.QuoteMeta(strings.ReplaceAll(format[last:m[0]], "%%", "%")))
		sb.WriteString(`.*?`)
		last = m[1]
	}
	sb.WriteString(regexp.QuoteMeta(strings.ReplaceAll(format[last:], "%%", "%")))
	return regexp.MustCompile(`(?m)^` + sb.String())
}

// Every positioned message derive and codegen can produce is shown by a
// golden bad model (spec/testdata/bad, run through vigen check by
// TestBadModels), and no message stops in the middle of a sentence.
func TestEveryCompilerMessageHasAGolden(t *testing.T) {
	msgs := compilerMessages(t)
	if len(msgs) < 30 {
		t.Fatalf("found only %d positioned messages in derive and codegen", len(msgs))
	}
	goldens, _ := filepath.Glob(filepath.Join("..", "..", "spec", "testdata", "bad", "*.stderr"))
	var all strings.Builder
	for _, g := range goldens {
		b, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		all.Write(b)
	}
	text := all.String()
	for _, m := range msgs {
		for _, part := range strings.Split(m.format, "\n") {
			p := strings.TrimRight(part, " ")
			if strings.HasSuffix(p, ",") || strings.HasSuffix(p, ";") || part != p {
				t.Errorf("%s: message stops mid-sentence: %q", m.at, m.format)
			}
		}
		if reason, ok := unreachableMessages[m.format]; ok {
			if reason == "" {
				t.Errorf("%s: listed as unreachable without a reason", m.at)
			}
			continue
		}
		if !formatPattern(m.format).MatchString(text) {
			t.Errorf("%s: no golden bad model in spec/testdata/bad shows %q", m.at, strings.SplitN(m.format, "\n", 2)[0])
		}
	}
}

// unreachableMessages are positioned errors that the checker's own errors
// always come first for, by format, with the reason.
var unreachableMessages = map[string]string{}
