package runtime

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Workers returns the number of goroutines to use: n if positive, else
// GOMAXPROCS.
func Workers(n int) int {
	if n > 0 {
		return n
	}
	return runtime.GOMAXPROCS(0)
}

// ParallelFor calls fn(w, i) for every i in [0, n) on `workers`
// goroutines; w in [0, workers) names the goroutine, so fn can use
// per-worker scratch space. Units are handed out in small chunks on
// demand, so the assignment of i to w depends on timing: fn must write
// only to i's own results (and w's scratch), which makes the outcome
// independent of the schedule. Reductions over i belong after the call,
// in index order.
func ParallelFor(n, workers int, fn func(w, i int)) {
	ParallelForUntil(nil, n, workers, fn)
}

// ParallelForUntil is ParallelFor that stops handing out indices once done
// is closed (a nil done never is): the calls already running finish, and it
// reports whether every index was visited.
func ParallelForUntil(done <-chan struct{}, n, workers int, fn func(w, i int)) bool {
	stopped := func() bool {
		select {
		case <-done:
			return true
		default:
			return false
		}
	}
	if workers <= 1 || n <= 1 {
		for i := 0; i < n; i++ {
			if done != nil && stopped() {
				return false
			}
			fn(0, i)
		}
		return true
	}
	if workers > n {
		workers = n
	}
	chunk := n / (workers * 16)
	if chunk < 1 {
		chunk = 1
	}
	var next atomic.Int64
	var skipped atomic.Bool
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for {
				lo := int(next.Add(int64(chunk))) - chunk
				if lo >= n {
					return
				}
				for i := lo; i < min(lo+chunk, n); i++ {
					if done != nil && stopped() {
						skipped.Store(true)
						return
					}
					fn(w, i)
				}
			}
		}(w)
	}
	wg.Wait()
	return !skipped.Load()
}
