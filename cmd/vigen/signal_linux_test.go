package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vigen-go/vigen/golden"
)

// These tests run a built vigen as a user does, from a shell: with its
// stdout a pipe, and signals sent to vigen's pid alone (not to its process
// group, as a terminal's Ctrl-C does). They use /proc and Linux pipes.

var (
	vigenBinOnce sync.Once
	vigenBin     string
	vigenBinErr  error
)

// builtVigen builds this vigen once per test binary.
func builtVigen(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds vigen and models (-short)")
	}
	vigenBinOnce.Do(func() {
		dir, err := os.MkdirTemp("", "vigen-bin-")
		if err != nil {
			vigenBinErr = err
			return
		}
		vigenBin = filepath.Join(dir, "vigen")
		if out, err := exec.Command("go", "build", "-o", vigenBin, ".").CombinedOutput(); err != nil {
			vigenBinErr = errors.New(string(out))
		}
	})
	if vigenBinErr != nil {
		t.Fatalf("building vigen: %v", vigenBinErr)
	}
	return vigenBin
}

// hangGuard is a context that ends well before the test's deadline, so a
// vigen that hangs (the bug some of these tests are about) fails the test
// with a message instead of stopping the whole test binary.
func hangGuard(t *testing.T) context.Context {
	ctx := t.Context()
	if d, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-time.Until(d)/4))
		t.Cleanup(cancel)
	}
	return ctx
}

// TestRunOutToStdoutPipe: -out /dev/stdout with stdout a pipe writes the
// result into the pipe; vigen once read the pipe to see whether it owned
// it, and hung.
func TestRunOutToStdoutPipe(t *testing.T) {
	golden.SlowTier(t)
	bin := builtVigen(t)
	t.Setenv("VIGEN_CACHE", t.TempDir())
	// As root, a regression that renamed over the path would replace the
	// system's /dev/stdout; /proc/self/fd/1 is the same file, and cannot be
	// replaced.
	stdoutPath := "/dev/stdout"
	if os.Geteuid() == 0 {
		stdoutPath = "/proc/self/fd/1"
	}
	cmd := exec.CommandContext(hangGuard(t), bin, "run", "../../examples/logreg/logreg.vi",
		"-data", "../../examples/logreg/data.json", "-q", "-out", stdoutPath)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr // pipes, copied by exec
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v (a hang is killed)\n%s", err, stderr.String())
	}
	checkResultJSON(t, "logreg", stdout.Bytes())
}

// startVigen starts vigen with args, its stderr a pipe of one page that the
// caller reads line by line: when the caller stops reading, whatever
// writes progress there (the fitting command) blocks within a few dozen
// iterations, so a signal reliably arrives during a fit however fast the
// machine is.
func startVigen(t *testing.T, args ...string) (*exec.Cmd, *bufio.Reader) {
	t.Helper()
	cmd := exec.Command(builtVigen(t), args...)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	// F_SETPIPE_SZ; if refused, the pipe keeps its 64 KiB.
	syscall.Syscall(syscall.SYS_FCNTL, w.Fd(), 1031, 4096)
	cmd.Stderr = w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	t.Cleanup(func() {
		cmd.Process.Kill()
		r.Close()
	})
	return cmd, bufio.NewReader(r)
}

// readUntil reads lines from r until one contains want, and returns what
// it read.
func readUntil(t *testing.T, r *bufio.Reader, want string) string {
	t.Helper()
	var seen strings.Builder
	for {
		l, err := r.ReadString('\n')
		seen.WriteString(l)
		if strings.Contains(l, want) {
			return seen.String()
		}
		if err != nil {
			t.Fatalf("no %q on stderr (%v):\n%s", want, err, seen.String())
		}
	}
}

// childrenOf lists the pids whose parent is pid, from /proc.
func childrenOf(t *testing.T, pid int) []int {
	t.Helper()
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var kids []int
	for _, s := range stats {
		b, err := os.ReadFile(s)
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid …; comm may hold spaces and parentheses.
		rest := string(b[bytes.LastIndexByte(b, ')')+1:])
		f := strings.Fields(rest)
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			id, _ := strconv.Atoi(filepath.Base(filepath.Dir(s)))
			kids = append(kids, id)
		}
	}
	return kids
}

// alive reports whether pid is a process that has not been reaped, other
// than a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}

