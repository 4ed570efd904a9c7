package codegen

import (
	"strings"
	"testing"

	"github.com/vigen-go/vigen/derive"
	"github.com/vigen-go/vigen/spec"
)

// A latent with an improper flat prior is nonconjugate and global (a
// per-unit latent needs a prior drawing it row by row), so SVI, SSMF and
// SSMF-A, which step only conjugate globals and params, and the sharded
// fits, which need SVI's methods, refuse its model before any fit: the
// generated package has NoSVI naming it, and no Stochastic, without which
// runtime.FitSVI and runtime.NewShard are not reached. Were one of these
// fits to accept such a model, its end runs the same improper-posterior
// check as coordinate ascent's (runtime's TestImproperPosteriorEndsSVI
// and TestImproperPosteriorEndsShardedFits); this test says which of the
// two holds today, for a model with no unit plate and for two with one
// (a flat location beside conjugate locals, and a flat scale).
func TestFlatPriorModelsRefuseSVIAndShards(t *testing.T) {
	for _, c := range []struct{ name, src, want string }{
		{"flatlogit", `model flatlogit
size N, P
data x : real[N, P]
data y : int[N] in 0..1
latent theta : real[P] nonconjugate laplace
for n in 1:N {
  y[n] ~ Bernoulli(logistic(dot(x[n], theta)))
}
`, "the global theta (flatlogit.vi:5:8) is nonconjugate, and SVI steps only conjugate globals"},
		{"flatunits", `model flatunits
size D
data y : real[D]
latent mu : real[D] conjugate
latent b : real nonconjugate laplace
for d in 1:D {
  mu[d] ~ Normal(0, 1)
  y[d] ~ Normal(mu[d] + b, 1)
}
`, "the global b (flatunits.vi:5:8) is nonconjugate, and SVI steps only conjugate globals"},
		{"flatscale", `model flatscale
size D
data y : real[D]
latent mu : real[D] conjugate
latent s : real<lower=0> nonconjugate laplace
for d in 1:D {
  mu[d] ~ Normal(0, 1)
  y[d] ~ Normal(mu[d], s)
}
`, "the global s (flatscale.vi:5:8) is nonconjugate, and SVI steps only conjugate globals"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := spec.Load(c.name+".vi", []byte(c.src))
			if err != nil {
				t.Fatal(err)
			}
			flat := 0
			for _, v := range m.Vars {
				if derive.ImproperFlat(m, v) {
					flat++
				}
			}
			if flat == 0 {
				t.Fatal("no latent with an improper flat prior: the test's model is wrong")
			}
			d, err := derive.Derive(m)
			if err != nil {
				t.Fatal(err)
			}
			files, err := Generate(d, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var code strings.Builder
			for _, f := range files {
				code.Write(f.Src)
			}
			src := code.String()
			i := strings.Index(src, "func (a *caModel) NoSVI() string")
			if i < 0 || strings.Contains(src, ") Stochastic() ") {
				t.Fatalf("a model with a flat prior is open to SVI and sharded fits (NoSVI at %d, Stochastic %v): add it to the end-to-end tests of improper posteriors under every algorithm", i, strings.Contains(src, ") Stochastic() "))
			}
			if reason := src[i:min(len(src), i+300)]; !strings.Contains(reason, c.want) {
				t.Errorf("NoSVI does not say %q:\n%s", c.want, reason)
			}
		})
	}
}
