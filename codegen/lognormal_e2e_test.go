package codegen

import (
	"encoding/json"
	"math"
	"testing"
)

// A conjugate LogNormal latent: x ~ LogNormal(m0, s0) with observations
// y_n ~ LogNormal(log x, s) is a Normal–Normal model in log x, so q(x) =
// LogNormal(meanlog, sdlog) is the exact posterior,
//
//	1/sdlog² = 1/s0² + N/s²,   meanlog = sdlog² (m0/s0² + Σ log y_n / s²),
//
// and the ELBO at it is the log evidence, log N(log y; m0·1, s0²11ᵀ + s²I)
// − Σ log y_n.
const logNormalVI = `model lnconj
size N
data y : real[N]
const m0 : real = 0.5
const s0 : real = 1.5
const s : real = 0.7
latent x : real conjugate
x ~ LogNormal(m0, s0)
for n in 1:N {
  y[n] ~ LogNormal(log(x), s)
}
`

var logNormalCase = fastTest("TestEndToEndConjugateLogNormal").fits("lnconj", logNormalVI, ", Tol: 1e-14")

func TestEndToEndConjugateLogNormal(t *testing.T) {
	y := []float64{2.1, 0.8, 3.5, 1.7, 5.2, 1.1}
	const m0, s0, s = 0.5, 1.5, 0.7
	n := float64(len(y))
	sumLog := 0.0
	for _, v := range y {
		sumLog += math.Log(v)
	}
	prec := 1/(s0*s0) + n/(s*s)
	v := 1 / prec
	mean := v * (m0/(s0*s0) + sumLog/(s*s))
	// log evidence of u = log y ~ N(m0·1, s0²11ᵀ + s²I) (matrix
	// determinant lemma and Sherman–Morrison), minus the Jacobian Σ log y.
	r2, rsum := 0.0, 0.0
	for _, val := range y {
		r := math.Log(val) - m0
		r2 += r * r
		rsum += r
	}
	c := s0 * s0 / (s * s * (s*s + n*s0*s0))
	logdet := 2*n*math.Log(s) + math.Log(1+n*s0*s0/(s*s))
	evidence := -0.5*n*math.Log(2*math.Pi) - 0.5*logdet - 0.5*(r2/(s*s)-c*rsum*rsum) - sumLog
	data, _ := json.Marshal(map[string]any{"y": y})
	res := logNormalCase.results(t, data)
	for _, r := range res {
		if !r.Converged {
			t.Errorf("%s: not converged: %s", r.Method, r.Status)
		}
		check := againstCAVI(t, r.Method)
		q := r.Latent["x"].Params
		check("meanlog", q["meanlog"][0], mean)
		check("sdlog", q["sdlog"][0], math.Sqrt(v))
		check("ELBO", r.ELBO[len(r.ELBO)-1], evidence)
	}
}
