package main

import (
	"fmt"
	"os"
	"os/exec"
	goruntime "runtime"

	"github.com/vigen-go/vigen/runtime"
)

// tieToParent makes the fitting command cmd end with this vigen, however
// vigen ends (SIGKILL included), instead of running on to the end of a fit
// nobody reads: on Linux by the parent-death signal, and wherever a
// process can inherit a file (not Windows) by a pipe whose write end vigen
// holds, which the command watches (runtime.WatchParent) and which closes
// when vigen ends. Call it before cmd.Start; started calls the returned
// function once the command has started (vigen's copy of the read end is
// closed), and done once it has ended.
func tieToParent(cmd *exec.Cmd) (started, done func(), err error) {
	setParentDeathSignal(cmd)
	nothing := func() {}
	if goruntime.GOOS == "windows" {
		return nothing, nothing, nil
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("a pipe to the fitting command: %v", err)
	}
	cmd.ExtraFiles = append(cmd.ExtraFiles, r)
	fd := 2 + len(cmd.ExtraFiles) // after stdin, stdout and stderr
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, fmt.Sprintf("%s=%d", runtime.ParentPipeEnv, fd))
	return func() { r.Close() }, func() { r.Close(); w.Close() }, nil
}
