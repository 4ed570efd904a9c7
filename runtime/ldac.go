package runtime

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// LDA-C bag-of-words files (the format of Blei's lda-c and of many topic-model
// data sets) hold one document per line:
//
//	M id:count id:count ...
//
// M is the number of distinct terms in the document, id a 0-based vocabulary
// index and count >= 1 the number of times the term occurs; each id appears at
// most once per line, and a document with no terms is the line "0". In memory
// documents are bags as DecodeBag returns them, with 1-based term ids.

// maxLDACID is the largest 0-based term id ReadLDAC accepts (and WriteLDAC
// writes), so that 1-based ids fit in an int32.
const maxLDACID = math.MaxInt32 - 1

// ReadLDAC reads documents in LDA-C format and returns them as bags in the
// same form the JSON decoder DecodeBag produces: one [term, count] pair per
// distinct term, with term ids converted to 1-based (term id t in the file
// becomes t+1), in file order. name is used in error messages (usually the
// file name).
//
// Fields are separated by spaces or tabs; CRLF line ends, a leading UTF-8
// byte-order mark and blank lines at the end of the input are accepted, a
// blank line before the last document is an error (an empty document is the
// line "0"). Empty input is zero documents. Errors name the 1-based line and
// the offending entry: `ap.dat:17: entry 3 "12:x": count is not an integer`.
func ReadLDAC(r io.Reader, name string) ([][][2]int, error) {
	at := func(lineNo int) string {
		if name == "" {
			return fmt.Sprintf("line %d", lineNo)
		}
		return fmt.Sprintf("%s:%d", name, lineNo)
	}
	br := bufio.NewReaderSize(r, 1<<16)
	docs := [][][2]int{}
	seen := make(map[int]int) // 0-based term id -> 1-based entry number
	blank := 0                // first blank line since the last document
	for lineNo := 1; ; lineNo++ {
		line, rerr := readLine(br)
		if rerr != nil && rerr != io.EOF {
			return nil, fmt.Errorf("%s: %w", at(lineNo), rerr)
		}
		if rerr == io.EOF && line == "" {
			break
		}
		if lineNo == 1 {
			line = strings.TrimPrefix(line, "\ufeff")
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			if blank == 0 {
				blank = lineNo
			}
		} else {
			if blank != 0 {
				return nil, fmt.Errorf("%s: blank line before the last document (an empty document is the line \"0\")", at(blank))
			}
			doc, err := parseLDACLine(fields, seen)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", at(lineNo), err)
			}
			docs = append(docs, doc)
		}
		if rerr == io.EOF {
			break
		}
	}
	return docs, nil
}

// parseLDACLine parses the fields of one non-blank line; seen is scratch space.
func parseLDACLine(fields []string, seen map[int]int) ([][2]int, error) {
	m, err := parseLDACInt(fields[0])
	if err != nil {
		return nil, fmt.Errorf("number of terms %q %v", fields[0], err)
	}
	if m < 0 {
		return nil, fmt.Errorf("number of terms %d is negative", m)
	}
	entries := fields[1:]
	if m != len(entries) {
		return nil, fmt.Errorf("says %d distinct terms but lists %d", m, len(entries))
	}
	clear(seen)
	doc := make([][2]int, len(entries))
	for k, e := range entries {
		idStr, countStr, ok := strings.Cut(e, ":")
		if !ok {
			return nil, fmt.Errorf("entry %d %q: want id:count", k+1, e)
		}
		id, err := ldacNumber(idStr, "term id", 0, maxLDACID, "want a non-negative term id")
		if err != nil {
			return nil, fmt.Errorf("entry %d %q: %w", k+1, e, err)
		}
		// Counts are used as float64s, which hold integers exactly only up to 2⁵³.
		count, err := ldacNumber(countStr, "count", 1, maxExactInt, "want a positive count")
		if err != nil {
			return nil, fmt.Errorf("entry %d %q: %w", k+1, e, err)
		}
		if first, dup := seen[id]; dup {
			return nil, fmt.Errorf("entry %d %q: term %d appears twice (first as entry %d)", k+1, e, id, first)
		}
		seen[id] = k + 1
		doc[k] = [2]int{id + 1, count}
	}
	return doc, nil
}

// ldacNumber parses an entry's term id or count (what), which must lie in
// [lo, hi]; low completes the message for a number below lo.
func ldacNumber(s, what string, lo, hi int, low string) (int, error) {
	v, err := parseLDACInt(s)
	switch {
	case err != nil:
		return 0, fmt.Errorf("%s %w", what, err)
	case v < lo:
		return 0, fmt.Errorf("%s %d, %s", what, v, low)
	case v > hi:
		return 0, fmt.Errorf("%s %d is too large (at most %d)", what, v, hi)
	}
	return v, nil
}

var errLDACRange = errors.New("is too large")

// parseLDACInt parses a decimal integer; the error completes a sentence
// ("count is not an integer").
func parseLDACInt(s string) (int, error) {
	v, err := strconv.Atoi(s)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return 0, errLDACRange
		}
		return 0, errors.New("is not an integer")
	}
	return v, nil
}

// ReadLDACFile opens path and calls ReadLDAC with the path as name.
func ReadLDACFile(path string) ([][][2]int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadLDAC(f, path)
}

// WriteLDAC writes docs (1-based term ids, as returned by ReadLDAC) in LDA-C
// format (0-based ids), one line per document ending in a newline. It checks
// what ReadLDAC checks, so that what it writes reads back to docs: terms must
// lie in 1..2147483647, counts must be positive and no term may appear twice
// in a document. It stops at the first bad document, leaving the output
// incomplete.
func WriteLDAC(w io.Writer, docs [][][2]int) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	seen := make(map[int]int)
	var buf []byte
	for d, doc := range docs {
		clear(seen)
		buf = strconv.AppendInt(buf[:0], int64(len(doc)), 10)
		for k, p := range doc {
			if p[0] < 1 || p[0] > maxLDACID+1 {
				return fmt.Errorf("document %d: entry %d has term %d, want a term in %s", d+1, k+1, p[0], rangeString(1, maxLDACID+1))
			}
			if p[1] < 1 {
				return fmt.Errorf("document %d: entry %d has count %d, want a positive count", d+1, k+1, p[1])
			}
			if first, dup := seen[p[0]]; dup {
				return fmt.Errorf("document %d: entry %d repeats term %d (first as entry %d)", d+1, k+1, p[0], first)
			}
			seen[p[0]] = k + 1
			buf = append(buf, ' ')
			buf = strconv.AppendInt(buf, int64(p[0]-1), 10)
			buf = append(buf, ':')
			buf = strconv.AppendInt(buf, int64(p[1]), 10)
		}
		buf = append(buf, '\n')
		if _, err := bw.Write(buf); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// MaxTerm returns the largest (1-based) term id in docs, or 0 if there are no
// terms; for documents from ReadLDAC this is the smallest vocabulary size that
// covers them.
func MaxTerm(docs [][][2]int) int {
	m := 0
	for _, doc := range docs {
		for _, p := range doc {
			m = max(m, p[0])
		}
	}
	return m
}
