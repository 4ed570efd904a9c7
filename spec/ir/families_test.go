package ir

import (
	"math"
	"strings"
	"testing"
)

// TestDomainsParse: every clause of the constraints and supports of the
// families (ir.Families) is either an interval the generated code checks or a
// structural one the declared types enforce, so a clause added to the table
// cannot be skipped silently.
func TestDomainsParse(t *testing.T) {
	for name, d := range Families {
		for _, s := range []string{d.Constraints, d.SupportText} {
			if _, err := ParseDomains(s); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
	}
	for in, want := range map[string]string{
		"sd > 0":           "sd > 0",
		"n ≥ 0, 0 < p < 1": "n ≥ 0; p in (0, 1)",
		"dof > K − 1, scale symmetric positive definite": "dof > K − 1",
		"k ∈ {0, …, n}":    "",
		"0 ≤ x < 1":        "x in [0, 1)",
		"x ≤ 2, y < K + 1": "x ≤ 2; y < K + 1",
	} {
		got, err := ParseDomains(in)
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		var parts []string
		for _, n := range []string{"sd", "n", "p", "dof", "x", "y"} {
			if d, ok := got[n]; ok {
				parts = append(parts, n+" "+d.Requirement())
			}
		}
		if s := strings.Join(parts, "; "); s != want {
			t.Errorf("%q: %q, want %q", in, s, want)
		}
	}
	if _, err := ParseDomains("sd is positive"); err == nil {
		t.Error(`"sd is positive" parsed`)
	}
	if d := (Interval{Lo: math.Inf(-1), Hi: math.Inf(1)}); d.Requirement() != "a real number" {
		t.Error(d.Requirement())
	}
}

// TestFamilySupports checks the coarse support of every family against
// its written support.
func TestFamilySupports(t *testing.T) {
	for name, d := range Families {
		if d.Variadic {
			continue // a Mixture draws what its components draw
		}
		want := map[Support][]string{
			SupportReal:     {"x ∈ ℝ", "x ∈ ℝᴷ"},
			SupportPositive: {"x > 0", "x ≥ 0"},
			SupportUnit:     {"0 < x < 1"},
			SupportInterval: {"x ∈ (lower, upper)"},
			SupportSimplex:  {"x on the simplex"},
			SupportCov:      {"W symmetric positive definite K×K"},
		}[d.Support]
		if d.Support == SupportInt {
			if !d.Value.Int {
				t.Errorf("%s: integer support, but its value is real", name)
			}
			continue
		}
		if d.Value.Int {
			t.Errorf("%s: an integer value with support %v", name, d.Support)
		}
		found := false
		for _, w := range want {
			found = found || w == d.SupportText
		}
		if !found {
			t.Errorf("%s: support %v, but its table entry writes %q", name, d.Support, d.SupportText)
		}
	}
}
