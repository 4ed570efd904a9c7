package codegen

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/vigen-go/vigen/golden"
)

// A latent declared conjugate with an MvNormal (or MvNormalPrec) prior gets
// one Gaussian factor over the whole vector, updated in closed form (Eq. 18)
// when every statement reading it is at most quadratic in it. These tests
// compare the generated fits with posteriors computed here independently.

// mvnMeanVI is the Gaussian mean with Gaussian data: the posterior is
// N(μ, Σ) with Σ = (S0⁻¹ + N S⁻¹)⁻¹, μ = Σ(S0⁻¹m0 + S⁻¹Σ_n y_n).
const mvnMeanVI = `model mvn
size N, K
data y : real[N, K]
const m0 : real[K] = 0
const S0 : cov[K] = eye(K)
const S : cov[K] = eye(K)
latent mu : real[K] conjugate
mu ~ MvNormal(m0, S0)
for n in 1:N {
  y[n] ~ MvNormal(mu, S)
}
`

// mvnPrecVI is mvnMeanVI written with precisions, L0 = S0⁻¹ and L = S⁻¹.
const mvnPrecVI = `model mvnprec
size N, K
data y : real[N, K]
const m0 : real[K] = 0
const L0 : cov[K] = eye(K)
const L : cov[K] = eye(K)
latent mu : real[K] conjugate
mu ~ MvNormalPrec(m0, L0)
for n in 1:N {
  y[n] ~ MvNormalPrec(mu, L)
}
`

// blrConjVI is Bayesian linear regression with its coefficients declared
// conjugate: the same posterior as linregVI's (exactPosterior).
const blrConjVI = `model blrconj
size N, P
data x : real[N, P]
data y : real[N]
const s : real = 0.5
const mu0 : real[P] = 0.25
const Sigma0 : cov[P] = 2 * eye(P)
latent beta : real[P] conjugate
beta ~ MvNormal(mu0, Sigma0)
for n in 1:N {
  y[n] ~ Normal(dot(x[n], beta), s)
}
`

// spdMatrix returns a random k×k symmetric positive definite matrix with
// off-diagonal entries, scaled by c.
func spdMatrix(rng *rand.Rand, k int, c float64) *mat.SymDense {
	a := mat.NewDense(k, k, nil)
	for i := 0; i < k; i++ {
		for j := 0; j < k; j++ {
			a.Set(i, j, rng.NormFloat64())
		}
	}
	s := mat.NewSymDense(k, nil)
	s.SymOuterK(c/float64(k), a)
	for i := 0; i < k; i++ {
		s.SetSym(i, i, s.At(i, i)+c*0.5)
	}
	return s
}

func symRows(s mat.Symmetric) [][]float64 {
	n := s.SymmetricDim()
	out := make([][]float64, n)
	for i := range out {
		out[i] = make([]float64, n)
		for j := range out[i] {
			out[i][j] = s.At(i, j)
		}
	}
	return out
}

func symInverse(t *testing.T, s mat.Symmetric) *mat.SymDense {
	t.Helper()
	var ch mat.Cholesky
	if !ch.Factorize(s) {
		t.Fatal("matrix is not positive definite")
	}
	inv := mat.NewSymDense(s.SymmetricDim(), nil)
	if err := ch.InverseTo(inv); err != nil {
		t.Fatal(err)
	}
	return inv
}

