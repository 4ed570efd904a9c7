package runtime

import (
	"os"
	"path/filepath"
	"testing"
)

// WriteFileAtomic replaces a file whole, keeps the replaced file's mode
// (a user's 0600 file stays private) and leaves no temporary file.
func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	fresh := filepath.Join(dir, "fresh.json")
	if err := WriteFileAtomic(fresh, []byte("a")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(fresh); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("new file: %v, mode %v, want 0644", err, fi.Mode().Perm())
	}
	private := filepath.Join(dir, "private.vi")
	if err := os.WriteFile(private, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(private, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(private); string(b) != "new" {
		t.Errorf("contents %q", b)
	}
	if fi, _ := os.Stat(private); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want the replaced file's 0600", fi.Mode().Perm())
	}
	if tmp, _ := filepath.Glob(filepath.Join(dir, ".vigen-*")); len(tmp) > 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
}
