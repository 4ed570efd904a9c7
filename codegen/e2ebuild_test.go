package codegen

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vigen-go/vigen/golden"
	"github.com/vigen-go/vigen/spec"
)

// Compile-and-run tests are built once per test binary. Each program a
// test runs, a model's generated package with a driver (a main package
// in testdata/drivers that imports it as tmpe2e/PKG), is registered at
// package level as an e2eCase, tagged with the test that runs it and that
// test's tier. Before the tests run, TestMain generates every case of the
// tests this invocation selects (-run, -skip and the tier), writes them
// into one module with a dispatching main, and builds them with one
// `go build`: one link instead of one `go run` per case, and a package
// shared by cases that differ only in their driver is compiled once. A
// test then runs its case's driver, the binary with the driver's name as
// its first argument, on its data.
//
// The module stays between runs (sharedModuleDir: in the user's cache
// directory, one per repository, locked while a test binary writes and
// builds it), and its packages are in directories named by their content:
// cmd/go keys a package's compiled form by its directory as well as its
// content, so a package generated as before is not compiled again.
//
// buildAndRunFiles and its kin (e2e_test.go) still build one program with
// `go run`, for a test whose model is only known when it runs
// (TestBuildAndRunHelpers keeps them working).

// e2eTest is a test that runs registered cases: its name and tier.
type e2eTest struct {
	name string
	slow bool // its body calls golden.SlowTier (TestE2ECaseTiers checks)
}

func fastTest(name string) e2eTest { return e2eTest{name, false} }
func slowTest(name string) e2eTest { return e2eTest{name, true} }

// An e2eCase is one compile-and-run program.
type e2eCase struct {
	e2eTest
	name  string   // the generated package, named as the model
	src   string   // the model
	file  string   // or the file it is read from, when the package is generated
	drv   string   // the driver, a file in testdata/drivers
	subst []string // pairs of a placeholder in the driver and its value
	hooks []e2eHook
	gen   *Options // the generation options; nil is Methods: delta (drivers fit by laplace and delta)
	setup func() (restore func())
	// substFiles gives more pairs of subst, read off the generated files.
	substFiles func([]File) ([]string, error)

	// set when the build has run
	id    string // the driver's package in the shared module, and the binary's first argument
	pkg   *e2ePackage
	err   error // why the case has no program
	built bool
	ran   atomic.Bool
}

// e2eCases are the registered cases in their order of registration.
var e2eCases []*e2eCase

// driver registers the case of test t that generates src as package name
// and runs the driver drv (a file in testdata/drivers) with subst, pairs
// of a placeholder in drv and its value, replaced.
func (t e2eTest) driver(name, src, drv string, subst ...string) *e2eCase {
	if len(subst)%2 != 0 {
		panic("e2e case " + name + ": subst is not pairs")
	}
	c := &e2eCase{e2eTest: t, name: name, src: src, drv: drv, subst: subst}
	e2eCases = append(e2eCases, c)
	return c
}

// fits registers the case of test t whose driver (fit_laplace_delta.go)
// fits src by Laplace and by delta with more fields of Options, as Go
// source starting with a comma, and prints both results; results decodes
// them.
func (t e2eTest) fits(name, src, opts string) *e2eCase {
	return t.driver(name, src, "fit_laplace_delta.go", "/* OPTS */", opts)
}

// fitsLaplace registers the case of test t whose driver (fit_laplace.go)
// fits src by Laplace alone with more fields of Options, as Go source
// starting with a comma, and prints the result in a list.
func (t e2eTest) fitsLaplace(name, src, opts string) *e2eCase {
	return t.driver(name, src, "fit_laplace.go", "/* OPTS */", opts)
}

// e2eHook is a file added to a generated package: a file of
// testdata/hooks with PKG replaced by the package's name and subst, pairs
// of a text and its replacement, replaced.
type e2eHook struct {
	name, file string
	subst      []string
}

// hook adds hook, a file of testdata/hooks, to c's generated package as
// file, with subst, pairs of a text and its replacement, replaced.
func (c *e2eCase) hook(file, hook string, subst ...string) *e2eCase {
	c.hooks = append(c.hooks, e2eHook{file, hook, subst})
	return c
}

