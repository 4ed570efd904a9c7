package spec

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/spec/ir"
)

var updateFmt = flag.Bool("update-fmt", false, "rewrite testdata/fmt/*.golden")

// irDump prints a checked model without positions: what formatting must
// preserve.
func irDump(m *ir.Model) string {
	var b strings.Builder
	fmt.Fprintf(&b, "model %s\n", m.Name)
	for _, v := range m.Vars {
		fmt.Fprintf(&b, "%s %s : %s %s", v.Role, v.Name, v.Type, v.Treatment)
		if v.Default != nil {
			fmt.Fprintf(&b, " = %s", exprString(v.Default))
		}
		b.WriteByte('\n')
	}
	for _, f := range m.Factors {
		for _, p := range f.Plates {
			if p.Bag != nil {
				fmt.Fprintf(&b, "for %s in %s ", p.Index, exprString(p.Bag))
			} else {
				fmt.Fprintf(&b, "for %s in 1:%s ", p.Index, p.Size)
			}
		}
		if f.IsTerm() {
			fmt.Fprintf(&b, "factor %s\n", exprsString(f.Args))
			continue
		}
		fmt.Fprintf(&b, "%s ~ %s(%s)\n", exprString(f.Target), f.Dist, exprsString(f.Args))
	}
	return b.String()
}

// commentTexts lists the comments of src, sorted.
func commentTexts(t *testing.T, src []byte) []string {
	t.Helper()
	p := &printer{src: src}
	if err := p.scan(); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range p.comments {
		out = append(out, c.text)
	}
	sort.Strings(out)
	return out
}

// Every model in the repository formats to a source that is a fixed point
// of Format, keeps every comment, and checks to the same model.
func TestFormatPreservesModels(t *testing.T) {
	var files []string
	for _, pat := range []string{"../examples/*/*.vi", "testdata/good/*.vi", "testdata/bad/*.vi", "testdata/fmt/*.vi", "../derive/testdata/corpus/*.vi"} {
		m, _ := filepath.Glob(pat)
		files = append(files, m...)
	}
	if len(files) < 150 {
		t.Fatalf("only %d models", len(files))
	}
	for _, path := range files {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(path)
		out, err := Format(name, src)
		if _, perr := Parse(name, src); perr != nil {
			if err == nil || string(out) != string(src) {
				t.Errorf("%s: a syntax error must come back with the source unchanged", path)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		if again, err := Format(name, out); err != nil || string(again) != string(out) {
			t.Errorf("%s: not idempotent (%v):\n--- once\n%s--- twice\n%s", path, err, out, again)
		}
		if a, b := commentTexts(t, src), commentTexts(t, out); strings.Join(a, "\n") != strings.Join(b, "\n") {
			t.Errorf("%s: comments changed:\n%q\n%q", path, a, b)
		}
		m1, err1 := Load(name, src)
		m2, err2 := Load(name, out)
		switch {
		case (err1 == nil) != (err2 == nil):
			t.Errorf("%s: checks %v before formatting, %v after", path, err1, err2)
		case err1 == nil && irDump(m1) != irDump(m2):
			t.Errorf("%s: the model changed:\n%s\nvs\n%s", path, irDump(m1), irDump(m2))
		}
	}
}

// testdata/fmt/NAME.vi formats to NAME.golden (rewrite with -update-fmt).
func TestFormatGolden(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "fmt", "*.vi"))
	if len(files) == 0 {
		t.Fatal("no testdata/fmt models")
	}
	for _, path := range files {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		out, err := Format(path, src)
		if err != nil {
			t.Fatal(err)
		}
		golden := strings.TrimSuffix(path, ".vi") + ".golden"
		if *updateFmt {
			os.WriteFile(golden, out, 0o644)
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run go test ./spec -run TestFormatGolden -update-fmt)", err)
		}
		if string(out) != string(want) {
			t.Errorf("%s:\n--- got\n%s--- want\n%s", path, out, want)
		}
	}
}
