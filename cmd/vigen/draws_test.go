package main

import (
	"strings"
	"testing"
)

// A number of draws above runtime.MaxDraws is a usage error found before
// the build: -psis-draws 2000000000 once asked for 64 GB after the fit and
// crashed.
func TestRunRefusesHugeDraws(t *testing.T) {
	t.Setenv("VIGEN_CACHE", t.TempDir()) // nothing may be built into it
	for _, flag := range []string{"-psis-draws", "-psis-unit-draws", "-predict-draws"} {
		code, stdout, stderr := runCLI("run", "../../examples/logreg/logreg.vi", "-data", "../../examples/logreg/data.json", flag, "2000000000")
		if want := flag + " 2000000000: at most 10000000 draws"; code != exitUsage || stdout != "" || !strings.Contains(stderr, want) || strings.Contains(stderr, "building") {
			t.Errorf("%s 2e9: exit %d, stderr %q; want exit 2 and %q before any build", flag, code, stderr, want)
		}
	}
}
