//go:build unix

package runtime

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// WriteFileAtomic writes a file that is not regular directly, never
// renaming over it: here a named pipe, which must still be one afterwards
// and deliver the data to its reader. (The same rename over /dev/null, run
// as root, replaces the device with a regular file; the test does not risk
// that.)
func TestWriteFileAtomicPipe(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "out.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	// The read end, opened first without blocking, lets the writer open
	// the pipe; it is read once WriteFileAtomic has returned.
	r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := WriteFileAtomic(fifo, []byte("data")); err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(r); string(b) != "data" {
		t.Errorf("the reader got %q", b)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the named pipe was replaced (%v)", err)
	}
}
