package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/codegen"
	"github.com/vigen-go/vigen/derive"
	"github.com/vigen-go/vigen/examples/eightschools/centred"
	"github.com/vigen-go/vigen/examples/eightschools/eightschools"
	"github.com/vigen-go/vigen/spec"
)

// halfCauchyLogDensity returns log HalfCauchy(e^u; s) + u (the Jacobian of
// tau = e^u) and its first two derivatives in u.
func halfCauchyLogDensity(u, s float64) (f, d1, d2 float64) {
	a := math.Exp(2*u) / (s * s)
	return math.Log(2/(math.Pi*s)) - math.Log1p(a) + u, 1 - 2*a/(1+a), -4 * a / ((1 + a) * (1 + a))
}

// laplaceU maximizes halfCauchy(e^u; s) + u + g(u) by Newton from u0 and
// returns the mode and −1/f″ there: the Laplace update of q(log tau).
func laplaceU(u0, s float64, g func(u float64) (float64, float64, float64)) (m, v float64) {
	u := u0
	for range 200 {
		_, h1, h2 := halfCauchyLogDensity(u, s)
		_, g1, g2 := g(u)
		step := (h1 + g1) / (h2 + g2)
		u -= step
		if math.Abs(step) < 1e-14 {
			break
		}
	}
	_, _, h2 := halfCauchyLogDensity(u, s)
	_, _, g2 := g(u)
	return u, -1 / (h2 + g2)
}

// meanField is a hand-written mean-field fit: q(mu) = N(Mu, VMu), q(log
// tau) = N(U, VU), and the school-level factors (theta or eta) N(M[j], V[j]).
type meanField struct {
	Mu, VMu, U, VU float64
	M, V           []float64
}

// handCentred is coordinate ascent for the centred model written out:
// every expectation in closed form (E[exp(−2u)] = exp(−2m + 2v)), Newton
// in u = log tau. The updates of mu and theta are exact Gaussian updates
// (their Laplace updates, f being quadratic in each).
func handCentred(y, sigma []float64) meanField {
	J := len(y)
	q := meanField{VMu: 1, U: 1, VU: 1, M: make([]float64, J), V: make([]float64, J)}
	for range 100000 {
		w := math.Exp(-2*q.U + 2*q.VU)
		for j := range J {
			p := w + 1/(sigma[j]*sigma[j])
			q.M[j], q.V[j] = (w*q.Mu+y[j]/(sigma[j]*sigma[j]))/p, 1/p
		}
		sum := 0.0
		for j := range J {
			sum += q.M[j]
		}
		p := 1/(MuPriorSD*MuPriorSD) + float64(J)*w
		q.Mu, q.VMu = w*sum/p, 1/p
		R := 0.0
		for j := range J {
			R += (q.M[j]-q.Mu)*(q.M[j]-q.Mu) + q.V[j] + q.VMu
		}
		u0 := q.U
		q.U, q.VU = laplaceU(q.U, TauPriorScale, func(u float64) (float64, float64, float64) {
			e := math.Exp(-2 * u)
			return -float64(J)*u - e*R/2, -float64(J) + e*R, -2 * e * R
		})
		if math.Abs(q.U-u0) < 1e-15 {
			break
		}
	}
	return q
}

// handNonCentred is the same for the non-centred model, with E[tau] =
// exp(m + v/2) and E[tau²] = exp(2m + 2v).
func handNonCentred(y, sigma []float64) meanField {
	J := len(y)
	s2 := make([]float64, J)
	for j := range J {
		s2[j] = sigma[j] * sigma[j]
	}
	q := meanField{VMu: 1, U: 1, VU: 1, M: make([]float64, J), V: make([]float64, J)}
	for j := range q.V {
		q.V[j] = 1
	}
	for range 100000 {
		e1, e2 := math.Exp(q.U+q.VU/2), math.Exp(2*q.U+2*q.VU)
		for j := range J {
			p := 1 + e2/s2[j]
			q.M[j], q.V[j] = (y[j]-q.Mu)*e1/s2[j]/p, 1/p
		}
		p, num := 1/(MuPriorSD*MuPriorSD), 0.0
		for j := range J {
			p += 1 / s2[j]
			num += (y[j] - e1*q.M[j]) / s2[j]
		}
		q.Mu, q.VMu = num/p, 1/p
		u0 := q.U
		q.U, q.VU = laplaceU(q.U, TauPriorScale, func(u float64) (float64, float64, float64) {
			eu, e2u := math.Exp(u), math.Exp(2*u)
			var f, d1, d2 float64
			for j := range J {
				a, b := (y[j]-q.Mu)*q.M[j]/s2[j], (q.M[j]*q.M[j]+q.V[j])/s2[j]
				f += eu*a - e2u*b/2
				d1 += eu*a - e2u*b
				d2 += eu*a - 2*e2u*b
			}
			return f, d1, d2
		})
		if math.Abs(q.U-u0) < 1e-15 {
			break
		}
	}
	return q
}

