package codegen

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/golden"
)

// tempModulePath is the module path of the throwaway modules
// compile-and-run tests build in.
const tempModulePath = "tmpe2e"

// tempModule makes a throwaway Go module in t.TempDir() that requires
// this repository through a replace directive, with the repository's
// requirements and go.sum, so that generated packages written into it
// build from the module cache alone, outside the source tree. It returns
// the module's directory; packages in it are imported as tmpe2e/NAME.
func tempModule(tb testing.TB) string {
	tb.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		tb.Fatal(err)
	}
	dir := tb.TempDir()
	if err := golden.WriteModule(dir, tempModulePath, root); err != nil {
		tb.Fatal(err)
	}
	return dir
}

// writePackage writes files as the package directory name of the module
// dir and returns the directory.
func writePackage(tb testing.TB, dir, name string, files []File) string {
	tb.Helper()
	pkgDir := filepath.Join(dir, name)
	if err := os.MkdirAll(pkgDir, 0o755); err != nil {
		tb.Fatal(err)
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(pkgDir, f.Name), f.Src, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return pkgDir
}

// goCommand is golden.GoCommand.
func goCommand(dir string, args ...string) *exec.Cmd { return golden.GoCommand(dir, args...) }

// TestTempModuleOffline: a package written into a tempModule builds with
// the network off (GOPROXY=off): everything it needs is in the module
// cache and go.sum.
func TestTempModuleOffline(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping compile test in -short mode")
	}
	dir := tempModule(t)
	src, err := driverText("offline_imports.go")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := goCommand(dir, "run", ".")
	cmd.Env = append(cmd.Env, "GOPROXY=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go run in a temp module with GOPROXY=off: %v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "true 1" {
		t.Errorf("printed %q, want %q", got, "true 1")
	}
}

// TestCompileAndRunOutsideSourceTree: the compile-and-run helpers build
// the generated package and its driver outside the repository (they used
// to write them under codegen/testdata).
var outsideCase = fastTest("TestCompileAndRunOutsideSourceTree").driver("outside", linregVI, "print_source_file.go")

func TestCompileAndRunOutsideSourceTree(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	file := string(outsideCase.run(t, nil))
	if !filepath.IsAbs(file) || !strings.HasSuffix(file, "main.go") {
		t.Fatalf("the driver reports its source as %q", file)
	}
	if rel, err := filepath.Rel(root, file); err == nil && !strings.HasPrefix(rel, "..") {
		t.Errorf("the driver was built inside the repository, at %s", file)
	}
}

// TestBuildAndRunHelpers: the helpers that build one program with go run,
// for a model known only when a test runs (buildAndRun and its kin), still
// work: linreg's fits converge, and the program is built outside the
// repository.
func TestBuildAndRunHelpers(t *testing.T) {
	golden.SlowTier(t)
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	_, _, data := linregData(rand.New(rand.NewPCG(11, 12)), 40, 3)
	res := buildAndRun(t, "linreg", linregVI, data)
	if len(res) != 2 {
		t.Fatalf("driver returned %d results, want 2", len(res))
	}
	for _, r := range res {
		if !r.Converged {
			t.Errorf("%s: not converged: %s", r.Method, r.Status)
		}
	}
	drv, err := driverText("print_source_file.go")
	if err != nil {
		t.Fatal(err)
	}
	file := string(buildAndRunDriver(t, "outside", linregVI, nil, drv))
	if !filepath.IsAbs(file) || !strings.HasSuffix(file, "main.go") {
		t.Fatalf("the driver reports its source as %q", file)
	}
	if rel, err := filepath.Rel(root, file); err == nil && !strings.HasPrefix(rel, "..") {
		t.Errorf("the driver was built inside the repository, at %s", file)
	}
}
