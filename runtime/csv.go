package runtime

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// ReadCSV reads a header row and numeric rows (comma-separated, no quoting).
//
// Fields are trimmed of spaces; blank lines are skipped; CRLF line ends and a
// leading UTF-8 byte-order mark are accepted. Header names must be non-empty
// and distinct, every row must have as many fields as the header, and every
// field must be a finite decimal number. Errors name the file line and
// column: `line 17, column "f3": "abc" is not a number`.
func ReadCSV(r io.Reader) (header []string, rows [][]float64, err error) {
	br := bufio.NewReader(r)
	for lineNo := 1; ; lineNo++ {
		line, rerr := readLine(br)
		if rerr != nil && rerr != io.EOF {
			return nil, nil, fmt.Errorf("line %d: %w", lineNo, rerr)
		}
		if rerr == io.EOF && line == "" {
			break
		}
		line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		if lineNo == 1 {
			line = strings.TrimPrefix(line, "\ufeff")
		}
		if strings.TrimSpace(line) != "" {
			fields := strings.Split(line, ",")
			for i := range fields {
				fields[i] = strings.TrimSpace(fields[i])
			}
			if header == nil {
				if err := checkHeader(fields, lineNo); err != nil {
					return nil, nil, err
				}
				header = fields
			} else {
				row, err := parseRow(fields, header, lineNo)
				if err != nil {
					return nil, nil, err
				}
				rows = append(rows, row)
			}
		}
		if rerr == io.EOF {
			break
		}
	}
	if header == nil {
		return nil, nil, errors.New("line 1: empty input, expected a header row")
	}
	return header, rows, nil
}

func checkHeader(fields []string, lineNo int) error {
	seen := make(map[string]bool, len(fields))
	for j, f := range fields {
		if f == "" {
			return fmt.Errorf("line %d: header field %d is empty", lineNo, j+1)
		}
		if seen[f] {
			return fmt.Errorf("line %d: duplicate column %q in the header", lineNo, f)
		}
		seen[f] = true
	}
	return nil
}

func parseRow(fields, header []string, lineNo int) ([]float64, error) {
	if len(fields) != len(header) {
		return nil, fmt.Errorf("line %d: %d fields, want %d (as in the header)", lineNo, len(fields), len(header))
	}
	row := make([]float64, len(fields))
	for j, f := range fields {
		if f == "" {
			return nil, fmt.Errorf("line %d, column %q: empty field", lineNo, header[j])
		}
		v, err := strconv.ParseFloat(f, 64)
		// ParseFloat also reads hexadecimal and underscored forms; a data
		// file should not contain them.
		if err != nil && !errors.Is(err, strconv.ErrRange) || strings.ContainsAny(f, "xX_") {
			return nil, fmt.Errorf("line %d, column %q: %q is not a number", lineNo, header[j], f)
		}
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return nil, fmt.Errorf("line %d, column %q: %q is not a finite number", lineNo, header[j], f)
		}
		row[j] = v
	}
	return row, nil
}

// MaxLineBytes is the longest line ReadCSV and ReadLDAC accept (64 MiB, a
// document of millions of distinct terms), so that a stream without line
// ends, such as /dev/zero, is an error instead of filling memory.
const MaxLineBytes = 64 << 20

// readLine reads through the next '\n' (included) like ReadString, refusing
// lines longer than MaxLineBytes. Errors other than io.EOF complete
// "line N: ...".
func readLine(br *bufio.Reader) (string, error) {
	var buf []byte
	for {
		part, err := br.ReadSlice('\n')
		buf = append(buf, part...)
		if len(buf) > MaxLineBytes {
			return "", fmt.Errorf("longer than %d MiB; is this a text file?", MaxLineBytes>>20)
		}
		if err != bufio.ErrBufferFull {
			if err != nil && err != io.EOF {
				err = fmt.Errorf("reading: %w", err)
			}
			return string(buf), err
		}
	}
}

// WithColumns returns the JSON data object src with data variables filled
// from a CSV table (ReadCSV's header and rows, read from file): dims gives
// each variable's dimensions as the model declares them (size names, or
// numbers). A variable of one dimension takes the column of its own name;
// one of two dimensions (a matrix, a row per CSV row) takes every column
// that no variable of names claims, in the file's order (at most one
// such matrix per file). A size a dimension names that src does not give
// is added (the rows, or the matrix's columns) and returned. A variable
// that src already gives, or that is not a vector or matrix, is an error.
func WithColumns(src []byte, file string, names []string, dims map[string][]string, header []string, rows [][]float64) ([]byte, map[string]int, error) {
	obj, err := dataObject(src)
	if err != nil {
		return nil, nil, err
	}
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	claimed := map[string]bool{}
	matrix := ""
	for _, name := range names {
		d, ok := dims[name]
		switch {
		case !ok:
			return nil, nil, fmt.Errorf("%s: %q is not a data variable of one or two dimensions", file, name)
		case len(d) == 1:
			if _, ok := col[name]; !ok {
				return nil, nil, fmt.Errorf("%s: no column %q (its columns: %s)", file, name, strings.Join(header, ", "))
			}
			claimed[name] = true
		case matrix != "":
			return nil, nil, fmt.Errorf("%s: %s and %s both want the remaining columns; give one matrix per file", file, matrix, name)
		default:
			matrix = name
		}
		if _, ok := obj[name]; ok {
			return nil, nil, fmt.Errorf("data %q is given both in the JSON data and in %s; give it once", name, file)
		}
	}
	var rest []int
	for i, h := range header {
		if !claimed[h] {
			rest = append(rest, i)
		}
	}
	if matrix != "" && len(rest) == 0 {
		return nil, nil, fmt.Errorf("%s: no columns left for %s", file, matrix)
	}
	sz := sizes{obj: obj, file: file, added: map[string]int{}}
	num := func(b []byte, x float64) []byte { return strconv.AppendFloat(b, x, 'g', -1, 64) }
	for _, name := range names {
		d := dims[name]
		b := []byte{'['}
		for r, row := range rows {
			if r > 0 {
				b = append(b, ',')
			}
			if len(d) == 1 {
				b = num(b, row[col[name]])
				continue
			}
			b = append(b, '[')
			for j, c := range rest {
				if j > 0 {
					b = append(b, ',')
				}
				b = num(b, row[c])
			}
			b = append(b, ']')
		}
		obj[name] = append(b, ']')
		sz.add(d[0], len(rows), "the rows of the table")
		if len(d) == 2 {
			sz.add(d[1], len(rest), "the columns of "+name)
		}
	}
	return sz.done()
}