// mvnMeanPosterior is the exact posterior of mvnMeanVI and its log
// evidence log N(vec y; 1⊗m0, J⊗S0 + I⊗S), from the NK×NK covariance.
func mvnMeanPosterior(t *testing.T, y [][]float64, m0 []float64, s0, s mat.Symmetric) (mean []float64, cov *mat.SymDense, logEv float64) {
	t.Helper()
	n, k := len(y), len(m0)
	s0i, si := symInverse(t, s0), symInverse(t, s)
	prec := mat.NewSymDense(k, nil)
	prec.AddSym(s0i, prec)
	for range y {
		prec.AddSym(prec, si)
	}
	cov = symInverse(t, prec)
	rhs := mat.NewVecDense(k, nil)
	rhs.MulVec(s0i, mat.NewVecDense(k, append([]float64(nil), m0...)))
	sum := mat.NewVecDense(k, nil)
	for _, row := range y {
		sum.AddVec(sum, mat.NewVecDense(k, append([]float64(nil), row...)))
	}
	var t2 mat.VecDense
	t2.MulVec(si, sum)
	rhs.AddVec(rhs, &t2)
	var mv mat.VecDense
	mv.MulVec(cov, rhs)
	mean = mv.RawVector().Data

	big := mat.NewSymDense(n*k, nil)
	r := mat.NewVecDense(n*k, nil)
	for a := 0; a < n; a++ {
		for i := 0; i < k; i++ {
			r.SetVec(a*k+i, y[a][i]-m0[i])
			for b := a; b < n; b++ {
				for j := 0; j < k; j++ {
					if b == a && j < i {
						continue
					}
					v := s0.At(i, j)
					if a == b {
						v += s.At(i, j)
					}
					big.SetSym(a*k+i, b*k+j, v)
				}
			}
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(big) {
		t.Fatal("marginal covariance is not positive definite")
	}
	z := mat.NewVecDense(n*k, nil)
	if err := ch.SolveVecTo(z, r); err != nil {
		t.Fatal(err)
	}
	logEv = -0.5*float64(n*k)*math.Log(2*math.Pi) - 0.5*ch.LogDet() - 0.5*mat.Dot(r, z)
	return mean, cov, logEv
}

// checkMvnFactor compares a fitted Gaussian with the exact one and returns
// the largest errors of the mean and of the covariance.
func checkMvnFactor(t *testing.T, what string, g gaussianJSON, mean []float64, cov mat.Symmetric, meanTol, covTol float64) (float64, float64) {
	t.Helper()
	if len(g.Mean) != len(mean) || len(g.Cov) != len(mean) {
		t.Fatalf("%s: mean of length %d, cov of %d rows; want %d", what, len(g.Mean), len(g.Cov), len(mean))
	}
	var em, ec float64
	for i := range mean {
		em = math.Max(em, math.Abs(g.Mean[i]-mean[i]))
		for j := range mean {
			ec = math.Max(ec, math.Abs(g.Cov[i][j]-cov.At(i, j)))
		}
	}
	if em > meanTol {
		t.Errorf("%s: mean %v, exact %v (max error %.3g > %g)", what, g.Mean, mean, em, meanTol)
	}
	if ec > covTol {
		t.Errorf("%s: cov %v, exact %v (max error %.3g > %g)", what, g.Cov, symRows(cov), ec, covTol)
	}
	return em, ec
}

var mvnExactCases = func() map[string]*e2eCase {
	test := slowTest("TestEndToEndConjugateMvNormalIsExact")
	return map[string]*e2eCase{
		"mvn":     test.fits("mvn", mvnMeanVI, ""),
		"mvnprec": test.fits("mvnprec", mvnPrecVI, ""),
		"blrconj": test.fits("blrconj", blrConjVI, ""),
	}
}()

// The Gaussian mean under MvNormal and MvNormalPrec, with correlated
// prior and noise covariances, and Bayesian linear regression: the fit is
// the exact posterior after one iteration, whatever Options.Method says
// (the driver asks for laplace, then delta), and its ELBO, Eq. 21 with
// every expectation exact, is the exact log evidence.
func TestEndToEndConjugateMvNormalIsExact(t *testing.T) {
	golden.SlowTier(t)
	rng := rand.New(rand.NewPCG(18, 6))
	const n, k = 25, 3
	s0 := spdMatrix(rng, k, 2)
	s := spdMatrix(rng, k, 1)
	m0 := []float64{0.5, -1, 2}
	y := make([][]float64, n)
	for a := range y {
		y[a] = []float64{1 + rng.NormFloat64(), -2 + rng.NormFloat64(), 0.3 + 2*rng.NormFloat64()}
	}
	mean, cov, logEv := mvnMeanPosterior(t, y, m0, s0, s)
	covData, _ := json.Marshal(map[string]any{"y": y, "m0": m0, "S0": symRows(s0), "S": symRows(s)})
	precData, _ := json.Marshal(map[string]any{"y": y, "m0": m0, "L0": symRows(symInverse(t, s0)), "L": symRows(symInverse(t, s))})

	xs, ys, blrData := linregData(rng, 60, 4)
	blrMean, blrCov := exactPosterior(xs, ys, 0.5, 0.25, 2)
	blrEv := logEvidence(xs, ys, 0.5, 0.25, 2)

	cases := []struct {
		name, latent string // of mvnExactCases
		data         []byte
		mean         []float64
		cov          mat.Symmetric
		logEv        float64
	}{
		{"mvn", "mu", covData, mean, cov, logEv},
		{"mvnprec", "mu", precData, mean, cov, logEv},
		{"blrconj", "beta", blrData, blrMean.RawVector().Data, blrCov, blrEv},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := mvnExactCases[c.name].results(t, c.data)
			if len(res) != 2 {
				t.Fatalf("driver returned %d results, want 2", len(res))
			}
			for _, r := range res {
				if !r.Converged || r.Method != "conjugate" {
					t.Errorf("converged %v (%s), method %q; want a converged conjugate fit", r.Converged, r.Status, r.Method)
				}
				if len(r.ELBO) != 1 {
					t.Errorf("%d iterations, want 1: the closed form is the fixed point", len(r.ELBO))
				}
				em, ec := checkMvnFactor(t, c.latent, r.Latent[c.latent], c.mean, c.cov, 1e-8, 1e-10)
				elbo := r.ELBO[len(r.ELBO)-1]
				if d := math.Abs(elbo - c.logEv); d > 1e-8*math.Max(1, math.Abs(c.logEv)) {
					t.Errorf("ELBO %.12g, exact log evidence %.12g (difference %.3g)", elbo, c.logEv, d)
				}
				t.Logf("max error: mean %.2g, cov %.2g; ELBO − log evidence %.2g", em, ec, elbo-c.logEv)
			}
		})
	}
}

