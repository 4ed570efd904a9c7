package codegen

import (
	"strings"
	"testing"
)

// ldaSource is LDA (examples/lda) with eta's default given as text.
func ldaSource(eta string) string {
	return `model lda
size D, K, V
data w : bag[D] of 1..V
const alpha : real = 0.1
const eta : real = ` + eta + `
latent beta : simplex[K, V] conjugate
latent theta : simplex[D, K] conjugate
latent z : int[D, w] in 1..K conjugate
for k in 1:K {
  beta[k] ~ Dirichlet(eta)
}
for d in 1:D {
  theta[d] ~ Dirichlet(alpha)
  for n in w[d] {
    z[d, n] ~ Categorical(theta[d])
    w[d, n] ~ Categorical(beta[z[d, n]])
  }
}
`
}

// TestShardOnlyWhereTheFitIsTheSame: Model.Shard is generated for LDA,
// and not where a shard's fit would silently differ from the whole fit's:
// a constant computed from the number of units (a shard's model counts
// its own), or two conjugate globals (coordinate ascent updates them in
// turn, a shard's statistics are computed before either moves).
func TestShardOnlyWhereTheFitIsTheSame(t *testing.T) {
	const shard = "func (m *Model) Shard("
	if src := generatedSource(t, "lda", ldaSource("0.01")); !strings.Contains(src, shard) {
		t.Error("LDA has no Model.Shard")
	}
	if src := generatedSource(t, "lda", ldaSource("0.01 + 0.001 * D")); strings.Contains(src, shard) {
		t.Error("LDA whose eta reads D, the number of units, has Model.Shard")
	}
	twoGlobals := `model gmm
size N, K
data x : real[N]
latent pi : simplex[K] conjugate
latent mu : real[K] conjugate
latent z : int[N] in 1..K conjugate
pi ~ Dirichlet(1)
for k in 1:K {
  mu[k] ~ Normal(0, 10)
}
for n in 1:N {
  z[n] ~ Categorical(pi)
  x[n] ~ Normal(mu[z[n]], 1)
}
`
	src := generatedSource(t, "gmm", twoGlobals)
	if !strings.Contains(src, "Stochastic()") {
		t.Fatal("SVI does not apply to the mixture: the test tests nothing")
	}
	if strings.Contains(src, shard) {
		t.Error("a mixture with two conjugate globals has Model.Shard")
	}
}
