package main

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/examples/lda/lda"
	"github.com/vigen-go/vigen/golden"
	"github.com/vigen-go/vigen/runtime"
)

// dirMoment is log E[Π_i x_i^{p_i}] under a symmetric Dirichlet(conc) of
// dimension dim, for the first len(p) coordinates:
// Σ_i [log Γ(conc + p_i) − log Γ(conc)] + log Γ(dim·conc) − log Γ(dim·conc + Σ p).
func dirMoment(conc float64, dim int, p ...float64) float64 {
	lg := func(x float64) float64 { v, _ := math.Lgamma(x); return v }
	s, tot := 0.0, 0.0
	for _, q := range p {
		s += lg(conc+q) - lg(conc)
		tot += q
	}
	return s + lg(float64(dim)*conc) - lg(float64(dim)*conc+tot)
}

// exactLogC is log C(T) in closed form for one document of n = 1 or 2
// tokens (ldaLogC's integral, expanded): with a = 1/T and θ ~ Dir(α)
// (its prior untempered),
//
//	C = E_θ E_β[(Σ_k θ_k^a S_k)^n],
//
// n = 1: K E[θ_1^a] · V E[β_1^a];
// n = 2: K E[θ_1^{2a}] E[S²] + K(K−1) E[θ_1^a θ_2^a] E[S]², with
// E[S] = V E[β_1^a], E[S²] = V E[β_1^{2a}] + V(V−1) E[β_1^a β_2^a].
// Two documents of one token each (twoDocs): C = E[θ_1^a]²
// E_β[(Σ_k S_k)²], E[(Σ S_k)²] = K E[S²] + K(K−1) E[S]².
func exactLogC(T float64, n, K, V int, alpha, eta float64, twoDocs bool) float64 {
	a := 1 / T
	c, konst := alpha, 0.0
	eS := float64(V) * math.Exp(dirMoment(eta, V, a))
	eS2 := float64(V)*math.Exp(dirMoment(eta, V, 2*a)) + float64(V*(V-1))*math.Exp(dirMoment(eta, V, a, a))
	kf := float64(K)
	if twoDocs {
		m1 := math.Exp(dirMoment(c, K, a))
		return 2*konst + math.Log(m1*m1*(kf*eS2+kf*(kf-1)*eS*eS))
	}
	switch n {
	case 1:
		return konst + math.Log(kf*math.Exp(dirMoment(c, K, a))*eS)
	case 2:
		return konst + math.Log(kf*math.Exp(dirMoment(c, K, 2*a))*eS2+kf*(kf-1)*math.Exp(dirMoment(c, K, a, a))*eS*eS)
	}
	panic("n")
}

// The Monte Carlo log C(T) agrees with the closed form for one document of
// one or two tokens (and two one-token documents) within 4 standard
// errors, and is 0 at T = 1 exactly.
func TestLDALogCClosedForm(t *testing.T) {
	golden.SlowTier(t)
	grid := []float64{1, 1.5, 3, 10}
	for _, tc := range []struct {
		lens          []int
		K, V          int
		alpha, eta    float64
		nBeta, nTheta int
	}{
		{[]int{1}, 2, 3, 0.5, 0.3, 2000, 200},
		{[]int{2}, 2, 3, 0.5, 0.3, 2000, 200},
		{[]int{2}, 3, 4, 0.2, 0.1, 2000, 200},
		{[]int{1, 1}, 3, 4, 0.5, 0.5, 2000, 200},
		// the experiment's regime: α = η = 1/K, sparse θ and β
		{[]int{2}, 100, 50, 0.01, 0.01, 200, 20},
	} {
		logC, se := ldaLogC(grid, tc.lens, tc.K, tc.V, tc.alpha, tc.eta, tc.nBeta, tc.nTheta, 7)
		if logC[0] != 0 || se[0] != 0 {
			t.Errorf("%v: log C(1) = %v ± %v, want exactly 0", tc, logC[0], se[0])
		}
		for m, T := range grid[1:] {
			m++
			want := exactLogC(T, tc.lens[0], tc.K, tc.V, tc.alpha, tc.eta, len(tc.lens) == 2)
			t.Logf("lens %v K %d V %d T %g: log C = %.5f ± %.5f, exact %.5f", tc.lens, tc.K, tc.V, T, logC[m], se[m], want)
			if !(se[m] > 0) || se[m] > 0.05 || math.Abs(logC[m]-want) > 4*se[m] {
				t.Errorf("lens %v K %d V %d α %g η %g T %g: log C = %.5f ± %.5f, exact %.5f (%.1f se)",
					tc.lens, tc.K, tc.V, tc.alpha, tc.eta, T, logC[m], se[m], want, (logC[m]-want)/se[m])
			}
		}
	}
}

