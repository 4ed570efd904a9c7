package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/examples/hierlogreg/hierlogreg"
	"github.com/vigen-go/vigen/golden"
	"github.com/vigen-go/vigen/runtime"
)

// handF is unit g's f(θ) written out from Eq. 22-23 and §4.2 by hand:
// log N(θ; μ0, Λ0⁻¹) + Σ_{n: group[n]=g} [y_n u_n − log(1 + e^{u_n})], u_n = x_nᵀθ,
// with its gradient and Hessian. It loops over all points and tests the
// group itself, independently of the generated per-unit lists.
func handF(d *hierlogreg.Data, g int, theta []float64) (f float64, grad []float64, hess [][]float64) {
	p := len(theta)
	lam := d.Lambda0
	lamFlat := make([]float64, 0, p*p)
	for _, r := range lam {
		lamFlat = append(lamFlat, r...)
	}
	logdet, _ := runtime.LogDetSPD(lamFlat, p)
	grad = make([]float64, p)
	hess = make([][]float64, p)
	for i := range hess {
		hess[i] = make([]float64, p)
	}
	f = 0.5*logdet - 0.5*float64(p)*math.Log(2*math.Pi)
	for i := range p {
		for j := range p {
			f -= 0.5 * (theta[i] - d.Mu0[i]) * lam[i][j] * (theta[j] - d.Mu0[j])
			grad[i] -= lam[i][j] * (theta[j] - d.Mu0[j])
			hess[i][j] -= lam[i][j]
		}
	}
	for n, x := range d.X {
		if d.Group[n] != g+1 {
			continue
		}
		u := 0.0
		for i := range p {
			u += x[i] * theta[i]
		}
		s := 1 / (1 + math.Exp(-u))
		f += float64(d.Y[n])*u - math.Log1p(math.Exp(u))
		for i := range p {
			grad[i] += (float64(d.Y[n]) - s) * x[i]
			for j := range p {
				hess[i][j] -= s * (1 - s) * x[i] * x[j]
			}
		}
	}
	return f, grad, hess
}

// smallData is a synthetic data set whose last group has no points, with a
// non-diagonal prior precision and nonzero prior mean.
func smallData() *hierlogreg.Data {
	d, _ := Synthetic(7, 5, 3)
	d.M = 6 // group 6 is empty
	d.Mu0 = []float64{0.3, -0.2, 0.1}
	d.Lambda0 = [][]float64{{2, 0.5, 0}, {0.5, 1.5, 0.3}, {0, 0.3, 1}}
	return d
}

func TestThetaFMatchesHandWrittenF(t *testing.T) {
	d := smallData()
	m, err := hierlogreg.NewModel(d)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	p := d.P
	theta, grad, hess := make([]float64, p), make([]float64, p), make([]float64, p*p)
	for g := range d.M {
		for i := range theta {
			theta[i] = rng.NormFloat64()
		}
		f := m.ThetaF(g, theta, grad, hess)
		wf, wg, wh := handF(d, g, theta)
		// the sums have tens of terms of order one: agreement to 1e-12
		// relative is what reordering the additions allows
		if math.Abs(f-wf) > 1e-12*(1+math.Abs(wf)) {
			t.Errorf("unit %d: f = %.15g, by hand %.15g", g, f, wf)
		}
		for i := range p {
			if math.Abs(grad[i]-wg[i]) > 1e-11 {
				t.Errorf("unit %d: grad[%d] = %.15g, by hand %.15g", g, i, grad[i], wg[i])
			}
			for j := range p {
				if math.Abs(hess[i*p+j]-wh[i][j]) > 1e-11 {
					t.Errorf("unit %d: hess[%d][%d] = %.15g, by hand %.15g", g, i, j, hess[i*p+j], wh[i][j])
				}
			}
		}
	}
}

