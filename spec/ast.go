package spec

import "github.com/alecthomas/participle/v2/lexer"

// The AST is what Parse returns: a faithful, position-carrying image of the
// source. Names are not resolved and nothing is checked; Check does that and
// produces the model IR, which later stages use instead of the AST.

// Node is implemented by every AST node.
type Node interface {
	// Position is the position of the node's first token (for binary
	// expressions, of the operator).
	Position() lexer.Position
}

// File is a parsed .vi file: `model NAME` followed by declarations and
// statements, which may be interleaved.
type File struct {
	Pos   lexer.Position
	Name  *Ident // the model's name
	Decls []Decl // in source order
	Stmts []Stmt // top-level statements, in source order
}

// Ident is a name as written in the source.
type Ident struct {
	Pos  lexer.Position
	Name string
}

// Decl is a declaration: *SizeDecl or *VarDecl.
type Decl interface {
	Node
	declNode()
}

// SizeDecl is `size A, B = 2, ...`: names, each with an optional default.
type SizeDecl struct {
	Pos   lexer.Position
	Names []*Ident
	// Defaults holds, for each name, its default as written (`= 2`), or
	// nil where it has none; checked to be a whole number of at least 1.
	Defaults []*Bound
}

// VarDecl is `ROLE NAME : TYPE [TREATMENT] [= DEFAULT]` where ROLE is one of
// data, const, param, latent.
type VarDecl struct {
	Pos       lexer.Position
	Role      string // "data", "const", "param" or "latent"
	Name      *Ident
	Type      *TypeExpr
	Treatment *Treatment // nil when absent
	Default   Expr       // nil when absent
}

// TypeExpr is a type as written: `real`, `int[N] in 0..1`, `cov[P]`,
// `simplex[K, V]`, `bag[D] of 1..V`.
type TypeExpr struct {
	Pos    lexer.Position
	Name   *Ident       // real, int, cov, simplex, ordered, positive_ordered or bag (checked later)
	Bounds []*TypeBound // `<lower=LO, upper=HI>` as written; nil when absent
	Dims   []*Bound     // the bracketed dimensions; nil when absent
	Range  *Range       // `in LO..HI` or `of LO..HI`; nil when absent
}

// TypeBound is one `lower=EXPR` or `upper=EXPR` of a type's `<...>`, as in
// Stan's `real<lower=0>`.
type TypeBound struct {
	Pos   lexer.Position
	Name  *Ident // lower or upper (checked later)
	Value Expr
}

// Range is `in LO..HI` (int ranges) or `of LO..HI` (bag term ids).
type Range struct {
	Pos     lexer.Position
	Keyword string // "in" or "of"
	Lo, Hi  *Bound
}

// Bound is an integer literal (possibly negative) or a name; used for
// range ends, dimensions (a size name, or a literal such as the 2 of
// ordered[2]) and size defaults.
type Bound struct {
	Pos  lexer.Position
	Neg  bool   // a leading minus sign
	Text string // the literal or the name
}

