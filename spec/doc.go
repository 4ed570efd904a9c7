// Package spec reads vigen's modelling language (.vi files): Parse turns
// source into an AST whose nodes keep their source positions, and Check
// resolves and checks the AST and produces the model IR (package spec/ir),
// the only view of a model that later stages see. Load does both.
//
// The language is described in README.md beside this file. Errors are
// collected rather than reported one at a time: Check returns an ErrorList,
// sorted by position, each entry formatted as "model.vi:LINE:COL: message"
// with an optional hint on the following line.
//
// The checker is table-driven: distributions and functions are checked
// against the signatures in ir.Families and ir.Funcs by unifying their
// shape patterns ("", "K", "KxK") with the sizes of the actual arguments,
// and type names against the typeCtors table.
package spec