// srcFile reads c's model from file (relative to the package's directory)
// when its package is generated.
func (c *e2eCase) srcFile(file string) *e2eCase {
	c.file = file
	return c
}

// options generates c's package with opts.
func (c *e2eCase) options(opts Options) *e2eCase {
	c.gen = &opts
	return c
}

// around runs setup before c's package is generated and the function it
// returns after (setup may set package variables such as maxKernelLines;
// no other generation runs meanwhile).
func (c *e2eCase) around(setup func() (restore func())) *e2eCase {
	c.setup = setup
	return c
}

// substGenerated replaces more placeholders in c's driver with what f
// reads off the generated package.
func (c *e2eCase) substGenerated(f func([]File) ([]string, error)) *e2eCase {
	c.substFiles = f
	return c
}

// generated returns the files generated for c (whether or not they
// compiled), failing t if there are none.
func (c *e2eCase) generated(t *testing.T) []File {
	t.Helper()
	if c.pkg != nil && c.pkg.err == nil && c.pkg.files != nil {
		return c.pkg.files
	}
	c.check(t)
	t.Fatalf("case %s has no generated files", c)
	return nil
}

func (c *e2eCase) String() string {
	s := fmt.Sprintf("%s: package %s with driver %s", c.e2eTest.name, c.name, c.drv)
	for i := 0; i < len(c.subst); i += 2 {
		if v := c.subst[i+1]; len(v) < 80 {
			s += fmt.Sprintf(" (%s = %q)", c.subst[i], v)
		}
	}
	return s
}

// results runs c on data and decodes its output, the results of
// fit_laplace_delta.go.
func (c *e2eCase) results(t *testing.T, data []byte) []resultJSON {
	t.Helper()
	out := c.run(t, data)
	var res []resultJSON
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("driver output: %v\n%s", err, out)
	}
	return res
}

// run runs c's driver with data on stdin and returns its stdout.
func (c *e2eCase) run(t *testing.T, data []byte) []byte {
	t.Helper()
	c.check(t)
	c.ran.Store(true)
	cmd := exec.Command(shared.bin, c.id)
	cmd.Dir = shared.binDir
	cmd.Stdin = bytes.NewReader(data)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("case %s: the driver: %v\n%s", c, err, stderr.String())
	}
	return out
}

// check skips t in -short mode and fails it if c was not built.
func (c *e2eCase) check(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("skipping compile-and-run test in -short mode")
	}
	if top, _, _ := strings.Cut(t.Name(), "/"); top != c.e2eTest.name {
		t.Fatalf("case %s is run by %s: register it with the test that runs it", c, top)
	}
	switch {
	case !shared.done:
		t.Fatalf("case %s: the compile-and-run cases were not built (TestMain builds them)", c)
	case shared.err != nil:
		t.Fatalf("building the compile-and-run cases: %v", shared.err)
	case !c.built && c.err == nil:
		t.Fatalf("case %s was not built: it is registered as a slow-tier test's, and its test runs in the fast tier", c)
	case c.err != nil:
		t.Fatalf("case %s: %v\nmodel:\n%s", c, c.err, c.src)
	}
}

// e2ePackage is a generated package of the shared build, written as
// dir/NAME in the module.
type e2ePackage struct {
	dir   string // pHASH
	name  string
	files []File
	err   error
	cases []*e2eCase
}

func (p *e2ePackage) importPath() string { return tempModulePath + "/" + p.dir + "/" + p.name }

// e2eBuild is the shared build of this test binary.
type e2eBuild struct {
	done     bool
	dir      string   // the module
	binDir   string   // the program's directory, the drivers' working directory
	bin      string   // the program
	tempDirs []string // removed after the tests
	err      error    // a failure of the build as a whole
	packages int
	buildCPU time.Duration // of go build and the compiler and linker it ran
}

var shared e2eBuild

