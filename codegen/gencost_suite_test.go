package codegen

import (
	"bufio"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	goruntime "runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vigen-go/vigen/derive"
	"github.com/vigen-go/vigen/golden"
	"github.com/vigen-go/vigen/spec"
)

// The generation-cost suite (issue 39, item 5) measures, for each model of
// a corpus that a statistician would write (testdata/gencost/*.vi), every
// example (examples/*/*.vi) and families of generated models at growing
// sizes, what the model costs from source to compiled package:
//
//   - check: spec.Load and derive.Derive, in CPU seconds;
//   - gen: Generate (with the too-large refusal lifted, so that the models
//     it refuses are measured too), in CPU seconds;
//   - the peak resident memory of check and gen;
//   - the generated lines, the largest function (a kernel, nearly always)
//     and the size lint's counts (golden.OneTripLoops, golden.UnusedParams);
//   - go build of the package in a throwaway module, a stamp file making
//     its source unique so that the build cache cannot answer, in CPU
//     seconds of the go command and the compiler, and its peak memory.
//
// Check and gen run in a child process (this test binary, running
// TestGenCostChild) and the build in the go command, each under a CPU and
// a memory cap: a model over a cap is killed and recorded as "> cap".
// Process CPU is measured, not wall time: the machine may be shared.
//
// The table (codegen/testdata/gencost/BEFORE.md, and the AFTER of issue
// 39's rewrite) is written by
//
//	go test -tags slow ./codegen -run '^TestGenCostTable$' -timeout 120m -gencost.table FILE
//
// (about 14 CPU-minutes, 25 minutes on two cores shared with other work),
// and a model's numbers are benchmark metrics with
//
//	go test ./codegen -run '^$' -bench 'GenCost/mixlit$' -benchtime 1x

var (
	genCostTableFile = flag.String("gencost.table", "", "TestGenCostTable: measure the generation-cost suite and write its table as Markdown to this file")
	genCostCheckCap  = flag.Duration("gencost.checkcap", 60*time.Second, "generation-cost suite: CPU cap of a model's check (spec.Load, derive.Derive)")
	genCostGenCap    = flag.Duration("gencost.gencap", 60*time.Second, "generation-cost suite: CPU cap of a model's generation")
	genCostBuildCap  = flag.Duration("gencost.buildcap", 90*time.Second, "generation-cost suite: CPU cap of go build of a generated package")
	genCostMemCap    = flag.Int64("gencost.memcap", 6<<30, "generation-cost suite: cap of the resident memory of check+gen and of go build, in bytes")
	genCostNoBuild   = flag.Bool("gencost.nobuild", false, "generation-cost suite: do not build the generated packages")
)

// costModel is one model of the generation-cost suite.
type costModel struct {
	Name  string // subtest and benchmark name
	Label string // the table's model column: the .vi file, or the family and size
	File  string // the file name given to spec.Load
	Src   string
}

// genCostSuite is the suite's models: the corpus testdata/gencost/*.vi,
// every example model, and the generated families.
func genCostSuite(tb testing.TB) []costModel {
	tb.Helper()
	var out []costModel
	read := func(glob, prefix string) {
		paths, err := filepath.Glob(glob)
		if err != nil || len(paths) == 0 {
			tb.Fatalf("no models at %s (%v)", glob, err)
		}
		sort.Strings(paths)
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				tb.Fatal(err)
			}
			base := strings.TrimSuffix(filepath.Base(p), ".vi")
			out = append(out, costModel{Name: prefix + base, Label: strings.TrimPrefix(filepath.ToSlash(p), "../"), File: filepath.Base(p), Src: string(b)})
		}
	}
	read(filepath.Join("testdata", "gencost", "*.vi"), "")
	read(filepath.Join("..", "examples", "*", "*.vi"), "ex_")
	for _, g := range genCostFamilies {
		for _, k := range g.sizes {
			name := fmt.Sprintf("%s_%d", g.name, k)
			out = append(out, costModel{Name: name, Label: fmt.Sprintf("%s(%d)", g.name, k), File: name + ".vi", Src: g.model(k)})
		}
	}
	out = append(out, costModel{Name: "gp", Label: "gpModel (gencost_test.go)", File: "gp.vi", Src: gpModel})
	return out
}

// genCostFamilies are the generated models, each at a few sizes so that
// the table shows how the cost grows.
var genCostFamilies = []struct {
	name  string
	model func(int) string
	sizes []int
}{
	// issue 39: 1,000 scalar latents, each read by one likelihood
	{"latents_own", latentsOwnModel, []int{50, 100, 200, 1000}},
	// scalar latents read together by one likelihood
	{"latents_shared", latentsSharedModel, []int{10, 25, 50, 100}},
	// issue 39: 5,000 data declarations
	{"data_decls", dataDeclsModel, []int{50, 200, 1000, 5000}},
	// let chains: each link reads the one before once (let20.vi is 20)
	{"let_ewma", letEWMAModel, []int{10, 40}},
	// each link reads the one before three times (let_growth.vi is 5)
	{"let_growth", letGrowthModel, []int{2, 3, 4}},
	// issue 17's cost models (gencost_test.go)
	{"nested_logistic", func(k int) string { return nestedModel("logistic", k) }, []int{12}},
	{"nested_log", func(k int) string { return nestedModel("log", k) }, []int{30, 100}},
	{"stmts", manyStatementsModel, []int{100, 1000}},
}