// TestEMFixedPoint runs variational EM to convergence on synthetic groups
// and checks the result against the optimality conditions written by hand:
// each q(θ_m) is the Laplace approximation of its f (∇f(μ_m) = 0, Σ_m =
// −∇²f⁻¹), and (μ0, Λ0) is the MAP update of App. C with each unit's Σ_m
// in the scatter: Λ0⁻¹ = (Φ0⁻¹ + Σ_m [(μ_m − μ0)(μ_m − μ0)ᵀ + Σ_m]) /
// (M + ν − p − 1), μ0 = (Λ0⁻¹ Φ1⁻¹ / M + I)⁻¹ mean(μ_m).
func TestEMFixedPoint(t *testing.T) {
	d, _ := Synthetic(3, 40, 3)
	res, err := hierlogreg.Fit(context.Background(), d, hierlogreg.Options{Tol: 1e-14, MeanTol: 1e-10, MaxIter: 500})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Converged {
		t.Fatalf("EM did not converge: %s after %d iterations", res.Status, res.Iterations)
	}
	p, M := d.P, d.M
	res.Params.Into(d)
	for g, q := range res.Latent.Theta {
		_, grad, hess := handF(d, g, q.Mean)
		for i := range p {
			if math.Abs(grad[i]) > 1e-7 {
				t.Errorf("unit %d: ∇f(μ)[%d] = %.3g, want 0", g, i, grad[i])
			}
		}
		negH := make([]float64, 0, p*p)
		for _, r := range hess {
			for _, v := range r {
				negH = append(negH, -v)
			}
		}
		inv := make([]float64, p*p)
		if !runtime.InvSPD(inv, negH, p) {
			t.Fatalf("unit %d: −∇²f is not positive definite", g)
		}
		for i := range p {
			for j := range p {
				if math.Abs(q.Cov[i][j]-inv[i*p+j]) > 1e-6 {
					t.Errorf("unit %d: Σ[%d][%d] = %.9g, −∇²f⁻¹ = %.9g", g, i, j, q.Cov[i][j], inv[i*p+j])
				}
			}
		}
	}
	// App. C by hand; Φ0 = Φ1 = 0.01 I and ν = p + 100 (the model's defaults)
	nu := float64(p + 100)
	mu0 := res.Params.Mu0
	scatter := make([]float64, p*p)
	mean := make([]float64, p)
	for _, q := range res.Latent.Theta {
		for i := range p {
			mean[i] += q.Mean[i] / float64(M)
			for j := range p {
				scatter[i*p+j] += (q.Mean[i]-mu0[i])*(q.Mean[j]-mu0[j]) + q.Cov[i][j]
			}
		}
	}
	sigma0 := make([]float64, p*p)
	for i := range p {
		for j := range p {
			phi0inv := 0.0
			if i == j {
				phi0inv = 100
			}
			sigma0[i*p+j] = (phi0inv + scatter[i*p+j]) / (float64(M) + nu - float64(p) - 1)
		}
	}
	lam := make([]float64, 0, p*p)
	for _, r := range res.Params.Lambda0 {
		lam = append(lam, r...)
	}
	fitted := make([]float64, p*p)
	runtime.InvSPD(fitted, lam, p)
	for k := range sigma0 {
		if math.Abs(fitted[k]-sigma0[k]) > 1e-8 {
			t.Errorf("Λ0⁻¹[%d] = %.10g, App. C gives %.10g", k, fitted[k], sigma0[k])
		}
	}
	// μ0 = (Σ0 Φ1⁻¹/M + I)⁻¹ mean  ⇔  (Σ0·100/M + I) μ0 = mean
	for i := range p {
		lhs := mu0[i]
		for j := range p {
			lhs += sigma0[i*p+j] * 100 / float64(M) * mu0[j]
		}
		if math.Abs(lhs-mean[i]) > 1e-8 {
			t.Errorf("μ0 equation %d: (Σ0Φ1⁻¹/M + I)μ0 = %.10g, mean of μ_m = %.10g", i, lhs, mean[i])
		}
	}
}

