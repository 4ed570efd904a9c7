package runtime

import (
	"fmt"
	"io"
	"os"
	"strconv"
)

// ParentPipeEnv names the environment variable by which vigen run tells
// the fitting command it starts the file descriptor of the read end of a
// pipe whose write end vigen holds and never writes: the pipe closes when
// vigen ends, however it ends (SIGKILL included), and the command then
// stops (WatchParent). On Linux vigen also sets the child's parent-death
// signal; the pipe is the portable way, for systems without one.
const ParentPipeEnv = "VIGEN_PARENT_PIPE"

// WatchParent starts watching the pipe named by $VIGEN_PARENT_PIPE, if
// set: when its write end closes, gone is called (a command ends the
// process there: nobody reads its result any more). It returns an error
// if the variable is set but names no file descriptor.
func WatchParent(gone func()) error {
	v := os.Getenv(ParentPipeEnv)
	if v == "" {
		return nil
	}
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 0 {
		return fmt.Errorf("$%s=%q: want a file descriptor", ParentPipeEnv, v)
	}
	f := os.NewFile(uintptr(fd), "parent pipe")
	if f == nil {
		return fmt.Errorf("$%s=%d: not an open file descriptor", ParentPipeEnv, fd)
	}
	go func() {
		io.Copy(io.Discard, f) // ends at EOF: every write end closed
		gone()
	}()
	return nil
}
