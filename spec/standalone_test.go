package spec_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/spec"
)

// TestLoadWithoutDerive: a program that links spec alone (a formatter, a
// linter, a language server) checks models against the distribution
// signatures, which spec/ir holds; it does not depend on package derive
// being linked. This test binary links neither derive nor codegen (checked
// below), so a model using several families must load, and a bad one must
// get a positioned error, not an internal error with no position.
func TestLoadWithoutDerive(t *testing.T) {
	if out, err := exec.Command("go", "list", "-deps", "-test", "github.com/vigen-go/vigen/spec").Output(); err != nil {
		t.Fatalf("go list: %v", err)
	} else if deps := string(out); strings.Contains(deps, "vigen/derive") || strings.Contains(deps, "vigen/codegen") {
		t.Fatalf("spec's tests link derive or codegen, so this test cannot tell whether spec works alone:\n%s", deps)
	}
	const good = `model several
size N
size K
data y : real[N]
data c : int[N] in 0..1
data k : int[N]
data z : int[N] in 1..K
latent mu : real nonconjugate laplace
latent sigma : real<lower=0> nonconjugate laplace
latent beta : real nonconjugate laplace
latent p : simplex[K] conjugate
mu ~ Normal(0, 10)
sigma ~ HalfCauchy(2)
beta ~ StudentT(3, 0, 1)
p ~ Dirichlet(1)
for n in 1:N {
  y[n] ~ Normal(mu, sigma)
  c[n] ~ BernoulliLogit(beta)
  k[n] ~ Poisson(exp(mu))
  z[n] ~ Categorical(p)
}
`
	m, err := spec.Load("several.vi", []byte(good))
	if err != nil {
		t.Fatalf("a clean model is refused:\n%v", err)
	}
	if got := len(m.Factors); got != 8 {
		t.Errorf("%d factors, want 8", got)
	}
	for _, f := range m.Factors {
		if f.Dist == "" {
			t.Errorf("a factor at %v has no family", f.Pos)
		}
	}

	bad := strings.Replace(good, "p ~ Dirichlet(1)", "p ~ Dirichlet(1, 2)", 1)
	bad = strings.Replace(bad, "sigma ~ HalfCauchy(2)", "sigma ~ Gamma(2)", 1)
	_, err = spec.Load("several.vi", []byte(bad))
	if err == nil {
		t.Fatal("a model calling Dirichlet and Gamma with the wrong number of arguments is accepted")
	}
	want := "several.vi:13:9: Gamma takes 2 arguments (shape, rate), got 1\n" +
		"\thint: write Gamma(shape, rate)\n" +
		"several.vi:15:5: Dirichlet takes 1 argument (alpha), got 2\n" +
		"\thint: write Dirichlet(alpha)"
	if got := err.Error(); got != want {
		t.Errorf("errors:\n%s\nwant:\n%s", got, want)
	}
}
