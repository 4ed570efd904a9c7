package spec

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"

	"github.com/vigen-go/vigen/spec/ir"
)

// productions maps participle's names for grammar productions, as they
// appear in its "expected ..." messages, to words a model author knows.
var productions = map[string]string{
	"GIdent":     "a name",
	"GType":      "a type",
	"GChain":     "an expression", // sums and products, gChain[...]
	"GUnary":     "an expression",
	"GPower":     "an expression",
	"GPrimary":   "an expression",
	"GOperand":   "an expression",
	"GArgs":      "`(` and the arguments",
	"GIndices":   "`[`",
	"GStmt":      "a statement",
	"GBound":     "a number or a size name",
	"GRange":     "a range",
	"GTreatment": "a treatment",
	"GDraw":      `"~"`, // as the literal
	"GLet":       "a statement",
	"GFactor":    "a statement",
	"GExponent":  `"^"`,
}

// literals maps an expected literal token to a phrase, and where it helps
// a hint.
var literals = map[string]struct{ phrase, hint string }{
	"~":     {"`~` and a distribution", "a statement reads `TARGET ~ Dist(ARGS)`"},
	"=":     {"`=` and a value", "a definition reads `let NAME = EXPR`, or `let NAME[n] = EXPR` inside `for n in 1:N`"},
	":":     {"`:` and a type", "a declaration reads `ROLE NAME : TYPE`, e.g. `data x : real[N]`"},
	"in":    {"`in`", "a loop reads `for n in 1:N { ... }` or `for n in w[d] { ... }`"},
	"{":     {"`{`", "a loop reads `for n in 1:N { ... }`"},
	"}":     {"`}` to close the loop", "every `{` of a loop needs a matching `}`"},
	")":     {"`)`", "every `(` needs a matching `)`; arguments are separated by commas"},
	"]":     {"`]`", "every `[` needs a matching `]`; indices are separated by commas"},
	"..":    {"`..`", "a range reads `in LO..HI`, e.g. `int[N] in 0..1`"},
	"model": {"`model NAME`", "a model file starts with `model NAME`"},
}

// syntaxError rephrases a participle parse or lex error.
func syntaxError(base string, src []byte, err error) *Error {
	e := &Error{Pos: ir.Pos{File: base, Line: 1, Col: 1}, Msg: "syntax error: " + err.Error()}
	var perr participle.Error
	if !errors.As(err, &perr) {
		return e
	}
	if p := perr.Position(); p.Line > 0 {
		e.Pos = ir.Pos{File: base, Line: p.Line, Col: p.Column}
	}
	var lerr *lexer.Error
	if errors.As(err, &lerr) {
		off := lerr.Pos.Offset
		r := '?'
		if off >= 0 && off < len(src) {
			r, _ = utf8.DecodeRune(src[off:])
		}
		e.Msg = fmt.Sprintf("unexpected character %q", r)
		e.Hint = "names are letters, digits and _; operators are + - * / ^ ~ ..; comments start with # or //"
		return e
	}
	var uerr *participle.UnexpectedTokenError
	if !errors.As(err, &uerr) {
		e.Msg = "syntax error: " + perr.Message()
		return e
	}
	tok := uerr.Unexpected
	what := describeToken(tok)
	expected := expectation(perr.Message())
	switch {
	case !startsWithModel(src):
		e.Msg = "unexpected " + what + ", expected `model NAME`"
		e.Hint = literals["model"].hint
	case expected == "":
		e.Msg = "unexpected " + what + ", expected a declaration (size, data, const, param, latent), a `for` loop, a `~` statement, a `let` or a `factor`"
		e.Hint = "a model is a list of declarations (`data x : real[N]`), loops (`for n in 1:N { ... }`) and statements (`y[n] ~ Normal(mu, 1)`)"
	default:
		first := firstItem(expected)
		if !strings.HasPrefix(first, `"`) {
			// A generic production is named with its type arguments:
			// GChain[...gUnary,...gMulOp].
			first, _, _ = strings.Cut(first, "[")
		}
		if p, ok := productions[first]; ok && strings.HasPrefix(p, `"`) {
			first = p
		}
		phrase, hint := first, ""
		if strings.HasPrefix(first, `"`) {
			lit := strings.Trim(first, `"`)
			phrase, hint = "`"+lit+"`", ""
			if l, ok := literals[lit]; ok {
				phrase, hint = l.phrase, l.hint
			}
		} else if p, ok := productions[strings.TrimRight(first, "?*+")]; ok {
			phrase = p
		} else {
			phrase = "something else"
		}
		e.Msg = "unexpected " + what + ", expected " + phrase
		e.Hint = hint
		if phrase == "a name" && isKeyword(tok.Value) {
			e.Msg = "`" + tok.Value + "` is a reserved word and cannot be used as a name"
			e.Hint = "reserved words: " + strings.Join(keywords, ", ")
		}
	}
	if e.Hint == "" {
		e.Hint = "the grammar is in spec/README.md"
	}
	return e
}

// startsWithModel reports whether the first token of src is `model`.
func startsWithModel(src []byte) bool {
	lex, err := viLexer.LexString("", string(src))
	if err != nil {
		return false
	}
	symbols := viLexer.Symbols()
	for {
		t, err := lex.Next()
		if err != nil || t.EOF() {
			return false
		}
		if t.Type != symbols["Comment"] && t.Type != symbols["Whitespace"] {
			return t.Value == "model"
		}
	}
}

func describeToken(t lexer.Token) string {
	if t.EOF() {
		return "end of file"
	}
	return "`" + t.Value + "`"
}

// expectation extracts the "..." of participle's "(expected ...)".
func expectation(msg string) string {
	i := strings.Index(msg, "(expected ")
	if i < 0 || !strings.HasSuffix(msg, ")") {
		return ""
	}
	return msg[i+len("(expected ") : len(msg)-1]
}

// firstItem returns the first element of a grammar fragment: a quoted
// literal, a name, or a parenthesised group.
func firstItem(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	switch s[0] {
	case '"':
		if j := strings.IndexByte(s[1:], '"'); j >= 0 {
			return s[:j+2]
		}
	case '(':
		depth := 0
		for i := 0; i < len(s); i++ {
			switch s[i] {
			case '(':
				depth++
			case ')':
				depth--
				if depth == 0 {
					return s[:i+1]
				}
			}
		}
	}
	if j := strings.IndexByte(s, ' '); j >= 0 {
		return s[:j]
	}
	return s
}

func isKeyword(s string) bool {
	for _, k := range keywords {
		if k == s {
			return true
		}
	}
	return false
}
