package codegen

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/golden"
)

// Online EM (svi_params.go): the statistics UnitParamStats adds, summed over
// every unit and passed to ParamStep, must give the batch M-step's params
// on the same state, with the same options (smoothing, shrinkage, priors),
// and ParamStep must refresh the values derived from the params as
// caModel.MStep does (the ELBOs after the two agree).

// flatNumbers lists the numbers of a decoded JSON value in a fixed order
// (object keys sorted by encoding/json's map decoding into a sorted walk).
func flatNumbers(prefix string, v any, out map[string]float64) {
	switch x := v.(type) {
	case float64:
		out[prefix] = x
	case []any:
		for i, e := range x {
			flatNumbers(prefix+"["+itoa(i)+"]", e, out)
		}
	case map[string]any:
		for k, e := range x {
			flatNumbers(prefix+"."+k, e, out)
		}
	}
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

// ldaMAPVI has a counts M-step with a rest (the Dirichlet prior, outside
// the unit plate), a gaussian M-step on data drawn in the unit plate, and
// one on data drawn in a plate of its own (fixed statistics).
const ldaMAPVI = `model ldamap
size D, K, V, P, J
data w : bag[D] of 1..V
data y : real[D, P]
data x : real[J, P]
const alpha : real = 0.5
const eta : real = 1.5
param beta : simplex[K, V]
param mu : real[P]
param S : cov[P]
param nu : real[P]
param T : cov[P]
latent theta : simplex[D, K] conjugate
latent z : int[D, w] in 1..K conjugate
for k in 1:K {
  beta[k] ~ Dirichlet(eta)
}
for j in 1:J {
  x[j] ~ MvNormal(nu, T)
}
for d in 1:D {
  theta[d] ~ Dirichlet(alpha)
  y[d] ~ MvNormal(mu, S)
  for n in w[d] {
    z[d, n] ~ Categorical(theta[d])
    w[d, n] ~ Categorical(beta[z[d, n]])
  }
}
`

func ldaMAPData() []byte {
	rng := rand.New(rand.NewPCG(5, 6))
	const D, K, V, P, J = 40, 3, 12, 2, 15
	var docs [][][2]int
	y := make([][]float64, D)
	for d := range D {
		var doc [][2]int
		for v := 1; v <= V; v++ {
			if rng.IntN(3) == 0 {
				doc = append(doc, [2]int{v, 1 + rng.IntN(4)})
			}
		}
		if len(doc) == 0 {
			doc = append(doc, [2]int{1 + rng.IntN(V), 2})
		}
		docs = append(docs, doc)
		y[d] = []float64{rng.NormFloat64() + 1, 0.5*rng.NormFloat64() - 2}
	}
	x := make([][]float64, J)
	for j := range x {
		x[j] = []float64{rng.NormFloat64(), rng.NormFloat64() + 3}
	}
	b, _ := json.Marshal(map[string]any{"D": D, "K": K, "V": V, "P": P, "J": J, "w": docs, "y": y, "x": x})
	return b
}

// oemCases, by model name and Options, compare online EM's M-step with the
// batch one through a hook compiled into the generated package (it
// reaches the unexported adapter).
var oemCases = func() map[string]*e2eCase {
	test := slowTest("TestEndToEndOnlineEMSumsToBatchMStep")
	cases := map[string]*e2eCase{}
	for _, m := range []struct{ name, src, file, opts string }{
		{"ctm", "", "../examples/ctm/ctm.vi", "Smoothing: 0.5, Shrinkage: 0.2"},
		{"ctm", "", "../examples/ctm/ctm.vi", ""},
		{"hierlogreg", "", "../examples/hierlogreg/hierlogreg.vi", "Shrinkage: 0.1"},
		{"ldamap", ldaMAPVI, "", "Smoothing: 0.01, Shrinkage: 0.3"},
	} {
		c := test.driver(m.name, m.src, "online_em_vs_batch_mstep.go", "OPTS", m.opts).hook("oem_hook.go", "online_em_vs_batch_mstep.go")
		if m.file != "" {
			c.srcFile(m.file)
		}
		cases[m.name+"/"+m.opts] = c
	}
	return cases
}()

func TestEndToEndOnlineEMSumsToBatchMStep(t *testing.T) {
	golden.SlowTier(t)
	readB := func(p string) []byte {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	cases := []struct {
		name  string // and opts: of oemCases
		data  []byte
		opts  string
		stats int
		exact bool // no counts rest: the additions are the batch M-step's, in its order
	}{
		// counts (beta) and gaussian on a per-unit latent (mu0, Sigma0)
		{"ctm", readB("../examples/ctm/data.json"), "Smoothing: 0.5, Shrinkage: 0.2", 3*24 + 1 + 3 + 9, true},
		{"ctm", readB("../examples/ctm/data.json"), "", 3*24 + 1 + 3 + 9, true},
		// gaussian on a per-unit latent read through a grouping, MvNormalPrec
		// with a Normal prior on the mean and a Wishart prior (coupled)
		{"hierlogreg", readB("../examples/hierlogreg/data.json"), "Shrinkage: 0.1", 1 + 3 + 9, true},
		{"ldamap", ldaMAPData(), "Smoothing: 0.01, Shrinkage: 0.3", 3*12 + 1 + 2 + 4, false},
	}
	for _, c := range cases {
		t.Run(c.name+"/"+c.opts, func(t *testing.T) {
			out := oemCases[c.name+"/"+c.opts].run(t, c.data)
			var r struct {
				Batch, Online         any
				BatchELBO, OnlineELBO float64
				Stats                 int
			}
			if err := json.Unmarshal(out, &r); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if r.Stats != c.stats {
				t.Errorf("ParamStats = %d, want %d", r.Stats, c.stats)
			}
			batch, online := map[string]float64{}, map[string]float64{}
			flatNumbers("", r.Batch, batch)
			flatNumbers("", r.Online, online)
			if len(batch) == 0 || len(batch) != len(online) {
				t.Fatalf("params: batch %d numbers, online %d", len(batch), len(online))
			}
			worst := 0.0
			for k, b := range batch {
				o, ok := online[k]
				if !ok {
					t.Fatalf("online params lack %s", k)
				}
				rel := math.Abs(o-b) / math.Max(math.Abs(b), 1e-300)
				if o == b {
					rel = 0
				}
				if rel > 1e-12 || math.IsNaN(o) {
					t.Errorf("%s: online EM %v, batch M-step %v (relative difference %.3g)", k, o, b, rel)
				}
				if c.exact && o != b {
					t.Errorf("%s: online EM %v, batch M-step %v: not bit-for-bit", k, o, b)
				}
				worst = math.Max(worst, rel)
			}
			if d := math.Abs(r.OnlineELBO - r.BatchELBO); !(d <= 1e-9*math.Abs(r.BatchELBO)) {
				t.Errorf("ELBO after online EM's step %v, after the batch M-step %v: the derived values (computeAux) differ", r.OnlineELBO, r.BatchELBO)
			}
			t.Logf("%d params, largest relative difference %.3g; ELBO %v vs %v", len(batch), worst, r.OnlineELBO, r.BatchELBO)
		})
	}
}

// A param with a numeric M-step (Newton's method) has no online EM: the
// generated NoSVI names it and its position.
func TestOnlineEMNumericMStepReason(t *testing.T) {
	const src = `model numsvi
size D, Q, K
data t : real[D, Q]
data y : real[D]
data pi : simplex[K]
data c : real[K]
const s : real = 0.5
param w : real[Q]
latent z : int[D] in 1..K conjugate
for d in 1:D {
  z[d] ~ Categorical(pi)
  y[d] ~ Normal(c[z[d]] + dot(t[d], w), s)
}
`
	code := generatedSource(t, "numsvi", src)
	if !strings.Contains(code, "func (a *caModel) NoSVI() string") {
		t.Fatalf("no NoSVI in the generated code")
	}
	want := "numsvi.vi:8:7: param w is estimated by Newton's method"
	if !strings.Contains(code, want) {
		i := strings.Index(code, "NoSVI() string")
		t.Errorf("NoSVI does not say %q:\n%s", want, code[i:min(len(code), i+400)])
	}
	if strings.Contains(code, "UnitParamStats") {
		t.Errorf("a model without online EM got UnitParamStats")
	}
}

// A simplex param with one row per unit (pLSI's document mixtures) is not
// shared by the units: online EM does not estimate it, and NoSVI says so.
func TestOnlineEMPerUnitParamReason(t *testing.T) {
	const src = `model plsi
size D, K, V
data w : bag[D] of 1..V
param pi : simplex[D, K]
param beta : simplex[K, V]
latent z : int[D, w] in 1..K conjugate
for d in 1:D {
  for n in w[d] {
    z[d, n] ~ Categorical(pi[d])
    w[d, n] ~ Categorical(beta[z[d, n]])
  }
}
`
	code := generatedSource(t, "plsi", src)
	want := "plsi.vi:4:7: param pi has one row per unit of `for d in 1:D`"
	if !strings.Contains(code, want) {
		i := strings.Index(code, "NoSVI() string")
		t.Errorf("NoSVI does not say %q:\n%s", want, code[max(i, 0):min(len(code), max(i, 0)+400)])
	}
	if strings.Contains(code, "UnitParamStats") {
		t.Errorf("a model without online EM got UnitParamStats")
	}
}
