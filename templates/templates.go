// Package templates holds the text/template skeletons of generated files.
// Templates receive a fully computed context (see codegen) and contain no
// logic beyond ranging over it; each starts with a gotype comment naming the
// context type.
package templates

import "embed"

// FS holds the templates.
//
//go:embed *.tmpl
var FS embed.FS