// latentsOwnModel has k scalar latents m1…mk, each with a Normal(0, 1)
// prior and read by one likelihood of its own data vector.
func latentsOwnModel(k int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "model latents_own_%d\n\nsize N\n", k)
	for i := 1; i <= k; i++ {
		fmt.Fprintf(&b, "data y%d : real[N]\n", i)
	}
	for i := 1; i <= k; i++ {
		fmt.Fprintf(&b, "latent m%d : real nonconjugate laplace\n", i)
	}
	b.WriteString("\n")
	for i := 1; i <= k; i++ {
		fmt.Fprintf(&b, "m%d ~ Normal(0, 1)\n", i)
	}
	b.WriteString("for n in 1:N {\n")
	for i := 1; i <= k; i++ {
		fmt.Fprintf(&b, "  y%d[n] ~ Normal(m%d, 1)\n", i, i)
	}
	b.WriteString("}\n")
	return b.String()
}

// latentsSharedModel has k scalar latents m1…mk, each with a Normal(0, 1)
// prior, whose sum is the mean of one likelihood.
func latentsSharedModel(k int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "model latents_shared_%d\n\nsize N\ndata y : real[N]\n", k)
	terms := make([]string, k)
	for i := 1; i <= k; i++ {
		fmt.Fprintf(&b, "latent m%d : real nonconjugate laplace\n", i)
		terms[i-1] = fmt.Sprintf("m%d", i)
	}
	b.WriteString("\n")
	for i := 1; i <= k; i++ {
		fmt.Fprintf(&b, "m%d ~ Normal(0, 1)\n", i)
	}
	fmt.Fprintf(&b, "for n in 1:N {\n  y[n] ~ Normal(%s, 1)\n}\n", strings.Join(terms, " + "))
	return b.String()
}

// dataDeclsModel has k scalar data y1…yk (a small data set transcribed
// one named value at a time), each drawn from a Normal with a latent mean
// and scale.
func dataDeclsModel(k int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "model data_decls_%d\n\n", k)
	for i := 1; i <= k; i++ {
		fmt.Fprintf(&b, "data y%d : real\n", i)
	}
	b.WriteString("latent mu : real nonconjugate laplace\nlatent sigma : real<lower=0> nonconjugate laplace\n\nmu ~ Normal(0, 10)\nsigma ~ HalfNormal(5)\n")
	for i := 1; i <= k; i++ {
		fmt.Fprintf(&b, "y%d ~ Normal(mu, sigma)\n", i)
	}
	return b.String()
}

// letEWMAModel is testdata/gencost/let20.vi with a chain of k lets: an
// exponentially weighted moving average of the last k observations, with
// a latent weight, is the mean of the next.
func letEWMAModel(k int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "model let_ewma_%d\n\nsize T\ndata y : real[T]\nlatent a : real<lower=0, upper=1> nonconjugate laplace\nlatent s : real<lower=0> nonconjugate laplace\n\na ~ Beta(2, 2)\ns ~ HalfNormal(2)\nfor t in %d:T {\n", k, k+1)
	fmt.Fprintf(&b, "  let l1 = y[t-%d]\n", k)
	for i := 2; i <= k; i++ {
		fmt.Fprintf(&b, "  let l%d = a * y[t-%d] + (1 - a) * l%d\n", i, k+1-i, i-1)
	}
	fmt.Fprintf(&b, "  y[t] ~ Normal(l%d, s)\n}\n", k)
	return b.String()
}

// letGrowthModel is testdata/gencost/let_growth.vi with k steps of
// discrete logistic growth, each let reading the one before three times.
func letGrowthModel(k int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "model let_growth_%d\n\nsize N\ndata y : real[N]\nlatent r : real<lower=0> nonconjugate laplace\nlatent p0 : real<lower=0, upper=1> nonconjugate laplace\nlatent s : real<lower=0> nonconjugate laplace\n\nr ~ HalfNormal(1)\np0 ~ Beta(2, 8)\ns ~ HalfNormal(1)\n", k)
	for i := 1; i <= k; i++ {
		fmt.Fprintf(&b, "let p%d = p%d + r * p%d * (1 - p%d)\n", i, i-1, i-1, i-1)
	}
	fmt.Fprintf(&b, "for n in 1:N {\n  y[n] ~ Normal(p%d, s)\n}\n", k)
	return b.String()
}

