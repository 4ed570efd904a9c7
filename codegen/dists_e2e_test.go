package codegen

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/vigen-go/vigen/golden"
)

// GLM likelihoods of issue 18 end to end: one regression vector beta read by
// a probit, a negative-binomial (known dispersion), an ordinal logistic and
// an ordinal probit (known cutpoints), a BernoulliLogit, a PoissonLog, a
// NegativeBinomialLog and a BinomialLogit likelihood. The Laplace fit must be
// the mode of the log posterior and the inverse of its negative Hessian
// there, computed here by a hand-written Newton from the families' first
// and second derivatives in the linear predictor, written out by hand.

const glmsVI = `model glms
size N, P, C
data x : real[N, P]
data probit : int[N] in 0..1
data nb : int[N]
data ordl : int[N]
data ordp : int[N]
data blogit : int[N] in 0..1
data plog : int[N]
data nblog : int[N]
data binl : int[N]
const phi : real = 2.5
const c : real[C]
latent beta : real[P] nonconjugate laplace
beta ~ Normal(0, 2)
for n in 1:N {
  probit[n] ~ Bernoulli(Phi(dot(x[n], beta)))
  nb[n] ~ NegativeBinomial(exp(dot(x[n], beta)), phi)
  ordl[n] ~ OrderedLogistic(dot(x[n], beta), c)
  ordp[n] ~ OrderedProbit(dot(x[n], beta), c)
  blogit[n] ~ BernoulliLogit(dot(x[n], beta))
  plog[n] ~ PoissonLog(dot(x[n], beta))
  nblog[n] ~ NegativeBinomialLog(dot(x[n], beta), phi)
  binl[n] ~ BinomialLogit(10, dot(x[n], beta))
}
`

// glmTerm returns d/du and d²/du² of one observation's log likelihood at
// linear predictor u.
type glmTerm func(u float64) (g, h float64)

func sigmoid(u float64) float64 { return 1 / (1 + math.Exp(-u)) }

// Φ, φ
func normCDF(u float64) float64 { return 0.5 * math.Erfc(-u/math.Sqrt2) }
func normPDF(u float64) float64 { return math.Exp(-u*u/2) / math.Sqrt(2*math.Pi) }

// ordinalTerm is the derivative pair of log(F(c_y − u) − F(c_{y−1} − u))
// for a distribution function F with density f and density derivative df.
func ordinalTerm(y int, c []float64, F, f, df func(float64) float64) glmTerm {
	return func(u float64) (float64, float64) {
		var p, dp, d2p float64 // p and its derivatives in u
		if y <= len(c) {
			a := c[y-1] - u
			p, dp, d2p = F(a), -f(a), df(a)
		} else {
			p = 1
		}
		if y > 1 {
			b := c[y-2] - u
			p, dp, d2p = p-F(b), dp+f(b), d2p-df(b)
		}
		g := dp / p
		return g, d2p/p - g*g
	}
}

var glmsCase = slowTest("TestEndToEndGLMLikelihoodsMatchNewton").fits("glms", glmsVI, "")

