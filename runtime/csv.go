package runtime

import (
	"bufio"
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
