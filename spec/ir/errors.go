package ir

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// The diagnostics of every stage of the compiler (the checker in spec, the
// derivation in derive, the code generator in codegen) are Errors: a
// position in the model source, a message and, where one helps, a hint.

// Error is one diagnostic about a model source: a position, a message and,
// where one helps, a hint on how to fix it.
type Error struct {
	Pos  Pos
	Msg  string
	Hint string
}

// Error formats the error as "file.vi:LINE:COL: msg", followed by a second
// line "\thint: ..." when there is a hint.
func (e *Error) Error() string {
	s := e.Pos.String() + ": " + e.Msg
	if e.Hint != "" {
		s += "\n\thint: " + e.Hint
	}
	return s
}

// ErrorList is a list of errors, sorted by position with duplicates removed
// (see Sort). It implements error: the errors one per line.
type ErrorList []*Error

// Error returns the errors one per line (hints on their own lines),
// sorted by position with duplicates removed.
func (l ErrorList) Error() string {
	sorted := append(ErrorList(nil), l...)
	sorted.Sort()
	var b strings.Builder
	for i, e := range sorted {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Sort sorts the list by (line, column), keeping the order in which errors
// were reported among those at the same position, and removes duplicates.
func (l *ErrorList) Sort() {
	s := *l
	sort.SliceStable(s, func(i, j int) bool {
		if s[i].Pos.Line != s[j].Pos.Line {
			return s[i].Pos.Line < s[j].Pos.Line
		}
		return s[i].Pos.Col < s[j].Pos.Col
	})
	out := s[:0]
	seen := make(map[Error]bool, len(s))
	for _, e := range s {
		if !seen[*e] {
			seen[*e] = true
			out = append(out, e)
		}
	}
	*l = out
}

// Err returns the list as an error, or nil if it is empty.
func (l ErrorList) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}

// Errorf is an Error at pos with the formatted message; add a hint with
// Hintf.
func Errorf(pos Pos, format string, args ...any) *Error {
	return &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

// Hintf sets e's hint to the formatted text and returns e.
func (e *Error) Hintf(format string, args ...any) *Error {
	e.Hint = fmt.Sprintf(format, args...)
	return e
}

// Unwrap returns the list's errors, so that errors.As finds an *Error in it.
func (l ErrorList) Unwrap() []error {
	out := make([]error, len(l))
	for k, e := range l {
		out[k] = e
	}
	return out
}

// Join gathers the errors of a stage into one error, or nil if there are
// none. When every one is an *Error or an ErrorList the result is an
// ErrorList (sorted by position, duplicates removed); otherwise it is
// errors.Join of them, duplicate messages removed, in the order given.
func Join(errs ...error) error {
	var list ErrorList
	var other []error
	seen := map[string]bool{}
	for _, err := range errs {
		if err == nil || seen[err.Error()] {
			continue
		}
		seen[err.Error()] = true
		other = append(other, err)
		switch x := err.(type) {
		case *Error:
			list = append(list, x)
		case ErrorList:
			list = append(list, x...)
		}
	}
	if len(other) == 0 {
		return nil
	}
	for _, err := range other {
		switch err.(type) {
		case *Error, ErrorList:
		default:
			return errors.Join(other...)
		}
	}
	list.Sort()
	return list
}
