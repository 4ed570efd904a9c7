package runtime

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// SplitObject decodes a JSON object into its members, keeping each value
// undecoded. Keys not in known are left out, as CmdStan leaves them, with
// one note to Notes naming them (sorted, each with the known names close to
// it). A duplicate key is an error, as is a value that is not an object, or
// anything after it. Errors give the line and column in the input.
//
// It reads at most DataLimit bytes, and stops at once if the first byte that
// is not white space cannot begin an object, so an endless stream such as
// /dev/zero is an error, not a hang.
func SplitObject(r io.Reader, known []string) (map[string]json.RawMessage, error) {
	limit, source := DataLimit()
	br := bufio.NewReader(io.LimitReader(r, limit+1))
	var b []byte
	for {
		c, err := br.ReadByte()
		if err == io.EOF {
			return nil, fmt.Errorf("data: empty input, expected a JSON object")
		}
		if err != nil {
			return nil, fmt.Errorf("data: reading: %w", err)
		}
		if int64(len(b)) >= limit {
			return nil, tooLarge(limit, source)
		}
		if c == '{' {
			if err := br.UnreadByte(); err != nil {
				return nil, err
			}
			break
		}
		if !isSpace(c) {
			if kind := kindOf([]byte{c}); kind != "invalid JSON" {
				return nil, fmt.Errorf("data: expected a JSON object, got %s", kind)
			}
			return nil, fmt.Errorf("data: invalid JSON at %s: invalid character %s looking for beginning of value", position(b, int64(len(b))), quoteChar(c))
		}
		b = append(b, c)
	}
	rest, err := io.ReadAll(br)
	if err != nil {
		return nil, fmt.Errorf("data: reading: %w", err)
	}
	b = append(b, rest...)
	if int64(len(b)) > limit {
		return nil, tooLarge(limit, source)
	}
	// Validate first: encoding/json's whole-input scan gives exact error
	// offsets, which the streaming Decoder does not.
	if !json.Valid(b) {
		return nil, syntaxError(b)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	tok, err := dec.Token()
	if err != nil {
		return nil, syntaxError(b)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("data: expected a JSON object, got %s", tokenKind(tok))
	}
	isKnown := make(map[string]bool, len(known))
	for _, k := range known {
		isKnown[k] = true
	}
	out := map[string]json.RawMessage{}
	var unknown []string
	seen := map[string]bool{}
	for dec.More() {
		at := position(b, skipSeparators(b, dec.InputOffset()))
		tok, err := dec.Token()
		if err != nil {
			return nil, syntaxError(b)
		}
		key, ok := tok.(string)
		if !ok { // cannot happen for valid JSON
			return nil, fmt.Errorf("data: %s: expected a key", at)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, syntaxError(b)
		}
		if seen[key] {
			return nil, fmt.Errorf("data: %s: duplicate key %q", at, key)
		}
		seen[key] = true
		if !isKnown[key] {
			unknown = append(unknown, key)
			continue
		}
		out[key] = raw
	}
	if len(unknown) > 0 {
		note(unknownKeysNote(unknown, known))
	}
	return out, nil
}

func tooLarge(limit int64, source string) error {
	if source == "runtime.MaxDataBytes" {
		return fmt.Errorf("data: the input is larger than %d bytes (%s); is it a JSON file?", limit, source)
	}
	return fmt.Errorf("data: the input is larger than %s (%s, or runtime.MaxDataBytes); is it a JSON file?", FormatBytes(float64(limit)), source)
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// quoteChar quotes a byte as encoding/json's syntax errors do.
func quoteChar(c byte) string {
	if c == '\'' {
		return `'\''`
	}
	if c == '"' {
		return `'"'`
	}
	s := strconv.Quote(string(rune(c)))
	return "'" + s[1:len(s)-1] + "'"
}

// syntaxError describes why b is not valid JSON, with the line and column of
// the offending byte.
func syntaxError(b []byte) error {
	err := json.Unmarshal(b, &struct{}{}) // reports the syntax error before decoding
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return fmt.Errorf("data: invalid JSON: %v", err)
	}
	if se.Offset >= int64(len(bytes.TrimRight(b, " \t\r\n"))) {
		return fmt.Errorf("data: unexpected end of input")
	}
	// Offset counts the bytes read, including the offending one.
	return fmt.Errorf("data: invalid JSON at %s: %v", position(b, se.Offset-1), err)
}

// skipSeparators returns the index of the first byte at or after off that
// is not JSON whitespace, ',' or ':'.
func skipSeparators(b []byte, off int64) int64 {
	for off >= 0 && off < int64(len(b)) && strings.IndexByte(" \t\r\n,:", b[off]) >= 0 {
		off++
	}
	return off
}

// position converts the byte index i in b to "line L, column C" (1-based).
func position(b []byte, i int64) string {
	i = max(0, min(i, int64(len(b))))
	before := b[:i]
	line := bytes.Count(before, []byte("\n")) + 1
	col := len(before) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return fmt.Sprintf("line %d, column %d", line, col)
}

func tokenKind(tok json.Token) string {
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			return "an array"
		}
		return "an object"
	case string:
		return "a string"
	case float64, json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "null"
}