// TestGenCostCorpus: every model of the suite is accepted by the checker
// (spec.Load; the derivation, which for a few takes minutes, is what the
// suite measures), the corpus has the models issue 39 lists, and the
// families are generated at small sizes too.
func TestGenCostCorpus(t *testing.T) {
	models := genCostSuite(t)
	have := map[string]bool{}
	for _, m := range models {
		have[m.Name] = true
		if m.Label == "" || strings.ContainsAny(m.Name, " /") {
			t.Errorf("%s: bad name or label %q", m.Name, m.Label)
		}
		if strings.Contains(m.Name, "_1000") || strings.Contains(m.Name, "_5000") {
			continue // the same source as the small sizes, longer
		}
		if _, err := spec.Load(m.File, []byte(m.Src)); err != nil {
			t.Errorf("%s: %v", m.Label, err)
		}
	}
	corpus, _ := filepath.Glob(filepath.Join("testdata", "gencost", "*.vi"))
	if len(corpus) < 30 {
		t.Errorf("%d models in testdata/gencost, want 30 or more", len(corpus))
	}
	for _, want := range []string{"mixlit", "mix2_scalars", "mix3_softmax", "mix3_scales", "nested_logistic_exp", "let20", "gp_scalars", "ex_schoolreg", "ex_ar2", "latents_own_1000", "data_decls_5000", "gp"} {
		if !have[want] {
			t.Errorf("the suite lacks %s", want)
		}
	}
	for _, g := range genCostFamilies {
		if _, err := spec.Load("small.vi", []byte(g.model(2))); err != nil {
			t.Errorf("%s(2): %v", g.name, err)
		}
	}
	// mixlit is issue 39's text, verbatim.
	b, err := os.ReadFile(filepath.Join("testdata", "gencost", "mixlit.vi"))
	if err != nil || string(b) != mixLiteralVI {
		t.Errorf("testdata/gencost/mixlit.vi is not mixLiteralVI (%v)", err)
	}
}

// costRow is what the suite measures of one model. A negative number was
// not measured; Capped names the step that was killed.
type costRow struct {
	Model       costModel
	SourceLines int
	CheckCPU    float64
	GenCPU      float64
	GenRSS      int64 // bytes, of check and gen
	Lines       int
	Bytes       int
	// the longest derivative kernel (a function of an objective's F,
	// Delta or Target kernel), in lines: Generate refuses the model if it
	// is longer than maxKernelLines
	Kernel  string
	KernelN int
	Refused bool
	// the largest function of the package, by bytes (lines undercount
	// code whose expressions are printed on one line)
	Largest      string
	LargestBytes int
	OneTrip      int
	Unused       int
	BuildCPU     float64
	BuildRSS     int64
	Capped       string // "check", "gen" or "build" and why: "check: > 60 CPU-s"
	Err          string // an error of check or gen (not a cap), or of the build
}

// genCostChildEnv names the model file a child process measures, and
// genCostExecEnv makes the child run a command.
const (
	genCostChildEnv = "VIGEN_GENCOST_CHILD"
	genCostExecEnv  = "VIGEN_GENCOST_EXEC"
)

// TestGenCostChild is the child process of the suite: it checks, derives
// and generates the model named by $VIGEN_GENCOST_CHILD, with the
// too-large refusal lifted, writes the package into the directory out
// beside it and prints its process CPU seconds at each step on standard
// output, as lines "gencost STEP SECONDS". Without the variable it does
// nothing.
//
// With $VIGEN_GENCOST_EXEC set instead, it runs the command its arguments
// after -- name (go build) and prints "gencost exec CPU-SECONDS PEAK-KB":
// the CPU and peak resident set of the command and the children it waited
// for. A process started by the test itself would not do, as Linux carries
// the peak resident set of the process that started a program into the
// program's (so every build would show the test's own peak), and this
// child's is small.
func TestGenCostChild(t *testing.T) {
	say := func(format string, args ...any) { fmt.Fprintf(os.Stdout, "gencost "+format+"\n", args...) }
	fail := func(err error) { say("error %s", strconv.Quote(err.Error())) }
	if os.Getenv(genCostExecEnv) != "" {
		args := flag.Args()
		if len(args) == 0 {
			fail(fmt.Errorf("no command to run"))
			return
		}
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			fail(err)
			return
		}
		ps := cmd.ProcessState
		say("exec %.3f %d", (ps.UserTime() + ps.SystemTime()).Seconds(), maxRSS(ps)>>10)
		return
	}
	path := os.Getenv(genCostChildEnv)
	if path == "" {
		t.Skip("the generation-cost suite's child process")
	}
	src, err := os.ReadFile(path)
	if err != nil {
		fail(err)
		return
	}
	say("start %.3f", processCPU())
	defer func(v int) { maxKernelLines = v }(maxKernelLines)
	maxKernelLines = 1 << 30
	m, err := spec.Load(filepath.Base(path), src)
	if err != nil {
		fail(err)
		return
	}
	d, err := derive.Derive(m)
	if err != nil {
		fail(err)
		return
	}
	say("checked %.3f", processCPU())
	files, err := Generate(d, Options{Methods: []string{"delta"}}) // every kernel, as BEFORE.md measured
	if err != nil {
		fail(err)
		return
	}
	say("generated %.3f", processCPU())
	out := filepath.Join(filepath.Dir(path), "out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		fail(err)
		return
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(out, f.Name), f.Src, 0o644); err != nil {
			fail(err)
			return
		}
	}
	say("hwm %d", peakRSSSelf()>>10)
	say("done")
}

