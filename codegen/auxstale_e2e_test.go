package codegen

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// A param read through log(b[h[n]]) (an aux table of log b) and a second
// param whose M-step reads it.
const auxStaleVI = `model lg2
size N, G, H
data g : int[N] in 1..G
data h : int[N] in 1..H
data y : real[N]
param b : real[H]
param a : real[G]
latent mu : real nonconjugate laplace
mu ~ Normal(0, 1)
for n in 1:N {
  y[n] ~ Normal(mu + a[g[n]] * log(b[h[n]]), 1)
}
`

var auxStaleCase = fastTest("TestMStepReadsTheParamsAnEarlierStepSet").driver("lg2", auxStaleVI, "mstep_after_one_iteration.go")

// TestMStepReadsTheParamsAnEarlierStepSet: one M-step from a result sets b
// first, then a; a's step must see the new b through the log-b aux table.
// Given b and q(mu) = N(m, s²), a_g = Σ_{n∈g} (y_n − m) L_n / Σ_{n∈g} L_n²
// with L_n = log b[h_n]: computed here from the returned b and compared
// with the returned a. (With log b recomputed only after the whole M-step,
// a's step read the old b.)
func TestMStepReadsTheParamsAnEarlierStepSet(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const n, G, H = 200, 3, 4
	g, h, y := make([]int, n), make([]int, n), make([]float64, n)
	for i := range y {
		g[i], h[i] = 1+rng.IntN(G), 1+rng.IntN(H)
		y[i] = 0.3 + float64(g[i])*math.Log(float64(h[i])+0.5) + 0.3*rng.NormFloat64()
	}
	data, _ := json.Marshal(map[string]any{"g": g, "h": h, "y": y, "G": G, "H": H,
		"b": []float64{3, 3, 3, 3}, "a": []float64{1, 1, 1}})
	var out struct {
		Mu   float64
		A, B []float64
	}
	if err := json.Unmarshal(auxStaleCase.run(t, data), &out); err != nil {
		t.Fatal(err)
	}
	num, den := make([]float64, G), make([]float64, G)
	for i := range y {
		l := math.Log(out.B[h[i]-1])
		num[g[i]-1] += (y[i] - out.Mu) * l
		den[g[i]-1] += l * l
	}
	for k := range num {
		if want := num[k] / den[k]; math.Abs(out.A[k]-want) > 1e-6*math.Max(1, math.Abs(want)) {
			t.Errorf("a[%d] = %.9g, the optimum given the M-step's b %v is %.9g", k+1, out.A[k], out.B, want)
		}
	}
	if b := out.B; math.Abs(b[0]-3) < 1e-9 && math.Abs(b[1]-3) < 1e-9 {
		t.Errorf("b did not move from its start (%v): the test shows nothing", b)
	}
}

// TestMulAddScatterTarget: a row accumulation whose target row is chosen by
// data (a rate matrix's row z[n]) prints as MulAddFMA on that row.
func TestMulAddScatterTarget(t *testing.T) {
	src := generatedSource(t, "scat", `model scat
size N, K, P
data z : int[N] in 1..K
data c : real<lower=0>[N, P]
data e : real<lower=0>[N, P]
latent lam : real<lower=0>[K, P] conjugate
for k in 1:K {
  for p in 1:P {
    lam[k, p] ~ Gamma(1, 1)
  }
}
for n in 1:N {
  for p in 1:P {
    factor -lam[z[n], p] * c[n, p] * e[n, p]
  }
}
`)
	if !strings.Contains(src, "runtime.MulAddFMA(rate[(z[n]-1)*P:][:P], ") {
		t.Errorf("the scattered row accumulation is not a MulAddFMA on row z[n]:\n%s", grepLines(src, "rate["))
	}
}
