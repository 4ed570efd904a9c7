package derive

import (
	"sync"
	"sync/atomic"
)

// The node budget of a derivation. Derivatives written out as trees can
// grow exponentially with the depth of a model's expressions (a chain of
// lets each reading the previous one twice), and a derivation that runs on
// would take the machine's memory before any size check on its results.
// Every expression node built is counted (nodesBuilt); while derivations
// run, building a node past nodeLimit panics with tooLarge, which Derive
// returns as a positioned error. The count is shared by concurrent
// derivations (a test binary deriving in parallel), so the limit is the
// most generous of the running derivations' own: a derivation is stopped
// only once the nodes built since the latest one began exceed
// maxDerivationNodes, far above what any model in the repository builds.
var (
	nodesBuilt    atomic.Int64
	nodeLimit     atomic.Int64 // 0 while no derivation runs
	budgetMu      sync.Mutex
	activeBudgets int
)

// maxDerivationNodes is the most expression nodes a derivation may build,
// about a minute of CPU. The examples build at most 10,000 (with their
// delta terms), the derivative corpus 31,000, issue 39's two-component
// mixture mixlit 289,000, a three-component softmax mixture 1.3 million;
// 50 scalar latents read by one statement build 3.5 million and 100 of
// them 26 million (35 s; the cost grows as the cube of their number), a
// 7-link let chain reading each link twice 1.4 million, each link 3.5
// times more. A variable so that tests can lower it.
var maxDerivationNodes int64 = 10_000_000

// tooLarge is the panic of a derivation past its node budget.
type tooLarge struct{ limit int64 }

// startBudget opens a derivation's budget; the function it returns closes
// it.
func startBudget() func() {
	budgetMu.Lock()
	defer budgetMu.Unlock()
	activeBudgets++
	if lim := nodesBuilt.Load() + maxDerivationNodes; lim > nodeLimit.Load() {
		nodeLimit.Store(lim)
	}
	return func() {
		budgetMu.Lock()
		defer budgetMu.Unlock()
		if activeBudgets--; activeBudgets == 0 {
			nodeLimit.Store(0)
		}
	}
}

// chargeNode counts one node built, panicking with tooLarge past the
// limit of the running derivations.
func chargeNode() {
	n := nodesBuilt.Add(1)
	if lim := nodeLimit.Load(); lim != 0 && n > lim {
		panic(tooLarge{limit: maxDerivationNodes})
	}
}
