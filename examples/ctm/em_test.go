package main

import (
	"context"
	"math"
	goruntime "runtime"
	"strings"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/optimize"

	"github.com/vigen-go/vigen/examples/ctm/ctm"
	"github.com/vigen-go/vigen/runtime"
)

// smallCTM is a CTM with K = 3 topics over V = 15 terms, each topic
// concentrated on five terms, and a correlated logistic-normal prior.
func smallCTM() *apParams {
	K, V := 3, 15
	p := &apParams{K: K, V: V, Mu0: []float64{0.3, -0.2, 0}, Sigma0: [][]float64{{1, 0.4, 0}, {0.4, 0.8, -0.2}, {0, -0.2, 0.6}}}
	for k := range K {
		row := make([]float64, V)
		s := 0.0
		for v := range row {
			row[v] = 0.05
			if v/5 == k {
				row[v] = 1 + float64(v%5)
			}
			s += row[v]
		}
		for v := range row {
			row[v] /= s
		}
		p.Beta = append(p.Beta, row)
	}
	return p
}

func smallCorpus(t *testing.T, d int) (*apParams, [][][2]int) {
	p := smallCTM()
	docs, _, err := Synthetic(p, 7, d)
	if err != nil {
		t.Fatal(err)
	}
	return p, docs
}

