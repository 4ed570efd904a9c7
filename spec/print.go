package spec

import (
	"fmt"
	"sort"
	"strings"
)

// Format returns the canonical form of a .vi source: one declaration or
// statement per line, loop bodies indented by two spaces, single spaces
// around binary operators except ^, no redundant parentheses, at most one
// blank line in a row, and trailing comments aligned within each run of
// consecutive lines. Comments are kept, own-line comments before what
// follows them and trailing comments after the line they end. Format is
// idempotent. A source with a syntax error is returned unchanged, with the
// error.
func Format(filename string, src []byte) ([]byte, error) {
	f, err := Parse(filename, src)
	if err != nil {
		return src, err
	}
	p := &printer{src: src, lines: strings.Split(string(src), "\n")}
	if err := p.scan(); err != nil {
		return src, err
	}
	p.emit(0, f.Name.Pos.Line, "model "+f.Name.Name)
	items := make([]Node, 0, len(f.Decls)+len(f.Stmts))
	for _, d := range f.Decls {
		items = append(items, d)
	}
	for _, s := range f.Stmts {
		items = append(items, s)
	}
	sort.SliceStable(items, func(i, j int) bool { return items[i].Position().Offset < items[j].Position().Offset })
	for _, it := range items {
		p.item(it, 0)
	}
	p.flushComments(len(p.lines)+1, 0)
	return p.render(), nil
}

// comment is one comment of the source, trailing when code precedes it on
// its line.
type comment struct {
	line     int
	text     string
	trailing bool
	used     bool
}

// outLine is one line of output: its indentation, code and trailing
// comment, and the source line it comes from (for blank-line decisions).
type outLine struct {
	src      int
	indent   int
	code     string
	trailing string
}

type printer struct {
	src      []byte
	lines    []string
	comments []*comment
	closing  map[int]int // offset of a `for` → line of its closing brace
	out      []outLine
}

// scan lexes the source again for what the AST does not keep: comments and
// the lines of closing braces.
func (p *printer) scan() error {
	lex, err := viLexer.LexString("", string(p.src))
	if err != nil {
		return err
	}
	sym := viLexer.Symbols()
	p.closing = map[int]int{}
	var awaiting, open []int // `for` offsets before their `{`; loops open
	codeOnLine := map[int]bool{}
	for {
		t, err := lex.Next()
		if err != nil {
			return err
		}
		if t.EOF() {
			break
		}
		switch {
		case t.Type == sym["Comment"]:
			p.comments = append(p.comments, &comment{line: t.Pos.Line, text: strings.TrimRight(t.Value, " \t\r"), trailing: codeOnLine[t.Pos.Line]})
		case t.Type == sym["Whitespace"]:
		default:
			codeOnLine[t.Pos.Line] = true
			switch t.Value {
			case "for":
				awaiting = append(awaiting, t.Pos.Offset)
			case "{":
				if n := len(awaiting); n > 0 {
					open = append(open, awaiting[n-1])
					awaiting = awaiting[:n-1]
				}
			case "}":
				if n := len(open); n > 0 {
					p.closing[open[n-1]] = t.Pos.Line
					open = open[:n-1]
				}
			}
		}
	}
	return nil
}

// item prints a declaration or statement at the given depth.
func (p *printer) item(n Node, depth int) {
	switch n := n.(type) {
	case *SizeDecl:
		names := make([]string, len(n.Names))
		for i, id := range n.Names {
			names[i] = id.Name
			if i < len(n.Defaults) && n.Defaults[i] != nil {
				names[i] += " = " + boundText(n.Defaults[i])
			}
		}
		p.emit(depth, n.Pos.Line, "size "+strings.Join(names, ", "))
	case *VarDecl:
		s := n.Role + " " + n.Name.Name + " : " + typeString(n.Type)
		if t := n.Treatment; t != nil {
			s += " " + t.Kind
			if t.Method != nil {
				s += " " + t.Method.Name
			}
		}
		if n.Default != nil {
			s += " = " + printExpr(n.Default, 0)
		}
		p.emit(depth, n.Pos.Line, s)
	case *TildeStmt:
		p.emit(depth, n.Pos.Line, printExpr(n.Target, 0)+" ~ "+n.Dist.Name+"("+printExprs(n.Args)+")")
	case *LetStmt:
		name := n.Name.Name
		if n.Indices != nil {
			name += "[" + printExprs(n.Indices) + "]"
		}
		p.emit(depth, n.Pos.Line, "let "+name+" = "+printExpr(n.Value, 0))
	case *FactorStmt:
		p.emit(depth, n.Pos.Line, "factor "+printExpr(n.Expr, 0))
	case *ForStmt:
		head := "for " + n.Index.Name + " in " + printIndex(n.From)
		if n.To != nil {
			head += ":" + printIndex(n.To)
		}
		p.emit(depth, n.Pos.Line, head+" {")
		for _, s := range n.Body {
			p.item(s, depth+1)
		}
		end := p.closing[n.Pos.Offset]
		p.flushComments(end, depth+1)
		p.emit(depth, end, "}")
	}
}

// emit adds a line of code from source line line, after the own-line
// comments that precede it, with the trailing comments of its source line.
func (p *printer) emit(depth, line int, code string) {
	p.flushComments(line, depth)
	o := outLine{src: line, indent: depth, code: code}
	var trail []string
	for _, c := range p.comments {
		if !c.used && c.trailing && c.line == line {
			c.used = true
			trail = append(trail, c.text)
		}
	}
	o.trailing = strings.Join(trail, " ")
	p.out = append(p.out, o)
}

