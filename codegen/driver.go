package codegen

import (
	"bytes"
	"fmt"
	"go/format"
	"text/template"

	"github.com/vigen-go/vigen/derive"
	"github.com/vigen-go/vigen/spec/ir"
	"github.com/vigen-go/vigen/templates"
)

// driverCtx fills templates/run.go.tmpl.
type driverCtx struct {
	Source, Model string
	// Import is the import path of the package Generate wrote for the model.
	Import string
	// Bags are the model's bag data variables, which -ldac may read from
	// LDA-C files.
	Bags []driverBag
	// Heldout says the package has Model.Heldout (-heldout-obs, -heldout);
	// NoHeldout says why not.
	Heldout   bool
	NoHeldout string
	// Predict says the package has Predict (-predict, -test); NoPredict
	// says why not.
	Predict   bool
	NoPredict string
	// Columns are the data variables -csv may read from a CSV table:
	// vectors and matrices of numbers, with their dimensions.
	Columns []driverColumn
}

// driverColumn is a data variable of one or two dimensions (size names or
// numbers) that -csv may fill from a CSV table.
type driverColumn struct {
	Name string
	Dims []string
}

// driverBag is a bag data variable and the size naming its term ids' upper
// bound ("" when the bound is a number).
type driverBag struct{ Name, Size string }

// Driver returns the main.go of a command that fits the model of d with
// the package Generate emitted for it, imported from importPath: it reads a JSON data
// file (-data), reports progress on stderr and writes the Result as JSON
// (stdout or -out). `vigen run` builds and runs it.
func Driver(d *derive.Derivation, importPath string) (File, error) {
	m := d.Model
	tmpl, err := template.ParseFS(templates.FS, "run.go.tmpl")
	if err != nil {
		return File{}, err
	}
	ctx := driverCtx{Source: m.File, Model: m.Name, Import: importPath}
	for _, v := range m.VarsWithRole(ir.RoleData) {
		if v.Type.Class == ir.Bag {
			b := driverBag{Name: v.Name}
			if v.Type.Range != nil {
				b.Size = v.Type.Range[1].Size
			}
			ctx.Bags = append(ctx.Bags, b)
		}
	}
	for _, v := range m.VarsWithRole(ir.RoleData) {
		if v.Type.Class == ir.Plain && (v.Type.Rank() == 1 || v.Type.Rank() == 2) {
			ctx.Columns = append(ctx.Columns, driverColumn{Name: v.Name, Dims: v.Type.Dims})
		}
	}
	ctx.Heldout, ctx.NoHeldout = d.Predictive != nil, d.NoPredictiveReason
	ctx.Predict, ctx.NoPredict = d.Predictions != nil, d.NoPredictionsReason
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, ctx); err != nil {
		return File{}, err
	}
	src, err := format.Source(buf.Bytes())
	if err != nil {
		return File{}, fmt.Errorf("codegen: generated driver does not parse (a bug in vigen): %v", err)
	}
	return File{Name: "main.go", Src: src}, nil
}