// mvnHierVI puts the conjugate mean under per-group logistic regression
// coefficients fitted by Laplace: mean field between q(mu) and q(theta[m]).
const mvnHierVI = `model mvnhier
size M, N, K
data x : real[N, K]
data y : int[N] in 0..1
data group : int[N] in 1..M
const m0 : real[K] = 0
const S0 : cov[K] = eye(K)
const S : cov[K] = eye(K)
latent mu : real[K] conjugate
latent theta : real[M, K] nonconjugate laplace
mu ~ MvNormal(m0, S0)
for m in 1:M {
  theta[m] ~ MvNormal(mu, S)
}
for n in 1:N {
  y[n] ~ Bernoulli(logistic(dot(x[n], theta[group[n]])))
}
`

var mvnHierCase = fastTest("TestEndToEndConjugateMvNormalMeanField").fits("mvnhier", mvnHierVI, ", Tol: 1e-15, MeanTol: 1e-13, MaxIter: 10000")

// The conjugate mean read by other latents: the generated coordinate
// ascent reaches the fixed point of a hand-written one, in which
// q(theta[m]) = N(θ̂_m, (S⁻¹ + Σ_n σ(1−σ) x_n x_nᵀ)⁻¹) at the mode θ̂_m of
// −½(θ − a)ᵀS⁻¹(θ − a) + Σ_n log p(y_n | θ) (the expectation over
// q(mu) = N(a, A) adds only the constant −½Tr{S⁻¹A}), and q(mu) is
// N(a, A) with A = (S0⁻¹ + M S⁻¹)⁻¹, a = A(S0⁻¹m0 + S⁻¹Σ_m θ̂_m).
func TestEndToEndConjugateMvNormalMeanField(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 66))
	const groups, n, k = 4, 160, 2
	s0 := spdMatrix(rng, k, 3)
	s := spdMatrix(rng, k, 0.8)
	m0 := []float64{0.3, -0.4}
	x := make([][]float64, n)
	y := make([]int, n)
	group := make([]int, n)
	truth := [][]float64{{1, -1}, {0.5, 0}, {-0.5, 1.5}, {2, 0.3}}
	for i := range x {
		group[i] = i%groups + 1
		x[i] = []float64{1, rng.NormFloat64()}
		u := truth[group[i]-1][0]*x[i][0] + truth[group[i]-1][1]*x[i][1]
		if rng.Float64() < 1/(1+math.Exp(-u)) {
			y[i] = 1
		}
	}
	data, _ := json.Marshal(map[string]any{"x": x, "y": y, "group": group, "m0": m0, "S0": symRows(s0), "S": symRows(s)})

	// The hand-written coordinate ascent, run to its fixed point.
	s0i, si := symInverse(t, s0), symInverse(t, s)
	a := make([]float64, k)
	var aCov *mat.SymDense
	theta := make([][]float64, groups)
	thetaCov := make([]*mat.SymDense, groups)
	for m := range theta {
		theta[m] = make([]float64, k)
	}
	for it := 0; it < 10000; it++ {
		change := 0.0
		for m := range theta {
			th := theta[m]
			var hess *mat.SymDense
			for newton := 0; newton < 100; newton++ {
				grad := make([]float64, k)
				hess = mat.NewSymDense(k, nil)
				for i := 0; i < k; i++ {
					for j := 0; j < k; j++ {
						grad[i] -= si.At(i, j) * (th[j] - a[j])
						if j >= i {
							hess.SetSym(i, j, -si.At(i, j))
						}
					}
				}
				for p := range x {
					if group[p] != m+1 {
						continue
					}
					u := th[0]*x[p][0] + th[1]*x[p][1]
					sg := 1 / (1 + math.Exp(-u))
					for i := 0; i < k; i++ {
						grad[i] += (float64(y[p]) - sg) * x[p][i]
						for j := i; j < k; j++ {
							hess.SetSym(i, j, hess.At(i, j)-sg*(1-sg)*x[p][i]*x[p][j])
						}
					}
				}
				neg := mat.NewSymDense(k, nil)
				neg.ScaleSym(-1, hess)
				var ch mat.Cholesky
				if !ch.Factorize(neg) {
					t.Fatal("hand-written Newton: Hessian not negative definite")
				}
				step := mat.NewVecDense(k, nil)
				if err := ch.SolveVecTo(step, mat.NewVecDense(k, grad)); err != nil {
					t.Fatal(err)
				}
				size := 0.0
				for i := range th {
					th[i] += step.AtVec(i)
					size = math.Max(size, math.Abs(step.AtVec(i)))
				}
				if size < 1e-15 {
					break
				}
			}
			neg := mat.NewSymDense(k, nil)
			neg.ScaleSym(-1, hess)
			thetaCov[m] = symInverse(t, neg)
		}
		prec := mat.NewSymDense(k, nil)
		prec.AddSym(prec, s0i)
		sum := mat.NewVecDense(k, nil)
		for m := range theta {
			prec.AddSym(prec, si)
			sum.AddVec(sum, mat.NewVecDense(k, append([]float64(nil), theta[m]...)))
		}
		aCov = symInverse(t, prec)
		rhs := mat.NewVecDense(k, nil)
		rhs.MulVec(s0i, mat.NewVecDense(k, append([]float64(nil), m0...)))
		var sv mat.VecDense
		sv.MulVec(si, sum)
		rhs.AddVec(rhs, &sv)
		var next mat.VecDense
		next.MulVec(aCov, rhs)
		for i := range a {
			change = math.Max(change, math.Abs(next.AtVec(i)-a[i]))
			a[i] = next.AtVec(i)
		}
		if change < 1e-15 {
			break
		}
	}

	res := mvnHierCase.results(t, data)
	for _, r := range res {
		if !r.Converged {
			t.Errorf("%s: not converged: %s", r.Method, r.Status)
		}
		// laplace for theta: the driver's "delta" run fits theta by the
		// delta method, another fixed point, so only laplace is compared.
		if r.Method != "conjugate,laplace" {
			continue
		}
		em, ec := checkMvnFactor(t, "mu", r.Latent["mu"], a, aCov, 1e-7, 1e-9)
		t.Logf("mu: max error mean %.2g, cov %.2g", em, ec)
		units := r.Latent["theta"].Units
		if len(units) != groups {
			t.Fatalf("theta: %d units, want %d", len(units), groups)
		}
		for m := range units {
			em, ec := checkMvnFactor(t, "theta", units[m], theta[m], thetaCov[m], 1e-7, 1e-9)
			t.Logf("theta[%d]: max error mean %.2g, cov %.2g", m+1, em, ec)
		}
	}
	if len(res) != 2 || res[0].Method != "conjugate,laplace" || res[1].Method != "conjugate,delta" {
		t.Errorf("methods %v, want conjugate,laplace then conjugate,delta", []string{res[0].Method, res[1].Method})
	}
}