// TestEMBitIdenticalAcrossGOMAXPROCS runs variational EM (E-step on all
// cores, M-steps for β, μ0, Σ0) with GOMAXPROCS 1 and 2 and with 1, 2 and 7
// workers, and wants bit-identical params and ELBO traces.
func TestEMBitIdenticalAcrossGOMAXPROCS(t *testing.T) {
	_, docs := smallCorpus(t, 120)
	run := func(procs, workers int) *ctm.Result {
		defer goruntime.GOMAXPROCS(goruntime.GOMAXPROCS(procs))
		res, err := ctm.Fit(context.Background(), &ctm.Data{K: 3, W: docs, V: 15}, ctm.Options{MaxIter: 8, Workers: workers, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	ref := run(1, 0)
	if ref.Iterations != 8 {
		t.Fatalf("ran %d iterations, want 8 (status %s)", ref.Iterations, ref.Status)
	}
	for _, c := range [][2]int{{2, 0}, {2, 1}, {2, 7}, {1, 2}} {
		res := run(c[0], c[1])
		same := func(name string, a, b []float64) {
			for i := range a {
				if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
					t.Fatalf("GOMAXPROCS %d, workers %d: %s[%d] = %v, want %v (GOMAXPROCS 1)", c[0], c[1], name, i, b[i], a[i])
				}
			}
		}
		same("elbo", ref.ELBO, res.ELBO)
		same("mu0", ref.Params.Mu0, res.Params.Mu0)
		for k := range ref.Params.Beta {
			same("beta", ref.Params.Beta[k], res.Params.Beta[k])
			same("Sigma0", ref.Params.Sigma0[k], res.Params.Sigma0[k])
		}
	}
}

// TestMStepsMaximizeExpectedCompleteLogLik checks the generated M-steps
// against direct numerical maximization. After a Fit, the params are the
// M-step of the final q, so they must maximize, over β, μ0 and Σ0, the
// expected complete log likelihood under that q written out here:
//
//	Q(β) = Σ_d Σ_n c_dn Σ_k φ_dnk log β_k,w_dn
//	Q(μ0, Σ0) = Σ_d −½ log|Σ0| − ½ tr(Σ0⁻¹ (Σ_d + (m_d − μ0)(m_d − μ0)ᵀ))
//
// β's rows are maximized through a softmax and (μ0, Σ0) through a Cholesky
// factor with log diagonal, by BFGS with finite-difference gradients.
func TestMStepsMaximizeExpectedCompleteLogLik(t *testing.T) {
	p, docs := smallCorpus(t, 60)
	res, err := ctm.Fit(context.Background(), &ctm.Data{K: p.K, W: docs, V: p.V}, ctm.Options{MaxIter: 4, Seed: 5, Keep: []string{"z"}})
	if err != nil {
		t.Fatal(err)
	}
	K, V := p.K, p.V
	phi := res.Latent.Z.Params["prob"]
	// β: expected counts per topic and term
	counts := make([][]float64, K)
	for k := range counts {
		counts[k] = make([]float64, V)
	}
	off := 0
	for _, doc := range docs {
		for _, e := range doc {
			for k := range K {
				counts[k][e[0]-1] += float64(e[1]) * phi[off*K+k]
			}
			off++
		}
	}
	for k := range K {
		qb := func(x []float64) float64 { // softmax parameters of row k
			m := math.Inf(-1)
			for _, v := range x {
				m = math.Max(m, v)
			}
			s := 0.0
			for _, v := range x {
				s += math.Exp(v - m)
			}
			f := 0.0
			for v := range V {
				f += counts[k][v] * (x[v] - m - math.Log(s))
			}
			return -f
		}
		x0 := make([]float64, V)
		for v := range x0 {
			x0[v] = math.Log(1.0 / float64(V))
		}
		got := minimize(t, qb, x0)
		m := math.Inf(-1)
		for _, v := range got {
			m = math.Max(m, v)
		}
		s := 0.0
		for _, v := range got {
			s += math.Exp(v - m)
		}
		worst := 0.0
		for v := range V {
			num := math.Exp(got[v]-m) / s
			worst = math.Max(worst, math.Abs(num-res.Params.Beta[k][v]))
		}
		t.Logf("beta row %d: largest difference from numerical maximization %.2g", k+1, worst)
		if worst > 1e-5 {
			t.Errorf("beta row %d: the M-step differs from the numerical maximum by %.2g", k+1, worst)
		}
	}
	// μ0, Σ0
	unpack := func(x []float64) ([]float64, [][]float64) {
		mu := x[:K]
		l := make([][]float64, K)
		i := K
		for r := range K {
			l[r] = make([]float64, K)
			for c := 0; c <= r; c++ {
				if c == r {
					l[r][c] = math.Exp(x[i])
				} else {
					l[r][c] = x[i]
				}
				i++
			}
		}
		sig := make([][]float64, K)
		for r := range K {
			sig[r] = make([]float64, K)
			for c := range K {
				for j := range K {
					sig[r][c] += l[r][j] * l[c][j]
				}
			}
		}
		return mu, sig
	}
	qg := func(x []float64) float64 {
		mu, sig := unpack(x)
		inv, logdet := invert3(sig)
		f := 0.0
		for _, g := range res.Latent.Theta {
			f -= 0.5 * logdet
			for r := range K {
				for c := range K {
					s := g.Cov[r][c] + (g.Mean[r]-mu[r])*(g.Mean[c]-mu[c])
					f -= 0.5 * inv[r][c] * s
				}
			}
		}
		return -f
	}
	x0 := make([]float64, K+K*(K+1)/2)
	got := minimize(t, qg, x0)
	mu, sig := unpack(got)
	worst := 0.0
	for r := range K {
		worst = math.Max(worst, math.Abs(mu[r]-res.Params.Mu0[r]))
		for c := range K {
			worst = math.Max(worst, math.Abs(sig[r][c]-res.Params.Sigma0[r][c]))
		}
	}
	t.Logf("mu0, Sigma0: largest difference from numerical maximization %.2g", worst)
	if worst > 1e-5 {
		t.Errorf("mu0, Sigma0: the M-step differs from the numerical maximum by %.2g", worst)
	}
}

// minimize runs BFGS with central-difference gradients to a tight
// gradient tolerance.
func minimize(t *testing.T, f func([]float64) float64, x0 []float64) []float64 {
	t.Helper()
	prob := optimize.Problem{Func: f, Grad: func(g, x []float64) {
		fd.Gradient(g, f, x, &fd.Settings{Formula: fd.Central, Step: 1e-6})
	}}
	r, err := optimize.Minimize(prob, x0, &optimize.Settings{GradientThreshold: 1e-9, MajorIterations: 5000}, &optimize.BFGS{})
	if err != nil && r == nil {
		t.Fatal(err)
	}
	return r.X
}

// invert3 inverts a small SPD matrix by Gauss–Jordan elimination and
// returns its log-determinant.
func invert3(a [][]float64) ([][]float64, float64) {
	n := len(a)
	m := make([][]float64, n)
	inv := make([][]float64, n)
	for i := range n {
		m[i] = append([]float64(nil), a[i]...)
		inv[i] = make([]float64, n)
		inv[i][i] = 1
	}
	logdet := 0.0
	for c := range n {
		piv := m[c][c]
		logdet += math.Log(math.Abs(piv))
		for j := range n {
			m[c][j] /= piv
			inv[c][j] /= piv
		}
		for r := range n {
			if r == c {
				continue
			}
			f := m[r][c]
			for j := range n {
				m[r][j] -= f * m[c][j]
				inv[r][j] -= f * inv[c][j]
			}
		}
	}
	return inv, logdet
}

// MStep reads every word's q(z): on a result that left it out (no
// Options.Keep) it refuses, naming the option, rather than estimate the
// params from a z it would have to make up; with z kept it runs.
func TestMStepNeedsZ(t *testing.T) {
	p, docs := smallCorpus(t, 20)
	m, err := ctm.NewModel(&ctm.Data{K: p.K, W: docs, V: p.V})
	if err != nil {
		t.Fatal(err)
	}
	lean, err := m.Fit(context.Background(), ctm.Options{MaxIter: 2, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.MStep(lean, ctm.Options{}); err == nil || !strings.Contains(err.Error(), "leaves out z") || !strings.Contains(err.Error(), "Options.Keep") {
		t.Errorf("MStep on a result without z: error %v", err)
	}
	kept, err := m.Fit(context.Background(), ctm.Options{MaxIter: 2, Seed: 5, Keep: []string{"z"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.MStep(kept, ctm.Options{}); err != nil {
		t.Errorf("MStep with z kept: %v", err)
	}
}

// The approximation diagnostic covers every document's q(θ) under
// coordinate ascent and under SVI, and a corpus without documents has
// nothing to check (and no panic).
func TestDiagnosticPerDocument(t *testing.T) {
	p, docs := smallCorpus(t, 30)
	for _, algo := range []string{"ca", "svi"} {
		res, err := ctm.Fit(context.Background(), &ctm.Data{K: p.K, W: docs, V: p.V}, ctm.Options{MaxIter: 3, Seed: 2, Algorithm: algo,
			SVI: runtime.SVISettings{BatchSize: 10, Passes: 2}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Diagnostics) != 1 || len(res.Diagnostics[0].UnitKHat) != len(docs) || res.Diagnostics[0].Draws != 1000 {
			t.Errorf("%s: diagnostics %+v, want one per document", algo, res.Diagnostics)
		}
	}
	res, err := ctm.Fit(context.Background(), &ctm.Data{K: 3, V: 15, W: [][][2]int{}}, ctm.Options{MaxIter: 2, AllowEmpty: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Diagnostics) != 0 {
		t.Errorf("no documents: diagnostics %+v", res.Diagnostics)
	}
}
