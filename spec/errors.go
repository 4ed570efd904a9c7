package spec

import "github.com/vigen-go/vigen/spec/ir"

// Error is one diagnostic about a model source (ir.Error, shared by every
// stage of the compiler).
type Error = ir.Error

// ErrorList is a sorted list of diagnostics (ir.ErrorList).
type ErrorList = ir.ErrorList
