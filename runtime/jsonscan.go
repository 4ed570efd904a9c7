package runtime

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"unsafe"
)

// jsonScanner reads a JSON document from a stream a buffer at a time, for
// DataTable.Decode: the document's values are decoded as they are read,
// without holding the document in memory.
//
// It accepts exactly what encoding/json accepts and reports the first
// syntax error as SplitObject does (encoding/json's message, with the line
// and column of the offending byte, or "unexpected end of input" when
// nothing but white space follows it), after reading the rest of the input
// so that a read error or an input larger than DataLimit wins, as they do
// when the whole input is read first.
//
// Errors that end the decoding (syntax, reading, size) unwind by a panic of
// a *scanAbort, recovered by the decoder that owns the scanner.
type jsonScanner struct {
	rd     io.Reader // limited to limit+1 bytes
	buf    []byte
	i, n   int   // buf[i:n] is not read yet
	base   int64 // the input offset of buf[0]
	rerr   error // a read error, reported once buf is used up
	eof    bool
	phase2 bool // past the leading white space: the input is read to its end
	limit  int64
	source string

	// lines and lastNL (the offset of the last newline, or -1) describe
	// the input before buf[mark].
	mark   int
	lines  int
	lastNL int64

	depth int    // nesting of arrays and objects
	tok   []byte // a token that spans buffers
	stack []byte // skipValue's containers
}

// scanAbort is the panic value that ends a decoding with err.
type scanAbort struct{ err error }

// maxNestingDepth is encoding/json's limit on the nesting of arrays and
// objects.
const maxNestingDepth = 10000

const scanBufSize = 64 << 10

func newJSONScanner(r io.Reader, limit int64, source string) *jsonScanner {
	return &jsonScanner{
		rd:     io.LimitReader(r, limit+1),
		buf:    make([]byte, scanBufSize),
		limit:  limit,
		source: source,
		lastNL: -1,
	}
}

func (s *jsonScanner) abort(err error) { panic(&scanAbort{err}) }

// offset returns the input offset of the next byte to read.
func (s *jsonScanner) offset() int64 { return s.base + int64(s.i) }

// fill reads the next part of the input into buf, all of buf having been
// read, and reports whether there is any. As bufio.Reader does, it
// returns what a read returns before the read's error; past the leading
// white space a read error or more than limit bytes ends the decoding
// (as io.ReadAll of the rest would).
func (s *jsonScanner) fill() bool {
	if s.eof {
		return false
	}
	s.countLines(s.n)
	s.base += int64(s.n)
	s.i, s.n, s.mark = 0, 0, 0
	for tries := 0; ; tries++ {
		if s.rerr != nil {
			s.abort(fmt.Errorf("data: reading: %w", s.rerr))
		}
		m, err := s.rd.Read(s.buf)
		s.n = m
		if err != nil && err != io.EOF {
			s.rerr = err
		}
		if s.phase2 {
			s.checkRead()
		}
		if m > 0 {
			return true
		}
		if err == io.EOF {
			s.eof = true
			return false
		}
		if tries >= 100 {
			s.rerr = io.ErrNoProgress
		}
	}
}

// checkRead ends the decoding past the leading white space if a read
// failed or the input is larger than the limit.
func (s *jsonScanner) checkRead() {
	if s.rerr != nil {
		s.abort(fmt.Errorf("data: reading: %w", s.rerr))
	}
	if s.base+int64(s.n) > s.limit {
		s.abort(tooLarge(s.limit, s.source))
	}
}

// countLines counts the newlines of buf[mark:upto].
func (s *jsonScanner) countLines(upto int) {
	if upto <= s.mark {
		return
	}
	b := s.buf[s.mark:upto]
	if k := bytes.Count(b, []byte{'\n'}); k > 0 {
		s.lines += k
		s.lastNL = s.base + int64(s.mark+bytes.LastIndexByte(b, '\n'))
	}
	s.mark = upto
}

// lineCol returns the line and column (1-based) of the input offset off,
// which is in buf at or after mark.
func (s *jsonScanner) lineCol(off int64) (int, int64) {
	s.countLines(int(off - s.base))
	return s.lines + 1, off - s.lastNL
}

// position returns "line L, column C" of the input offset off (lineCol).
func (s *jsonScanner) position(off int64) string {
	line, col := s.lineCol(off)
	return fmt.Sprintf("line %d, column %d", line, col)
}

// begin reads the leading white space up to the '{' that must start the
// document (not consuming it), with SplitObject's errors: it stops at the
// first other byte, so that an endless stream such as /dev/zero is
// refused at once.
func (s *jsonScanner) begin() error {
	for {
		if s.i == s.n && !s.fill() { // fill ends the decoding on a read error
			return fmt.Errorf("data: empty input, expected a JSON object")
		}
		c := s.buf[s.i]
		off := s.offset()
		if off >= s.limit {
			return tooLarge(s.limit, s.source)
		}
		if c == '{' {
			break
		}
		if !isSpace(c) {
			if kind := kindOfByte(c); kind != "invalid JSON" {
				return fmt.Errorf("data: expected a JSON object, got %s", kind)
			}
			return fmt.Errorf("data: invalid JSON at %s: invalid character %s looking for beginning of value", s.position(off), quoteChar(c))
		}
		s.i++
	}
	s.phase2 = true
	s.checkRead()
	return nil
}