var mvnConjCase = fastTest("TestEndToEndConjugateMvNormalHierarchy").fits("mvnconj", "", ", Tol: 1e-15, MeanTol: 1e-14, MaxIter: 100000").
	srcFile(filepath.Join("..", "spec", "testdata", "good", "mvnconj.vi"))

// Both the groups' coefficients and their mean conjugate (the good model
// spec/testdata/good/mvnconj.vi): the posterior is Gaussian, and the
// mean-field fixed point of two Gaussian factors of a Gaussian has the
// exact posterior means and, as covariances, the inverses of the diagonal
// blocks of the joint precision Λ. Λ and Λ·mean = h are assembled here over
// (mu, theta[1], …, theta[M]).
func TestEndToEndConjugateMvNormalHierarchy(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 666))
	const groups, n, p, s = 3, 45, 2, 0.7
	s0 := spdMatrix(rng, p, 4)
	sg := spdMatrix(rng, p, 1)
	m0 := []float64{0.2, -0.1}
	x := make([][]float64, n)
	y := make([]float64, n)
	group := make([]int, n)
	for i := range x {
		group[i] = i%groups + 1
		x[i] = []float64{1, rng.NormFloat64()}
		y[i] = float64(group[i]) - x[i][1] + s*rng.NormFloat64()
	}
	data, _ := json.Marshal(map[string]any{"x": x, "y": y, "group": group, "s": s, "m0": m0, "S0": symRows(s0), "S": symRows(sg)})

	dim := p * (groups + 1)
	full := mat.NewDense(dim, dim, nil)
	h := mat.NewVecDense(dim, nil)
	add := func(a, b int, v float64) { full.Set(a, b, full.At(a, b)+v) }
	s0i, si := symInverse(t, s0), symInverse(t, sg)
	for i := 0; i < p; i++ {
		for j := 0; j < p; j++ {
			add(i, j, s0i.At(i, j))
			h.SetVec(i, h.AtVec(i)+s0i.At(i, j)*m0[j])
			for m := 1; m <= groups; m++ {
				add(i, j, si.At(i, j))
				add(m*p+i, m*p+j, si.At(i, j))
				add(i, m*p+j, -si.At(i, j))
				add(m*p+i, j, -si.At(i, j))
			}
		}
	}
	for k := range x {
		b := group[k] * p
		for i := 0; i < p; i++ {
			h.SetVec(b+i, h.AtVec(b+i)+x[k][i]*y[k]/(s*s))
			for j := 0; j < p; j++ {
				add(b+i, b+j, x[k][i]*x[k][j]/(s*s))
			}
		}
	}
	lam := mat.NewSymDense(dim, nil)
	for i := 0; i < dim; i++ {
		for j := i; j < dim; j++ {
			lam.SetSym(i, j, full.At(i, j))
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(lam) {
		t.Fatal("joint precision is not positive definite")
	}
	mean := mat.NewVecDense(dim, nil)
	if err := ch.SolveVecTo(mean, h); err != nil {
		t.Fatal(err)
	}
	block := func(u int) ([]float64, *mat.SymDense) {
		b := mat.NewSymDense(p, nil)
		for i := 0; i < p; i++ {
			for j := i; j < p; j++ {
				b.SetSym(i, j, lam.At(u*p+i, u*p+j))
			}
		}
		return mean.RawVector().Data[u*p : (u+1)*p], symInverse(t, b)
	}

	res := mvnConjCase.results(t, data)
	for _, r := range res {
		if !r.Converged || r.Method != "conjugate,conjugate" {
			t.Errorf("converged %v (%s), method %q; want a converged conjugate fit", r.Converged, r.Status, r.Method)
		}
		for k := 1; k < len(r.ELBO); k++ {
			if r.ELBO[k] < r.ELBO[k-1]-1e-9*math.Abs(r.ELBO[k-1]) {
				t.Errorf("ELBO decreased at iteration %d: %.12g → %.12g (closed-form updates ascend)", k+1, r.ELBO[k-1], r.ELBO[k])
			}
		}
		m, c := block(0)
		em, ec := checkMvnFactor(t, "mu", r.Latent["mu"], m, c, 1e-8, 1e-10)
		t.Logf("mu: max error mean %.2g, cov %.2g (%d iterations)", em, ec, len(r.ELBO))
		units := r.Latent["theta"].Units
		if len(units) != groups {
			t.Fatalf("theta: %d units, want %d", len(units), groups)
		}
		for g := range units {
			m, c := block(g + 1)
			em, ec := checkMvnFactor(t, "theta", units[g], m, c, 1e-8, 1e-10)
			t.Logf("theta[%d]: max error mean %.2g, cov %.2g", g+1, em, ec)
		}
	}
}

// SVI does not step a global conjugate MvNormal latent: the generated
// NoSVI says so, naming it and its position, and does not call it
// nonconjugate.
func TestConjugateMvNormalSVIReason(t *testing.T) {
	code := generatedSource(t, "mvnhier", mvnHierVI)
	i := strings.Index(code, "NoSVI() string")
	if i < 0 {
		t.Fatal("no NoSVI in the generated code")
	}
	reason := code[i:min(len(code), i+600)]
	want := "the global mu (mvnhier.vi:9:8) is conjugate with a Gaussian factor over the whole vector (MvNormal)"
	if !strings.Contains(reason, want) || strings.Contains(reason, "nonconjugate") {
		t.Errorf("NoSVI does not say %q (or calls mu nonconjugate):\n%s", want, reason)
	}
}
