package codegen

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/spec"
)

// regLiteralVI is a linear regression whose coefficients and scale are of
// literal sizes: its statements are point terms (derive/point.go), and the
// scale's objective reads the coefficients' covariances times data-only
// sums (Σ_n x[n]², Σ_n x[n]), which its kernels take from computeAux
// (pointaux.go).
const regLiteralVI = `model reglit
size N
data x : real[N]
data y : real[N]
latent b : real[2] nonconjugate laplace
latent s : real<lower=0>[1] nonconjugate laplace
b ~ Normal(0, 5)
s ~ HalfNormal(2)
for n in 1:N {
  y[n] ~ Normal(b[1] + b[2] * x[n], s[1])
}
`

// regSizedVI is regLiteralVI with sizes K = 2 and One = 1 from the data:
// the same model, whose statements stay index-notation trees.
var regSizedVI = strings.NewReplacer("model reglit", "model regsized", "size N", "size N, K = 2, One = 1",
	"real[2]", "real[K]", "real<lower=0>[1]", "real<lower=0>[One]").Replace(regLiteralVI)

var (
	pointSums      = fastTest("TestPointTermsFitAsTrees")
	regLiteralCase = literalCase(pointSums, "reglit", regLiteralVI)
	regSizedCase   = literalCase(pointSums, "regsized", regSizedVI)
)

// TestPointTermsFitAsTrees: the regression fitted through point terms,
// with its data-only sums computed once per fit, and through trees, gives
// the same posterior and the same ELBO at every iteration. A term left out
// of a loop, or a sum of the wrong data, changes the fit.
func TestPointTermsFitAsTrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 200
	x, y := make([]float64, n), make([]float64, n)
	for i := range x {
		x[i] = 1 + rng.NormFloat64()
		y[i] = 0.5 + 2*x[i] + 0.7*rng.NormFloat64()
	}
	data := map[string]any{"x": x, "y": y}
	lit, _ := runLiteral(t, regLiteralCase, []literalRun{{Data: data}}, nil)
	sized, _ := runLiteral(t, regSizedCase, []literalRun{{Data: data}}, nil)
	if k := compareJSONNumbers(t, "latent", lit[0]["latent"], sized[0]["latent"], 1e-10); k < 10 {
		t.Errorf("compared %d numbers of the latents, want the means, covariances and constrained summaries", k)
	}
	compareJSONNumbers(t, "elbo", lit[0]["elbo"], sized[0]["elbo"], 1e-10)
	if lit[0]["iterations"] != sized[0]["iterations"] {
		t.Errorf("%v iterations through point terms, %v through trees", lit[0]["iterations"], sized[0]["iterations"])
	}
}

// TestRegressionSumsAreHoisted: the scale's kernels of regLiteralVI read
// Σ_n x[n]·x[n] and Σ_n x[n] from computeAux instead of summing them in
// their loops (TestPointTermsFitAsTrees checks the fit they give).
func TestRegressionSumsAreHoisted(t *testing.T) {
	m, err := spec.Load("reglit.vi", []byte(regLiteralVI))
	if err != nil {
		t.Fatal(err)
	}
	files, err := generateModel(m, Options{})
	if err != nil {
		t.Fatal(err)
	}
	src := string(files[0].Src)
	for _, want := range []string{"m.sumXSq = s", "m.sumX = s", "sumXSq := m.sumXSq"} {
		if !strings.Contains(src, want) {
			t.Errorf("the package lacks %q", want)
		}
	}
}
