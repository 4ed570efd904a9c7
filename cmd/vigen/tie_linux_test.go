package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/vigen-go/vigen/runtime"
)

// warmCache builds model into a fresh VIGEN_CACHE, so that a signal sent
// later reaches the fit, not the build, and returns the cache.
func warmCache(t *testing.T, model, data string) string {
	t.Helper()
	builtVigen(t)
	cache := t.TempDir()
	t.Setenv("VIGEN_CACHE", cache)
	if code, _, stderr := runCLI("run", model, "-data", data, "-maxiter", "1", "-no-psis", "-q"); code != 0 && code != 3 {
		t.Fatalf("warming the cache: exit %d\n%s", code, stderr)
	}
	return cache
}

// waitExit waits until the process pid (not a child of this one) has
// ended, through a pidfd; false if it is still running when the hang
// guard ends (it is then killed).
func waitExit(t *testing.T, pid int) bool {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return true // gone already
	}
	if err != nil {
		t.Skipf("no pidfd here: %v", err)
	}
	defer unix.Close(fd)
	ended := make(chan struct{})
	go func() {
		defer func() { ended <- struct{}{} }()
		for {
			p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			if _, err := unix.Poll(p, -1); err != unix.EINTR {
				return
			}
		}
	}()
	select {
	case <-ended:
		return true
	case <-hangGuard(t).Done():
		syscall.Kill(pid, syscall.SIGKILL)
		<-ended
		return false
	}
}

// SIGKILL of vigen run takes the fitting command with it: it once ran on
// to the end of a fit nobody would read. The command's progress fills the
// stderr pipe, which the test stops reading, so an orphaned command would
// wait there for ever rather than end by itself.
func TestRunKilledTakesTheFitAlong(t *testing.T) {
	model, data := "../../examples/ctm/ctm.vi", "../../examples/ctm/data.json"
	warmCache(t, model, data)
	cmd, stderr := startVigen(t, "run", model, "-data", data, "-maxiter", "100000", "-out", filepath.Join(t.TempDir(), "r.json"))
	readUntil(t, stderr, "iter   1 ")
	kids := childrenOf(t, cmd.Process.Pid)
	if len(kids) != 1 {
		t.Fatalf("vigen has %d children during the fit, want 1 (%v)", len(kids), kids)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if !waitExit(t, kids[0]) {
		t.Errorf("the fitting command (pid %d) outlived vigen, killed by SIGKILL", kids[0])
	}
}

// Where there is no parent-death signal, the fitting command watches a
// pipe from vigen ($VIGEN_PARENT_PIPE) and stops when it closes: here the
// cached ctm command, started as vigen starts it, with the write end
// closed during the fit.
func TestFitEndsWhenParentPipeCloses(t *testing.T) {
	model, data := "../../examples/ctm/ctm.vi", "../../examples/ctm/data.json"
	cache := warmCache(t, model, data)
	bins, _ := filepath.Glob(filepath.Join(cache, "run", "ctm-*", "ctm"))
	if len(bins) != 1 {
		t.Fatalf("cached builds of ctm: %v", bins)
	}
	abs, _ := filepath.Abs(data)
	cmd := exec.Command(bins[0], "-data", abs, "-maxiter", "100000")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.ExtraFiles = []*os.File{r}
	cmd.Env = append(os.Environ(), runtime.ParentPipeEnv+"=3")
	progress, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	r.Close()
	lines := bufio.NewReader(progress)
	readUntil(t, lines, "iter   1 ")
	w.Close()
	rest, _ := io.ReadAll(lines) // EOF: the command has ended (or hangs here: the bug)
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(rest), "ctm: vigen run, which started this fit, has ended; stopping") {
		t.Errorf("the command ended with %v after its parent's pipe closed; want exit 1 saying why\n%s", err, lastLines(string(rest), 3))
	}
}

// SIGTERM during the approximation diagnostic's draws stops them and ends
// the fit canceled (exit 4): -psis-draws 100000000 once ignored it for ten
// minutes, and 10⁷ draws on logreg's 500 rows still take many seconds.
// logreg converges in one iteration, so the signal, sent after its
// progress line, arrives during the draws (or just before them, which
// ends the same way).
func TestRunInterruptDuringDiagnostic(t *testing.T) {
	model, data := "../../examples/logreg/logreg.vi", "../../examples/logreg/data.json"
	warmCache(t, model, data)
	out := filepath.Join(t.TempDir(), "r.json")
	cmd, stderr := startVigen(t, "run", model, "-data", data, "-psis-draws", strconv.Itoa(runtime.MaxDraws), "-out", out)
	readUntil(t, stderr, "iter   1 ")
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(stderr)
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitFailed || !strings.Contains(string(rest), "logreg: did not converge: canceled after") {
		t.Errorf("vigen ended with %v, want exit status 4 and the fit canceled\n%s", err, lastLines(string(rest), 3))
	}
	var r struct {
		Status      string
		Diagnostics []json.RawMessage
	}
	if b, err := os.ReadFile(out); err != nil || json.Unmarshal(b, &r) != nil || r.Status != "canceled" || r.Diagnostics != nil {
		t.Errorf("result: status %q, %d diagnostics (%v); want canceled, none", r.Status, len(r.Diagnostics), err)
	}
}

// -out naming a named pipe that no process reads does not hold vigen run
// past SIGTERM: it waited in open(2) for a reader, for ever.
func TestRunOutFIFOWithoutReaderStops(t *testing.T) {
	model, data := "../../examples/logreg/logreg.vi", "../../examples/logreg/data.json"
	warmCache(t, model, data)
	fifo := filepath.Join(t.TempDir(), "r.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	cmd, stderr := startVigen(t, "run", model, "-data", data, "-out", fifo)
	readUntil(t, stderr, "vigen: using the cached build")
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var rest []byte
	unblock := func() { // a reader, so that a blocked vigen goes on
		if f, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
		cmd.Process.Kill()
	}
	var err error
	if !finishes(t, func() { rest, _ = io.ReadAll(stderr); err = cmd.Wait() }, unblock) {
		t.Fatal("vigen run went on waiting for a reader of -out after SIGTERM")
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitError || !strings.Contains(string(rest), "vigen: stopped by terminated before the fit: cannot write "+fifo+": no process") || !strings.Contains(string(rest), "named pipe") {
		t.Errorf("vigen ended with %v, want exit status 1 saying why\n%s", err, rest)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the named pipe was replaced (%v)", err)
	}
}
