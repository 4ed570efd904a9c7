package runtime

import (
	"os"
	"strconv"
	"testing"
)

// WatchParent calls gone once the pipe's write end is closed, as it is
// when vigen run ends however it ends, and not before.
func TestWatchParent(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(ParentPipeEnv, strconv.Itoa(int(r.Fd())))
	gone := make(chan struct{}, 1)
	if err := WatchParent(func() { gone <- struct{}{} }); err != nil {
		t.Fatal(err)
	}
	select {
	case <-gone:
		t.Fatal("gone called while the parent's end is open")
	default:
	}
	w.Close()
	<-gone // a hang here is the bug
	t.Setenv(ParentPipeEnv, "x")
	if err := WatchParent(func() {}); err == nil {
		t.Error("a bad descriptor accepted")
	}
}