// selectedCases are the cases of the tests this invocation runs: of this
// tier, and whose test -run selects and -skip does not skip.
func selectedCases() []*e2eCase {
	slow := slowTierBuild()
	run, skip := flagValue("test.run"), flagValue("test.skip")
	var sel []*e2eCase
	for _, c := range e2eCases {
		if c.slow && !slow || !topLevelMatch(run, c.e2eTest.name, true) || topLevelMatch(skip, c.e2eTest.name, false) {
			continue
		}
		sel = append(sel, c)
	}
	return sel
}

func flagValue(name string) string {
	if f := flag.Lookup(name); f != nil {
		return f.Value.String()
	}
	return ""
}

// topLevelMatch reports whether pattern, a -run or -skip pattern, matches
// the top-level test name as go test matches it: an alternative of the
// pattern split at unbracketed '|' matches if its first element (split at
// '/') matches the name; a -skip alternative (run false) must have no
// more elements. An empty pattern is run's.
func topLevelMatch(pattern, name string, run bool) bool {
	if pattern == "" {
		return run
	}
	for _, alt := range splitRegexp(pattern) {
		if !run && len(alt) > 1 {
			continue
		}
		if ok, err := regexp.MatchString(alt[0], name); err == nil && ok {
			return true
		}
	}
	return false
}

// splitRegexp splits a -run pattern into its alternatives and their
// elements, as package testing does.
func splitRegexp(s string) [][]string {
	var alts [][]string
	var a []string
	cs, cp := 0, 0
	for i := 0; i < len(s); {
		switch s[i] {
		case '[':
			cs++
		case ']':
			if cs--; cs < 0 {
				cs = 0
			}
		case '(':
			if cs == 0 {
				cp++
			}
		case ')':
			if cs == 0 {
				cp--
			}
		case '\\':
			i++
		case '/', '|':
			if cs == 0 && cp == 0 {
				a = append(a, s[:i])
				if s[i] == '|' {
					alts = append(alts, a)
					a = nil
				}
				s = s[i+1:]
				i = 0
				continue
			}
		}
		i++
	}
	return append(alts, append(a, s))
}

// slowTierBuild reports whether the slow tier's tests run, as
// golden.SlowTier decides: it asks it with a probe that records a skip.
func slowTierBuild() bool {
	p := &tierProbe{}
	golden.SlowTier(p)
	return !p.skipped
}

type tierProbe struct {
	testing.TB // nil: SlowTier calls only Helper and Skip
	skipped    bool
}

func (*tierProbe) Helper()                {}
func (p *tierProbe) Skip(...any)          { p.skipped = true }
func (p *tierProbe) Skipf(string, ...any) { p.skipped = true }

