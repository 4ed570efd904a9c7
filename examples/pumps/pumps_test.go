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

	"github.com/vigen-go/vigen/examples/pumps/pumps"
	"github.com/vigen-go/vigen/golden"
	"github.com/vigen-go/vigen/runtime"
)

// handFit is coordinate ascent for the pumps model written out by hand:
// q(beta) = Gamma(BA, BB) and q(theta_i) = Gamma(TA[i], TB[i]) by their
// closed forms, q(log alpha) = N(M, V) by Newton on
//
//	f(u) = −e^u + u + N·e^u·E[log β] − N·log Γ(e^u) + e^u·Σ E[log θ_i]
//
// (the Exponential(1) prior with its Jacobian, and the Gamma(α, β)
// densities of the rates), V = −1/f″ at the mode.
type handFit struct {
	M, V, BA, BB float64
	TA, TB       []float64
}

func hand(y []int, expo []float64) handFit {
	N := float64(len(y))
	q := handFit{M: 0, V: 0.1, BA: BetaPriorShape + N, BB: BetaPriorRate, TA: make([]float64, len(y)), TB: make([]float64, len(y))}
	for range 100000 {
		ea, eb := math.Exp(q.M+q.V/2), q.BA/q.BB
		sumT, sumLogT := 0.0, 0.0
		for i := range y {
			q.TA[i], q.TB[i] = ea+float64(y[i]), eb+expo[i]
			sumT += q.TA[i] / q.TB[i]
			sumLogT += runtime.Digamma(q.TA[i]) - math.Log(q.TB[i])
		}
		q.BA, q.BB = BetaPriorShape+N*ea, BetaPriorRate+sumT
		elb := runtime.Digamma(q.BA) - math.Log(q.BB)
		d2 := func(a float64) float64 {
			return -AlphaPriorRate*a + N*a*elb - N*(a*runtime.Digamma(a)+a*a*runtime.Trigamma(a)) + a*sumLogT
		}
		m0, u := q.M, q.M
		for range 200 {
			a := math.Exp(u)
			d1 := -AlphaPriorRate*a + 1 + N*a*elb - N*a*runtime.Digamma(a) + a*sumLogT
			step := d1 / d2(a)
			u -= step
			if math.Abs(step) < 1e-15 {
				break
			}
		}
		q.M, q.V = u, -1/d2(math.Exp(u))
		if math.Abs(q.M-m0) < 1e-15 {
			break
		}
	}
	return q
}

func closeTo(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %.12g, want %.12g", what, got, want)
	}
}

// TestFitIsHandWrittenCoordinateAscent: the Laplace fit to the BUGS data
// is the fixed point of the coordinate ascent written out by hand, to 1e-7.
func TestFitIsHandWrittenCoordinateAscent(t *testing.T) {
	res, err := pumps.Fit(context.Background(), Pumps(), pumps.Options{Tol: 1e-15, MeanTol: 1e-13, MaxIter: 100000})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Converged {
		t.Fatalf("%s", res.Status)
	}
	h := hand(BUGSFailures, BUGSTimes)
	l := res.Latent
	closeTo(t, "mean of log alpha", l.Alpha.Mean, h.M, 1e-7)
	closeTo(t, "sd of log alpha", l.Alpha.SD, math.Sqrt(h.V), 1e-7)
	closeTo(t, "E[alpha]", l.Alpha.Constrained.Mean, math.Exp(h.M+h.V/2), 1e-7)
	closeTo(t, "sd[alpha]", l.Alpha.Constrained.SD, math.Sqrt(math.Expm1(h.V))*math.Exp(h.M+h.V/2), 1e-7)
	closeTo(t, "beta shape", l.Beta.Params["shape"][0], h.BA, 1e-7)
	closeTo(t, "beta rate", l.Beta.Params["rate"][0], h.BB, 1e-7)
	for i := range h.TA {
		closeTo(t, "theta shape", l.Theta.Params["shape"][i], h.TA[i], 1e-7)
		closeTo(t, "theta rate", l.Theta.Params["rate"][i], h.TB[i], 1e-7)
	}
	ex, err := Exact(BUGSFailures, BUGSTimes)
	if err != nil {
		t.Fatal(err)
	}
	vi := Summaries(res)
	t.Logf("alpha: VI %.4f ± %.4f (hand-written %.4f ± %.4f), exact %.4f ± %.4f", vi.Alpha.Mean, vi.Alpha.SD,
		math.Exp(h.M+h.V/2), math.Sqrt(math.Expm1(h.V))*math.Exp(h.M+h.V/2), ex.Alpha.Mean, ex.Alpha.SD)
	t.Logf("beta: VI %.4f ± %.4f (hand-written %.4f ± %.4f), exact %.4f ± %.4f", vi.Beta.Mean, vi.Beta.SD, h.BA/h.BB, math.Sqrt(h.BA)/h.BB, ex.Beta.Mean, ex.Beta.SD)
}

