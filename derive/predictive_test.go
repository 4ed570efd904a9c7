package derive

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/spec"
)

func derivePredictive(t *testing.T, name, src string) *Derivation {
	t.Helper()
	m, err := spec.Load(name, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	d, err := Derive(m)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func readExample(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "examples", name, name+".vi"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// LDA's predictive is exact (Dirichlet means of θ_d and β_k); the CTM's
// takes E[softmax(θ_d)] by Eq. 19 and says so; β is a param there.
func TestPredictiveOfTopicModels(t *testing.T) {
	for _, c := range []struct {
		name                string
		mixRule, topicRule  string
		exact               bool
		mixInputs, topInput int
	}{
		{"lda", "exact: E[x] of Dirichlet", "exact: E[x] of Dirichlet", true, 1, 1},
		{"ctm", "Taylor (Eq. 19) in theta", "reads no latent (constants and param estimates)", false, 1, 0},
	} {
		d := derivePredictive(t, c.name+".vi", readExample(t, c.name))
		p := d.Predictive
		if p == nil {
			t.Fatalf("%s: no predictive: %s", c.name, d.NoPredictiveReason)
		}
		if p.Bag.Name != "w" || p.Local.Name != "z" || p.Unit.Name != "d" || p.K.Size != "K" || p.V.Size != "V" ||
			RuleSummary(p.MixRules) != c.mixRule || RuleSummary(p.TopicRules) != c.topicRule || p.Exact() != c.exact ||
			len(p.MixInputs) != c.mixInputs || len(p.TopicInputs) != c.topInput {
			t.Errorf("%s: %+v\nmix %s (%s)\ntopic %s (%s)", c.name, p, String(p.Mix), RuleSummary(p.MixRules), String(p.Topic), RuleSummary(p.TopicRules))
		}
	}
}

// Models without the shape get a positioned reason, with the hint.
func TestNoPredictive(t *testing.T) {
	head := "model m\nsize D, K, V\ndata w : bag[D] of 1..V\n"
	for _, c := range []struct{ name, src, want string }{
		{"logreg", readExample(t, "logreg"), "logreg.vi:5:7: model logreg has no bag data variable"},
		{"unigrams", head + `latent pi : simplex[K] conjugate
latent beta : simplex[K, V] conjugate
latent c : int[D] in 1..K conjugate
pi ~ Dirichlet(1.0)
for k in 1:K { beta[k] ~ Dirichlet(0.1) }
for d in 1:D {
  c[d] ~ Categorical(pi)
  for n in w[d] { w[d, n] ~ Categorical(beta[c[d]]) }
}
`, "m.vi:11:46: w reads c other than as c[d, n]"},
		{"slda", head + `data y : real[D]
latent beta : simplex[K, V] conjugate
latent theta : simplex[D, K] conjugate
latent z : int[D, w] in 1..K conjugate
for k in 1:K { beta[k] ~ Dirichlet(0.1) }
for d in 1:D {
  theta[d] ~ Dirichlet(0.1)
  y[d] ~ Normal(0.0, 1.0)
  for n in w[d] {
    z[d, n] ~ Categorical(theta[d])
    w[d, n] ~ Categorical(beta[z[d, n]])
  }
}
`, "m.vi:4:6: data y has a dimension D, one entry per document"},
	} {
		d := derivePredictive(t, "m.vi", c.src)
		if c.name == "logreg" {
			d = derivePredictive(t, "logreg.vi", c.src)
		}
		if d.Predictive != nil || !strings.Contains(d.NoPredictiveReason, c.want) ||
			!strings.Contains(d.NoPredictiveReason, "\thint: held-out evaluation needs") {
			t.Errorf("%s: predictive %v, reason %q; want one containing %q", c.name, d.Predictive, d.NoPredictiveReason, c.want)
		}
	}
}
