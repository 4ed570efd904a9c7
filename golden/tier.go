package golden

import "testing"

// The test suite has two tiers. The fast tier, `go test ./...`, is the
// README's test command: unit tests, derivative checks and the
// compile-and-run tests that cover each construct once. The slow tier,
// `go test -tags slow -timeout 60m ./...`, adds what compiles or derives
// at scale: the model corpora, the random-expression property tests, the
// generated-code artifact and cost suites, and the end-to-end runs whose
// models take long to build. .ci/run runs both.
//
// Measured on 2 cores (CPU = user + system, /usr/bin/time), December
// 2026: the fast tier costs 148 CPU-s on a fresh machine (a clean clone,
// empty module, build and user caches, no ../shared) and about 100 with
// warm caches; the slow tier's first command about 1,400 CPU-s. codegen's
// compile-and-run programs are built once per test binary, into a module
// kept in the user's cache directory (vigen-e2e/), so that a rerun
// compiles only what changed.

// SlowTier skips tb unless the tests were built with -tags slow, saying
// how to run it.
func SlowTier(tb testing.TB) {
	tb.Helper()
	if !slowTier {
		tb.Skip("slow tier: run with go test -tags slow")
	}
}
