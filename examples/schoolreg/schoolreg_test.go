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

	"github.com/vigen-go/vigen/examples/schoolreg/schoolreg"
)

// The priors of schoolreg.vi.
const (
	coefPriorSD = 100.0 // mu, b1, b2 ~ Normal(0, 100)
	scalePrior  = 10.0  // tau, sigma ~ HalfCauchy(10)
)

// laplaceScale maximizes log HalfCauchy(e^u; s) + u − k·u − e^(−2u)·R/2
// (a half-Cauchy scale with its Jacobian, and k Normal terms whose
// expected squared residuals sum to R) by Newton from u0, and returns the
// mode and −1/f″ there: the Laplace update of q(log scale), with every
// expectation of the other factors in R.
func laplaceScale(u0, s, k, R float64) (m, v float64) {
	d := func(u float64) (d1, d2 float64) {
		a, e := math.Exp(2*u)/(s*s), math.Exp(-2*u)
		return 1 - 2*a/(1+a) - k + e*R, -4*a/((1+a)*(1+a)) - 2*e*R
	}
	u := u0
	for range 200 {
		d1, d2 := d(u)
		step := d1 / d2
		u -= step
		if math.Abs(step) < 1e-14 {
			break
		}
	}
	_, d2 := d(u)
	return u, -1 / d2
}

// meanField is the hand-written fit: Gaussian q(mu), q(b1), q(b2), q(a_j)
// (means M*, variances V*) and q(log tau), q(log sigma) = N(U*, VU*).
type meanField struct {
	Mu, VMu, B1, VB1, B2, VB2 float64
	A, VA                     []float64
	UT, VUT, US, VUS          float64
}