// The closed form itself: at T = 1 the joint is normalized, so each case
// gives log C = 0 (up to rounding); it grows with T here.
func TestExactLogCAtOne(t *testing.T) {
	for _, n := range []int{1, 2} {
		if v := exactLogC(1, n, 3, 4, 0.2, 0.1, false); math.Abs(v) > 1e-12 {
			t.Errorf("n = %d: exact log C(1) = %v", n, v)
		}
	}
	if v := exactLogC(1, 1, 3, 4, 0.2, 0.1, true); math.Abs(v) > 1e-12 {
		t.Errorf("two documents: exact log C(1) = %v", v)
	}
	if a, b := exactLogC(2, 2, 3, 4, 0.2, 0.1, false), exactLogC(4, 2, 3, 4, 0.2, 0.1, false); !(0 < a && a < b) {
		t.Errorf("log C(2) = %v, log C(4) = %v: want 0 < log C(2) < log C(4)", a, b)
	}
}

// ldaLogC is deterministic, sparse η does not underflow (η = 0.01 over
// 2,000 terms), and log C grows with T on a small corpus.
func TestLDALogCSparseDeterministic(t *testing.T) {
	grid := vtGrid(5, 10)
	lens := []int{5, 50, 50, 120}
	a, sa := ldaLogC(grid, lens, 5, 2000, 0.2, 0.01, 20, 50, 3)
	b, _ := ldaLogC(grid, lens, 5, 2000, 0.2, 0.01, 20, 50, 3)
	if !slices.Equal(a, b) {
		t.Fatalf("not deterministic: %v vs %v", a, b)
	}
	for m := range grid {
		if math.IsNaN(a[m]) || math.IsInf(a[m], 0) || math.IsNaN(sa[m]) {
			t.Fatalf("log C = %v ± %v", a, sa)
		}
		if m > 0 && !(a[m] > a[m-1]) {
			t.Errorf("log C not increasing in T: %v", a)
		}
	}
	// Per token, log C(10) is below the bound (1 − a)(log V + log K) of a
	// uniform θ and β (Hölder), and well above 0.
	if pt := a[len(a)-1] / 225; !(pt > 1 && pt < 0.9*(math.Log(2000)+math.Log(5))) {
		t.Errorf("log C(10) per token = %v", pt)
	}
}

func TestVTGrid(t *testing.T) {
	g := vtGrid(30, 10)
	if g[0] != 1 || math.Abs(g[29]-10) > 1e-12 || len(g) != 30 {
		t.Fatalf("grid %v", g)
	}
	r := g[1] / g[0]
	for m := 2; m < len(g); m++ {
		if math.Abs(g[m]/g[m-1]-r) > 1e-12 {
			t.Fatalf("not geometric: %v", g)
		}
	}
}

// The citeulike split drops empty documents before numbering, sends every
// fifth to test, and halves test documents token by token as AP's rule 2.
func TestCiteulikeSplit(t *testing.T) {
	docs := [][][2]int{
		{{1, 1}}, {}, {{2, 2}}, {{3, 1}}, {{4, 1}},
		{{9, 3}, {5, 2}}, // index 4 after dropping the empty one: test
		{{6, 1}},
		{}, {{7, 1}}, {{8, 1}}, {{1, 1}},
		{{3, 1}}, // index 9: test, but 1 token: dropped
	}
	train, obs, held := citeulikeSplit(docs)
	if len(train) != 8 || len(obs) != 1 || len(held) != 1 {
		t.Fatalf("train %v obs %v held %v", train, obs, held)
	}
	// tokens 9 9 9 5 5: observed 9, 9, 5; held out 9, 5
	if !slices.Equal(obs[0], [][2]int{{5, 1}, {9, 2}}) || !slices.Equal(held[0], [][2]int{{5, 1}, {9, 1}}) {
		t.Errorf("halves %v / %v", obs[0], held[0])
	}
}

