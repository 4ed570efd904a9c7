package derive

import (
	"strings"
	"testing"

	"github.com/vigen-go/vigen/spec"
)

// Constructs derive cannot handle are errors at their source position.
func TestUnsupportedIsPositioned(t *testing.T) {
	head := "model m\nsize N, P, K\ndata x : real[N, P]\ndata y : real[N]\nlatent theta : real[P] nonconjugate laplace\ntheta ~ Normal(0, 1)\n"
	for _, c := range []struct{ body, want string }{
		{"for n in 1:N {\n  y[n] ~ Normal(dot(x[n], theta) + log(-1), 1)\n}\n", "m.vi:8:36: log(-1) is outside the domain of log"},
		{"for n in 1:N {\n  y[n] ~ Normal(dot(x[n], theta) / 0, 1)\n}\n", "m.vi:8:34: division by zero"},
		// a Dirichlet latent inside a nonlinear function: no rule, and Taylor is for Gaussians
		{"latent z : simplex[P] conjugate\nz ~ Dirichlet(1)\nfor n in 1:N {\n  y[n] ~ Normal(dot(x[n], theta) * sum(exp(z)), 1)\n}\n", "no rule for this function of z under q = Dirichlet"},
	} {
		m, err := spec.Load("m.vi", []byte(head+c.body))
		if err != nil {
			t.Fatalf("%s: %v", c.body, err)
		}
		_, err = Derive(m)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
}

// A per-unit latent read outside its plate must come through one grouping
// index g[n] of the statement's own plate (group.go).
func TestGroupedReadsArePositioned(t *testing.T) {
	head := "model m\nsize M, N, P\ndata x : real[N, P]\ndata y : real[N]\ndata g : int[N] in 1..M\ndata h : int[N] in 1..M\n" +
		"latent theta : real[M, P] nonconjugate laplace\nfor m in 1:M {\n  theta[m] ~ Normal(0, 1)\n}\n"
	for _, c := range []struct{ body, want string }{
		{"for n in 1:N {\n  y[n] ~ Normal(dot(x[n], theta[g[n]]) + dot(x[n], theta[h[n]]), 1)\n}\n",
			"m.vi:12:52: this statement reads theta through both g and h"},
		{"data u : real[M]\nfor n in 1:N {\n  y[n] ~ Normal(dot(x[n], theta[g[n]]) + h[n], 1)\n}\nfor k in 1:M {\n  u[k] ~ Normal(sum(theta[k]), 1)\n}\n",
			"m.vi:16:21: this statement reads theta inside `for k in 1:M`, but the units of theta are drawn in `for m in 1:M`"},
		{"data z : real[N, M]\nfor n in 1:N {\n  y[n] ~ Normal(dot(x[n], theta[g[n]]) + h[n], 1)\n  for m in 2:M {\n    z[n, m] ~ Normal(sum(theta[m]), 1)\n  }\n}\n",
			"m.vi:15:26: this statement reads theta inside `for m in 2:M`, an inner loop over part of its units"},
	} {
		m, err := spec.Load("m.vi", []byte(head+c.body))
		if err != nil {
			t.Fatalf("%s: %v", c.body, err)
		}
		_, err = Derive(m)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
}
