package main

import (
	"strings"
	"testing"
)

// A conjugate latent whose prior is a special case of a conjugate family
// (Exponential(r) is Gamma(1, r)) is reported with q in that family, and
// the report says so rather than that q is in its prior's family.
func TestExplainSpecialCasePrior(t *testing.T) {
	vi := write(t, t.TempDir(), "hier.vi", `model hier
size N
data y : int[N]
latent theta : real[N] conjugate
latent beta : real conjugate
beta ~ Exponential(2)
for n in 1:N {
  theta[n] ~ Gamma(3, beta)
  y[n] ~ Poisson(theta[n])
}
`)
	out := explain(t, "md", vi)
	for _, want := range []string{
		"Its factor is in the family its prior `Exponential` is a special case of, $q(\\beta) = \\operatorname{Gamma}(",
		"Its factor is in the family of its prior, $q(\\theta) = \\operatorname{Gamma}(",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("explain lacks %q:\n%s", want, out)
		}
	}
}