func closeTo(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %.12g, hand-written coordinate ascent %.12g", what, got, want)
	}
}

// tight are options that run both fits to the fixed point.
const (
	tightTol, tightMeanTol, tightMaxIter = 1e-15, 1e-13, 100000
)

// TestFitsAreHandWrittenCoordinateAscent: the Laplace fits of both models
// to Rubin's data are the fixed points of the coordinate ascent written
// out by hand (mu, log tau and the school factors), to 1e-7.
func TestFitsAreHandWrittenCoordinateAscent(t *testing.T) {
	d := Schools()
	nc, err := eightschools.Fit(context.Background(), d, eightschools.Options{Tol: tightTol, MeanTol: tightMeanTol, MaxIter: tightMaxIter})
	if err != nil {
		t.Fatal(err)
	}
	if !nc.Converged {
		t.Fatalf("non-centred: %s", nc.Status)
	}
	h := handNonCentred(RubinY, RubinSigma)
	l := nc.Latent
	closeTo(t, "non-centred: mu mean", l.Mu.Mean, h.Mu, 1e-7)
	closeTo(t, "non-centred: mu sd", l.Mu.SD, math.Sqrt(h.VMu), 1e-7)
	closeTo(t, "non-centred: mean of log tau", l.Tau.Mean, h.U, 1e-7)
	closeTo(t, "non-centred: sd of log tau", l.Tau.SD, math.Sqrt(h.VU), 1e-7)
	for j := range h.M {
		closeTo(t, "non-centred: eta mean", l.Eta.Mean[j], h.M[j], 1e-7)
		closeTo(t, "non-centred: eta var", l.Eta.Cov[j][j], h.V[j], 1e-7)
	}
	// tau on its own scale: the log-normal moments and quantiles.
	closeTo(t, "non-centred: E[tau]", l.Tau.Constrained.Mean, math.Exp(h.U+h.VU/2), 1e-7)
	closeTo(t, "non-centred: sd[tau]", l.Tau.Constrained.SD, math.Sqrt(math.Expm1(h.VU))*math.Exp(h.U+h.VU/2), 1e-7)
	closeTo(t, "non-centred: median tau", l.Tau.Constrained.Q50, math.Exp(h.U), 1e-7)
	closeTo(t, "non-centred: 95% tau", l.Tau.Constrained.Q95, math.Exp(h.U+z95*math.Sqrt(h.VU)), 1e-7)

	c, err := centred.Fit(context.Background(), &centred.Data{Y: RubinY, Sigma: RubinSigma}, centred.Options{Tol: tightTol, MeanTol: tightMeanTol, MaxIter: tightMaxIter})
	if err != nil {
		t.Fatal(err)
	}
	if !c.Converged {
		t.Fatalf("centred: %s", c.Status)
	}
	hc := handCentred(RubinY, RubinSigma)
	lc := c.Latent
	closeTo(t, "centred: mu mean", lc.Mu.Mean, hc.Mu, 1e-7)
	closeTo(t, "centred: mu sd", lc.Mu.SD, math.Sqrt(hc.VMu), 1e-7)
	closeTo(t, "centred: mean of log tau", lc.Tau.Mean, hc.U, 1e-7)
	closeTo(t, "centred: sd of log tau", lc.Tau.SD, math.Sqrt(hc.VU), 1e-7)
	for j := range hc.M {
		closeTo(t, "centred: theta mean", lc.Theta.Mean[j], hc.M[j], 1e-7)
		closeTo(t, "centred: theta var", lc.Theta.Cov[j][j], hc.V[j], 1e-7)
	}
	closeTo(t, "centred: E[tau]", lc.Tau.Constrained.Mean, math.Exp(hc.U+hc.VU/2), 1e-7)
	closeTo(t, "centred: sd[tau]", lc.Tau.Constrained.SD, math.Sqrt(math.Expm1(hc.VU))*math.Exp(hc.U+hc.VU/2), 1e-7)

	ex, err := Exact(RubinY, RubinSigma)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("tau: non-centred %.4f ± %.4f, centred %.4f ± %.4f, exact %.4f ± %.4f (hand-written: non-centred %.4f ± %.4f, centred %.4f ± %.4f)",
		l.Tau.Constrained.Mean, l.Tau.Constrained.SD, lc.Tau.Constrained.Mean, lc.Tau.Constrained.SD, ex.Tau.Mean, ex.Tau.SD,
		math.Exp(h.U+h.VU/2), math.Sqrt(math.Expm1(h.VU))*math.Exp(h.U+h.VU/2), math.Exp(hc.U+hc.VU/2), math.Sqrt(math.Expm1(hc.VU))*math.Exp(hc.U+hc.VU/2))
	t.Logf("mu: non-centred %.4f ± %.4f, centred %.4f ± %.4f, exact %.4f ± %.4f", l.Mu.Mean, l.Mu.SD, lc.Mu.Mean, lc.Mu.SD, ex.Mu.Mean, ex.Mu.SD)
}

