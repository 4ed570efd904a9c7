package codegen

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/golden"
)

const flatHeadVI = `model flat
size N, P
data y : int[N, P]
latent s : real<lower=0>[P] nonconjugate laplace
`

const flatBodyVI = `for n in 1:N {
  y[n] ~ Poisson(s)
}
`

var (
	flatPrior = slowTest("TestEndToEndFlatPriorJacobian")
	flatCase  = flatPrior.fits("flat", flatHeadVI+flatBodyVI, ", Tol: 1e-14")
	// with factor -sum(s), and with s ~ Gamma(1, 1)
	flatFactorCase = flatPrior.fits("flat", flatHeadVI+"factor -sum(s)\n"+flatBodyVI, ", Tol: 1e-14")
	flatGammaCase  = flatPrior.fits("flat", flatHeadVI+"s ~ Gamma(1, 1)\n"+flatBodyVI, ", Tol: 1e-14")
	flatNoteCase   = flatPrior.fits("flat", flatHeadVI+flatBodyVI, "")
)

// A positive latent s : real<lower=0>[P] with no `~` (Stan's improper flat
// prior on s) and Poisson children is fitted on u = log s with its
// log-Jacobian u: f(u) = Y u − N e^u + u, whose Laplace fit is closed
// form, e^û = (Y + 1)/N and Σ = 1/(Y + 1). With `factor -sum(s)` added
// (an Exponential(1) density on s), e^û = (Y + 1)/(N + 1), and the fit and
// the ELBO equal those of the same model written with s ~ Gamma(1, 1),
// whose log density is −s. A dropped Jacobian gives e^û = Y/N. The result
// of a model with a flat prior says that its ELBO is defined only up to a
// constant.
func TestEndToEndFlatPriorJacobian(t *testing.T) {
	golden.SlowTier(t)
	y := [][]int{{1, 4}, {0, 2}, {3, 5}}
	Y := []float64{4, 11}
	const N = 3
	data, _ := json.Marshal(map[string]any{"N": N, "P": 2, "y": y})
	laplace := func(res []resultJSON) resultJSON {
		for _, r := range res {
			if r.Method == "laplace" {
				return r
			}
		}
		t.Fatal("no laplace result")
		return resultJSON{}
	}
	check := func(what string, r resultJSON, n float64) {
		t.Helper()
		q := r.Latent["s"]
		for i := range Y {
			if want := math.Log((Y[i] + 1) / n); math.Abs(q.Mean[i]-want) > 1e-9 {
				t.Errorf("%s: mean of u[%d] = %.12g, want log((Y+1)/%g) = %.12g", what, i, q.Mean[i], n, want)
			}
			if want := 1 / (Y[i] + 1); math.Abs(q.Cov[i][i]-want) > 1e-9 {
				t.Errorf("%s: var of u[%d] = %.12g, want 1/(Y+1) = %.12g", what, i, q.Cov[i][i], want)
			}
		}
	}
	type withNote struct {
		Method   string `json:"method"`
		ELBONote string `json:"elbo_note"`
	}
	flat := flatCase.results(t, data)
	check("flat prior", laplace(flat), N)
	withFactor := laplace(flatFactorCase.results(t, data))
	check("flat prior and factor −Σs", withFactor, N+1)
	gamma := laplace(flatGammaCase.results(t, data))
	check("s ~ Gamma(1, 1)", gamma, N+1)
	a, b := withFactor.ELBO[len(withFactor.ELBO)-1], gamma.ELBO[len(gamma.ELBO)-1]
	if math.Abs(a-b) > 1e-10*math.Abs(b) {
		t.Errorf("ELBO with the flat prior and factor −Σs %.14g, with s ~ Gamma(1, 1) %.14g", a, b)
	}
	// the note, in the JSON of the result
	out := flatNoteCase.run(t, data)
	var notes []withNote
	if err := json.Unmarshal(out, &notes); err != nil {
		t.Fatal(err)
	}
	for _, n := range notes {
		if !strings.Contains(n.ELBONote, "improper flat prior on s") || !strings.Contains(n.ELBONote, "up to a constant") {
			t.Errorf("%s: elbo_note %q", n.Method, n.ELBONote)
		}
	}
}
