package derive

import (
	"os"
	"testing"

	"github.com/vigen-go/vigen/spec"
)

// The delta method's collapsed Newton start applies only where the delta
// correction does not depend on q(z): in the CTM ∇²_θ η_nk is the same for
// every topic k; in a per-unit mixture y[d, n] ~ Normal(theta[d, z[d, n]], 1)
// it is not (−δ_ak δ_bk), so that model keeps the plain sweeps.
func TestDeltaCollapsesOnlyWhereTheCorrectionIgnoresZ(t *testing.T) {
	ctm, err := os.ReadFile("../examples/ctm/ctm.vi")
	if err != nil {
		t.Fatal(err)
	}
	const unitmix = `model unitmix
size D, N, K
data y : real[D, N]
const p : simplex[K]
latent theta : real[D, K] nonconjugate laplace
latent z : int[D, N] in 1..K conjugate
for d in 1:D {
  theta[d] ~ Normal(0, 3)
  for n in 1:N {
    z[d, n] ~ Categorical(p)
    y[d, n] ~ Normal(theta[d, z[d, n]], 1)
  }
}
`
	for _, c := range []struct {
		name, src string
		want      bool
	}{{"ctm", string(ctm), true}, {"unitmix", unitmix, false}} {
		m, err := spec.Load(c.name+".vi", []byte(c.src))
		if err != nil {
			t.Fatal(err)
		}
		d, err := Derive(m)
		if err != nil {
			t.Fatal(err)
		}
		o := d.Objectives[0]
		if o.Collapsed == nil {
			t.Fatalf("%s: no collapsed objective", c.name)
		}
		if o.Collapsed.DeltaCollapses != c.want {
			t.Errorf("%s: DeltaCollapses = %v, want %v", c.name, o.Collapsed.DeltaCollapses, c.want)
		}
	}
}
