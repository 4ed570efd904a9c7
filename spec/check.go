package spec

import (
	"fmt"
	"path/filepath"

	"github.com/alecthomas/participle/v2/lexer"

	"github.com/vigen-go/vigen/spec/ir"
)

// Check resolves names, types, shapes, plates and roles in f and returns
// the model IR. All errors found are returned together as an ErrorList,
// sorted by position; on error the model is nil.
func Check(f *File) (*ir.Model, error) {
	if f == nil {
		return nil, ErrorList{{Msg: "no file to check"}}
	}
	c := &checker{
		file:  filepath.Base(f.Pos.Filename),
		syms:  make(map[string]*symbol),
		loops: make(map[string]lexer.Position),
		model: &ir.Model{},
		letAt: make(map[string]lexer.Position),
		// letMentioned: let names used where they are not visible
		letMentioned: make(map[string]bool),
		// termRead: the latents read by `factor` statements
		termRead: make(map[string]bool),
	}
	c.model.File = c.file
	if f.Name == nil {
		c.errorf(f.Pos, "a model file starts with `model NAME`", "missing `model NAME`")
	} else {
		c.model.Name, c.model.NamePos = f.Name.Name, c.pos(f.Name.Pos)
		if len(f.Name.Name) > MaxModelName {
			c.errorf(f.Name.Pos, "rename the model: its name names the generated package's files and vigen run's build directory, and file systems limit a file name to 255 bytes",
				"the model name is %d bytes long; at most %d", len(f.Name.Name), MaxModelName)
		}
	}
	c.declare(f.Decls)
	c.resolveTypes()
	c.checkDecls()
	c.collectLets(f.Stmts)
	c.stmts(f.Stmts, nil, nil)
	c.settlePending()
	c.checkLets()
	c.checkPriors()
	c.checkArgDomains()
	c.checkUsage()
	c.checkCycles()
	c.addFixedSizes()
	c.errs.Sort()
	if err := c.errs.Err(); err != nil {
		return nil, err
	}
	return c.model, nil
}

// MaxModelName is the longest model name, in bytes: the name goes into
// file and directory names (the generated file, vigen run's build directory
// with a 17-byte suffix, temporary files), which most file systems limit to
// 255 bytes.
const MaxModelName = 128

// checker holds the state of one Check.
type checker struct {
	file  string
	errs  ErrorList
	model *ir.Model
	syms  map[string]*symbol
	order []*symbol // declaration order, sizes included
	// loops records, for every loop index name, the first loop that binds
	// it, so that a use outside the loop gets a helpful hint.
	loops map[string]lexer.Position
	// lets are the `let` definitions checked so far, in source order;
	// letAt is where each let name is first defined (let.go).
	lets     []*letDef
	letAt    map[string]lexer.Position
	termRead map[string]bool // latents read by `factor` statements
	// letMentioned are let names used where no definition is visible
	// (reported there, so not again as unused).
	letMentioned map[string]bool
	// pend are the pending dimensions of vectors built in the model
	// (algebra.go), by name and in order of creation.
	pend      map[string]*pendSize
	pendOrder []*pendSize
	// fixed are the implicit sizes of literal dimensions (fixedSize).
	fixed []*ir.Var
}

// symbol is a declared name.
type symbol struct {
	v      *ir.Var
	decl   *VarDecl // nil for sizes
	ok     bool     // the declaration (type, treatment, default) checked cleanly
	read   bool     // read by some expression (a factor argument, an index, a plate)
	priors []*ir.Factor
	deps   []*ir.Var // variables read by the arguments of its factors
}

func (c *checker) pos(p lexer.Position) ir.Pos {
	return ir.Pos{File: c.file, Line: p.Line, Col: p.Column}
}

// errorf records an error at p with an optional hint.
func (c *checker) errorf(p lexer.Position, hint, format string, args ...any) {
	c.errs = append(c.errs, &Error{Pos: c.pos(p), Msg: fmt.Sprintf(format, args...), Hint: hint})
}

// errorAt records an error at an IR position.
func (c *checker) errorAt(p ir.Pos, hint, format string, args ...any) {
	p.File = c.file
	c.errs = append(c.errs, &Error{Pos: p, Msg: fmt.Sprintf(format, args...), Hint: hint})
}

// where formats a position for use inside a message.
func (c *checker) where(p ir.Pos) string {
	return fmt.Sprintf("%s:%d:%d", c.file, p.Line, p.Col)
}

// describe names a variable with its role, e.g. "data x".
func describe(v *ir.Var) string { return v.Role.String() + " " + v.Name }

// roleNouns say what a role is, for "x is data, not a size".
var roleNouns = map[ir.Role]string{
	ir.RoleSize:   "a size",
	ir.RoleData:   "data",
	ir.RoleConst:  "a const",
	ir.RoleParam:  "a param",
	ir.RoleLatent: "a latent variable",
}