// costCaps are the suite's caps.
type costCaps struct {
	check, gen, build time.Duration
	mem               int64
	noBuild           bool
}

func flagCaps() costCaps {
	return costCaps{*genCostCheckCap, *genCostGenCap, *genCostBuildCap, *genCostMemCap, *genCostNoBuild}
}

// costBench is a throwaway module in which the suite builds packages.
type costBench struct {
	dir  string
	caps costCaps
	seq  int
}

// newCostBench makes the module and builds the runtime in it, so that a
// package's build compiles that package alone.
func newCostBench(tb testing.TB, caps costCaps) *costBench {
	tb.Helper()
	if !procSupported {
		tb.Skip("the generation-cost suite measures processes through /proc (Linux)")
	}
	dir := tempModule(tb)
	if !caps.noBuild {
		if out, err := goCommand(dir, "build", "github.com/vigen-go/vigen/runtime").CombinedOutput(); err != nil {
			tb.Fatalf("go build of the runtime: %v\n%s", err, out)
		}
	}
	return &costBench{dir: dir, caps: caps}
}

var packageClause = regexp.MustCompile(`(?m)^package (\w+)`)

// kernelFunc matches the functions of the derivative kernels that
// kernelTooLarge measures: Model.NameF, NameDelta and NameTarget, and their
// parts (thetaFPart1).
var kernelFunc = regexp.MustCompile(`^Model\.\w+(F|Delta|Target)(Part\d+)?$`)

// measure runs the suite's steps on m.
func (c *costBench) measure(tb testing.TB, m costModel) costRow {
	tb.Helper()
	c.seq++
	row := costRow{Model: m, SourceLines: strings.Count(m.Src, "\n"), CheckCPU: -1, GenCPU: -1, GenRSS: -1, BuildCPU: -1, BuildRSS: -1}
	work := filepath.Join(c.dir, "work", fmt.Sprintf("m%03d", c.seq))
	if err := os.MkdirAll(work, 0o755); err != nil {
		tb.Fatal(err)
	}
	viPath := filepath.Join(work, m.File)
	if err := os.WriteFile(viPath, []byte(m.Src), 0o644); err != nil {
		tb.Fatal(err)
	}
	// check and gen, in a child
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestGenCostChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), genCostChildEnv+"="+viPath)
	var mu sync.Mutex
	marks := map[string]float64{}
	var errMsg string
	res := runCapped(cmd, 10*(c.caps.check+c.caps.gen), func(line string) {
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != "gencost" {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if f[1] == "error" {
			errMsg, _ = strconv.Unquote(strings.TrimPrefix(line, "gencost error "))
			return
		}
		if len(f) == 3 {
			marks[f[1]], _ = strconv.ParseFloat(f[2], 64)
		} else {
			marks[f[1]] = 0
		}
	}, func(cpu float64, rss int64) string {
		if rss > c.caps.mem {
			return fmt.Sprintf("> %d MB", c.caps.mem>>20)
		}
		mu.Lock()
		defer mu.Unlock()
		start, ok := marks["start"]
		if !ok {
			return ""
		}
		if checked, ok := marks["checked"]; ok {
			if cpu-checked > c.caps.gen.Seconds() {
				return fmt.Sprintf("> %g CPU-s", c.caps.gen.Seconds())
			}
		} else if cpu-start > c.caps.check.Seconds() {
			return fmt.Sprintf("> %g CPU-s", c.caps.check.Seconds())
		}
		return ""
	})
	mu.Lock()
	defer mu.Unlock()
	row.GenRSS = res.peakRSS // sampled; the child's own peak when it finished
	if kb, ok := marks["hwm"]; ok && kb > 0 {
		row.GenRSS = int64(kb) << 10
	}
	start, started := marks["start"]
	checked, isChecked := marks["checked"]
	generated, isGenerated := marks["generated"]
	if isChecked {
		row.CheckCPU = checked - start
	}
	if isGenerated {
		row.GenCPU = generated - checked
	}
	switch {
	case res.killed != "" && !isChecked:
		row.Capped = "check: " + res.killed
		return row
	case res.killed != "" && !isGenerated:
		row.Capped = "gen: " + res.killed
		return row
	case errMsg != "":
		row.Err = errMsg
		return row
	case !started || !isGenerated || res.err != nil:
		row.Err = fmt.Sprintf("the child failed (%v): %s", res.err, lastLines(res.output, 5))
		return row
	}
	// the package
	out := filepath.Join(work, "out")
	entries, err := os.ReadDir(out)
	if err != nil {
		tb.Fatal(err)
	}
	var files []File
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(out, e.Name()))
		if err != nil {
			tb.Fatal(err)
		}
		files = append(files, File{Name: e.Name(), Src: b})
	}
	row.Lines = countLines(files)
	for _, f := range files {
		row.Bytes += len(f.Src)
		for _, fn := range funcSizes(tb, f.Src) {
			if fn.bytes > row.LargestBytes || fn.bytes == row.LargestBytes && fn.name < row.Largest {
				row.Largest, row.LargestBytes = fn.name, fn.bytes
			}
			if kernelFunc.MatchString(fn.name) && (fn.lines > row.KernelN || fn.lines == row.KernelN && fn.name < row.Kernel) {
				row.Kernel, row.KernelN = fn.name, fn.lines
			}
		}
		row.OneTrip += len(golden.OneTripLoops(f.Src))
		row.Unused += len(golden.UnusedParams(f.Src))
	}
	row.Refused = row.KernelN > maxKernelLines
	if c.caps.noBuild {
		return row
	}
	// go build, of a source no build cache has seen
	pkg := fmt.Sprintf("p%03d", c.seq)
	pkgDir := writePackage(tb, c.dir, pkg, files)
	clause := packageClause.FindSubmatch(files[0].Src)
	if clause == nil {
		tb.Fatalf("%s: no package clause", files[0].Name)
	}
	stamp := fmt.Sprintf("package %s\n\n// gencost %s %d\n", clause[1], m.Name, time.Now().UnixNano())
	if err := os.WriteFile(filepath.Join(pkgDir, "gencost_stamp.go"), []byte(stamp), 0o644); err != nil {
		tb.Fatal(err)
	}
	bres := c.goBuild(tb, pkg)
	row.BuildRSS = bres.maxRSS
	switch {
	case bres.killed != "":
		row.Capped = "build: " + bres.killed
	case bres.err != nil:
		row.Err = fmt.Sprintf("go build: %v: %s", bres.err, lastLines(bres.output, 5))
	default:
		row.BuildCPU = bres.cpu
	}
	// the package is not needed again: keep the module small
	os.RemoveAll(pkgDir)
	os.RemoveAll(work)
	return row
}

