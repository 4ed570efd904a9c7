package spec

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"

	"github.com/vigen-go/vigen/spec/ir"
)

// Parse parses .vi source into an AST. Every node keeps its lexer.Position,
// whose Filename is the base name of filename. A syntax error comes back as
// an ErrorList holding one error.
func Parse(filename string, src []byte) (*File, error) {
	base := filepath.Base(filename)
	g, err := viParser.ParseBytes(base, src)
	if err != nil {
		return nil, ErrorList{syntaxError(base, src, err)}
	}
	return convertFile(g), nil
}

// Load parses and checks .vi source and returns the model IR, with the
// source's SHA-256 in SourceHash.
func Load(filename string, src []byte) (*ir.Model, error) {
	f, err := Parse(filename, src)
	if err != nil {
		return nil, err
	}
	m, err := Check(f)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(src)
	m.SourceHash = hex.EncodeToString(sum[:])
	return m, nil
}

func convertFile(g *gFile) *File {
	f := &File{Pos: g.Pos, Name: convertIdent(g.Name)}
	for _, it := range g.Items {
		switch {
		case it.Size != nil:
			d := &SizeDecl{Pos: it.Size.Pos}
			for _, n := range it.Size.Items {
				d.Names = append(d.Names, convertIdent(n.Name))
				var def *Bound
				if n.Default != nil {
					def = convertBound(n.Default)
				}
				d.Defaults = append(d.Defaults, def)
			}
			f.Decls = append(f.Decls, d)
		case it.Var != nil:
			f.Decls = append(f.Decls, convertVar(it.Var))
		case it.Stmt != nil:
			f.Stmts = append(f.Stmts, convertStmt(it.Stmt))
		}
	}
	return f
}

func convertIdent(g *gIdent) *Ident {
	if g == nil {
		return nil
	}
	return &Ident{Pos: g.Pos, Name: g.Name}
}

func convertVar(g *gVar) *VarDecl {
	d := &VarDecl{Pos: g.Pos, Role: g.Role, Name: convertIdent(g.Name)}
	t := &TypeExpr{Pos: g.Type.Pos, Name: convertIdent(g.Type.Name)}
	if g.Type.Bounds != nil {
		for _, b := range g.Type.Bounds.Bounds {
			t.Bounds = append(t.Bounds, &TypeBound{Pos: b.Pos, Name: convertIdent(b.Name), Value: convertExpr(b.Value)})
		}
	}
	for _, b := range g.Type.Dims {
		t.Dims = append(t.Dims, convertBound(b))
	}
	if r := g.Type.Range; r != nil {
		t.Range = &Range{Pos: r.Pos, Keyword: r.Keyword, Lo: convertBound(r.Lo), Hi: convertBound(r.Hi)}
	}
	d.Type = t
	if tr := g.Treatment; tr != nil {
		d.Treatment = &Treatment{Pos: tr.Pos, Kind: "conjugate", Method: convertIdent(tr.Method)}
		if tr.Nonconjugate {
			d.Treatment.Kind = "nonconjugate"
		}
	}
	if g.Default != nil {
		d.Default = convertExpr(g.Default)
	}
	return d
}

func convertBound(g *gBound) *Bound {
	return &Bound{Pos: g.Pos, Neg: g.Neg, Text: g.Text}
}

func convertStmt(g *gStmt) Stmt {
	if g.For != nil {
		s := &ForStmt{Pos: g.For.Pos, Index: convertIdent(g.For.Index), From: convertExpr(g.For.From)}
		if g.For.To != nil {
			s.To = convertExpr(g.For.To)
		}
		for _, b := range g.For.Body {
			s.Body = append(s.Body, convertStmt(b))
		}
		return s
	}
	if l := g.Let; l != nil {
		s := &LetStmt{Pos: l.Pos, Name: convertIdent(l.Name), Value: convertExpr(l.Value)}
		if l.Index != nil {
			s.Indices = convertExprs(l.Index.Indices)
		}
		return s
	}
	if f := g.Factor; f != nil {
		return &FactorStmt{Pos: f.Pos, Expr: convertExpr(f.Expr)}
	}
	t := g.Tilde
	return &TildeStmt{
		Pos:    t.Pos,
		Target: convertExpr(t.Target),
		Tilde:  t.Draw.Pos,
		Dist:   convertIdent(t.Draw.Dist),
		Args:   convertExprs(t.Draw.Args.Args),
	}
}

func convertExprs(gs []*gExpr) []Expr {
	out := make([]Expr, len(gs))
	for i, g := range gs {
		out[i] = convertExpr(g)
	}
	return out
}

func convertExpr(g *gExpr) Expr { return convertChain(g, convertTerm) }

func convertTerm(g *gTerm) Expr { return convertChain(g, convertUnary) }

// convertChain folds a chain of one precedence level into left-nested
// BinaryExprs, converting each operand with operand.
func convertChain[Operand any, Op interface{ symbol() byte }](g *gChain[Operand, Op], operand func(*Operand) Expr) Expr {
	x := operand(g.Left)
	for _, r := range g.Rest {
		x = &BinaryExpr{Pos: r.Pos, Op: r.Op.symbol(), X: x, Y: operand(r.Right)}
	}
	return x
}

func convertUnary(g *gUnary) Expr {
	if g.Neg != nil {
		return &UnaryExpr{Pos: g.Pos, Op: '-', X: convertUnary(g.Neg)}
	}
	p := g.Power
	x := convertPrimary(p.Base)
	if p.Transpose != nil {
		x = &UnaryExpr{Pos: p.Transpose.Pos, Op: OpTranspose, X: x}
	}
	if p.Exp != nil {
		x = &BinaryExpr{Pos: p.Exp.Pos, Op: '^', X: x, Y: convertUnary(p.Exp.Unary)}
	}
	return x
}

func convertPrimary(g *gPrimary) Expr {
	switch {
	case g.Number != nil:
		return &Number{Pos: g.Pos, Text: *g.Number}
	case g.Paren != nil:
		return convertExpr(g.Paren)
	case g.Vector != nil:
		return &VectorExpr{Pos: g.Pos, Elems: convertExprs(g.Vector)}
	}
	o := g.Name
	var x Expr = &Ident{Pos: o.Pos, Name: o.Name}
	if o.Call != nil {
		x = &CallExpr{Pos: o.Pos, Func: &Ident{Pos: o.Pos, Name: o.Name}, Args: convertExprs(o.Call.Args)}
	}
	if o.Index != nil {
		x = &IndexExpr{Pos: o.Pos, X: x, Lbrack: o.Index.Pos, Indices: convertExprs(o.Index.Indices)}
	}
	return x
}
