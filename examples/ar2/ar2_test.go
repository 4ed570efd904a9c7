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

	"github.com/vigen-go/vigen/examples/ar2/ar2"
)

// handFit is coordinate ascent for ar2.vi written out by hand: q(alpha),
// q(beta1), q(beta2) Gaussian by their exact updates (f is quadratic in
// each), q(log sigma) = N(U, VU) by Newton on
//
//	f(u) = −e^(2u)/2 + u − n·u − e^(−2u)·R/2,   R = Σ_t E[(y_t − α − β1 y_(t−1) − β2 y_(t−2))²]
//
// (the HalfNormal(1) prior with its Jacobian, then the likelihood), with
// E[exp(−2u)] = exp(−2U + 2VU) in the other updates.
type handFit struct {
	M, V  [3]float64 // alpha, beta1, beta2
	U, VU float64
}

func hand(y []float64) handFit {
	n := len(y) - 2
	prior := [3]float64{1 / (AlphaPriorSD * AlphaPriorSD), 1 / (BetaPriorSD * BetaPriorSD), 1 / (BetaPriorSD * BetaPriorSD)}
	x := func(t int) [3]float64 { return [3]float64{1, y[t-1], y[t-2]} }
	q := handFit{V: [3]float64{1, 1, 1}, U: 0, VU: 1}
	for range 100000 {
		w := math.Exp(-2*q.U + 2*q.VU)
		for i := range 3 {
			p, lin := prior[i], 0.0
			for t := 2; t < len(y); t++ {
				xt := x(t)
				r := y[t]
				for k := range 3 {
					if k != i {
						r -= q.M[k] * xt[k]
					}
				}
				p += w * xt[i] * xt[i]
				lin += w * xt[i] * r
			}
			q.M[i], q.V[i] = lin/p, 1/p
		}
		R := 0.0
		for t := 2; t < len(y); t++ {
			xt := x(t)
			r := y[t]
			for k := range 3 {
				r -= q.M[k] * xt[k]
			}
			R += r * r
			for k := range 3 {
				R += xt[k] * xt[k] * q.V[k]
			}
		}
		u0, u := q.U, q.U
		d2 := func(u float64) float64 {
			return -2*math.Exp(2*u)/(SigmaPriorScale*SigmaPriorScale) - 2*math.Exp(-2*u)*R
		}
		for range 200 {
			d1 := -math.Exp(2*u)/(SigmaPriorScale*SigmaPriorScale) + 1 - float64(n) + math.Exp(-2*u)*R
			step := d1 / d2(u)
			u -= step
			if math.Abs(step) < 1e-15 {
				break
			}
		}
		q.U, q.VU = u, -1/d2(u)
		if math.Abs(q.U-u0) < 1e-15 {
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

// TestFitIsHandWrittenCoordinateAscent: the Laplace fit to the bundled
// series is the fixed point of the coordinate ascent written out by hand,
// to 1e-8; its coefficient means are the exact posterior means to 1e-3
// (mean field gets the means of this nearly Gaussian posterior right, not
// the sds).
func TestFitIsHandWrittenCoordinateAscent(t *testing.T) {
	d := Synthetic(1, 200, DefaultTruth)
	res, err := ar2.Fit(context.Background(), d, ar2.Options{Tol: 1e-15, MeanTol: 1e-13, MaxIter: 100000})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Converged {
		t.Fatalf("%s", res.Status)
	}
	h := hand(d.Y)
	l := res.Latent
	for i, g := range []struct {
		name string
		mean float64
		sd   float64
	}{{"alpha", l.Alpha.Mean, l.Alpha.SD}, {"beta1", l.Beta1.Mean, l.Beta1.SD}, {"beta2", l.Beta2.Mean, l.Beta2.SD}} {
		closeTo(t, g.name+" mean", g.mean, h.M[i], 1e-8)
		closeTo(t, g.name+" sd", g.sd, math.Sqrt(h.V[i]), 1e-8)
	}
	closeTo(t, "mean of log sigma", l.Sigma.Mean, h.U, 1e-8)
	closeTo(t, "sd of log sigma", l.Sigma.SD, math.Sqrt(h.VU), 1e-8)
	closeTo(t, "E[sigma]", l.Sigma.Constrained.Mean, math.Exp(h.U+h.VU/2), 1e-8)
	closeTo(t, "sd[sigma]", l.Sigma.Constrained.SD, math.Sqrt(math.Expm1(h.VU))*math.Exp(h.U+h.VU/2), 1e-8)

	ex, err := Exact(d.Y)
	if err != nil {
		t.Fatal(err)
	}
	vi := Summaries(res)
	for k, name := range []string{"alpha", "beta1", "beta2", "sigma"} {
		g, e := vi.get(k), ex.get(k)
		t.Logf("%s: VI %.4f ± %.4f, exact %.4f ± %.4f", name, g.Mean, g.SD, e.Mean, e.SD)
		if k < 3 && math.Abs(g.Mean-e.Mean) > 1e-3 {
			t.Errorf("%s: VI mean %.6f, exact posterior mean %.6f", name, g.Mean, e.Mean)
		}
	}
	t.Logf("sigma: hand-written %.4f ± %.4f", math.Exp(h.U+h.VU/2), math.Sqrt(math.Expm1(h.VU))*math.Exp(h.U+h.VU/2))
}

// TestExactGrid: Exact does not move when its grid step is halved: means
// and sds to 1e-6, quantiles (second order in the step) to 1e-4.
func TestExactGrid(t *testing.T) {
	d := Synthetic(1, 200, DefaultTruth)
	ex, err := Exact(d.Y)
	if err != nil {
		t.Fatal(err)
	}
	fine, err := exactOn(d.Y, GridStep/2)
	if err != nil {
		t.Fatal(err)
	}
	for k, name := range []string{"alpha", "beta1", "beta2", "sigma"} {
		a, b := ex.get(k), fine.get(k)
		for _, p := range [][3]float64{{a.Mean, b.Mean, 1e-6}, {a.SD, b.SD, 1e-6}, {a.Q05, b.Q05, 1e-4}, {a.Q50, b.Q50, 1e-4}, {a.Q95, b.Q95, 1e-4}} {
			if math.Abs(p[0]-p[1]) > p[2]*math.Max(1, math.Abs(p[1])) {
				t.Errorf("%s: step %g gives %+v, step %g %+v", name, GridStep, a, GridStep/2, b)
				break
			}
		}
	}
}

// TestCommand runs the command as text and JSON, and on bad data.
func TestCommand(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := run([]string{"-q"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	out := stdout.String()
	for _, want := range []string{"converged", "alpha", "beta1", "beta2", "sigma", "exact", "true"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if stderr.Len() != 0 {
		t.Errorf("-q wrote to stderr: %q", stderr.String())
	}
	stdout.Reset()
	if err := run([]string{"-json", "-T", "300", "-seed", "2", "-method", "delta"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	var r struct {
		Method    string    `json:"method"`
		Converged bool      `json:"converged"`
		Truth     *Truth    `json:"truth"`
		Exact     Posterior `json:"exact"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	if r.Method != "delta,delta,delta,delta" || !r.Converged || r.Truth == nil || r.Exact.Sigma.Mean <= 0 {
		t.Errorf("unexpected JSON result: %+v", r)
	}
	stdout.Reset()
	if err := run([]string{"-q", "-data", "data.json"}, &stdout, &stderr); err != nil || !strings.Contains(stdout.String(), "data.json") {
		t.Errorf("-data data.json: %v\n%s", err, stdout.String())
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"y": [1, 2, "x"]}`), 0o644)
	if err := run([]string{"-q", "-data", bad}, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), `"y"`) {
		t.Errorf("a string in y: error %v, want one naming \"y\"", err)
	}
	if err := run([]string{"-q", "-T", "2"}, &stdout, &stderr); err == nil {
		t.Errorf("-T 2: no error")
	}
}