// goBuild runs go build ./pkg in the module, through a child (see
// TestGenCostChild), under the build caps.
func (c *costBench) goBuild(tb testing.TB, pkg string) procResult {
	tb.Helper()
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	g := goCommand(c.dir, "build", "./"+pkg)
	cmd := exec.Command(exe, append([]string{"-test.run=^TestGenCostChild$", "-test.count=1", "--"}, g.Args...)...)
	cmd.Dir, cmd.Env = g.Dir, append(g.Env, genCostExecEnv+"=1")
	var mu sync.Mutex
	var cpu float64
	var kb int64
	var errMsg string
	reported := false
	res := runCapped(cmd, 10*c.caps.build, func(line string) {
		mu.Lock()
		defer mu.Unlock()
		if rest, ok := strings.CutPrefix(line, "gencost exec "); ok {
			if _, err := fmt.Sscan(rest, &cpu, &kb); err == nil {
				reported = true
			}
		} else if rest, ok := strings.CutPrefix(line, "gencost error "); ok {
			errMsg, _ = strconv.Unquote(rest)
		}
	}, func(cpu float64, rss int64) string {
		switch {
		case rss > c.caps.mem:
			return fmt.Sprintf("> %d MB", c.caps.mem>>20)
		case cpu > c.caps.build.Seconds():
			return fmt.Sprintf("> %g CPU-s", c.caps.build.Seconds())
		}
		return ""
	})
	mu.Lock()
	defer mu.Unlock()
	res.maxRSS = res.peakRSS
	switch {
	case res.killed != "":
	case reported:
		res.cpu, res.maxRSS = cpu, kb<<10
	case errMsg != "":
		res.err = fmt.Errorf("%s", errMsg)
	case res.err == nil:
		res.err = fmt.Errorf("no measurement reported")
	}
	return res
}

// baseline measures go build of a package of one function: the go
// command's own cost, which every build in the table includes.
func (c *costBench) baseline(tb testing.TB) costRow {
	tb.Helper()
	row := costRow{Model: costModel{Label: "baseline: go build of a one-function package"}, CheckCPU: -1, GenCPU: -1, GenRSS: -1, BuildCPU: -1, BuildRSS: -1}
	src := fmt.Sprintf("package baseline\n\n// gencost baseline %d\nfunc F(x float64) float64 { return 2 * x }\n", time.Now().UnixNano())
	writePackage(tb, c.dir, "baseline", []File{{Name: "baseline.go", Src: []byte(src)}})
	res := c.goBuild(tb, "baseline")
	if res.err != nil {
		tb.Fatalf("go build: %v\n%s", res.err, res.output)
	}
	row.BuildCPU, row.BuildRSS, row.Lines, row.Bytes = res.cpu, res.maxRSS, 4, len(src)
	return row
}