// syntax ends the decoding with a syntax error at the unread byte c =
// buf[i]: encoding/json's "invalid character c context", or "unexpected
// end of input" if only white space follows it. It reads the rest of the
// input first.
func (s *jsonScanner) syntax(context string) {
	c := s.buf[s.i]
	at := s.position(s.offset())
	msg := "invalid character " + quoteChar(c) + " " + context
	s.i++
	if !s.drain() {
		s.abort(errors.New("data: unexpected end of input"))
	}
	s.abort(fmt.Errorf("data: invalid JSON at %s: %s", at, msg))
}

// syntaxEOF ends the decoding at the end of the input inside the document.
func (s *jsonScanner) syntaxEOF() {
	s.abort(errors.New("data: unexpected end of input"))
}

// drain reads the rest of the input and reports whether any of it is not
// white space.
func (s *jsonScanner) drain() bool {
	found := false
	for {
		if !found {
			for _, c := range s.buf[s.i:s.n] {
				if !isSpace(c) {
					found = true
					break
				}
			}
		}
		s.i = s.n
		if !s.fill() {
			return found
		}
	}
}

// peek skips white space and returns the next byte, unread; the end of
// the input is a syntax error.
func (s *jsonScanner) peek() byte {
	for {
		for s.i < s.n {
			c := s.buf[s.i]
			if c > ' ' || !isSpace(c) {
				return c
			}
			s.i++
		}
		if !s.fill() {
			s.syntaxEOF()
		}
	}
}

// open consumes the '[' or '{' at buf[i], entering it.
func (s *jsonScanner) open() {
	s.depth++
	if s.depth > maxNestingDepth {
		s.syntax("exceeded max depth")
	}
	s.i++
}

// close consumes the ']' or '}' at buf[i], leaving the array or object.
func (s *jsonScanner) close() {
	s.depth--
	s.i++
}

// arrayFirst is called after open of an array: it reports whether the
// array has a first element (false: it is empty and has been closed).
func (s *jsonScanner) arrayFirst() bool {
	if s.peek() == ']' {
		s.close()
		return false
	}
	return true
}

// arrayNext is called after an element of an array: it reports whether
// another follows (consuming the ','), or closes the array.
func (s *jsonScanner) arrayNext() bool {
	switch s.peek() {
	case ',':
		s.i++
		return true
	case ']':
		s.close()
		return false
	}
	s.syntax("after array element")
	return false
}

// isNumberStart reports whether c begins a JSON number.
func isNumberStart(c byte) bool { return c == '-' || '0' <= c && c <= '9' }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// number reads the number that begins at buf[i] (a '-' or a digit) and
// returns its text, valid until the next read.
func (s *jsonScanner) number() []byte {
	b := s.buf[:s.n]
	j := s.i
	if b[j] == '-' {
		j++
		if j == len(b) {
			return s.numberSlow()
		}
	}
	switch c := b[j]; {
	case c == '0':
		j++
	case '1' <= c && c <= '9':
		j++
		for j < len(b) && isDigit(b[j]) {
			j++
		}
	default:
		s.i = j
		s.syntax("in numeric literal")
	}
	if j == len(b) {
		return s.numberSlow()
	}
	if b[j] == '.' {
		j++
		if j == len(b) {
			return s.numberSlow()
		}
		if !isDigit(b[j]) {
			s.i = j
			s.syntax("after decimal point in numeric literal")
		}
		for j < len(b) && isDigit(b[j]) {
			j++
		}
		if j == len(b) {
			return s.numberSlow()
		}
	}
	if b[j] == 'e' || b[j] == 'E' {
		j++
		if j == len(b) {
			return s.numberSlow()
		}
		if b[j] == '+' || b[j] == '-' {
			j++
			if j == len(b) {
				return s.numberSlow()
			}
		}
		if !isDigit(b[j]) {
			s.i = j
			s.syntax("in exponent of numeric literal")
		}
		for j < len(b) && isDigit(b[j]) {
			j++
		}
		if j == len(b) {
			return s.numberSlow()
		}
	}
	tok := b[s.i:j]
	s.i = j
	return tok
}

// numberSlow is number for a number that may run past the end of buf: it
// copies the number to tok a byte at a time.
func (s *jsonScanner) numberSlow() []byte {
	s.tok = s.tok[:0]
	more := func() bool { return s.i < s.n || s.fill() }
	take := func() { s.tok = append(s.tok, s.buf[s.i]); s.i++ }
	digits := func() {
		for more() && isDigit(s.buf[s.i]) {
			take()
		}
	}
	need := func(context string) { // a digit must follow
		if !more() {
			s.syntaxEOF()
		}
		if !isDigit(s.buf[s.i]) {
			s.syntax(context)
		}
	}
	if s.buf[s.i] == '-' {
		take()
	}
	need("in numeric literal")
	if s.buf[s.i] == '0' {
		take()
	} else {
		digits()
	}
	if more() && s.buf[s.i] == '.' {
		take()
		need("after decimal point in numeric literal")
		digits()
	}
	if more() && (s.buf[s.i] == 'e' || s.buf[s.i] == 'E') {
		take()
		if more() && (s.buf[s.i] == '+' || s.buf[s.i] == '-') {
			take()
		}
		need("in exponent of numeric literal")
		digits()
	}
	return s.tok
}

