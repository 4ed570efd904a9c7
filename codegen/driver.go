package codegen

import (
	"bytes"
	"fmt"
	"go/format"
	"text/template"

	"github.com/vigen-go/vigen/spec/ir"
	"github.com/vigen-go/vigen/templates"
)

// driverCtx fills templates/run.go.tmpl.
type driverCtx struct {
	Source, Model string
	// Import is the import path of the package Generate wrote for the model.
	Import string
}

// Driver returns the main.go of a command that fits m with the package
// Generate emitted for it, imported from importPath: it reads a JSON data
// file (-data), reports progress on stderr and writes the Result as JSON
// (stdout or -out). `vigen run` builds and runs it.
func Driver(m *ir.Model, importPath string) (File, error) {
	tmpl, err := template.ParseFS(templates.FS, "run.go.tmpl")
	if err != nil {
		return File{}, err
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, driverCtx{Source: m.File, Model: m.Name, Import: importPath}); err != nil {
		return File{}, err
	}
	src, err := format.Source(buf.Bytes())
	if err != nil {
		return File{}, fmt.Errorf("codegen: generated driver does not parse (a bug in vigen): %v", err)
	}
	return File{Name: "main.go", Src: src}, nil
}
