package runtime

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// WriteFileAtomic writes through a symbolic link (keeping it a link),
// refuses a directory, and names the path it was given, never its
// temporary file, when it fails. (Devices and pipes: files_unix_test.go.)
func TestWriteFileAtomicTargets(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target.json")
	os.WriteFile(target, []byte("old"), 0o644)
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(target, link); err == nil {
		if err := WriteFileAtomic(link, []byte("new")); err != nil {
			t.Fatal(err)
		}
		if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
			t.Error("the symbolic link was replaced by a file")
		}
		if b, _ := os.ReadFile(target); string(b) != "new" {
			t.Errorf("the link's target holds %q", b)
		}
	}

	if err := WriteFileAtomic(dir, []byte("x")); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("writing a directory: %v", err)
	}
	missing := filepath.Join(dir, "nodir", "r.json")
	err := WriteFileAtomic(missing, []byte("x"))
	if err == nil || !strings.Contains(err.Error(), missing) || strings.Contains(err.Error(), ".vigen-") {
		t.Errorf("writing into a missing directory: %v; want an error naming %s", err, missing)
	}
}