// TestExactGrid: Exact does not move when its grid step is halved, and
// agrees with the BUGS manual's posterior means (MCMC, two digits).
func TestExactGrid(t *testing.T) {
	golden.SlowTier(t)
	ex, err := Exact(BUGSFailures, BUGSTimes)
	if err != nil {
		t.Fatal(err)
	}
	fine, err := exactOn(BUGSFailures, BUGSTimes, GridStep/2)
	if err != nil {
		t.Fatal(err)
	}
	type pair struct {
		what      string
		got, want float64
	}
	pairs := []pair{{"alpha mean", ex.Alpha.Mean, fine.Alpha.Mean}, {"alpha sd", ex.Alpha.SD, fine.Alpha.SD},
		{"alpha median", ex.Alpha.Q50, fine.Alpha.Q50}, {"alpha 95%", ex.Alpha.Q95, fine.Alpha.Q95},
		{"beta mean", ex.Beta.Mean, fine.Beta.Mean}, {"beta sd", ex.Beta.SD, fine.Beta.SD}, {"beta 5%", ex.Beta.Q05, fine.Beta.Q05}}
	for i := range ex.Theta {
		pairs = append(pairs, pair{"theta mean", ex.Theta[i].Mean, fine.Theta[i].Mean}, pair{"theta 95%", ex.Theta[i].Q95, fine.Theta[i].Q95})
	}
	for _, p := range pairs {
		if math.Abs(p.got-p.want) > 1e-3*math.Abs(p.want) {
			t.Errorf("%s: step %g gives %.8g, step %g %.8g", p.what, GridStep, p.got, GridStep/2, p.want)
		}
	}
	t.Logf("exact: alpha %.5f ± %.5f (half step %.5f ± %.5f), beta %.5f ± %.5f (half step %.5f ± %.5f)",
		ex.Alpha.Mean, ex.Alpha.SD, fine.Alpha.Mean, fine.Alpha.SD, ex.Beta.Mean, ex.Beta.SD, fine.Beta.Mean, fine.Beta.SD)
	closeTo(t, "exact E[alpha] against the BUGS manual", ex.Alpha.Mean, BUGSAlpha, 0.01)
	closeTo(t, "exact E[beta] against the BUGS manual", ex.Beta.Mean, BUGSBeta, 0.01)
}

// TestCommand runs the command as text and JSON, and on bad data.
func TestCommand(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := run([]string{"-q"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	out := stdout.String()
	for _, want := range []string{"converged", "alpha", "beta", "theta[10]", "exact", "BUGS manual"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if stderr.Len() != 0 {
		t.Errorf("-q wrote to stderr: %q", stderr.String())
	}
	stdout.Reset()
	if err := run([]string{"-json", "-data", "data.json", "-method", "delta"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	var r struct {
		Method    string    `json:"method"`
		Converged bool      `json:"converged"`
		Exact     Posterior `json:"exact"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	if r.Method != "delta,conjugate,conjugate" || !r.Converged || len(r.Exact.Theta) != 10 {
		t.Errorf("unexpected JSON result: %+v", r)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"y": [1, 2], "t": [1, -2]}`), 0o644)
	if err := run([]string{"-q", "-data", bad}, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), `"t"[2]`) {
		t.Errorf("negative time: error %v, want one naming \"t\"[2]", err)
	}
	os.WriteFile(bad, []byte(`{"y": [1, -2], "t": [1, 2]}`), 0o644)
	if err := run([]string{"-q", "-data", bad}, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), `"y"[2]`) {
		t.Errorf("negative count: error %v, want one naming \"y\"[2]", err)
	}
}