func TestFeaturesEncodeOneRow(t *testing.T) {
	// year 1986, school 5, score 20 (> median), fsm 30, vr1 12, female,
	// vrband 2 (= VR1), ethnic 5 (Caribbean), girls' school, RC
	s, err := Features([]float64{2, 5, 20, 30, 12, 1, 2, 5, 3, 3})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"intercept": 1, "year=1986": 1, "female": 1, "vrband=VR1": 1, "ethnic=Caribbean": 1,
		"fsm%/100": 0.30, "vr1%/100": 0.12, "school=girls": 1, "denom=RC": 1}
	if len(s.X) != len(FeatureNames) || len(FeatureNames) != 27 {
		t.Fatalf("%d features, %d names, want 27", len(s.X), len(FeatureNames))
	}
	for k, name := range FeatureNames {
		if s.X[k] != want[name] {
			t.Errorf("%s = %v, want %v", name, s.X[k], want[name])
		}
	}
	if s.School != 5 || s.Good != 1 {
		t.Errorf("school %d good %d, want 5 and 1", s.School, s.Good)
	}
	if s, _ := Features([]float64{2, 5, MedianScore, 30, 12, 1, 2, 5, 3, 3}); s.Good != 0 {
		t.Errorf("a score equal to the median counts as good")
	}
	if _, err := Features([]float64{2, 5, 20, 30, 12, 1, 2, 12, 3, 3}); err == nil || !strings.Contains(err.Error(), "ethnic = 12") {
		t.Errorf("ethnic 12: err = %v, want a range error naming ethnic", err)
	}
}

func TestSplitIsWithinSchoolsAndReproducible(t *testing.T) {
	var students []Student
	for s := 1; s <= 3; s++ {
		for i := range 10 * s {
			students = append(students, Student{School: s, X: []float64{float64(i)}})
		}
	}
	train, test := Split(students, 3, 9, 0)
	count := func(list []Student, s int) (n int) {
		for _, st := range list {
			if st.School == s {
				n++
			}
		}
		return n
	}
	for s := 1; s <= 3; s++ {
		if got, want := count(train, s), int(math.Round(7.5*float64(s))); got != want {
			t.Errorf("school %d: %d training students, want %d", s, got, want)
		}
		if count(train, s)+count(test, s) != 10*s {
			t.Errorf("school %d: students lost", s)
		}
	}
	again, _ := Split(students, 3, 9, 0)
	other, _ := Split(students, 3, 9, 1)
	same, differ := true, false
	for i := range train {
		same = same && again[i].X[0] == train[i].X[0]
		differ = differ || other[i].X[0] != train[i].X[0]
	}
	if !same || !differ {
		t.Errorf("split 0 reproduced: %v; split 1 differs: %v", same, differ)
	}
}

// TestSchoolHierarchicalBeatsSeparate runs one split of the §5.2
// experiment and checks Table 2's finding: the hierarchical model predicts
// held-out students better than separate per-school fits.
func TestSchoolHierarchicalBeatsSeparate(t *testing.T) {
	golden.SlowTier(t)
	const path = "../../../shared/data/school/school.csv"
	if _, err := os.Stat(path); err != nil {
		t.Skipf("School data not found (%v); it lives in ../shared/data/school", err)
	}
	if testing.Short() {
		t.Skip("-short: the School fit takes several seconds")
	}
	var out, errs bytes.Buffer
	if err := run([]string{"-school", path, "-splits", "1", "-json", "-q"}, &out, &errs); err != nil {
		t.Fatal(err, errs.String())
	}
	var got struct {
		Students, Schools int
		Runs              []schoolRun
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Students != 15362 || got.Schools != 139 || len(got.Runs) != 3 {
		t.Fatalf("%d students in %d schools, %d runs; want 15362 in 139, 3 runs", got.Students, got.Schools, len(got.Runs))
	}
	score := map[Setting]Score{}
	for _, r := range got.Runs {
		if r.Status != "converged" {
			t.Errorf("%s: %s after %d iterations", r.Setting, r.Status, r.Iterations)
		}
		score[r.Setting] = r.Score
	}
	if score[Hierarchical].LogLik <= score[Separate].LogLik {
		t.Errorf("hierarchical log likelihood %.4f is not above separate %.4f", score[Hierarchical].LogLik, score[Separate].LogLik)
	}
	// Table 2 reports 70.5–71.9% accuracy and −0.55 to −0.57 for the
	// Bayesian fits; one split of 3,840 students varies by about ±1%.
	for s, sc := range score {
		if sc.Accuracy < 0.68 || sc.Accuracy > 0.75 || sc.LogLik < -0.60 || sc.LogLik > -0.52 {
			t.Errorf("%s: accuracy %.4f, log likelihood %.4f: far from Table 2", s, sc.Accuracy, sc.LogLik)
		}
	}
}