// buildCases generates the packages of cases, writes them and their
// drivers into one module with a main that dispatches on its first
// argument, and builds it. A case whose package does not generate or
// whose package or driver does not compile gets the error and is left
// out of the program; an error is returned only if the rest cannot be
// built either.
func buildCases(cases []*e2eCase) error {
	if len(cases) == 0 {
		return nil
	}
	root, err := filepath.Abs("..")
	if err != nil {
		return err
	}
	dir, temporary, unlock, err := sharedModuleDir(root)
	if err != nil {
		return err
	}
	defer unlock()
	if temporary {
		shared.tempDirs = append(shared.tempDirs, dir)
	}
	shared.dir = dir
	if err := golden.WriteModule(dir, tempModulePath, root); err != nil {
		return err
	}
	binDir, err := os.MkdirTemp("", "vigen-e2e-bin-")
	if err != nil {
		return err
	}
	shared.tempDirs = append(shared.tempDirs, binDir)
	shared.binDir = binDir

	// One package per distinct (name, model, options, hooks); a case with
	// a setup has its own.
	byKey := map[string]*e2ePackage{}
	var pkgs []*e2ePackage
	for i, c := range cases {
		key := fmt.Sprintf("%s\x00%s\x00%s\x00%#v\x00%q", c.name, c.src, c.file, c.gen, c.hooks)
		if c.setup != nil {
			key += fmt.Sprint("\x00", i)
		}
		p := byKey[key]
		if p == nil {
			p = &e2ePackage{name: c.name}
			byKey[key] = p
			pkgs = append(pkgs, p)
		}
		p.cases = append(p.cases, c)
		c.pkg = p
	}
	shared.packages = len(pkgs)
	generatePackages(pkgs)

	// Packages and drivers are written in directories named by their
	// content, pHASH/NAME and dHASH; those no case uses any more are
	// removed.
	var ready []*e2eCase
	used := map[string]bool{}
	for _, p := range pkgs {
		if p.err == nil {
			p.err = writeE2EPackage(dir, p)
			used[p.dir] = true
		}
		for _, c := range p.cases {
			switch {
			case p.err != nil:
				c.err = p.err
			default:
				c.err = writeE2EDriver(dir, c)
			}
			if c.err == nil {
				ready = append(ready, c)
				used[c.id] = true
			}
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() && contentDir.MatchString(e.Name()) && !used[e.Name()] {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}

	// Build; a package or driver that does not compile fails its cases,
	// and the rest is built again.
	bin := filepath.Join(binDir, "e2e")
	for round := 0; len(ready) > 0; round++ {
		if err := writeDispatcher(dir, ready); err != nil {
			return err
		}
		cmd := goCommand(dir, "build", "-o", bin, ".")
		out, err := cmd.CombinedOutput()
		if cmd.ProcessState != nil {
			shared.buildCPU += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		}
		if err == nil {
			shared.bin = bin
			for _, c := range ready {
				c.built = true
			}
			return nil
		}
		bad := attributeBuildErrors(string(out))
		var keep []*e2eCase
		for _, c := range ready {
			var msgs []string
			if msg := bad[c.pkg.dir]; msg != "" {
				msgs = append(msgs, fmt.Sprintf("the generated package %s does not compile:\n%s", c.pkg.importPath(), msg))
			}
			if msg := bad[c.id]; msg != "" {
				msgs = append(msgs, fmt.Sprintf("its driver (%s/main.go in the shared module) does not compile:\n%s", c.id, msg))
			}
			if len(msgs) == 0 {
				keep = append(keep, c)
				continue
			}
			c.err = errors.New(strings.Join(msgs, "\n"))
		}
		if len(keep) == len(ready) || round == 5 {
			err := fmt.Errorf("go build: %v\n%s", err, out)
			for _, c := range keep {
				c.err = err
			}
			return nil
		}
		ready = keep
	}
	return nil
}

// generatePackages derives and generates pkgs, those of cases with a
// setup one at a time, the others in parallel.
func generatePackages(pkgs []*e2ePackage) {
	gen := func(p *e2ePackage) {
		c := p.cases[0]
		if c.file != "" {
			b, err := os.ReadFile(c.file)
			if err != nil {
				p.err = err
				return
			}
			c.src = string(b)
			for _, o := range p.cases[1:] {
				o.src = c.src
			}
		}
		m, err := spec.Load(c.name+".vi", []byte(c.src))
		if err != nil {
			p.err = err
			return
		}
		opts := Options{Methods: []string{"delta"}}
		if c.gen != nil {
			opts = *c.gen
		}
		p.files, p.err = generateModel(m, opts)
		if p.err != nil {
			p.err = fmt.Errorf("generating: %w", p.err)
		}
	}
	var parallel []*e2ePackage
	for _, p := range pkgs {
		if c := p.cases[0]; c.setup != nil {
			restore := c.setup()
			gen(p)
			restore()
		} else {
			parallel = append(parallel, p)
		}
	}
	work := make(chan *e2ePackage)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range work {
				gen(p)
			}
		}()
	}
	for _, p := range parallel {
		work <- p
	}
	close(work)
	wg.Wait()
}