// flushComments emits the unused comments from before source line line
// as own-line comments (trailing ones of lines that print no code of their
// own, as in the middle of a statement split over lines, included).
func (p *printer) flushComments(line, depth int) {
	for _, c := range p.comments {
		if !c.used && c.line < line {
			c.used = true
			p.out = append(p.out, outLine{src: c.line, indent: depth, code: c.text})
		}
	}
}

// blankBetween reports whether a source line strictly between a and b is
// blank.
func (p *printer) blankBetween(a, b int) bool {
	for l := a + 1; l < b; l++ {
		if l >= 1 && l <= len(p.lines) && strings.TrimSpace(p.lines[l-1]) == "" {
			return true
		}
	}
	return false
}

// render lays out the lines: one blank line where the source had any, and
// trailing comments aligned in each run of lines without a blank between.
func (p *printer) render() []byte {
	var b strings.Builder
	for start := 0; start < len(p.out); {
		end := start + 1
		for end < len(p.out) && !p.blankBetween(p.out[end-1].src, p.out[end].src) {
			end++
		}
		width := 0
		for _, o := range p.out[start:end] {
			if o.trailing != "" {
				width = max(width, 2*o.indent+len([]rune(o.code)))
			}
		}
		if start > 0 {
			b.WriteByte('\n')
		}
		for _, o := range p.out[start:end] {
			line := strings.Repeat("  ", o.indent) + o.code
			if o.trailing != "" {
				line += strings.Repeat(" ", width-len([]rune(line))+2) + o.trailing
			}
			b.WriteString(line)
			b.WriteByte('\n')
		}
		start = end
	}
	return []byte(b.String())
}

func typeString(t *TypeExpr) string {
	s := t.Name.Name
	if len(t.Bounds) > 0 {
		bs := make([]string, len(t.Bounds))
		for i, b := range t.Bounds {
			bs[i] = b.Name.Name + "=" + printExpr(b.Value, 0)
		}
		s += "<" + strings.Join(bs, ", ") + ">"
	}
	if len(t.Dims) > 0 {
		dims := make([]string, len(t.Dims))
		for i, d := range t.Dims {
			dims[i] = boundString(d)
		}
		s += "[" + strings.Join(dims, ", ") + "]"
	}
	if r := t.Range; r != nil {
		s += " " + r.Keyword + " " + boundString(r.Lo) + ".." + boundString(r.Hi)
	}
	return s
}

func boundString(b *Bound) string {
	if b.Neg {
		return "-" + b.Text
	}
	return b.Text
}

// Precedence levels of the grammar: sums < products < unary minus < powers
// < primaries.
const (
	precSum = iota + 1
	precProduct
	precUnary
	precPower
	precPrimary
)

// printExpr prints e, parenthesized if its precedence is below min.
func printExpr(e Expr, min int) string {
	var s string
	prec := precPrimary
	switch e := e.(type) {
	case *Number:
		s = e.Text
	case *Ident:
		s = e.Name
	case *IndexExpr:
		parts := make([]string, len(e.Indices))
		for i, x := range e.Indices {
			parts[i] = printIndex(x)
		}
		s = printExpr(e.X, precPrimary) + "[" + strings.Join(parts, ", ") + "]"
	case *CallExpr:
		s = e.Func.Name + "(" + printExprs(e.Args) + ")"
	case *VectorExpr:
		s = "[" + printExprs(e.Elems) + "]"
	case *UnaryExpr:
		prec = precUnary
		s = string(e.Op) + printExpr(e.X, precUnary)
		if e.Op == OpTranspose {
			prec = precPower
			s = printExpr(e.X, precPrimary) + "'"
		}
	case *BinaryExpr:
		switch e.Op {
		case '+', '-':
			prec = precSum
			s = printExpr(e.X, precSum) + " " + string(e.Op) + " " + printExpr(e.Y, precProduct)
		case '*', '/', OpElemMul, OpElemDiv:
			prec = precProduct
			s = printExpr(e.X, precProduct) + " " + opString(e.Op) + " " + printExpr(e.Y, precUnary)
		case '^':
			prec = precPower
			s = printExpr(e.X, precPrimary) + "^" + printExpr(e.Y, precUnary)
		default:
			s = fmt.Sprintf("%s %c %s", printExpr(e.X, precPrimary), e.Op, printExpr(e.Y, precPrimary))
		}
	}
	if prec < min {
		return "(" + s + ")"
	}
	return s
}

// printIndex prints one index or loop bound; an offset, a name plus or
// minus an int literal, is written without spaces (y[t-1], 1:T-1), as the
// reference writes it.
func printIndex(e Expr) string {
	if b, ok := e.(*BinaryExpr); ok && (b.Op == '+' || b.Op == '-') {
		if id, ok := b.X.(*Ident); ok {
			if n, ok := b.Y.(*Number); ok && !strings.ContainsAny(n.Text, ".eE") {
				return id.Name + string(b.Op) + n.Text
			}
		}
	}
	return printExpr(e, 0)
}

func printExprs(es []Expr) string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = printExpr(e, 0)
	}
	return strings.Join(parts, ", ")
}
