package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

// The mixture experiment on the synthetic data from two starts: annealing
// from T = 10 reaches the best optimum of the known-sd mixture from both
// (as from all 20 in the README's table), and merges the components of the
// unknown-precision mixture, which ends below it.
func TestGMMExperimentSmall(t *testing.T) {
	var out, errs bytes.Buffer
	if err := runGMM(&out, &errs, t.TempDir(), 2, 1); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errs.String(), "skipping the iris data") {
		t.Errorf("no note about the missing iris data: %q", errs.String())
	}
	rows := map[string][]string{}
	model := ""
	for _, line := range strings.Split(out.String(), "\n") {
		switch {
		case strings.Contains(line, "gmm.vi ("):
			model = "gmm"
		case strings.Contains(line, "gmmsigma.vi ("):
			model = "gmmsigma"
		}
		if f := strings.Fields(line); len(f) > 2 && (f[0] == "CA" || f[0] == "AVI" || f[0] == "VT") {
			rows[model+" "+f[0]+" "+f[1]] = f
		}
	}
	atBest := regexp.MustCompile(`^\d+/2$`)
	check := func(key, want string) {
		t.Helper()
		f := rows[key]
		var hit string
		for _, x := range f {
			if atBest.MatchString(x) {
				hit = x
				break
			}
		}
		if hit != want {
			t.Errorf("%s: %q reach the best ELBO, want %s\n%s", key, hit, want, out.String())
		}
	}
	check("gmmsigma AVI linear:10:50", "2/2")
	check("gmm AVI linear:10:50", "0/2")
}
