package runtime

import (
	"context"
	"sync/atomic"
	"testing"
)

// ParallelForUntil visits every index once when not stopped, and stops
// handing out indices once done is closed: with one worker exactly the
// indices before the close run; with several, each worker finishes at most
// the call it is in.
func TestParallelForUntil(t *testing.T) {
	for _, workers := range []int{1, 2, 4} {
		var seen [1000]atomic.Int32
		if !ParallelForUntil(make(chan struct{}), len(seen), workers, func(w, i int) { seen[i].Add(1) }) {
			t.Errorf("workers %d: reported a stop without one", workers)
		}
		for i := range seen {
			if n := seen[i].Load(); n != 1 {
				t.Fatalf("workers %d: index %d visited %d times", workers, i, n)
			}
		}

		// (this package's tests shadow the builtin close; a context closes
		// its Done channel for us)
		ctx, cancel := context.WithCancel(context.Background())
		var calls atomic.Int32
		complete := ParallelForUntil(ctx.Done(), 1000, workers, func(w, i int) {
			if calls.Add(1) == 10 {
				cancel()
			}
		})
		cancel()
		if complete {
			t.Errorf("workers %d: reported completion after a stop", workers)
		}
		if n := calls.Load(); n < 10 || n > int32(10+workers-1) {
			t.Errorf("workers %d: %d calls after a stop at call 10", workers, n)
		}
	}
	if !ParallelForUntil(nil, 0, 2, func(w, i int) { t.Fatal("called for n = 0") }) {
		t.Error("n = 0 is complete")
	}
}