// TestRunForwardsSignals: SIGINT or SIGTERM sent to vigen's pid alone (a
// kill, a process supervisor, a CI runner's timeout) reaches the fitting
// command, which stops within an iteration and writes its result with
// status "canceled"; vigen writes it, exits 4 and leaves no process
// behind. vigen once ignored SIGINT while the command ran (assuming the
// terminal had sent it to both) and died of SIGTERM, leaving the command
// running as an orphan.
func TestRunForwardsSignals(t *testing.T) {
	builtVigen(t)
	cache := t.TempDir()
	t.Setenv("VIGEN_CACHE", cache)
	// Build first, so the signal reaches the fit, not the build. ctm needs
	// far more iterations than the pipe holds progress lines.
	model, data := "../../examples/ctm/ctm.vi", "../../examples/ctm/data.json"
	if code, _, stderr := runCLI("run", model, "-data", data, "-maxiter", "1", "-q"); code != 0 && code != 3 {
		t.Fatalf("warming the cache: exit %d\n%s", code, stderr)
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "result.json")
			cmd, stderr := startVigen(t, "run", model, "-data", data, "-maxiter", "100000", "-out", out)
			readUntil(t, stderr, "iter   1 ")
			kids := childrenOf(t, cmd.Process.Pid)
			if len(kids) != 1 {
				t.Fatalf("vigen has %d children during the fit, want 1 (%v)", len(kids), kids)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			// Read on, so the command goes on to see the signal; check it
			// is gone as soon as vigen is.
			drained := make(chan []byte)
			go func() {
				b, _ := io.ReadAll(stderr)
				drained <- b
			}()
			err := cmd.Wait()
			if alive(kids[0]) {
				syscall.Kill(kids[0], syscall.SIGKILL)
				t.Errorf("the fitting command (pid %d) outlived vigen", kids[0])
			}
			rest := <-drained
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 4 {
				t.Errorf("vigen ended with %v, want exit status 4\n%s", err, lastLines(string(rest), 3))
			}
			if !strings.Contains(string(rest), "ctm: did not converge: canceled after") {
				t.Errorf("stderr does not say the fit was canceled:\n%s", lastLines(string(rest), 3))
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			var r struct{ Status string }
			if err := json.Unmarshal(b, &r); err != nil || r.Status != "canceled" {
				t.Errorf("result status %q (%v), want canceled", r.Status, err)
			}
		})
	}
}

// TestRunInterruptedBuild: a signal during the build stops it, removes its
// temporary directory and exits 1; vigen once died at once and left the
// .build-* directory in the cache for ever.
func TestRunInterruptedBuild(t *testing.T) {
	builtVigen(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			cache := t.TempDir()
			t.Setenv("VIGEN_CACHE", cache)
			cmd, stderr := startVigen(t, "run", "../../examples/hlm/hlm.vi", "-data", "../../examples/hlm/data.json")
			readUntil(t, stderr, "vigen: building hlm")
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			rest, _ := io.ReadAll(stderr)
			err := cmd.Wait()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Errorf("vigen ended with %v, want exit status 1\n%s", err, rest)
			}
			if !strings.Contains(string(rest), "during the build") {
				t.Errorf("stderr does not say the build was stopped:\n%s", rest)
			}
			left, _ := filepath.Glob(filepath.Join(cache, "run", ".build-*"))
			if len(left) > 0 {
				t.Errorf("temporary build directories left in the cache: %v", left)
			}
		})
	}
}

// finishes runs f and reports whether it returned before the hang guard
// ended; if not, unblock is called to let it go on.
func finishes(t *testing.T, f func(), unblock func()) bool {
	done := make(chan struct{})
	go func() {
		f()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-hangGuard(t).Done():
		unblock()
		<-done
		return false
	}
}

// A named pipe as an output is written directly, never read to decide who
// owns it: vigen run writes the result into it, vigen gen refuses it.
// Reading it, vigen once blocked for ever.
func TestOutputToFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "tiny.go")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	vi := write(t, dir, "tiny.vi", good)
	var code int
	var stderr string
	// Opening the pipe for writing (nonblocking) lets a blocked reader go on.
	unblock := func() {
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	}
	if !finishes(t, func() { code, _, stderr = runCLI("gen", "-o", dir, vi) }, unblock) {
		t.Fatal("vigen gen blocked on a named pipe in its way")
	}
	if want := "refusing to overwrite " + fifo + ": it is not a regular file"; code != 1 || !strings.Contains(stderr, want) {
		t.Errorf("gen over a named pipe: exit %d, stderr %q; want exit 1 and %q", code, stderr, want)
	}

	if testing.Short() {
		return
	}
	t.Setenv("VIGEN_CACHE", t.TempDir())
	got := make(chan []byte)
	go func() {
		f, err := os.Open(fifo) // blocks until a writer opens it
		if err != nil {
			got <- nil
			return
		}
		b, _ := io.ReadAll(f)
		f.Close()
		got <- b
	}()
	if !finishes(t, func() {
		code, _, stderr = runCLI("run", "../../examples/logreg/logreg.vi", "-data", "../../examples/logreg/data.json", "-q", "-out", fifo)
	}, unblock) {
		t.Fatal("vigen run blocked on -out, a named pipe")
	}
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	checkResultJSON(t, "logreg", <-got)
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the named pipe was replaced (%v)", err)
	}
}
