package codegen

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"github.com/vigen-go/vigen/golden"
	"github.com/vigen-go/vigen/runtime"
)

// Exponential(r) is Gamma(1, r), so a conjugate latent with an Exponential
// prior has q = Gamma, and an Exponential likelihood's rate is conjugate
// to a Gamma (or Exponential) prior. With one latent, q is the exact
// posterior and the ELBO at it the log evidence:
//
//   - lam ~ Exponential(r), y_n ~ Poisson(lam): q = Gamma(1 + Σy, r + N),
//     log p(y) = log r + log Γ(1+Σy) − (1+Σy) log(r+N) − Σ log y_n!;
//   - lam ~ Gamma(a, b), x_n ~ Exponential(lam): q = Gamma(a + N, b + Σx),
//     log p(x) = a log b − log Γ(a) + log Γ(a+N) − (a+N) log(b+Σx);
//   - lam ~ Exponential(r), x_n ~ Exponential(lam): the same with a = 1.
//
// rateVI is each model: its name, data declaration, prior and likelihood.
const rateVI = `model %s
size N
data %s
latent lam : real conjugate
lam ~ %s
for n in 1:N {
  %s
}
`

// rateCases are rateVI's models, by name: their data declarations, priors
// and likelihoods.
var rateCases = func() map[string]*e2eCase {
	test := slowTest("TestEndToEndConjugateExponential")
	cases := map[string]*e2eCase{}
	for _, m := range [][4]string{
		{"exppois", "y : int[N]", "Exponential(1.3)", "y[n] ~ Poisson(lam)"},
		{"gammaexp", "x : real[N]", "Gamma(2.5, 0.8)", "x[n] ~ Exponential(lam)"},
		{"expexp", "x : real[N]", "Exponential(1.3)", "x[n] ~ Exponential(lam)"},
	} {
		cases[m[0]] = test.fits(m[0], fmt.Sprintf(rateVI, m[0], m[1], m[2], m[3]), ", Tol: 1e-14")
	}
	return cases
}()

func TestEndToEndConjugateExponential(t *testing.T) {
	golden.SlowTier(t)
	y := []float64{3, 0, 5, 2, 7, 1, 4}
	x := []float64{0.31, 1.7, 0.05, 2.4, 0.88}
	sum := func(v []float64) (s float64) {
		for _, e := range v {
			s += e
		}
		return s
	}
	lgamma := func(v float64) float64 { l, _ := math.Lgamma(v); return l }
	// gammaPosterior is (shape, rate, log evidence) of lam ~ Gamma(a, b)
	// with Exponential observations x.
	gammaPosterior := func(a, b float64, x []float64) (float64, float64, float64) {
		n := float64(len(x))
		return a + n, b + sum(x), a*math.Log(b) - lgamma(a) + lgamma(a+n) - (a+n)*math.Log(b+sum(x))
	}
	const r = 1.3
	sy, ny := sum(y), float64(len(y))
	logFact := 0.0
	for _, v := range y {
		logFact += lgamma(v + 1)
	}
	ea, eb, ee := gammaPosterior(1, r, x)
	ga, gb, ge := gammaPosterior(2.5, 0.8, x)
	cases := []struct {
		name                 string // of rateCases
		data                 string
		values               []float64
		shape, rate, logEvid float64
	}{
		{"exppois", "y", y, 1 + sy, r + ny, math.Log(r) + lgamma(1+sy) - (1+sy)*math.Log(r+ny) - logFact},
		{"gammaexp", "x", x, ga, gb, ge},
		{"expexp", "x", x, ea, eb, ee},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data, _ := json.Marshal(map[string]any{c.data: c.values})
			res := rateCases[c.name].results(t, data)
			for _, r := range res {
				if !r.Converged {
					t.Errorf("%s: not converged: %s", r.Method, r.Status)
				}
				check := againstCAVI(t, r.Method)
				q := r.Latent["lam"].Params
				check("shape", q["shape"][0], c.shape)
				check("rate", q["rate"][0], c.rate)
				check("ELBO", r.ELBO[len(r.ELBO)-1], c.logEvid)
			}
		})
	}
}

// The BUGS pumps model's hierarchy with the Gamma shape fixed: beta ~
// Exponential(r), theta_n ~ Gamma(alpha, beta), y_n ~ Poisson(theta_n),
// both latents conjugate. Mean field is not exact here; the fit must be
// the fixed point of a hand-written CAVI,
//
//	q(theta_n) = Gamma(alpha + y_n, E[beta] + 1),
//	q(beta)    = Gamma(1 + N·alpha, r + Σ E[theta_n]),
//
// and its ELBO.
const pumpsPieceVI = `model pumpspiece
size N
data y : int[N]
const alpha : real = 1.8
latent theta : real[N] conjugate
latent beta : real conjugate
beta ~ Exponential(1.3)
for n in 1:N {
  theta[n] ~ Gamma(alpha, beta)
  y[n] ~ Poisson(theta[n])
}
`

var pumpsPieceCase = fastTest("TestEndToEndPumpsPieceExponentialPrior").fits("pumpspiece", pumpsPieceVI, ", Tol: 1e-15, MeanTol: 1e-13, MaxIter: 100000")

func TestEndToEndPumpsPieceExponentialPrior(t *testing.T) {
	y := []float64{5, 1, 5, 14, 3, 19, 1, 1, 4, 22} // the pumps' failure counts
	const alpha, r = 1.8, 1.3
	n := float64(len(y))
	lgamma := func(v float64) float64 { l, _ := math.Lgamma(v); return l }
	// CAVI from q(beta)'s mean 1 until nothing changes.
	bShape, bRate := 1+n*alpha, 1+n*alpha
	tShape, tRate := make([]float64, len(y)), 0.0
	for range 10000 {
		tRate = bShape/bRate + 1
		sumT := 0.0
		for i, v := range y {
			tShape[i] = alpha + v
			sumT += tShape[i] / tRate
		}
		next := r + sumT
		if next == bRate {
			break
		}
		bRate = next
	}
	// ELBO = E[log p(beta)] + Σ E[log p(theta_n | beta)] + Σ E[log p(y_n | theta_n)] + H[q]
	entropy := func(a, b float64) float64 { return a - math.Log(b) + lgamma(a) + (1-a)*runtime.Digamma(a) }
	eb, elb := bShape/bRate, runtime.Digamma(bShape)-math.Log(bRate)
	elbo := math.Log(r) - r*eb + entropy(bShape, bRate)
	for i, v := range y {
		et, elt := tShape[i]/tRate, runtime.Digamma(tShape[i])-math.Log(tRate)
		elbo += alpha*elb - lgamma(alpha) + (alpha-1)*elt - eb*et
		elbo += v*elt - et - lgamma(v+1)
		elbo += entropy(tShape[i], tRate)
	}
	data, _ := json.Marshal(map[string]any{"y": y})
	res := pumpsPieceCase.results(t, data)
	for _, res := range res {
		if !res.Converged {
			t.Errorf("%s: not converged: %s", res.Method, res.Status)
		}
		check := againstCAVI(t, res.Method)
		qb := res.Latent["beta"].Params
		check("beta shape", qb["shape"][0], bShape)
		check("beta rate", qb["rate"][0], bRate)
		qt := res.Latent["theta"].Params
		for i := range y {
			check("theta shape", qt["shape"][i], tShape[i])
			check("theta rate", qt["rate"][i], tRate)
		}
		check("ELBO", res.ELBO[len(res.ELBO)-1], elbo)
	}
}
