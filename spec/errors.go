package spec

import (
	"sort"
	"strings"

	"github.com/vigen-go/vigen/spec/ir"
)

// Error is one diagnostic about a model source: a position, a message and,
// where one helps, a hint on how to fix it.
type Error struct {
	Pos  ir.Pos
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