// IsName reports whether the bound is a name rather than a number.
func (b *Bound) IsName() bool {
	if b.Text == "" {
		return false
	}
	c := b.Text[0]
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// Treatment is `conjugate`, or `nonconjugate METHOD`.
type Treatment struct {
	Pos    lexer.Position
	Kind   string // "conjugate" or "nonconjugate"
	Method *Ident // laplace, delta or ncvmp; nil when absent
}

// Stmt is a statement: *TildeStmt, *ForStmt, *LetStmt or *FactorStmt.
type Stmt interface {
	Node
	stmtNode()
}

// TildeStmt is `TARGET ~ Dist(ARGS)`.
type TildeStmt struct {
	Pos    lexer.Position
	Target Expr
	Tilde  lexer.Position // position of the `~`
	Dist   *Ident
	Args   []Expr
}

// LetStmt is a deterministic definition, `let NAME = VALUE`, or one
// element of an array defined inside loops, `let NAME[I, ...] = VALUE` with
// I the indices of enclosing loops.
type LetStmt struct {
	Pos     lexer.Position
	Name    *Ident
	Indices []Expr // nil when not indexed
	Value   Expr
}

// FactorStmt is `factor EXPR`: EXPR is added to the log density (Stan's
// `target += EXPR`).
type FactorStmt struct {
	Pos  lexer.Position
	Expr Expr
}

// ForStmt is a plate: `for INDEX in FROM:TO { BODY }`, or a loop over the
// tokens of a bag document, `for INDEX in FROM { BODY }` (To == nil).
type ForStmt struct {
	Pos   lexer.Position
	Index *Ident
	From  Expr
	To    Expr // nil for a bag-token loop
	Body  []Stmt
}

// Expr is an expression: *Number, *Ident, *IndexExpr, *CallExpr,
// *VectorExpr, *BinaryExpr or *UnaryExpr.
type Expr interface {
	Node
	exprNode()
}

// Number is a numeric literal.
type Number struct {
	Pos  lexer.Position
	Text string
}

// IndexExpr is `X[I1, ..., Ik]`.
type IndexExpr struct {
	Pos     lexer.Position
	X       Expr
	Lbrack  lexer.Position
	Indices []Expr
}

// CallExpr is `F(ARGS)`.
type CallExpr struct {
	Pos  lexer.Position
	Func *Ident
	Args []Expr
}

// BinaryExpr is `X op Y` with op one of + - * / ^, OpElemMul (`.*`) or
// OpElemDiv (`./`); Pos is the operator's.
type BinaryExpr struct {
	Pos  lexer.Position
	Op   byte
	X, Y Expr
}

// The operators of BinaryExpr written with two characters.
const (
	OpElemMul byte = 'M' // `.*`, the elementwise product
	OpElemDiv byte = 'D' // `./`, the elementwise quotient
)

// OpTranspose is the Op of a UnaryExpr `X'`, a transpose.
const OpTranspose byte = '\''

// opString is how an operator is written.
func opString(op byte) string {
	switch op {
	case OpElemMul:
		return ".*"
	case OpElemDiv:
		return "./"
	}
	return string(op)
}

// VectorExpr is a vector literal `[E1, ..., En]` of scalars.
type VectorExpr struct {
	Pos   lexer.Position
	Elems []Expr
}

// UnaryExpr is `-X`, or the transpose `X'` (Op OpTranspose).
type UnaryExpr struct {
	Pos lexer.Position
	Op  byte
	X   Expr
}

func (n *File) Position() lexer.Position       { return n.Pos }
func (n *Ident) Position() lexer.Position      { return n.Pos }
func (n *SizeDecl) Position() lexer.Position   { return n.Pos }
func (n *VarDecl) Position() lexer.Position    { return n.Pos }
func (n *TypeExpr) Position() lexer.Position   { return n.Pos }
func (n *Range) Position() lexer.Position      { return n.Pos }
func (n *TypeBound) Position() lexer.Position  { return n.Pos }
func (n *Bound) Position() lexer.Position      { return n.Pos }
func (n *Treatment) Position() lexer.Position  { return n.Pos }
func (n *TildeStmt) Position() lexer.Position  { return n.Pos }
func (n *ForStmt) Position() lexer.Position    { return n.Pos }
func (n *LetStmt) Position() lexer.Position    { return n.Pos }
func (n *FactorStmt) Position() lexer.Position { return n.Pos }
func (n *Number) Position() lexer.Position     { return n.Pos }
func (n *IndexExpr) Position() lexer.Position  { return n.Pos }
func (n *CallExpr) Position() lexer.Position   { return n.Pos }
func (n *BinaryExpr) Position() lexer.Position { return n.Pos }
func (n *UnaryExpr) Position() lexer.Position  { return n.Pos }
func (n *VectorExpr) Position() lexer.Position { return n.Pos }

func (*SizeDecl) declNode() {}
func (*VarDecl) declNode()  {}

func (*TildeStmt) stmtNode()  {}
func (*ForStmt) stmtNode()    {}
func (*LetStmt) stmtNode()    {}
func (*FactorStmt) stmtNode() {}

func (*Number) exprNode()     {}
func (*Ident) exprNode()      {}
func (*IndexExpr) exprNode()  {}
func (*CallExpr) exprNode()   {}
func (*BinaryExpr) exprNode() {}
func (*UnaryExpr) exprNode()  {}
func (*VectorExpr) exprNode() {}