// hand is coordinate ascent for schoolreg.vi written out by hand. With Wt
// = E[exp(−2 log tau)] = exp(−2UT + 2VUT) and Ws likewise for sigma, the
// Gaussian factors have their exact updates (f is quadratic in each):
//
//	a_j:  precision Wt + Ws·n_j,  mean (Wt·E[mu] + Ws·Σ_{n in j} (score_n − E[b1]vr1_n − E[b2]vr2_n)) / precision
//	mu:   precision 1/100² + J·Wt,  mean Wt·Σ_j E[a_j] / precision
//	b1:   precision 1/100² + Ws·Σ vr1_n²,  mean Ws·Σ vr1_n (score_n − E[a_(school n)] − E[b2]vr2_n) / precision
//
// (b2 alike), and the scales their Laplace updates (laplaceScale) with
// R_tau = Σ_j E[(a_j − mu)²] and R_sigma = Σ_n E[(score_n − a − b1·vr1 − b2·vr2)²].
func hand(d *schoolreg.Data) meanField {
	J := 0
	for _, s := range d.School {
		J = max(J, s)
	}
	q := meanField{VMu: 1, VB1: 1, VB2: 1, A: make([]float64, J), VA: make([]float64, J), UT: 1, VUT: 1, US: 1, VUS: 1}
	count := make([]float64, J)
	var s11, s22 float64
	for n, s := range d.School {
		count[s-1]++
		s11 += float64(d.Vr1[n] * d.Vr1[n])
		s22 += float64(d.Vr2[n] * d.Vr2[n])
	}
	p0 := 1 / (coefPriorSD * coefPriorSD)
	for range 100000 {
		wt, ws := math.Exp(-2*q.UT+2*q.VUT), math.Exp(-2*q.US+2*q.VUS)
		sum := make([]float64, J)
		for n, s := range d.School {
			sum[s-1] += d.Score[n] - q.B1*float64(d.Vr1[n]) - q.B2*float64(d.Vr2[n])
		}
		for j := range J {
			p := wt + ws*count[j]
			q.A[j], q.VA[j] = (wt*q.Mu+ws*sum[j])/p, 1/p
		}
		sa := 0.0
		for _, a := range q.A {
			sa += a
		}
		p := p0 + float64(J)*wt
		q.Mu, q.VMu = wt*sa/p, 1/p
		var l1, l2 float64
		for n, s := range d.School {
			l1 += float64(d.Vr1[n]) * (d.Score[n] - q.A[s-1] - q.B2*float64(d.Vr2[n]))
		}
		q.B1, q.VB1 = ws*l1/(p0+ws*s11), 1/(p0+ws*s11)
		for n, s := range d.School {
			l2 += float64(d.Vr2[n]) * (d.Score[n] - q.A[s-1] - q.B1*float64(d.Vr1[n]))
		}
		q.B2, q.VB2 = ws*l2/(p0+ws*s22), 1/(p0+ws*s22)
		var rt, rs float64
		for j := range J {
			rt += (q.A[j]-q.Mu)*(q.A[j]-q.Mu) + q.VA[j] + q.VMu
		}
		for n, s := range d.School {
			x1, x2 := float64(d.Vr1[n]), float64(d.Vr2[n])
			r := d.Score[n] - q.A[s-1] - q.B1*x1 - q.B2*x2
			rs += r*r + q.VA[s-1] + x1*x1*q.VB1 + x2*x2*q.VB2
		}
		ut0, us0 := q.UT, q.US
		q.UT, q.VUT = laplaceScale(q.UT, scalePrior, float64(J), rt)
		q.US, q.VUS = laplaceScale(q.US, scalePrior, float64(len(d.Score)), rs)
		if math.Abs(q.UT-ut0) < 1e-15 && math.Abs(q.US-us0) < 1e-15 {
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

func logNormalMoments(m, v float64) (mean, sd float64) {
	return math.Exp(m + v/2), math.Sqrt(math.Expm1(v)) * math.Exp(m+v/2)
}

// TestFitIsHandWrittenCoordinateAscent: the Laplace fit to the bundled 15
// schools is the fixed point of the coordinate ascent written out by hand,
// to 1e-7.
func TestFitIsHandWrittenCoordinateAscent(t *testing.T) {
	d, err := schoolreg.LoadData(bytes.NewReader(bundledData))
	if err != nil {
		t.Fatal(err)
	}
	res, err := schoolreg.Fit(context.Background(), d, schoolreg.Options{Tol: 1e-15, MeanTol: 1e-13, MaxIter: 100000})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Converged {
		t.Fatalf("%s", res.Status)
	}
	h := hand(d)
	l := res.Latent
	closeTo(t, "mu mean", l.Mu.Mean, h.Mu, 1e-7)
	closeTo(t, "mu sd", l.Mu.SD, math.Sqrt(h.VMu), 1e-7)
	closeTo(t, "b1 mean", l.B1.Mean, h.B1, 1e-7)
	closeTo(t, "b1 sd", l.B1.SD, math.Sqrt(h.VB1), 1e-7)
	closeTo(t, "b2 mean", l.B2.Mean, h.B2, 1e-7)
	closeTo(t, "b2 sd", l.B2.SD, math.Sqrt(h.VB2), 1e-7)
	closeTo(t, "mean of log tau", l.Tau.Mean, h.UT, 1e-7)
	closeTo(t, "sd of log tau", l.Tau.SD, math.Sqrt(h.VUT), 1e-7)
	closeTo(t, "mean of log sigma", l.Sigma.Mean, h.US, 1e-7)
	closeTo(t, "sd of log sigma", l.Sigma.SD, math.Sqrt(h.VUS), 1e-7)
	for j := range h.A {
		closeTo(t, "a mean", l.A.Mean[j], h.A[j], 1e-7)
		closeTo(t, "a var", l.A.Cov[j][j], h.VA[j], 1e-7)
	}
	tm, ts := logNormalMoments(h.UT, h.VUT)
	sm, ss := logNormalMoments(h.US, h.VUS)
	closeTo(t, "E[tau]", l.Tau.Constrained.Mean, tm, 1e-7)
	closeTo(t, "sd[tau]", l.Tau.Constrained.SD, ts, 1e-7)
	closeTo(t, "E[sigma]", l.Sigma.Constrained.Mean, sm, 1e-7)
	closeTo(t, "sd[sigma]", l.Sigma.Constrained.SD, ss, 1e-7)
	t.Logf("tau: %.4f ± %.4f (hand-written %.4f ± %.4f); sigma: %.4f ± %.4f (hand-written %.4f ± %.4f)",
		l.Tau.Constrained.Mean, l.Tau.Constrained.SD, tm, ts, l.Sigma.Constrained.Mean, l.Sigma.Constrained.SD, sm, ss)
}

// TestCommand runs the command on the bundled data as text and JSON, with
// -full (skipped when the shared data are absent) and on bad data.
func TestCommand(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := run([]string{"-q", "-show", "3"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	out := stdout.String()
	for _, want := range []string{"converged", "1694 students in 15 schools", "tau", "sigma", "a[3]", "12 more schools"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if stderr.Len() != 0 {
		t.Errorf("-q wrote to stderr: %q", stderr.String())
	}
	stdout.Reset()
	if err := run([]string{"-json", "-method", "delta"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	var r struct {
		Method    string `json:"method"`
		Converged bool   `json:"converged"`
		Latent    struct {
			Sigma struct {
				Constrained struct{ Mean float64 } `json:"constrained"`
			} `json:"sigma"`
		} `json:"latent"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	if !strings.HasPrefix(r.Method, "delta") || !r.Converged || r.Latent.Sigma.Constrained.Mean <= 0 {
		t.Errorf("unexpected JSON result: %+v", r)
	}
	missing := filepath.Join(t.TempDir(), "school.csv")
	if err := run([]string{"-q", "-full", "-school", missing}, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("-full with no school.csv: error %v, want one saying it is not found", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"score": [1, 2, 3], "vr1": [0, 1, 0], "vr2": [0, 0, 2], "school": [1, 2, 1]}`), 0o644)
	if err := run([]string{"-q", "-data", bad}, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), `"vr2"[3]`) {
		t.Errorf("vr2 = 2: error %v, want one naming \"vr2\"[3]", err)
	}
	if _, err := os.Stat(*ileaCSV); err != nil {
		t.Skipf("ILEA data not found (%v); they live in ../shared/data/school", err)
	}
	stdout.Reset()
	if err := run([]string{"-q", "-full", "-school", *ileaCSV, "-show", "0"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "15347 students in 139 schools") || !strings.Contains(stdout.String(), "converged") {
		t.Errorf("-full:\n%s", stdout.String())
	}
}
