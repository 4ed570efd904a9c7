package derive_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// tempModulePath is the module path of the throwaway modules
// compile-and-run tests build in.
const tempModulePath = "tmpcorpus"

// tempModule makes a throwaway Go module, in a directory named prefix*
// in t.TempDir(), that requires this repository through a replace
// directive, with the repository's requirements and go.sum, so that
// generated packages written into it build from the module cache alone,
// outside the source tree. It returns the module's directory; packages in
// it are imported as tmpcorpus/NAME. (codegen's tests have the same
// helper.)
func tempModule(t *testing.T, prefix string) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	goMod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goSum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	const self = "module github.com/vigen-go/vigen\n"
	if !strings.HasPrefix(string(goMod), self) {
		t.Fatalf("%s/go.mod does not start with %q", root, self)
	}
	mod := "module " + tempModulePath + "\n" + strings.TrimPrefix(string(goMod), self) +
		"\nrequire github.com/vigen-go/vigen v0.0.0\n\nreplace github.com/vigen-go/vigen => " + root + "\n"
	dir, err := os.MkdirTemp(t.TempDir(), prefix)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), goSum, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// goCommand is the go command with args, run in the module dir, outside
// any workspace.
func goCommand(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	return cmd
}
