package spec

import (
	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// keywords are reserved: they cannot be used as names. Type names (real,
// int, ...) and nonconjugate methods (laplace, delta, ncvmp) are ordinary
// identifiers that the checker interprets by position.
var keywords = []string{
	"model", "size", "data", "const", "param", "latent",
	"for", "in", "of", "conjugate", "nonconjugate", "let", "factor",
}

var viLexer = lexer.MustSimple([]lexer.SimpleRule{
	{Name: "Comment", Pattern: `(?:#|//)[^\n]*`},
	{Name: "Whitespace", Pattern: `\s+`},
	{Name: "Keyword", Pattern: `(?:model|size|data|const|param|latent|for|in|of|conjugate|nonconjugate|let|factor)\b`},
	{Name: "Ident", Pattern: `[A-Za-z_][A-Za-z0-9_]*`},
	{Name: "Number", Pattern: `(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?`},
	{Name: "Punct", Pattern: `\.\.|\.\*|\./|[-+*/^~:,=()\[\]{}<>']`},
})

var viParser = participle.MustBuild[gFile](
	participle.Lexer(viLexer),
	participle.Elide("Comment", "Whitespace"),
	participle.UseLookahead(1),
)

// The g* types are the participle grammar. Parse converts them into the
// public AST (ast.go), which has one node type per construct instead of one
// per precedence level.

type gFile struct {
	Pos   lexer.Position
	Name  *gIdent  `parser:"'model' @@"`
	Items []*gItem `parser:"@@*"`
}

type gIdent struct {
	Pos  lexer.Position
	Name string `parser:"@Ident"`
}

type gItem struct {
	Size *gSize `parser:"  @@"`
	Var  *gVar  `parser:"| @@"`
	Stmt *gStmt `parser:"| @@"`
}

type gSize struct {
	Pos   lexer.Position
	Items []*gSizeItem `parser:"'size' @@ (',' @@)*"`
}

// gSizeItem is one name of a `size` declaration, with its optional
// default: `K = 2`.
type gSizeItem struct {
	Name    *gIdent `parser:"@@"`
	Default *gBound `parser:"('=' @@)?"`
}

type gVar struct {
	Pos       lexer.Position
	Role      string      `parser:"@('data' | 'const' | 'param' | 'latent')"`
	Name      *gIdent     `parser:"@@ ':'"`
	Type      *gType      `parser:"@@"`
	Treatment *gTreatment `parser:"@@?"`
	Default   *gExpr      `parser:"('=' @@)?"`
}

type gType struct {
	Pos    lexer.Position
	Name   *gIdent      `parser:"@@"`
	Bounds *gTypeBounds `parser:"@@?"`
	Dims   []*gBound    `parser:"('[' @@ (',' @@)* ']')?"`
	Range  *gRange      `parser:"@@?"`
}

// gTypeBounds is Stan's `<lower=LO, upper=HI>` after a type name.
type gTypeBounds struct {
	Pos    lexer.Position
	Bounds []*gTypeBound `parser:"'<' @@ (',' @@)* '>'"`
}

// gTypeBound is one `lower=EXPR` or `upper=EXPR` of a gTypeBounds.
type gTypeBound struct {
	Pos   lexer.Position
	Name  *gIdent `parser:"@@ '='"`
	Value *gExpr  `parser:"@@"`
}

type gRange struct {
	Pos     lexer.Position
	Keyword string  `parser:"@('in' | 'of')"`
	Lo      *gBound `parser:"@@ '..'"`
	Hi      *gBound `parser:"@@"`
}

type gBound struct {
	Pos  lexer.Position
	Neg  bool   `parser:"@'-'?"`
	Text string `parser:"@(Number | Ident)"`
}

type gTreatment struct {
	Pos          lexer.Position
	Conjugate    bool    `parser:"  @'conjugate'"`
	Nonconjugate bool    `parser:"| @'nonconjugate'"`
	Method       *gIdent `parser:"  (@@ (?! '~' | '['))?"`
}

type gStmt struct {
	For    *gFor    `parser:"  @@"`
	Let    *gLet    `parser:"| @@"`
	Factor *gFactor `parser:"| @@"`
	Tilde  *gTilde  `parser:"| @@"`
}

// gLet is `let NAME = EXPR` or `let NAME[I, ...] = EXPR`.
type gLet struct {
	Pos   lexer.Position
	Name  *gIdent   `parser:"'let' @@"`
	Index *gIndices `parser:"@@?"`
	Value *gExpr    `parser:"'=' @@"`
}

// gFactor is `factor EXPR`, a term added to the log density.
type gFactor struct {
	Pos  lexer.Position
	Expr *gExpr `parser:"'factor' @@"`
}

type gFor struct {
	Pos   lexer.Position
	Index *gIdent  `parser:"'for' @@ 'in'"`
	From  *gExpr   `parser:"@@"`
	To    *gExpr   `parser:"(':' @@)?"`
	Body  []*gStmt `parser:"'{' @@* '}'"`
}

type gTilde struct {
	Pos    lexer.Position
	Target *gExpr `parser:"@@"`
	Draw   *gDraw `parser:"@@"`
}

// gDraw is `~ Dist(Args)`, a node of its own so that its Pos is the
// position of the `~`. (Capturing into a lexer.Token field can report the
// position of the elided whitespace before the token.)
type gDraw struct {
	Pos  lexer.Position
	Dist *gIdent `parser:"'~' @@"`
	Args *gArgs  `parser:"@@"`
}

type gArgs struct {
	Pos  lexer.Position
	Args []*gExpr `parser:"'(' (@@ (',' @@)*)? ')'"`
}

type gIndices struct {
	Pos     lexer.Position
	Indices []*gExpr `parser:"'[' @@ (',' @@)* ']'"`
}

// gExpr is a sum: Term (('+' | '-') Term)*.
type gExpr = gChain[gTerm, gAddOp]

// gTerm is a product: Unary (('*' | '/' | '.*' | './') Unary)*.
type gTerm = gChain[gUnary, gMulOp]

// gChain is a left-associative chain of binary operators of one
// precedence level: Operand (Op Operand)*. Op is the node that captures
// the level's operator symbols (gAddOp, gMulOp).
type gChain[Operand, Op any] struct {
	Left *Operand              `parser:"@@"`
	Rest []*gLink[Operand, Op] `parser:"@@*"`
}

// gLink is one `Op Right` step of a gChain; Pos is the operator's.
type gLink[Operand, Op any] struct {
	Pos   lexer.Position
	Op    Op       `parser:"@@"`
	Right *Operand `parser:"@@"`
}

// gAddOp is the operator of a sum.
type gAddOp struct {
	Sym string `parser:"@('+' | '-')"`
}

// gMulOp is the operator of a product.
type gMulOp struct {
	Sym string `parser:"@('*' | '/' | '.*' | './')"`
}

func (o gAddOp) symbol() byte { return o.Sym[0] }
func (o gMulOp) symbol() byte {
	switch o.Sym {
	case ".*":
		return OpElemMul
	case "./":
		return OpElemDiv
	}
	return o.Sym[0]
}

// gUnary is '-' Unary | Power, so that -x^2 is -(x^2).
type gUnary struct {
	Pos   lexer.Position
	Neg   *gUnary `parser:"  '-' @@"`
	Power *gPower `parser:"| @@"`
}

// gPower is Primary "'"? ('^' Unary)?: right-associative, and 2^-1 is
// allowed. The optional "'" is a transpose, as in Stan's `a' * b`.
type gPower struct {
	Base      *gPrimary   `parser:"@@"`
	Transpose *gTranspose `parser:"@@?"`
	Exp       *gExponent  `parser:"@@?"`
}

// gTranspose is the postfix "'" of a transpose; its Pos is the "'"'s.
type gTranspose struct {
	Pos  lexer.Position
	Tick string `parser:"@\"'\""`
}

// gExponent is the `^ Unary` of a power; its Pos is the `^`'s.
type gExponent struct {
	Pos   lexer.Position
	Unary *gUnary `parser:"'^' @@"`
}

type gPrimary struct {
	Pos    lexer.Position
	Number *string   `parser:"  @Number"`
	Name   *gOperand `parser:"| @@"`
	Paren  *gExpr    `parser:"| '(' @@ ')'"`
	Vector []*gExpr  `parser:"| '[' @@ (',' @@)* ']'"`
}

// gOperand is a name, optionally called or indexed.
type gOperand struct {
	Pos   lexer.Position
	Name  string    `parser:"@Ident"`
	Call  *gArgs    `parser:"@@?"`
	Index *gIndices `parser:"@@?"`
}
