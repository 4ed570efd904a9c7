package spec_test

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/spec"
	"github.com/vigen-go/vigen/spec/ir"
)

// The language reference, README.md, must document everything the
// language accepts. These tests read its distribution and function tables
// and compare them with the signature tables the checker is driven by
// (ir.Families, ir.Funcs), and check every complete model it shows.

// readmeTable returns the rows of the first table under the `## section`
// heading of readme whose header row starts with header, keyed by the
// code span in the row's first cell (e.g. "Bernoulli" or "dot(x, y)"),
// each row as its trimmed cells.
func readmeTable(t *testing.T, readme, section, header string) map[string][]string {
	t.Helper()
	start := strings.Index(readme, "\n## "+section+"\n")
	if start < 0 {
		t.Fatalf("README.md has no section %q", section)
	}
	body := readme[start+len(section)+5:]
	if end := strings.Index(body, "\n## "); end >= 0 {
		body = body[:end]
	}
	rows := map[string][]string{}
	inTable := false
	for _, line := range strings.Split(body, "\n") {
		switch {
		case !inTable && strings.HasPrefix(line, header):
			inTable = true
		case inTable && strings.HasPrefix(line, "|---"):
		case inTable && strings.HasPrefix(line, "|"):
			cells := strings.Split(strings.Trim(line, "|"), "|")
			for i := range cells {
				cells[i] = strings.TrimSpace(cells[i])
			}
			key, ok := strings.CutPrefix(cells[0], "`")
			key, ok2 := strings.CutSuffix(key, "`")
			if !ok || !ok2 || strings.Contains(key, "`") {
				t.Errorf("README.md, %s table: first cell %q is not one code span", section, cells[0])
				continue
			}
			if _, dup := rows[key]; dup {
				t.Errorf("README.md, %s table: %s has two rows", section, key)
			}
			rows[key] = cells
		case inTable:
			if len(rows) == 0 {
				t.Fatalf("README.md, %s: the table headed %q has no rows", section, header)
			}
			return rows
		}
	}
	if !inTable {
		t.Fatalf("README.md, %s: no table headed %q", section, header)
	}
	return rows
}

func readReadme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// paramName matches a parameter in a parameters cell: its name followed by
// its type as a code span, as in "mean `real[K]`".
var paramName = regexp.MustCompile("([A-Za-z_][A-Za-z0-9_]*) `")

func paramNames(ps []ir.ParamSig) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Name
	}
	return out
}

// TestReadmeDistributions checks that the distribution table of README.md
// has exactly one row per distribution of ir.Families, listing its
// parameters by name in order, and marking it elementwise exactly when it
// is.
func TestReadmeDistributions(t *testing.T) {
	rows := readmeTable(t, readReadme(t), "Distributions", "| distribution |")
	for name, fam := range ir.Families {
		row, ok := rows[name]
		if !ok {
			t.Errorf("README.md: distribution %s is accepted by the language but has no row in the distribution table", name)
			continue
		}
		if len(row) != 5 {
			t.Errorf("README.md: the row of %s has %d cells, want 5 (distribution, target, parameters, elementwise, description)", name, len(row))
			continue
		}
		var got []string
		for _, m := range paramName.FindAllStringSubmatch(row[2], -1) {
			got = append(got, m[1])
		}
		if want := paramNames(fam.Params); !slices.Equal(got, want) {
			t.Errorf("README.md: %s has parameters %v, but the table lists %v", name, want, got)
		}
		if elem := row[3] == "yes"; elem != fam.Elementwise {
			t.Errorf("README.md: %s is elementwise: %v, but its row says %q", name, fam.Elementwise, row[3])
		}
	}
	for name := range rows {
		if _, ok := ir.Families[name]; !ok {
			t.Errorf("README.md: the distribution table has a row for %s, which the language does not accept", name)
		}
	}
}

// TestReadmeFunctions checks that the function table of README.md has
// exactly one row per function of ir.Funcs, written as a call with the
// parameter names in order, and described as elementwise exactly when it
// is.
func TestReadmeFunctions(t *testing.T) {
	rows := readmeTable(t, readReadme(t), "Functions", "| function |")
	byName := map[string][]string{}
	for call, row := range rows {
		name, args, ok := strings.Cut(call, "(")
		args, ok2 := strings.CutSuffix(args, ")")
		if !ok || !ok2 {
			t.Errorf("README.md: function table entry %q is not written as a call f(x, ...)", call)
			continue
		}
		var params []string
		for _, a := range strings.Split(args, ",") {
			if a = strings.TrimSpace(a); a != "" {
				params = append(params, a)
			}
		}
		// the row with its first cell replaced by the parameter names
		byName[name] = append([]string{fmt.Sprint(params)}, row[1:]...)
	}
	for name, fn := range ir.Funcs {
		row, ok := byName[name]
		if !ok {
			t.Errorf("README.md: function %s is accepted by the language but has no row in the function table", name)
			continue
		}
		if want := fmt.Sprint(paramNames(fn.Params)); row[0] != want {
			t.Errorf("README.md: %s takes %s, but the table writes %s", name, want, row[0])
		}
		if len(row) < 2 {
			t.Errorf("README.md: the row of %s has no arguments cell", name)
			continue
		}
		if elem := strings.Contains(row[1], "elementwise"); elem != fn.Elementwise {
			t.Errorf("README.md: %s is elementwise: %v, but its arguments cell says %q", name, fn.Elementwise, row[1])
		}
	}
	for name := range byName {
		if _, ok := ir.Funcs[name]; !ok {
			t.Errorf("README.md: the function table has a row for %s, which the language does not accept", name)
		}
	}
}

// TestReadmeModelsCheck checks every complete model README.md shows: each
// fenced block whose first line (after comments) is `model NAME` must pass
// the checker. The schematic `model NAME` of the file structure is skipped.
func TestReadmeModelsCheck(t *testing.T) {
	blocks := strings.Split(readReadme(t), "```")
	models := 0
	for i := 1; i < len(blocks); i += 2 { // the odd pieces are inside fences
		block := blocks[i]
		first := ""
		for _, line := range strings.Split(block, "\n") {
			line = strings.TrimSpace(line)
			if line != "" && !strings.HasPrefix(line, "#") && !strings.HasPrefix(line, "//") {
				first = line
				break
			}
		}
		name, ok := strings.CutPrefix(first, "model ")
		if !ok || name == "NAME" {
			continue
		}
		models++
		if _, err := spec.Load(name+".vi", []byte(block)); err != nil {
			t.Errorf("README.md shows model %s, which does not check:\n%v", name, err)
		}
	}
	t.Logf("README.md shows %d complete models", models)
	if models < 5 {
		t.Errorf("README.md shows %d complete models, want at least the 5 examples", models)
	}
}