// funcSize is the size of one top-level function of a Go file.
type funcSize struct {
	name         string // methods as Recv.Name
	lines, bytes int
}

// funcSizes returns the size of each top-level function of a Go file.
func funcSizes(tb testing.TB, src []byte) []funcSize {
	tb.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "gen.go", src, parser.SkipObjectResolution)
	if err != nil {
		tb.Fatal(err)
	}
	var out []funcSize
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		name := fd.Name.Name
		if fd.Recv != nil && len(fd.Recv.List) > 0 {
			t := fd.Recv.List[0].Type
			if s, ok := t.(*ast.StarExpr); ok {
				t = s.X
			}
			if id, ok := t.(*ast.Ident); ok {
				name = id.Name + "." + name
			}
		}
		start, end := fset.Position(fd.Pos()), fset.Position(fd.End())
		out = append(out, funcSize{name, end.Line - start.Line + 1, end.Offset - start.Offset})
	}
	return out
}

// loadAverage is the first three fields of /proc/loadavg, or "?".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "?"
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// procResult is what runCapped observed of a process and its children.
type procResult struct {
	cpu    float64 // user + system CPU seconds of the process and the children it waited for
	maxRSS int64   // bytes: the largest of the process and those children
	// peakRSS is the largest resident bytes of the group, sampled every
	// 500 ms
	peakRSS int64
	killed  string // why it was killed at its cap, or ""
	err     error  // of the process, when not killed
	output  []byte // its standard output and error (the last 64 kB)
}

// tailBuffer keeps the last 64 kB written to it.
type tailBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > 64<<10 {
		t.b = append([]byte(nil), t.b[len(t.b)-64<<10:]...)
	}
	return len(p), nil
}

// runCapped runs cmd in a process group of its own, passing each line of
// its standard output to line (if not nil), and every 500 ms asks over
// with the CPU seconds and resident bytes of the whole group: a non-empty
// answer kills the group and is the result's killed.
//
// A process still running after wall (a backstop for a machine so loaded
// that CPU caps take too long to reach) is killed too.
func runCapped(cmd *exec.Cmd, wall time.Duration, line func(string), over func(cpu float64, rss int64) string) procResult {
	var res procResult
	var tail tailBuffer
	cmd.Stderr = &tail
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		res.err = err
		return res
	}
	setProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		res.err = err
		return res
	}
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(io.TeeReader(stdout, &tail))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if line != nil {
				line(sc.Text())
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	done := make(chan struct{})
	var killed string
	var peak int64
	var kmu sync.Mutex
	go func() {
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		start := time.Now()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				cpu, rss := groupUsage(cmd.Process.Pid)
				kmu.Lock()
				peak = max(peak, rss)
				kmu.Unlock()
				why := over(cpu, rss)
				if why == "" && time.Since(start) > wall {
					why = fmt.Sprintf("> %g s wall", wall.Seconds())
				}
				if why != "" {
					kmu.Lock()
					killed = why
					kmu.Unlock()
					killGroup(cmd.Process.Pid)
					return
				}
			}
		}
	}()
	<-read
	err = cmd.Wait()
	close(done)
	kmu.Lock()
	res.killed, res.peakRSS = killed, peak
	kmu.Unlock()
	if ps := cmd.ProcessState; ps != nil {
		res.cpu = (ps.UserTime() + ps.SystemTime()).Seconds()
		res.maxRSS = maxRSS(ps)
	}
	if res.killed == "" {
		res.err = err
	}
	res.output = tail.b
	return res
}

