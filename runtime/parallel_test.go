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
		// Calls that start after the close returned are the late ones: each
		// other worker may have checked done just before it and so start
		// one more call, the closing worker none. (Counting all calls
		// after the 10th instead was flaky: other workers run on while the
		// 10th call has not reached its cancel yet.)
		ctx, cancel := context.WithCancel(context.Background())
		var calls, late atomic.Int32
		var closed atomic.Bool
		complete := ParallelForUntil(ctx.Done(), 1000, workers, func(w, i int) {
			if closed.Load() {
				late.Add(1)
			}
			if calls.Add(1) == 10 {
				cancel()
				closed.Store(true)
			}
		})
		cancel()
		if complete {
			t.Errorf("workers %d: reported completion after a stop", workers)
		}
		if n := calls.Load(); n < 10 {
			t.Errorf("workers %d: stopped after %d calls, before the close at call 10", workers, n)
		}
		if n := late.Load(); n > int32(workers-1) {
			t.Errorf("workers %d: %d calls started after the close returned, more than the other workers' one each", workers, n)
		}
	}
	if !ParallelForUntil(nil, 0, 2, func(w, i int) { t.Fatal("called for n = 0") }) {
		t.Error("n = 0 is complete")
	}
}
