package derive_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/vigen-go/vigen/golden"
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
	dir, err := os.MkdirTemp(t.TempDir(), prefix)
	if err != nil {
		t.Fatal(err)
	}
	if err := golden.WriteModule(dir, tempModulePath, root); err != nil {
		t.Fatal(err)
	}
	return dir
}

// goCommand is golden.GoCommand.
func goCommand(dir string, args ...string) *exec.Cmd { return golden.GoCommand(dir, args...) }
