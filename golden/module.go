package golden

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// WriteModule writes into dir the go.mod and go.sum of a throwaway Go
// module named path that requires this repository, at root, through a
// replace directive, with the repository's own requirements and go.sum:
// generated packages written into it build from the module cache alone,
// outside the source tree. Compile-and-run tests of codegen and derive
// build in such modules in t.TempDir().
func WriteModule(dir, path, root string) error {
	goMod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return err
	}
	goSum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		return err
	}
	const self = "module github.com/vigen-go/vigen\n"
	if !strings.HasPrefix(string(goMod), self) {
		return fmt.Errorf("%s/go.mod does not start with %q", root, self)
	}
	mod := "module " + path + "\n" + strings.TrimPrefix(string(goMod), self) +
		"\nrequire github.com/vigen-go/vigen v0.0.0\n\nreplace github.com/vigen-go/vigen => " + root + "\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "go.sum"), goSum, 0o644)
}

// GoCommand is the go command with args, run in the module dir, outside
// any workspace and without changing its go.mod.
func GoCommand(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	return cmd
}