// writeE2EPackage writes p's files and its hooks.
func writeE2EPackage(dir string, p *e2ePackage) error {
	files := append([]File(nil), p.files...)
	for _, h := range p.cases[0].hooks {
		src, err := fileText(filepath.Join("testdata", "hooks", h.file), h.subst...)
		if err != nil {
			return err
		}
		files = append(files, File{Name: h.name, Src: []byte(strings.ReplaceAll(src, "PKG", p.name))})
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00", p.name)
	for _, f := range files {
		fmt.Fprintf(h, "%s\x00%d\x00%s", f.Name, len(f.Src), f.Src)
	}
	p.dir = fmt.Sprintf("p%x", h.Sum(nil)[:8])
	if err := os.RemoveAll(filepath.Join(dir, p.dir)); err != nil {
		return err
	}
	pkgDir := filepath.Join(dir, p.dir, p.name)
	if err := os.MkdirAll(pkgDir, 0o755); err != nil {
		return err
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(pkgDir, f.Name), f.Src, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// writeE2EDriver writes c's driver as package c.id, its main as Main.
func writeE2EDriver(dir string, c *e2eCase) error {
	subst := c.subst
	if c.substFiles != nil {
		more, err := c.substFiles(c.pkg.files)
		if err != nil {
			return err
		}
		subst = append(subst[:len(subst):len(subst)], more...)
	}
	src, err := driverText(c.drv, subst...)
	if err != nil {
		return err
	}
	src = strings.ReplaceAll(src, `"`+tempModulePath+`/PKG"`, strconv.Quote(c.pkg.importPath()))
	src = strings.ReplaceAll(src, "PKG", c.name)
	c.id = fmt.Sprintf("d%x", sha256.Sum256([]byte(src)))[:17]
	for _, r := range [][2]string{{"\npackage main\n", "\npackage " + c.id + "\n"}, {"\nfunc main() {", "\nfunc Main() {"}} {
		if n := strings.Count("\n"+src, r[0]); n != 1 {
			return fmt.Errorf("driver %s: %d lines %q, want one", c.drv, n, strings.TrimSpace(r[0]))
		}
		src = strings.TrimPrefix(strings.Replace("\n"+src, r[0], r[1], 1), "\n")
	}
	if strings.Contains(src, "\nfunc init()") {
		return fmt.Errorf("driver %s has an init function, which would run in every driver of the shared build", c.drv)
	}
	if err := os.MkdirAll(filepath.Join(dir, c.id), 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, c.id, "main.go"), []byte(src), 0o644)
}

// driverText is the driver file of testdata/drivers with subst, pairs of
// a placeholder and its value, replaced; each placeholder must occur.
func driverText(file string, subst ...string) (string, error) {
	return fileText(filepath.Join("testdata", "drivers", file), subst...)
}

// fileText is file with subst, pairs of a text and its replacement,
// replaced; each text must occur.
func fileText(file string, subst ...string) (string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	src := string(b)
	for i := 0; i+1 < len(subst); i += 2 {
		if !strings.Contains(src, subst[i]) {
			return "", fmt.Errorf("%s has no %q to replace", file, subst[i])
		}
		src = strings.ReplaceAll(src, subst[i], subst[i+1])
	}
	return src, nil
}

// writeDispatcher writes the module's main, which runs the driver its
// first argument names with that argument removed.
func writeDispatcher(dir string, ready []*e2eCase) error {
	var imps, entries strings.Builder
	seen := map[string]bool{}
	for _, c := range ready {
		if seen[c.id] {
			continue // the same driver of the same package as another case's
		}
		seen[c.id] = true
		fmt.Fprintf(&imps, "\t%s %q\n", c.id, tempModulePath+"/"+c.id)
		fmt.Fprintf(&entries, "\t%q: %s.Main,\n", c.id, c.id)
	}
	src := `// Command e2e runs the driver of a compile-and-run case: e2e ID.
package main

import (
	"fmt"
	"os"

` + imps.String() + `)

var drivers = map[string]func(){
` + entries.String() + `}

func main() {
	if len(os.Args) < 2 || drivers[os.Args[1]] == nil {
		fmt.Fprintln(os.Stderr, "usage: e2e DRIVER")
		os.Exit(2)
	}
	main := drivers[os.Args[1]]
	os.Args = append(os.Args[:1:1], os.Args[2:]...)
	main()
}
`
	return os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644)
}

// contentDir matches the shared module's package directories, named by
// their content: pHASH (holding a generated package) and dHASH (a driver).
var contentDir = regexp.MustCompile(`^[pd][0-9a-f]{16}$`)

// caseDir matches them in go build's output.
var caseDir = regexp.MustCompile(`(?:^|[/ "(])([pd][0-9a-f]{16})(?:/|"|:|\)| |$)`)

// attributeBuildErrors maps the directories (pHASH, dHASH) that go build's
// output names, under "# import/path" headers or in a line's file name,
// to their lines.
func attributeBuildErrors(out string) map[string]string {
	bad := map[string]string{}
	cur := ""
	for _, line := range strings.Split(out, "\n") {
		if path, ok := strings.CutPrefix(line, "# "); ok {
			cur = ""
			if m := caseDir.FindStringSubmatch(strings.TrimPrefix(path, tempModulePath)); m != nil {
				cur = m[1]
			}
			continue
		}
		d := cur
		if m := caseDir.FindStringSubmatch(line); m != nil {
			d = m[1]
		}
		if d != "" {
			bad[d] += line + "\n"
		}
	}
	return bad
}

// TestE2ECaseTiers: every case names a test of this package, and is
// registered in that test's tier: slow if and only if the test calls
// golden.SlowTier in its body (a slow test's case registered as fast would
// be built in vain in the fast tier; a fast test's registered as slow
// would not be built there).
func TestE2ECaseTiers(t *testing.T) {
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	slow := map[string]bool{} // by test
	fset := token.NewFileSet()
	for _, file := range files {
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Test") || fn.Body == nil {
				continue
			}
			slow[fn.Name.Name] = false
			for _, st := range fn.Body.List {
				if es, ok := st.(*ast.ExprStmt); ok {
					if call, ok := es.X.(*ast.CallExpr); ok {
						if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "SlowTier" {
							if id, ok := sel.X.(*ast.Ident); ok && id.Name == "golden" {
								slow[fn.Name.Name] = true
							}
						}
					}
				}
			}
		}
	}
	for _, c := range e2eCases {
		s, ok := slow[c.e2eTest.name]
		switch {
		case !ok:
			t.Errorf("case %s: no test %s in this package", c, c.e2eTest.name)
		case s != c.slow:
			t.Errorf("case %s is registered with slow = %v, but its test's body %s golden.SlowTier", c, c.slow, map[bool]string{true: "calls", false: "does not call"}[s])
		}
	}
}