// literal reads the true, false or null that begins at buf[i].
func (s *jsonScanner) literal() {
	var word, name string
	switch s.buf[s.i] {
	case 't':
		word, name = "true", "true"
	case 'f':
		word, name = "false", "false"
	default:
		word, name = "null", "null"
	}
	s.i++
	for k := 1; k < len(word); k++ {
		if s.i == s.n && !s.fill() {
			s.syntaxEOF()
		}
		if s.buf[s.i] != word[k] {
			s.syntax("in literal " + name + " (expecting " + quoteChar(word[k]) + ")")
		}
		s.i++
	}
}

// str reads the string that begins at buf[i] (a '"'); if keep, it returns
// its text with the quotes in tok.
func (s *jsonScanner) str(keep bool) []byte {
	if keep {
		s.tok = append(s.tok[:0], '"')
	}
	s.i++
	start := s.i
	flush := func() {
		if keep {
			s.tok = append(s.tok, s.buf[start:s.i]...)
		}
	}
	next := func() byte { // the next byte of the string, consumed
		if s.i == s.n {
			flush()
			if !s.fill() {
				s.syntaxEOF()
			}
			start = 0
		}
		c := s.buf[s.i]
		s.i++
		return c
	}
	for {
		// The common case: a run of plain bytes.
		for s.i < s.n {
			c := s.buf[s.i]
			if c == '"' || c == '\\' || c < 0x20 {
				break
			}
			s.i++
		}
		c := next()
		switch {
		case c == '"':
			flush()
			return s.tok
		case c < 0x20:
			s.i--
			s.syntax("in string literal")
		case c == '\\':
			switch next() {
			case 'b', 'f', 'n', 'r', 't', '\\', '/', '"':
			case 'u':
				for k := 0; k < 4; k++ {
					if h := next(); !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						s.i--
						s.syntax("in \\u hexadecimal character escape")
					}
				}
			default:
				s.i--
				s.syntax("in string escape code")
			}
		}
	}
}

// skipValue reads the value that begins at the next byte that is not
// white space, checking its syntax.
func (s *jsonScanner) skipValue() {
	stack := s.stack[:0]
	c := s.peek()
	for {
		// c begins a value.
		switch {
		case c == '{':
			s.open()
			c = s.peek()
			if c == '}' {
				s.close()
				break
			}
			stack = append(stack, '{')
			c = s.objectKey(c)
			continue
		case c == '[':
			s.open()
			c = s.peek()
			if c == ']' {
				s.close()
				break
			}
			stack = append(stack, '[')
			continue
		case c == '"':
			s.str(false)
		case isNumberStart(c):
			s.number()
		case c == 't' || c == 'f' || c == 'n':
			s.literal()
		default:
			s.syntax("looking for beginning of value")
		}
		// A value has ended: close the containers it ends.
		for {
			if len(stack) == 0 {
				s.stack = stack
				return
			}
			c = s.peek()
			top := stack[len(stack)-1]
			if c == ',' {
				s.i++
				c = s.peek()
				if top == '{' {
					c = s.objectKey(c)
				}
				break
			}
			if top == '[' && c == ']' || top == '{' && c == '}' {
				s.close()
				stack = stack[:len(stack)-1]
				continue
			}
			if top == '[' {
				s.syntax("after array element")
			}
			s.syntax("after object key:value pair")
		}
	}
}

// objectKey reads an object's key, which begins with c, and the ':' after
// it, and returns the byte that begins the value.
func (s *jsonScanner) objectKey(c byte) byte {
	if c != '"' {
		s.syntax("looking for beginning of object key string")
	}
	s.str(false)
	if s.peek() != ':' {
		s.syntax("after object key")
	}
	s.i++
	return s.peek()
}

// kindOfByte is kindOf for a value that begins with c.
func kindOfByte(c byte) string {
	switch c {
	case '[':
		return "an array"
	case '{':
		return "an object"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return "a number"
	}
	return "invalid JSON"
}

// parseTok parses the text of a JSON number as parseNumber does, or
// returns parseNumber's message.
func parseTok(tok []byte) (float64, string) {
	v, err := strconv.ParseFloat(unsafe.String(unsafe.SliceData(tok), len(tok)), 64)
	if err != nil || math.IsInf(v, 0) {
		return 0, snippet(tok) + " is out of range for a float64"
	}
	return v, ""
}

// intOf is toInt, with a fast path for the common case.
func intOf(v float64, lo, hi int) (int, string) {
	if v == math.Trunc(v) && v >= -maxExactInt && v <= maxExactInt {
		if n := int(v); n >= lo && n <= hi {
			return n, ""
		}
	}
	return toInt(v, lo, hi)
}
