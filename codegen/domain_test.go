package codegen

import (
	"bytes"
	"strings"
	"testing"
)

const domainsVI = `model doms
size N, K, One
data y : real[N]
data s : real[N]
data g : real[N]
data b : real[N]
data n : int[N]
data k : int[N]
const a : real = 2
const alpha : real[K] = 1
const r : real
latent mu : real[One] nonconjugate laplace
latent p : simplex[K] conjugate
mu ~ Normal(0, 1)
p ~ Dirichlet(alpha)
for i in 1:N {
  y[i] ~ Normal(sum(mu), s[i])
  g[i] ~ Gamma(a, r)
  b[i] ~ Beta(a, a)
  k[i] ~ Binomial(n[i], logistic(sum(mu)))
}
const lo : real = 0
const hi : real = 1
const c : real = 1
latent w : real<lower=lo, upper=hi> nonconjugate laplace
latent v : real<lower=log(c)> nonconjugate laplace
w ~ Uniform(lo, hi)
v ~ Normal(0, 1)
`

var domainsCase = fastTest("TestEndToEndDomains").driver("doms", domainsVI, "print_load_error.go").options(Options{})

// TestEndToEndDomains: data and consts given as constrained arguments, and
// data drawn from a distribution with a constrained support, are checked
// when the data are loaded; out of their domains they used to fit to
// not_finite.
func TestEndToEndDomains(t *testing.T) {
	good := map[string]string{"K": "2", "One": "1", "y": "[0.5, 1]", "s": "[1, 2]", "g": "[1, 3]", "b": "[0.5, 0.25]", "n": "[3, 0]", "k": "[1, 0]", "r": "1.5"}
	for _, c := range []struct{ key, value, want string }{
		{"", "", "<nil>"},
		{"s", "[1, 0]", `data "s"[2] = 0: it is the sd of Normal at doms.vi:17:26, which must be > 0`},
		{"g", "[-1, 3]", `data "g"[1] = -1: it is drawn from Gamma at doms.vi:18:3, which must be > 0`},
		{"b", "[0.5, 1]", `data "b"[2] = 1: it is drawn from Beta at doms.vi:19:3, which must be in (0, 1)`},
		{"a", "0", `const "a" = 0: it is the shape of Gamma at doms.vi:18:16, which must be > 0`},
		{"alpha", "[1, -2]", `const "alpha"[2] = -2: it is the alpha of Dirichlet at doms.vi:15:15, which must be > 0`},
		{"r", "-3", `const "r" = -3: it is the rate of Gamma at doms.vi:18:19, which must be > 0`},
		{"n", "[3, -1]", `data "n"[2] = -1: it is the n of Binomial at doms.vi:20:19, which must be ≥ 0`},
		// bounds that read consts are checked when the data give them
		{"hi", "0", "latent w (doms.vi:25:8): its bounds <lower=lo, upper=hi> are equal with the data's values, lower = 0 and upper = 0: the lower bound must be below the upper bound"},
		{"hi", "-0.5", "latent w (doms.vi:25:8): its bounds <lower=lo, upper=hi> are reversed with the data's values, lower = 0 and upper = -0.5: the lower bound must be below the upper bound"},
		{"c", "0", "latent v (doms.vi:26:8): its lower bound in <lower=log(c)> is -Inf with the data's values; a bound must be a finite number"},
	} {
		var sb strings.Builder
		sb.WriteString("{")
		sep := ""
		for _, key := range []string{"K", "One", "y", "s", "g", "b", "n", "k", "a", "alpha", "r", "hi", "c"} {
			v, ok := good[key]
			if key == c.key {
				v, ok = c.value, true
			}
			if ok {
				sb.WriteString(sep + `"` + key + `": ` + v)
				sep = ", "
			}
		}
		sb.WriteString("}")
		out := domainsCase.run(t, []byte(sb.String()))
		if got := string(bytes.TrimSpace(out)); got != c.want {
			t.Errorf("%s = %s: %s,\n want %s", c.key, c.value, got, c.want)
		}
	}
}