// The tempering command runs end to end on a tiny corpus: a row per
// method, log C(1) = 0, VT's final temperature on the grid's range.
func TestTemperingCommandTiny(t *testing.T) {
	dir := t.TempDir()
	data, _ := Synthetic(1, 60)
	var b strings.Builder
	for _, doc := range data.W {
		b.WriteString(strconv.Itoa(len(doc)))
		for _, p := range doc {
			b.WriteString(" " + strconv.Itoa(p[0]-1) + ":" + strconv.Itoa(p[1]))
		}
		b.WriteString("\n")
	}
	b.WriteString("0\n")
	if err := os.MkdirAll(filepath.Join(dir, "citeulike-t"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "citeulike-t", "mult.dat"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	err := run([]string{"tempering", "-dir", dir, "-data", "citeulike", "-K", "5", "-passes", "3", "-batch", "10",
		"-tau0", "1", "-grid", "5", "-nbeta", "10", "-ntheta", "20", "-seeds", "1", "-methods", "svi,avi1,vt",
		"-logc", filepath.Join(dir, "logc.json")}, &out, &errb)
	if err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	s := out.String()
	if !strings.Contains(s, "48 training documents") || !strings.Contains(s, "T =  1.0000  log C =           0.00 ± 0.00") {
		t.Errorf("output:\n%s", s)
	}
	rows := 0
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) == 8 && f[0] == "citeulike" {
			rows++
			held, _ := strconv.ParseFloat(f[3], 64)
			T, _ := strconv.ParseFloat(f[5], 64)
			if !(held < 0 && held > -10) || !(T >= 1 && T <= 10) || f[2] != "1" {
				t.Errorf("row %q", line)
			}
			if f[1] != "vt" && T != 1 {
				t.Errorf("%s ends at T = %v", f[1], T)
			}
		}
	}
	if rows != 3 {
		t.Errorf("%d rows:\n%s", rows, s)
	}
	if _, err := os.Stat(filepath.Join(dir, "logc.json")); err != nil {
		t.Error(err)
	}
}

// logJointPerToken agrees with the runtime's own unit log joint, recovered
// from an annealed fit's traces: TemperedELBO = ELBO − (1 − 1/T)·Σ_d lj_d.
func TestLogJointPerToken(t *testing.T) {
	data, _ := Synthetic(2, 80)
	alpha, eta := 0.3, 0.05
	data.K, data.Alpha, data.Eta = 5, &alpha, &eta
	m, err := lda.NewModel(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, algo := range []string{"ca", "svi"} {
		res, err := m.Fit(context.Background(), lda.Options{Seed: 3, Workers: 1, Algorithm: algo, MaxIter: 2,
			SVI:    runtime.SVISettings{BatchSize: 20, Passes: 2},
			Temper: runtime.TemperSettings{Anneal: runtime.Anneal{T0: 4, Length: 100}}, Keep: []string{"z"}})
		if err != nil {
			t.Fatal(err)
		}
		n := len(res.ELBO) - 1
		T := res.Temperature[n]
		if !(T > 3) {
			t.Fatalf("%s: T = %v", algo, T)
		}
		want := (res.ELBO[n] - res.TemperedELBO[n]) / (1 - 1/T)
		tokens := 0
		for _, l := range docLengths(data.W) {
			tokens += l
		}
		got := logJointPerToken(data, res) * float64(tokens)
		t.Logf("%s: T = %.3f, Σ_d lj_d = %.6f by hand, %.6f from the traces", algo, T, got, want)
		if math.Abs(got-want) > 1e-6*math.Abs(want) {
			t.Errorf("%s: Σ_d lj_d = %.6f by hand, %.6f from the traces", algo, got, want)
		}
	}
}
