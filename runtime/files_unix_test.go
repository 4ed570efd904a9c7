//go:build unix

package runtime

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
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

// A named pipe that no process reads is not waited on once the context is
// done: CreateAtomicContext fails, at once when the context is done
// before, else when it ends, and leaves the pipe as it was. (CreateAtomic
// waited in open(2), where no signal reached it.)
func TestCreateAtomicPipeWithoutReader(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "out.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	waiting, stop := context.WithCancel(context.Background())
	errs := make(chan error, 1)
	go func() {
		_, err := CreateAtomicContext(waiting, fifo)
		errs <- err
	}()
	stop()
	for what, err := range map[string]error{"a done context": createErr(CreateAtomicContext(done, fifo)), "a context ended while waiting": <-errs} {
		if err == nil || !strings.Contains(err.Error(), "named pipe") {
			t.Errorf("%s: %v, want an error saying nobody reads the named pipe", what, err)
		}
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the named pipe was replaced (%v)", err)
	}
}

// createErr is the error of CreateAtomicContext's result, the file closed.
func createErr(f *AtomicFile, err error) error {
	if f != nil {
		f.Abort()
	}
	return err
}