// TestExactByTwoDimensionalQuadrature checks Exact, which integrates mu
// out in closed form, against a plain two-dimensional grid over (mu, log
// tau) of the joint density with only theta integrated out, and against
// the long-MCMC figures published for this model (posteriordb's
// eight_schools, the same priors: mu 4.4 ± 3.3, tau 3.6 ± 3.2).
func TestExactByTwoDimensionalQuadrature(t *testing.T) {
	ex, err := Exact(RubinY, RubinSigma)
	if err != nil {
		t.Fatal(err)
	}
	// 2-D trapezoid over mu in [−40, 50], u in [−15, 8].
	const nm, nu = 901, 1151
	var z, m1, m2, t1, t2 float64
	wu, us := make([]float64, nu), make([]float64, nu)
	for a := range nm {
		mu := -40 + 90*float64(a)/(nm-1)
		for b := range nu {
			u := -15 + 23*float64(b)/(nu-1)
			tau2 := math.Exp(2 * u)
			lp := -mu*mu/(2*MuPriorSD*MuPriorSD) - math.Log1p(tau2/(TauPriorScale*TauPriorScale)) + u
			for j := range RubinY {
				v := RubinSigma[j]*RubinSigma[j] + tau2
				lp += -0.5*math.Log(v) - (RubinY[j]-mu)*(RubinY[j]-mu)/(2*v)
			}
			w := math.Exp(lp + 20)
			if a == 0 || a == nm-1 {
				w /= 2
			}
			if b == 0 || b == nu-1 {
				w /= 2
			}
			z += w
			wu[b] += w
			us[b] = u
			m1 += w * mu
			m2 += w * mu * mu
			t1 += w * math.Exp(u)
			t2 += w * tau2
		}
	}
	mu, muSD := m1/z, math.Sqrt(m2/z-(m1/z)*(m1/z))
	tau, tauSD := t1/z, math.Sqrt(t2/z-(t1/z)*(t1/z))
	t.Logf("exact: mu %.6f ± %.6f, tau %.6f ± %.6f; 2-D grid: mu %.6f ± %.6f, tau %.6f ± %.6f", ex.Mu.Mean, ex.Mu.SD, ex.Tau.Mean, ex.Tau.SD, mu, muSD, tau, tauSD)
	for _, c := range []struct {
		what      string
		got, want float64
	}{{"mu mean", ex.Mu.Mean, mu}, {"mu sd", ex.Mu.SD, muSD}, {"tau mean", ex.Tau.Mean, tau}, {"tau sd", ex.Tau.SD, tauSD}} {
		if math.Abs(c.got-c.want) > 1e-4 {
			t.Errorf("%s: Exact %.8g, 2-D grid %.8g", c.what, c.got, c.want)
		}
	}
	for k := range wu {
		wu[k] /= z
	}
	for _, q := range []struct{ p, got float64 }{{0.05, ex.Tau.Q05}, {0.5, ex.Tau.Q50}, {0.95, ex.Tau.Q95}} {
		want := math.Exp(gridQuantile(wu, us, q.p))
		t.Logf("tau %g quantile: Exact %.6f, 2-D grid %.6f", q.p, q.got, want)
		if math.Abs(q.got-want) > 1e-3*want {
			t.Errorf("tau %g quantile: Exact %.6g, 2-D grid %.6g", q.p, q.got, want)
		}
	}
	for _, c := range []struct {
		what      string
		got, want float64
	}{{"mu mean", ex.Mu.Mean, 4.4}, {"mu sd", ex.Mu.SD, 3.3}, {"tau mean", ex.Tau.Mean, 3.6}, {"tau sd", ex.Tau.SD, 3.2}} {
		if math.Abs(c.got-c.want) > 0.1 {
			t.Errorf("%s: Exact %.4g, published long-MCMC figure %.2g", c.what, c.got, c.want)
		}
	}
	if !(ex.Tau.Q05 < ex.Tau.Q50 && ex.Tau.Q50 < ex.Tau.Mean && ex.Tau.Mean < ex.Tau.Q95) {
		t.Errorf("tau summary out of order (right-skewed: q05 < median < mean < q95): %+v", ex.Tau)
	}
}

