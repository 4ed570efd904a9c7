package derive

import (
	"testing"

	"github.com/vigen-go/vigen/spec"
)

// A latent drawn per unit but read inside the loop at another unit's row
// (theta[g[d]]) is updated as a whole, not unit by unit: unit d's tokens
// belong to theta[g[d]]'s update, which a per-unit update of theta[d]
// would miss (it used to keep only the part with g[d] = d).
func TestLocalLatentReadAtAnotherUnit(t *testing.T) {
	src := func(read string) string {
		return `model cross
size D, K, V
data w : bag[D] of 1..V
data g : int[D] in 1..D
data x : real[D]
latent beta : simplex[K, V] conjugate
latent theta : simplex[D, K] conjugate
latent z : int[D, w] in 1..K conjugate
for k in 1:K {
  beta[k] ~ Dirichlet(0.1)
}
for d in 1:D {
  theta[d] ~ Dirichlet(0.5)
  for n in w[d] {
    z[d, n] ~ Categorical(theta[` + read + `])
    w[d, n] ~ Categorical(beta[z[d, n]])
  }
  x[d] ~ Normal(g[d], 1)
}
`
	}
	for _, c := range []struct {
		read  string
		local bool
	}{{"d", true}, {"g[d]", false}} {
		m, err := spec.Load("cross.vi", []byte(src(c.read)))
		if err != nil {
			t.Fatal(err)
		}
		d, err := Derive(m)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range d.Updates {
			if u.Latent.Name == "theta" && (u.Unit != nil) != c.local {
				t.Errorf("theta[%s]: update local = %v, want %v", c.read, u.Unit != nil, c.local)
			}
		}
	}
}