// dataObject decodes the JSON data object src, keeping its values raw.
func dataObject(src []byte) (map[string]json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(src, &obj); err != nil || obj == nil {
		if err == nil {
			err = errors.New("not an object")
		}
		return nil, fmt.Errorf("the data must be a JSON object: %v", err)
	}
	if key, ok := duplicateKey(src); ok {
		return nil, fmt.Errorf("the data: duplicate key %q", key)
	}
	return obj, nil
}

// duplicateKey returns the first key that the JSON object src (valid JSON,
// checked before) gives twice at its top level: encoding/json keeps the
// last value of such a key silently, so callers that decode an object into
// a map check it with this to refuse the data, as the data file's own
// decoder does.
func duplicateKey(src []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(src))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return "", false
	}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		key, isKey := t.(string)
		if err != nil || !isKey {
			return "", false
		}
		if seen[key] {
			return key, true
		}
		seen[key] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return "", false
		}
	}
	return "", false
}

// sizes collects the sizes a data file sets in the data object obj: those
// obj does not give, named (not literal) dimensions, each set once.
type sizes struct {
	obj      map[string]json.RawMessage
	file     string
	added    map[string]int
	conflict error
}

// add sets size to n, what the file has n of, unless obj gives it or it is
// a literal dimension; a second, different n is a conflict.
func (z *sizes) add(size string, n int, what string) {
	if _, err := strconv.Atoi(size); err == nil || size == "" {
		return // a literal dimension
	}
	if _, ok := z.obj[size]; ok {
		return // the JSON gives it; loading checks the lengths
	}
	if m, ok := z.added[size]; ok && m != n && z.conflict == nil {
		z.conflict = fmt.Errorf("%s: %s would be both %d and %d (%s); give %s in the JSON data", z.file, size, m, n, what, size)
	}
	z.added[size] = n
}

// done writes the sizes added into obj and returns its JSON and them, or
// the first conflict.
func (z *sizes) done() ([]byte, map[string]int, error) {
	if z.conflict != nil {
		return nil, nil, z.conflict
	}
	for size, n := range z.added {
		z.obj[size] = json.RawMessage(strconv.Itoa(n))
	}
	out, err := json.Marshal(z.obj)
	return out, z.added, err
}

// WithRecords is WithColumns for a JSON-lines file: every non-blank line of
// lines is a JSON object giving, for each of names, a number (a variable
// of one dimension) or an array of numbers (a row of a matrix). The sizes
// src does not give are added as with WithColumns: the lines, and a
// matrix's row length. A line that is not an object or lacks a name is an
// error naming the file and the line.
func WithRecords(src []byte, file string, names []string, dims map[string][]string, lines [][]byte) ([]byte, map[string]int, error) {
	obj, err := dataObject(src)
	if err != nil {
		return nil, nil, err
	}
	for _, name := range names {
		if d, ok := dims[name]; !ok || len(d) < 1 || len(d) > 2 {
			return nil, nil, fmt.Errorf("%s: %q is not a data variable of one or two dimensions", file, name)
		}
		if _, ok := obj[name]; ok {
			return nil, nil, fmt.Errorf("data %q is given both in the JSON data and in %s; give it once", name, file)
		}
	}
	values := make(map[string][]byte, len(names))
	cols := map[string]int{}
	n := 0
	for i, line := range lines {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var rec map[string]json.RawMessage
		if err := json.Unmarshal(line, &rec); err != nil || rec == nil {
			return nil, nil, fmt.Errorf("%s:%d: want a JSON object on each line", file, i+1)
		}
		if key, ok := duplicateKey(line); ok {
			return nil, nil, fmt.Errorf("%s:%d: duplicate key %q; give each key once per line", file, i+1, key)
		}
		for _, name := range names {
			v, ok := rec[name]
			if !ok {
				return nil, nil, fmt.Errorf("%s:%d: no %q", file, i+1, name)
			}
			if len(dims[name]) == 2 {
				var row []json.RawMessage
				if err := json.Unmarshal(v, &row); err != nil {
					return nil, nil, fmt.Errorf("%s:%d: %q must be an array (a row of %s)", file, i+1, name, name)
				}
				if _, seen := cols[name]; !seen {
					cols[name] = len(row)
				}
			}
			b := values[name]
			if n > 0 {
				b = append(b, ',')
			}
			values[name] = append(b, v...)
		}
		n++
	}
	sz := sizes{obj: obj, file: file, added: map[string]int{}}
	for _, name := range names {
		obj[name] = append(append([]byte{'['}, values[name]...), ']')
		d := dims[name]
		sz.add(d[0], n, "the lines of the file")
		if len(d) == 2 {
			sz.add(d[1], cols[name], "the length of "+name+"'s first row")
		}
	}
	return sz.done()
}
