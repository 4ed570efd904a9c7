package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// Literal sizes are sizes wherever a model writes them: a range end
// (`in 1..3`) that a Categorical's outcomes take, a dimension (real[3],
// simplex[3]), a loop's end (`for k in 1:3`), eye(3)'s argument. `check`
// and `gen` accept each model below; before, the first four failed with
// "internal error … codegen: unknown size 3" or a false model error
// (issue 38).
func TestCheckLiteralSizes(t *testing.T) {
	dir := t.TempDir()
	x := "data x : real[N]\n"
	for name, body := range map[string]string{
		"range3": x + "data y : int[N] in 1..3\nlatent w : real nonconjugate laplace\nw ~ Normal(0, 1)\nfor n in 1:N {\n  y[n] ~ Categorical(softmax([0, x[n] * w, 1]))\n}\n",
		"range2": x + "data y : int[N] in 1..2\nlatent w : real nonconjugate laplace\nw ~ Normal(0, 1)\nfor n in 1:N {\n  y[n] ~ Categorical(softmax([0, x[n] * w]))\n}\n",
		"append": x + "data y : int[N] in 1..3\nlatent b : real[2] nonconjugate laplace\nb ~ Normal(0, 1)\nfor n in 1:N {\n  y[n] ~ Categorical(softmax(append(b, x[n])))\n}\n",
		"latentz": x + "latent z : int[N] in 1..2 conjugate\nlatent m : real conjugate\nm ~ Normal(0, 10)\nfor n in 1:N {\n" +
			"  z[n] ~ Categorical(softmax([0, 1]))\n  x[n] ~ Normal(m * z[n], 1)\n}\n",
		"index":   x + "data y : int[N] in 1..3\nlatent mu : real[3] conjugate\nmu ~ Normal(0, 10)\nfor n in 1:N {\n  x[n] ~ Normal(mu[y[n]], 1)\n}\n",
		"loop":    x + "latent mu : real[3] nonconjugate laplace\nfor k in 1:3 {\n  mu[k] ~ Normal(0, 10)\n}\nfor n in 1:N {\n  x[n] ~ Normal(mu[1] + mu[2] * mu[3], 1)\n}\n",
		"simplex": "data y : int[N] in 1..3\nlatent p : simplex[3] conjugate\np ~ Dirichlet(1)\nfor n in 1:N {\n  y[n] ~ Categorical(p)\n}\n",
		"eye":     "data v : real[N, 3]\nconst m0 : real[3] = 0\nconst S : cov[3] = 2 * eye(3)\nlatent b : real[3] nonconjugate laplace\nb ~ MvNormal(m0, S)\nfor n in 1:N {\n  v[n] ~ MvNormal(b, S)\n}\n",
	} {
		vi := write(t, dir, name+".vi", "model "+name+"\nsize N\n"+body)
		for _, args := range [][]string{{"check", vi}, {"gen", "-o", filepath.Join(dir, name), vi}} {
			var stdout, stderr bytes.Buffer
			if code := run(args, &stdout, &stderr); code != 0 || strings.Contains(stderr.String(), "internal error") {
				t.Errorf("%s %s: exit %d: %s", args[0], name, code, stderr.String())
			}
		}
	}
}