func TestEndToEndGLMLikelihoodsMatchNewton(t *testing.T) {
	golden.SlowTier(t)
	const n, p = 80, 3
	rng := rand.New(rand.NewPCG(18, 4))
	c := []float64{-1, 0.3, 1.4}
	const phi = 2.5
	truth := []float64{0.4, -0.6, 0.25}
	x := make([][]float64, n)
	lin := make([]float64, n)
	for i := range x {
		x[i] = make([]float64, p)
		for j := range x[i] {
			x[i][j] = rng.NormFloat64()
			lin[i] += x[i][j] * truth[j]
		}
	}
	ints := func(f func(i int) int) []int {
		out := make([]int, n)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	ordinal := func(i int, noise float64) int {
		y := 1
		for _, cc := range c {
			if lin[i]+noise > cc {
				y++
			}
		}
		return y
	}
	data := map[string]any{"x": x, "c": c,
		"probit": ints(func(i int) int { return b2i(lin[i]+rng.NormFloat64() > 0) }),
		"nb":     ints(func(i int) int { return rng.IntN(7) }),
		"ordl":   ints(func(i int) int { return ordinal(i, math.Log(1/rng.Float64()-1)) }),
		"ordp":   ints(func(i int) int { return ordinal(i, rng.NormFloat64()) }),
		"blogit": ints(func(i int) int { return b2i(rng.Float64() < sigmoid(lin[i])) }),
		"plog":   ints(func(i int) int { return rng.IntN(5) }),
		"nblog":  ints(func(i int) int { return rng.IntN(9) }),
		"binl":   ints(func(i int) int { return rng.IntN(11) }),
	}
	// every ordinal outcome, the ends included
	data["ordl"].([]int)[0], data["ordl"].([]int)[1] = 1, 4
	data["ordp"].([]int)[0], data["ordp"].([]int)[1] = 4, 1
	js, err := json.Marshal(data)
	if err != nil {
		t.Fatal(err)
	}
	dlogistic := func(a float64) float64 { s := sigmoid(a); return s * (1 - s) * (1 - 2*s) }
	dnormal := func(a float64) float64 { return -a * normPDF(a) }
	fpdf := func(a float64) float64 { s := sigmoid(a); return s * (1 - s) }
	var terms [][]glmTerm // per observation
	for i := 0; i < n; i++ {
		yp := float64(data["probit"].([]int)[i])
		nb := float64(data["nb"].([]int)[i])
		bl := float64(data["blogit"].([]int)[i])
		pl := float64(data["plog"].([]int)[i])
		nbl := float64(data["nblog"].([]int)[i])
		bn := float64(data["binl"].([]int)[i])
		negbin := func(y float64) glmTerm {
			// y u − (y+φ) log(e^u + φ)
			return func(u float64) (float64, float64) {
				e := math.Exp(u)
				return y - (y+phi)*e/(e+phi), -(y + phi) * phi * e / ((e + phi) * (e + phi))
			}
		}
		terms = append(terms, []glmTerm{
			// y log Φ(u) + (1−y) log Φ(−u)
			func(u float64) (float64, float64) {
				m1, m0 := normPDF(u)/normCDF(u), normPDF(u)/normCDF(-u)
				return yp*m1 - (1-yp)*m0, -yp*m1*(u+m1) - (1-yp)*m0*(m0-u)
			},
			negbin(nb),
			ordinalTerm(data["ordl"].([]int)[i], c, sigmoid, fpdf, dlogistic),
			ordinalTerm(data["ordp"].([]int)[i], c, normCDF, normPDF, dnormal),
			func(u float64) (float64, float64) { s := sigmoid(u); return bl - s, -s * (1 - s) },
			func(u float64) (float64, float64) { return pl - math.Exp(u), -math.Exp(u) },
			negbin(nbl),
			func(u float64) (float64, float64) { s := sigmoid(u); return bn - 10*s, -10 * s * (1 - s) },
		})
	}
	// Newton on log p(beta | data), prior Normal(0, 2) on each entry
	beta := make([]float64, p)
	hess := mat.NewSymDense(p, nil)
	for it := 0; it < 100; it++ {
		g := mat.NewVecDense(p, nil)
		for a := 0; a < p; a++ {
			g.SetVec(a, -beta[a]/4)
			for b := 0; b <= a; b++ {
				v := 0.0
				if a == b {
					v = -1.0 / 4
				}
				hess.SetSym(a, b, v)
			}
		}
		for i := 0; i < n; i++ {
			u := 0.0
			for j := range beta {
				u += x[i][j] * beta[j]
			}
			for _, term := range terms[i] {
				gi, hi := term(u)
				for a := 0; a < p; a++ {
					g.SetVec(a, g.AtVec(a)+gi*x[i][a])
					for b := 0; b <= a; b++ {
						hess.SetSym(a, b, hess.At(a, b)+hi*x[i][a]*x[i][b])
					}
				}
			}
		}
		var step mat.VecDense
		if err := step.SolveVec(hess, g); err != nil {
			t.Fatal(err)
		}
		for a := range beta {
			beta[a] -= step.AtVec(a)
		}
	}
	var cov mat.Dense
	if err := cov.Inverse(hess); err != nil {
		t.Fatal(err)
	}
	cov.Scale(-1, &cov)
	r := glmsCase.results(t, js)[0] // the Laplace run
	if r.Method != "laplace" || !r.Converged {
		t.Fatalf("%s: not converged: %s", r.Method, r.Status)
	}
	g := r.Latent["beta"]
	for a := 0; a < p; a++ {
		if d := math.Abs(g.Mean[a] - beta[a]); d > 1e-8 {
			t.Errorf("mean[%d] = %.12g, Newton's mode %.12g", a, g.Mean[a], beta[a])
		}
		for b := 0; b < p; b++ {
			if d := math.Abs(g.Cov[a][b] - cov.At(a, b)); d > 1e-9 {
				t.Errorf("cov[%d][%d] = %.12g, −H⁻¹ = %.12g", a, b, g.Cov[a][b], cov.At(a, b))
			}
		}
	}
	t.Logf("mode %.6f, sd %.6f %.6f %.6f", beta, math.Sqrt(cov.At(0, 0)), math.Sqrt(cov.At(1, 1)), math.Sqrt(cov.At(2, 2)))
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

const ordinalRangeVI = `model ordr
size N, C
data u : real[N]
data y : int[N]
data k : int[N]
const c : real[C]
for n in 1:N {
  y[n] ~ OrderedLogistic(u[n], c)
  k[n] ~ NegativeBinomial(exp(u[n]), 2)
}
`

var ordinalRangeCase = slowTest("TestEndToEndOrdinalOutcomeRange").driver("ordr", ordinalRangeVI, "print_load_error.go")

// TestEndToEndOrdinalOutcomeRange: an ordinal outcome is checked against
// 1..C+1 (C the number of cutpoints) and a negative-binomial count against
// y ≥ 0 when the data are loaded, naming the variable and index.
func TestEndToEndOrdinalOutcomeRange(t *testing.T) {
	golden.SlowTier(t)
	for _, tc := range []struct{ y, k, want string }{
		{"[1, 3]", "[0, 4]", "<nil>"},
		{"[1, 4]", "[0, 4]", `data "y"[2] = 4: it is drawn from OrderedLogistic at ordr.vi:8:3, which must be in [1, C + 1] = 3`},
		{"[0, 2]", "[0, 4]", `data "y"[1] = 0: it is drawn from OrderedLogistic at ordr.vi:8:3, which must be in [1, C + 1] = 3`},
		{"[1, 2]", "[0, -1]", `data "k"[2] = -1: it is drawn from NegativeBinomial at ordr.vi:9:3, which must be ≥ 0`},
	} {
		data := `{"u": [0.5, -1], "c": [-0.5, 0.5], "y": ` + tc.y + `, "k": ` + tc.k + `}`
		out := ordinalRangeCase.run(t, []byte(data))
		if got := string(bytes.TrimSpace(out)); got != tc.want {
			t.Errorf("y = %s, k = %s: %s,\n want %s", tc.y, tc.k, got, tc.want)
		}
	}
}