// TestCommand runs the command as text and JSON.
func TestCommand(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := run([]string{"-q"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	out := stdout.String()
	for _, want := range []string{"Rubin's eight schools", "non-centred", "centred", "exact", "tau", "theta[8]"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if stderr.Len() != 0 {
		t.Errorf("-q wrote to stderr: %q", stderr.String())
	}
	stdout.Reset()
	if err := run([]string{"-json", "-data", "data.json"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	var r struct {
		NonCentred struct {
			Converged bool `json:"converged"`
			Latent    struct {
				Tau struct {
					Constrained struct{ Mean float64 } `json:"constrained"`
				} `json:"tau"`
			} `json:"latent"`
		} `json:"noncentred"`
		Centred struct {
			Converged bool `json:"converged"`
		} `json:"centred"`
		Exact Posterior `json:"exact"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	if !r.NonCentred.Converged || !r.Centred.Converged || r.NonCentred.Latent.Tau.Constrained.Mean <= 0 || len(r.Exact.Theta) != 8 {
		t.Errorf("unexpected JSON result: %+v", r)
	}
	if err := run([]string{"-q", "-method", "newton"}, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), "newton") {
		t.Errorf("-method newton: error %v", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"y": [1, 2], "sigma": [1, -2]}`), 0o644)
	if err := run([]string{"-q", "-data", bad}, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), `"sigma"[2]`) {
		t.Errorf("negative sigma: error %v, want one naming \"sigma\"[2]", err)
	}
}

// TestCentredPackageIsGenerated: centred/ is what vigen generates from
// centred.vi now (go generate writes it; ./golden checks eightschools/
// only, the package named after the directory).
func TestCentredPackageIsGenerated(t *testing.T) {
	src, err := os.ReadFile("centred.vi")
	if err != nil {
		t.Fatal(err)
	}
	m, err := spec.Load("centred.vi", src)
	if err != nil {
		t.Fatal(err)
	}
	d, err := derive.Derive(m)
	if err != nil {
		t.Fatal(err)
	}
	files, err := codegen.Generate(d, codegen.Options{Methods: []string{"delta"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		got, err := os.ReadFile(filepath.Join("centred", f.Name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, f.Src) {
			t.Errorf("centred/%s differs from what centred.vi generates now; run go generate ./examples/eightschools", f.Name)
		}
	}
}