// BenchmarkGenCost measures each model of the suite (see the top of this
// file), reporting the check and generation CPU seconds, the peak memory,
// the lines generated and of the largest function, the size lint's counts
// and the go build CPU seconds as metrics; a step over its cap reports the
// cap, and the steps after it -1 (the sizes 0). One pass is one
// measurement: run it with -benchtime 1x.
func BenchmarkGenCost(b *testing.B) {
	c := newCostBench(b, flagCaps())
	for _, m := range genCostSuite(b) {
		b.Run(m.Name, func(b *testing.B) {
			var row costRow
			for i := 0; i < b.N; i++ {
				row = c.measure(b, m)
			}
			if row.Err != "" {
				b.Logf("%s: %s", m.Label, row.Err)
			}
			if row.Capped != "" {
				b.Logf("%s: %s", m.Label, row.Capped)
			}
			capOr := func(v float64, step string, cp time.Duration) float64 {
				if v < 0 && strings.HasPrefix(row.Capped, step+":") {
					return cp.Seconds()
				}
				return v
			}
			b.ReportMetric(capOr(row.CheckCPU, "check", c.caps.check), "check-cpu-s")
			b.ReportMetric(capOr(row.GenCPU, "gen", c.caps.gen), "gen-cpu-s")
			b.ReportMetric(float64(row.GenRSS>>20), "gen-rss-MB")
			b.ReportMetric(float64(row.Lines), "lines")
			b.ReportMetric(float64(row.Bytes>>10), "KB")
			b.ReportMetric(float64(row.KernelN), "longest-kernel-lines")
			b.ReportMetric(float64(row.LargestBytes>>10), "largest-func-KB")
			b.ReportMetric(float64(row.OneTrip), "one-trip-loops")
			b.ReportMetric(float64(row.Unused), "unused-params")
			if !c.caps.noBuild {
				b.ReportMetric(capOr(row.BuildCPU, "build", c.caps.build), "build-cpu-s")
				b.ReportMetric(float64(row.BuildRSS>>20), "build-rss-MB")
			}
		})
	}
}

