package codegen

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"regexp"
	"testing"
)

// Group means with data-given groups: the conjugate update of mu[k, p]
// scatters into row z[n], and its precision Σ_n' δ(z[n'], k) must count
// group k's points, not every point (a substitution k := z[n] that
// captured the sum's own n gave N).
const groupMeansVI = `model grpmean
size N, K, P
data z : int[N] in 1..K
data x : real[N, P]
data s : real<lower=0>[P]
latent mu : real[K, P] conjugate
for k in 1:K {
  for p in 1:P {
    mu[k, p] ~ Normal(0, 10)
  }
}
for n in 1:N {
  for p in 1:P {
    x[n, p] ~ Normal(mu[z[n], p], s[p])
  }
}
`

var groupMeansCase = fastTest("TestGroupMeansAreExact").fits("grpmean", groupMeansVI, "")

// TestGroupMeansAreExact: the posterior of each mu[k, p] is Normal with
// precision 1/100 + n_k/s_p² and mean (Σ_{n∈k} x_np/s_p²)/precision,
// groups of 90 and 10 points.
func TestGroupMeansAreExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const n, K, P = 100, 2, 2
	z := make([]int, n)
	x := make([][]float64, n)
	s := []float64{0.5, 2}
	for i := range x {
		z[i] = 1
		if i >= 90 {
			z[i] = 2
		}
		x[i] = []float64{float64(3*z[i]-5) + s[0]*rng.NormFloat64(), -float64(z[i]) + s[1]*rng.NormFloat64()}
	}
	data, _ := json.Marshal(map[string]any{"z": z, "x": x, "s": s, "K": K})
	// each group's count is a vector computed once and read at z[n], not
	// a pass over the data for every point
	k := kernelOf(generatedSource(t, "grpmean", groupMeansVI), "MuNatural")
	count := regexp.MustCompile(`(t\d+)\[z\[n\]-1\] \+= 1\.0`).FindStringSubmatch(k)
	if count == nil || !regexp.MustCompile(regexp.QuoteMeta(count[1]+"[z[n]-1]")+`\)`).MatchString(k) {
		t.Errorf("MuNatural does not count the groups once:\n%s", k)
	}
	res := groupMeansCase.results(t, data)
	for _, r := range res {
		mu := r.Latent["mu"]
		mean, sd := mu.Params["mean"], mu.Params["sd"]
		if len(mean) != K*P || len(sd) != K*P {
			t.Fatalf("%s: q(mu) params %v", r.Method, mu.Params)
		}
		for k := 0; k < K; k++ {
			for p := 0; p < P; p++ {
				prec, sum := 0.01, 0.0
				for i := range x {
					if z[i] == k+1 {
						prec += 1 / (s[p] * s[p])
						sum += x[i][p] / (s[p] * s[p])
					}
				}
				if got, want := mean[k*P+p], sum/prec; math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
					t.Errorf("%s: E[mu[%d,%d]] = %.12g, exact %.12g", r.Method, k+1, p+1, got, want)
				}
				if got, want := sd[k*P+p], 1/math.Sqrt(prec); math.Abs(got-want) > 1e-9*want {
					t.Errorf("%s: sd(mu[%d,%d]) = %.12g, exact %.12g", r.Method, k+1, p+1, got, want)
				}
			}
		}
	}
}
