package codegen

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// funcLines returns the number of lines of each top-level function of a
// generated file, by name (methods as Recv.Name).
func funcLines(tb testing.TB, src []byte) map[string]int {
	tb.Helper()
	out := map[string]int{}
	for _, f := range funcSizes(tb, src) {
		out[f.name] = f.lines
	}
	return out
}

// manySDsModel is manyStatementsModel(k) with each statement's sd a
// scalar data s1…sk, so that NewModel checks k domains (sd > 0).
func manySDsModel(k int) string {
	src := manyStatementsModel(k)
	for i := k; i >= 1; i-- {
		src = strings.Replace(src, fmt.Sprintf("data y%d : real[N]\n", i), fmt.Sprintf("data y%d : real[N]\ndata s%d : real\n", i, i), 1)
		src = strings.Replace(src, fmt.Sprintf("theta), %g)", 1+float64(i)/1000), fmt.Sprintf("theta), s%d)", i), 1)
	}
	return src
}

// The data glue (LoadData, NewModel) is a table with one line per data
// variable and per domain check, plus a fixed number of calls: adding
// observed vectors to a model adds at most one line to each per vector,
// so a model with 1,000 of them (issue 17) does not give the compiler
// thousands of lines of straight-line code.
func TestDataGlueIsATable(t *testing.T) {
	for _, m := range []struct {
		name  string
		model func(int) string
	}{{"stmts", manyStatementsModel}, {"sds", manySDsModel}} {
		t.Run(m.name, func(t *testing.T) {
			src := m.model(45)
			if m.name == "sds" && !strings.Contains(src, "data s45 : real\n") {
				t.Fatalf("manySDsModel did not add the sds:\n%s", src)
			}
			small := funcLines(t, generateSrc(t, m.name+"5", m.model(5))[0].Src)
			big := funcLines(t, generateSrc(t, m.name+"45", src)[0].Src)
			perVar := map[string]int{"stmts": 1, "sds": 2}[m.name]
			for _, fn := range []string{"LoadData", "NewModel", "Data.table"} {
				if small[fn] == 0 {
					t.Fatalf("no %s in the generated package", fn)
				}
				// 40 more vectors (and sds): at most one line each in
				// NewModel (a domain check) and in the table (a variable).
				want := map[string]int{"LoadData": 0, "NewModel": 40, "Data.table": 40 * perVar}[fn]
				if grow := big[fn] - small[fn]; grow > want {
					t.Errorf("%s grows by %d lines for 40 more data vectors (%d → %d lines), want at most %d", fn, grow, small[fn], big[fn], want)
				}
			}
		})
	}
}

// BenchmarkBuildGenerated measures building (go build, in a throwaway
// module) the package generated for manyStatementsModel with 100 and
// 1,000 statements (issue 17: 1,000 statements build in < 30 s), and
// logs the largest functions of the package. With the data glue a table,
// what remains costly is the kernels: ThetaF and ThetaDelta hold 12,000
// lines each for 1,000 statements, and the compiler's time grows faster
// than linearly in a function's size. It is a benchmark, run on demand,
// since a build takes minutes:
//
//	go test ./codegen -run '^$' -bench BuildGenerated -benchtime 1x
func BenchmarkBuildGenerated(b *testing.B) {
	for _, k := range []int{100, 1000} {
		name := "stmts" + strconv.Itoa(k)
		b.Run(name, func(b *testing.B) {
			src := manyStatementsModel(k)
			start := time.Now()
			files := generateSrc(b, name, src)
			gen := time.Since(start)
			lines := funcLines(b, files[0].Src)
			type fl struct {
				name string
				n    int
			}
			var fs []fl
			for n, l := range lines {
				fs = append(fs, fl{n, l})
			}
			sort.Slice(fs, func(i, j int) bool { return fs[i].n > fs[j].n || fs[i].n == fs[j].n && fs[i].name < fs[j].name })
			if len(fs) > 8 {
				fs = fs[:8]
			}
			b.Logf("%s: generated in %v, %d lines; LoadData %d, NewModel %d lines; largest functions %v",
				name, gen.Round(time.Millisecond), countLines(files), lines["LoadData"], lines["NewModel"], fs)
			dir := tempModule(b)
			pkg := writePackage(b, dir, name, files)
			// Build the dependencies first, so that only the generated
			// package is timed.
			if out, err := goCommand(dir, "build", "github.com/vigen-go/vigen/runtime").CombinedOutput(); err != nil {
				b.Fatalf("%v\n%s", err, out)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				// A new comment each time, so that the build cache does
				// not answer.
				b.StopTimer()
				stamp := fmt.Sprintf("\n// build %d %d\n", i, time.Now().UnixNano())
				if err := os.WriteFile(filepath.Join(pkg, "stamp.go"), []byte("package "+strings.TrimSuffix(files[0].Name, ".go")+stamp), 0o644); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if out, err := goCommand(dir, "build", "./"+name).CombinedOutput(); err != nil {
					b.Fatalf("%v\n%s", err, out)
				}
			}
			b.ReportMetric(float64(countLines(files)), "lines")
			b.ReportMetric(gen.Seconds(), "gen-s")
		})
	}
}