// TestGenCostTable measures every model of the suite and writes the table
// as Markdown to the file -gencost.table names (the BEFORE and AFTER of
// issue 39). It takes about 14 CPU-minutes, most of them in the models
// that reach their caps.
func TestGenCostTable(t *testing.T) {
	golden.SlowTier(t)
	if *genCostTableFile == "" {
		t.Skip("give -gencost.table FILE to measure the generation-cost suite (about 14 CPU-minutes)")
	}
	caps := flagCaps()
	c := newCostBench(t, caps)
	load := loadAverage()
	var rows []costRow
	if !caps.noBuild {
		rows = append(rows, c.baseline(t))
	}
	for _, m := range genCostSuite(t) {
		t.Run(m.Name, func(t *testing.T) {
			row := c.measure(t, m)
			t.Logf("%s", strings.Join(row.cells(), " | "))
			rows = append(rows, row)
		})
	}
	user, sys := childrenCPU()
	load += " at the start, " + loadAverage() + " at the end"
	t.Logf("the suite's children: %.0f user + %.0f system CPU-s; the test itself %.0f CPU-s; load average %s", user, sys, processCPU(), load)
	if err := os.WriteFile(*genCostTableFile, []byte(costHeader(load, user, sys)+costTable(rows, caps)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestGenCostMeasures runs the suite's machinery on two models: a small
// one, measured in full, and 50 scalar latents under caps so small that
// its check is killed.
func TestGenCostMeasures(t *testing.T) {
	golden.SlowTier(t)
	c := newCostBench(t, costCaps{check: 60 * time.Second, gen: 60 * time.Second, build: 120 * time.Second, mem: 4 << 30})
	row := c.measure(t, costModel{Name: "linreg", Label: "linreg", File: "linreg.vi", Src: linregVI})
	if row.Err != "" || row.Capped != "" {
		t.Fatalf("linreg: %s%s", row.Err, row.Capped)
	}
	if row.CheckCPU < 0 || row.GenCPU < 0 || row.BuildCPU <= 0 || row.GenRSS <= 0 || row.BuildRSS <= 0 || row.Lines < 100 || row.KernelN < 10 || row.LargestBytes < 100 || row.Refused {
		t.Errorf("linreg: %+v", row)
	}
	c.caps.check = 500 * time.Millisecond
	// 50 scalar latents read by one statement: about 6 CPU-s of check
	row = c.measure(t, costModel{Name: "latents_shared_50", Label: "latents_shared_50", File: "latents_shared_50.vi", Src: latentsSharedModel(50)})
	if row.Capped != "check: > 0.5 CPU-s" || row.CheckCPU >= 0 || row.Lines != 0 {
		t.Errorf("50 shared scalar latents under a 0.5 CPU-s cap: %+v", row)
	}
	row = c.measure(t, costModel{Name: "bad", Label: "bad", File: "bad.vi", Src: "model bad\nlatent x : real nonconjugate laplace\n"})
	if !strings.Contains(row.Err, "bad.vi:") {
		t.Errorf("a model that does not check: %+v", row)
	}
}

// costHeader says how the table was made: the command (with the suite's
// flags as given), the commit, Go and the machine.
func costHeader(load string, user, sys float64) string {
	var b strings.Builder
	b.WriteString("# Generation cost (issue 39)\n\nMade from the repository root with\n\n")
	cmd := "    go test -tags slow ./codegen -run '^TestGenCostTable$'"
	if f := flag.Lookup("test.timeout"); f != nil {
		cmd += " -timeout " + f.Value.String()
	}
	flag.Visit(func(f *flag.Flag) {
		if strings.HasPrefix(f.Name, "gencost.") {
			cmd += fmt.Sprintf(" -%s %s", f.Name, f.Value)
		}
	})
	b.WriteString(cmd + "\n\n")
	commit := "?"
	if out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output(); err == nil {
		commit = strings.TrimSpace(string(out))
	}
	fmt.Fprintf(&b, "at commit %s, with %s on %s/%s, %d CPUs, on %s (the -gencost.table path is relative to codegen/). ", commit, goruntime.Version(), goruntime.GOOS, goruntime.GOARCH, goruntime.NumCPU(), time.Now().UTC().Format("2006-01-02"))
	b.WriteString("Check is spec.Load and derive.Derive, gen is Generate with the too-large refusal lifted (`vigen check` runs both, and stops at the first kernel over 10,000 lines: those marked **refused**); ")
	b.WriteString("CPU seconds are user + system of the process (a child of the test, and go build with the compiler), peak RSS is the largest resident set; ")
	b.WriteString("go build compiles the generated package alone, its dependencies built, from a source no build cache has seen; a step over its cap was killed, and is shown as the cap. ")
	b.WriteString("KB is the size of the generated Go; the longest kernel is the longest function of a derivative kernel (F, Delta, Target), the one Generate's too-large limit measures, and the largest function is the largest of the package by bytes (let chains print expressions of megabytes on one line). ")
	b.WriteString("One-trip loops and unused parameters are golden.OneTripLoops and golden.UnusedParams on the generated package. ")
	fmt.Fprintf(&b, "In all, the measured processes used %.0f user + %.0f system CPU-s; the load average (1, 5, 15 minutes) was %s: CPU seconds grow when other work on the machine competes for memory and caches, so compare tables made on a quiet machine.\n\n", user, sys, load)
	return b.String()
}

// cells are the row's entries in the table's columns.
func (r costRow) cells() []string {
	sec := func(v float64, step string) string {
		if v < 0 {
			if strings.HasPrefix(r.Capped, step+":") {
				return strings.TrimPrefix(strings.TrimPrefix(r.Capped, step+":"), " ")
			}
			return "—"
		}
		return fmt.Sprintf("%.2f", v)
	}
	mb := func(v int64) string {
		if v < 0 {
			return "—"
		}
		return strconv.FormatInt(v>>20, 10)
	}
	num := func(v int) string {
		if r.Lines == 0 {
			return "—"
		}
		return strconv.Itoa(v)
	}
	kernel, largest, kb := "—", "—", "—"
	if r.Kernel != "" {
		kernel = fmt.Sprintf("%s: %d", strings.TrimPrefix(r.Kernel, "Model."), r.KernelN)
		if r.Refused {
			kernel += " **refused**"
		}
	}
	if r.Largest != "" {
		largest = fmt.Sprintf("%s: %d", strings.TrimPrefix(r.Largest, "Model."), r.LargestBytes>>10)
	}
	if r.Bytes > 0 {
		kb = strconv.Itoa(r.Bytes >> 10)
	}
	src := strconv.Itoa(r.SourceLines)
	if r.Model.Src == "" {
		src = "—"
	}
	model := r.Model.Label
	if r.Err != "" {
		model += " (error: " + strings.ReplaceAll(strings.SplitN(r.Err, "\n", 2)[0], "|", "\\|") + ")"
	}
	return []string{model, src, sec(r.CheckCPU, "check"), sec(r.GenCPU, "gen"), mb(r.GenRSS), num(r.Lines), kb, kernel, largest,
		num(r.OneTrip), num(r.Unused), sec(r.BuildCPU, "build"), mb(r.BuildRSS)}
}

// costTable is the suite's table in Markdown.
func costTable(rows []costRow, caps costCaps) string {
	var b strings.Builder
	b.WriteString("| model | source lines | check CPU-s | gen CPU-s | check+gen peak RSS MB | lines | KB | longest kernel (name: lines) | largest function (name: KB) | one-trip loops | unused params | go build CPU-s | build peak RSS MB |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---|---|---:|---:|---:|---:|\n")
	var check, gen, build float64
	for _, r := range rows {
		b.WriteString("| " + strings.Join(r.cells(), " | ") + " |\n")
		check += max(r.CheckCPU, 0)
		gen += max(r.GenCPU, 0)
		build += max(r.BuildCPU, 0)
	}
	fmt.Fprintf(&b, "\n%d rows; measured CPU (excluding steps killed at their caps): check %.0f s, gen %.0f s, go build %.0f s. Caps: check %v, gen %v, go build %v of CPU, %d MB resident.\n",
		len(rows), check, gen, build, caps.check, caps.gen, caps.build, caps.mem>>20)
	var loops, params, n int
	for _, r := range rows {
		if strings.HasPrefix(r.Model.Name, "ex_") {
			loops, params, n = loops+r.OneTrip, params+r.Unused, n+1
		}
	}
	fmt.Fprintf(&b, "The %d examples: %d one-trip loops, %d unused parameters (golden/testdata/lint_ratchet.json).\n", n, loops, params)
	return b.String()
}
