package codegen

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/vigen-go/vigen/runtime"
)

// The BUGS pumps model with its exposures, the Gamma shape fixed: a known
// multiplier t_n of a Gamma latent, y_n ~ Poisson(t_n·theta_n), keeps the
// statement linear in log θ and θ (log(t·θ) = log t + log θ). The fit must
// be the fixed point of a hand-written CAVI,
//
//	q(theta_n) = Gamma(alpha + y_n, E[beta] + t_n),
//	q(beta)    = Gamma(0.1 + N·alpha, 1 + Σ E[theta_n]),
//
// with its ELBO.
const pumpsExposureVI = `model pumpsexpo
size N
data y : int[N]
data t : real[N]
const alpha : real = 0.7
latent theta : real[N] conjugate
latent beta : real conjugate
beta ~ Gamma(0.1, 1)
for n in 1:N {
  theta[n] ~ Gamma(alpha, beta)
  y[n] ~ Poisson(t[n] * theta[n])
}
`

var pumpsExposureCase = fastTest("TestEndToEndPumpsExposures").fits("pumpsexpo", pumpsExposureVI, ", Tol: 1e-15, MeanTol: 1e-13, MaxIter: 100000")

func TestEndToEndPumpsExposures(t *testing.T) {
	y := []float64{5, 1, 5, 14, 3, 19, 1, 1, 4, 22}
	expo := []float64{94.3, 15.7, 62.9, 126, 5.24, 31.4, 1.05, 1.05, 2.1, 10.5}
	const alpha, a0, b0 = 0.7, 0.1, 1.0
	n := float64(len(y))
	lgamma := func(v float64) float64 { l, _ := math.Lgamma(v); return l }
	bShape, bRate := a0+n*alpha, a0+n*alpha
	tShape, tRate := make([]float64, len(y)), make([]float64, len(y))
	for range 100000 {
		sumT := 0.0
		for i, v := range y {
			tShape[i] = alpha + v
			tRate[i] = bShape/bRate + expo[i]
			sumT += tShape[i] / tRate[i]
		}
		next := b0 + sumT
		if next == bRate {
			break
		}
		bRate = next
	}
	entropy := func(a, b float64) float64 { return a - math.Log(b) + lgamma(a) + (1-a)*runtime.Digamma(a) }
	eb, elb := bShape/bRate, runtime.Digamma(bShape)-math.Log(bRate)
	elbo := a0*math.Log(b0) - lgamma(a0) + (a0-1)*elb - b0*eb + entropy(bShape, bRate)
	for i, v := range y {
		et, elt := tShape[i]/tRate[i], runtime.Digamma(tShape[i])-math.Log(tRate[i])
		elbo += alpha*elb - lgamma(alpha) + (alpha-1)*elt - eb*et
		elbo += v*(math.Log(expo[i])+elt) - expo[i]*et - lgamma(v+1)
		elbo += entropy(tShape[i], tRate[i])
	}
	data, _ := json.Marshal(map[string]any{"y": y, "t": expo})
	res := pumpsExposureCase.results(t, data)
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
			check("theta rate", qt["rate"][i], tRate[i])
		}
		check("ELBO", res.ELBO[len(res.ELBO)-1], elbo)
	}
}
