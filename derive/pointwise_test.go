package derive

import (
	"strings"
	"testing"

	"github.com/vigen-go/vigen/spec"
)

// Predictions are derived for models whose observations read shared
// Gaussian latents, with each observation's log density and mean as the
// family's table entry gives them; the others say why they have none.
func TestPredictionsOfExamples(t *testing.T) {
	for _, c := range []struct {
		name      string
		lp, mean  string // substrings of the printed expressions
		omissible string
		reason    string // for a model without predictions
	}{
		{name: "logreg", lp: "softplus(", mean: "logistic(", omissible: "y"},
		{name: "hierlogreg", lp: "theta[group[n],", mean: "logistic(", omissible: "y"},
		{name: "schoolreg", lp: "exp(sigma)", mean: "a[school[n]]", omissible: "score"},
		{name: "ar2", lp: "y[t-1]", mean: "beta1·y[t-1]"},
		{name: "eightschools", reason: "which has one value per J, the rows of the observed data"},
		{name: "pumps", reason: "which has one value per N, the rows of the observed data"},
		{name: "lda", reason: "w is a bag"},
		{name: "ctm", reason: "held-out evaluation"},
	} {
		d := derivePredictive(t, c.name+".vi", readExample(t, c.name))
		p := d.Predictions
		if c.reason != "" {
			if p != nil || !strings.Contains(d.NoPredictionsReason, c.reason) || !strings.Contains(d.NoPredictionsReason, c.name+".vi:") {
				t.Errorf("%s: predictions %v, reason %q; want none because %q, positioned", c.name, p, d.NoPredictionsReason, c.reason)
			}
			continue
		}
		if p == nil || len(p.Stmts) != 1 {
			t.Errorf("%s: no predictions: %s", c.name, d.NoPredictionsReason)
			continue
		}
		s := p.Stmts[0]
		if lp := String(s.LogLik); !strings.Contains(lp, c.lp) || len(s.Free) != 1 {
			t.Errorf("%s: log density %s over %v, want it to read %s, one free index", c.name, lp, s.Free, c.lp)
		}
		if s.Mean == nil || !strings.Contains(String(s.Mean), c.mean) {
			t.Errorf("%s: mean %v, want it to read %s", c.name, s.Mean, c.mean)
		}
		var om []string
		for _, v := range p.Omissible {
			om = append(om, v.Name)
		}
		if strings.Join(om, ",") != c.omissible {
			t.Errorf("%s: omissible %v, want %q", c.name, om, c.omissible)
		}
	}
}

// The observation's log density is the family's, at the point: for a
// Poisson count with a log link, y·η − exp(η) − log Γ(y + 1); the mean is
// exp(η). An elementwise vector target makes each element an observation.
// A `factor` statement reading data, and a mixture's per-row latent, leave
// the model without predictions.
func TestPointwiseForms(t *testing.T) {
	d := derivePredictive(t, "pois.vi", `model pois
size N
data y : int[N]
data x : real[N]
latent b : real nonconjugate laplace
b ~ Normal(0, 1)
y ~ PoissonLog(b * x)
`)
	if d.Predictions == nil {
		t.Fatal(d.NoPredictionsReason)
	}
	s := d.Predictions.Stmts[0]
	lp, mean := String(s.LogLik), String(s.Mean)
	if len(s.Free) != 1 || !strings.Contains(lp, "lgamma(") || !strings.Contains(lp, "exp(") || mean != "exp(b·x["+s.Free[0].Name+"])" {
		t.Errorf("log density %s, mean %s over %v", lp, mean, s.Free)
	}
	for _, c := range []struct{ src, reason string }{
		{`model f
size N
data y : real[N]
latent m : real nonconjugate laplace
m ~ Normal(0, 1)
y ~ Normal(m, 1)
factor -0.5 * dot(y, y)
`, "this `factor` statement reads the data y"},
		{`model mix
size N, K
data y : real[N]
latent pi : simplex[K] conjugate
latent mu : real[K] conjugate
latent z : int[N] in 1..K conjugate
pi ~ Dirichlet(1)
mu ~ Normal(0, 10)
for n in 1:N {
  z[n] ~ Categorical(pi)
  y[n] ~ Normal(mu[z[n]], 1)
}
`, "the latent z, which has one value per N, the rows of the observed data"},
		{`model conj
size N
data y : real[N]
latent lam : real<lower=0> conjugate
lam ~ Gamma(1, 1)
for n in 1:N {
  y[n] ~ Normal(0, 1 / sqrt(lam))
}
`, "the latent lam, which has no Gaussian factor"},
	} {
		d := derivePredictive(t, "m.vi", c.src)
		if d.Predictions != nil || !strings.Contains(d.NoPredictionsReason, c.reason) {
			t.Errorf("predictions %v, reason %q; want none because %q", d.Predictions, d.NoPredictionsReason, c.reason)
		}
	}
}

// Observations that predictions cannot place are refused with the reason.
func TestPointwiseRefusals(t *testing.T) {
	for _, c := range []struct{ src, reason string }{
		{`model corner
size N, K
data y : real[N, K]
latent m : real nonconjugate laplace
m ~ Normal(0, 1)
for k in 1:K {
  y[1, k] ~ Normal(m, 1)
}
`, "y[…] is indexed otherwise than by the loops around it"},
		{`model cube
size N, K, J
data y : real[N, K, J]
latent m : real nonconjugate laplace
m ~ Normal(0, 1)
for n in 1:N {
  for k in 1:K {
    y[n, k] ~ Normal(m, 1)
  }
}
`, "the observations of y have 3 indices; predictions handle at most 2"},
		{`model inner
size N, T
data y : real[N, T]
latent m : real nonconjugate laplace
m ~ Normal(0, 1)
for n in 1:N {
  for t in 2:T {
    y[n, t] ~ Normal(m * y[n, t-1], 1)
  }
}
`, "the inner loop of this statement runs over part of its size"},
		{`model none
latent m : real nonconjugate laplace
m ~ Normal(0, 1)
`, "model none has no observed data drawn by a `~` statement"},
	} {
		m, err := spec.Load("m.vi", []byte(c.src))
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		d, err := Derive(m)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if d.Predictions != nil || !strings.Contains(d.NoPredictionsReason, c.reason) || !strings.Contains(d.NoPredictionsReason, "m.vi:") {
			t.Errorf("predictions %v, reason %q; want none because %q", d.Predictions, d.NoPredictionsReason, c.reason)
		}
	}
}
