package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGenMethods: vigen gen writes the delta method's kernels for a latent
// declared laplace only when -methods asks for them (issue 39: only the
// kernels a model needs), says in the package how to get them, and refuses
// an unknown method as a bad command line.
func TestGenMethods(t *testing.T) {
	dir := t.TempDir()
	vi := write(t, dir, "tiny.vi", good)
	gen := func(args ...string) string {
		t.Helper()
		out := filepath.Join(dir, "pkg")
		code, _, stderr := runCLI(append(append([]string{"gen", "-o", out}, args...), vi)...)
		if code != 0 {
			t.Fatalf("vigen gen %v: exit %d: %s", args, code, stderr)
		}
		src, err := os.ReadFile(filepath.Join(out, "tiny.go"))
		if err != nil {
			t.Fatal(err)
		}
		return string(src)
	}
	plain := gen()
	if strings.Contains(plain, "func (m *Model) WDelta(") {
		t.Error("a latent declared laplace got the delta kernel without -methods delta")
	}
	if !strings.Contains(plain, "generate it with vigen gen -methods delta") {
		t.Error("the package does not say how to get the delta kernels")
	}
	withDelta := gen("-methods", "delta")
	if !strings.Contains(withDelta, "func (m *Model) WDelta(") || !strings.Contains(withDelta, "DeltaF: m.WDelta") {
		t.Error("-methods delta did not add the delta kernel")
	}
	if code, _, _ := runCLI("gen", "-check", "-o", filepath.Join(dir, "pkg"), "-methods", "delta", vi); code != 0 {
		t.Errorf("gen -check -methods delta of what gen -methods delta wrote: exit %d, want 0", code)
	}
	if code, _, _ := runCLI("gen", "-check", "-o", filepath.Join(dir, "pkg"), vi); code != 1 {
		t.Errorf("gen -check without -methods delta of a package with them: exit %d, want 1 (stale)", code)
	}
	code, _, stderr := runCLI("gen", "-o", filepath.Join(dir, "bad"), "-methods", "laplace,newton", vi)
	if code != 2 || !strings.Contains(stderr, `unknown method "newton"`) {
		t.Errorf("-methods laplace,newton: exit %d, stderr %q; want 2 naming the method", code, stderr)
	}
}
