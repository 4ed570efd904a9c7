package codegen

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/vigen-go/vigen/spec"
)

// The type checker for generated packages: go/types with the gc importer
// reading the export data `go list -export` compiles once per test process
// for everything generated code may import (the runtime and the standard
// packages of knownImports, with their dependencies). Type-checking one
// generated package then takes milliseconds, so FuzzGenerate can afford it
// for every input.

var typeCheck struct {
	once    sync.Once
	err     error
	exports map[string]string // import path → export data file
	mu      sync.Mutex        // guards imp, which caches packages and is not safe for concurrent use
	imp     types.Importer
	fset    *token.FileSet
}

func loadExports() {
	args := []string{"list", "-export", "-deps", "-f", "{{.ImportPath}} {{.Export}}"}
	for _, p := range knownImports {
		args = append(args, string(p))
	}
	cmd := exec.Command("go", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		typeCheck.err = fmt.Errorf("go list -export: %v\n%s", err, stderr.String())
		return
	}
	typeCheck.exports = map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		path, file, ok := strings.Cut(sc.Text(), " ")
		if ok && file != "" {
			typeCheck.exports[path] = file
		}
	}
	typeCheck.fset = token.NewFileSet()
	typeCheck.imp = importer.ForCompiler(typeCheck.fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := typeCheck.exports[path]
		if !ok {
			return nil, fmt.Errorf("generated code imports %q, which the type checker does not know", path)
		}
		return os.Open(f)
	})
}

// typeCheckFiles type-checks generated files as one package and returns
// the type errors (nil if the package compiles).
func typeCheckFiles(files []File) error {
	typeCheck.once.Do(loadExports)
	if typeCheck.err != nil {
		return typeCheck.err
	}
	typeCheck.mu.Lock()
	defer typeCheck.mu.Unlock()
	var parsed []*ast.File
	for _, f := range files {
		af, err := parser.ParseFile(typeCheck.fset, f.Name, f.Src, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		parsed = append(parsed, af)
	}
	var errs []string
	conf := types.Config{Importer: typeCheck.imp, Error: func(err error) {
		if len(errs) < 10 {
			errs = append(errs, err.Error())
		}
	}}
	conf.Check(parsed[0].Name.Name, typeCheck.fset, parsed, nil)
	if len(errs) > 0 {
		return fmt.Errorf("generated code does not compile:\n%s", strings.Join(errs, "\n"))
	}
	return nil
}

// generateChecked generates src (named name.vi) and type-checks the result.
func generateChecked(t *testing.T, name, src string) []File {
	t.Helper()
	m, err := spec.Load(name+".vi", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	files, err := generateModel(m, Options{Methods: []string{"delta"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := typeCheckFiles(files); err != nil {
		t.Fatal(err)
	}
	return files
}

// The type checker itself: it must accept a generated example and reject
// generated code with a type error.
func TestTypeCheckFiles(t *testing.T) {
	files := generateChecked(t, "linreg", linregVI)
	bad := []File{{Name: files[0].Name, Src: append(append([]byte(nil), files[0].Src...), "\nvar _ int = \"x\"\n"...)}}
	if err := typeCheckFiles(bad); err == nil || !strings.Contains(err.Error(), "cannot use") {
		t.Errorf("a type error was not reported: %v", err)
	}
}
