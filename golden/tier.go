package golden

import "testing"

// The test suite has two tiers. The fast tier, `go test ./...`, is the
// README's test command: unit tests, derivative checks and the
// compile-and-run tests that cover each construct once. The slow tier,
// `go test -tags slow -timeout 60m ./...`, adds what compiles or derives
// at scale: the model corpora, the random-expression property tests, the
// generated-code artifact and cost suites, and the end-to-end runs whose
// models take long to build. .ci/run runs both.

// SlowTier skips tb unless the tests were built with -tags slow, saying
// how to run it.
func SlowTier(tb testing.TB) {
	tb.Helper()
	if !slowTier {
		tb.Skip("slow tier: run with go test -tags slow")
	}
}
