package main

import (
	"strings"
	"testing"
)

// A conjugate latent whose prior is a special case of a conjugate family
// (Exponential(r) is Gamma(1, r)) is reported with q in that family, and
// the report says so rather than that q is in its prior's family.
func TestExplainSpecialCasePrior(t *testing.T) {
	vi := write(t, t.TempDir(), "exppois.vi", `model exppois
size N
data y : int[N]
latent lam : real conjugate
lam ~ Exponential(1.3)
for n in 1:N {
  y[n] ~ Poisson(lam)
}
`)
	out := explain(t, "md", vi)
	for _, want := range []string{
		"Its factor is in the family its prior `Exponential` is a special case of, $q(\\mathrm{lam}) = \\operatorname{Gamma}(",
		"\\eta^{(2)} = -N - 1.3",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("explain lacks %q:\n%s", want, out)
		}
	}
}