// TestMain builds the cases of the selected tests before any test runs
// (so that no test's setting of a package variable reaches their
// generation), and after the tests removes the program and, when every test
// passed and whole tests were selected, fails if a case was built that
// its test did not run: a case of a slow-tier test registered as fast,
// built in vain.
func TestMain(m *testing.M) {
	flag.Parse()
	if !testing.Short() && flagValue("test.list") == "" && flagValue("test.fuzzworker") != "true" { // a fuzzing worker runs no test
		start := time.Now()
		sel := selectedCases()
		shared.err = buildCases(sel)
		if testing.Verbose() && len(sel) > 0 {
			fmt.Printf("e2e: built the %d compile-and-run cases (%d packages) of the selected tests in %.1fs, go build %.1f CPU-s\n",
				len(sel), shared.packages, time.Since(start).Seconds(), shared.buildCPU.Seconds())
		}
	}
	shared.done = true
	code := m.Run()
	for _, dir := range shared.tempDirs {
		os.RemoveAll(dir)
	}
	if code == 0 && !testing.Short() && wholeTestsSelected() {
		var unused []string
		for _, c := range e2eCases {
			if c.built && !c.ran.Load() {
				unused = append(unused, c.String())
			}
		}
		sort.Strings(unused)
		if len(unused) > 0 {
			fmt.Fprintf(os.Stderr, "FAIL: compile-and-run cases were built but not run (is the test slow-tier, or does it no longer run them?):\n\t%s\n", strings.Join(unused, "\n\t"))
			code = 1
		}
	}
	os.Exit(code)
}

// wholeTestsSelected reports whether -run and -skip select whole
// top-level tests, so that every case built is one a test runs.
func wholeTestsSelected() bool {
	if flagValue("test.skip") != "" {
		return false
	}
	for _, alt := range splitRegexp(flagValue("test.run")) {
		if len(alt) > 1 {
			return false
		}
	}
	return true
}
