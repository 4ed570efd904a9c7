package runtime

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"
)

// TestGaussMStepIsMAP checks GaussMStep against direct numerical
// maximization of
//
//	Σ_d E[log N(x_d; μ, Λ⁻¹)] + log N(μ; m, C) + log Wishart(Λ; ν, W)
//	= n/2 log|Λ| − ½ tr(Λ S(μ)) − ½ (μ−m)ᵀC⁻¹(μ−m) + (ν−P−1)/2 log|Λ| − ½ tr(W⁻¹Λ)
//
// (App. C's MAP, with each unit's covariance in S), over μ and the Cholesky
// factor of Λ, and the no-prior case against the sample moments.
func TestGaussMStepIsMAP(t *testing.T) {
	const p = 3
	rng := rand.New(rand.NewPCG(1, 2))
	st := NewGaussStats(p)
	for d := 0; d < 12; d++ {
		m := make([]float64, p)
		for i := range m {
			m[i] = 1 + rng.NormFloat64()
		}
		cov := make([]float64, p*p)
		for i := 0; i < p; i++ {
			cov[i*p+i] = 0.1 + 0.2*rng.Float64()
		}
		st.Add(m, cov)
	}
	m0 := []float64{0, 0.5, -0.5}
	c := []float64{0.5, 0, 0, 0, 0.5, 0, 0, 0, 0.5}
	w := []float64{0.4, 0.1, 0, 0.1, 0.4, 0, 0, 0, 0.4}
	nu := float64(p + 4)

	g := GaussMStep{EstimateMean: true, EstimateCov: true, Precision: true, MeanPriorMean: m0, MeanPriorCov: c, WishartDOF: nu, WishartScale: w}
	mean, prec := make([]float64, p), make([]float64, p*p)
	Identity(prec, p)
	if err := g.Solve(st, mean, prec); err != nil {
		t.Fatal(err)
	}
	cinv, winv := make([]float64, p*p), make([]float64, p*p)
	InvSPD(cinv, c, p)
	InvSPD(winv, w, p)
	obj := func(x []float64) float64 {
		mu := x[:p]
		l := mat.NewDense(p, p, nil)
		k := p
		logdet := 0.0
		for r := 0; r < p; r++ {
			for cc := 0; cc <= r; cc++ {
				v := x[k]
				if r == cc {
					logdet += 2 * v
					v = math.Exp(v)
				}
				l.Set(r, cc, v)
				k++
			}
		}
		var lam mat.Dense
		lam.Mul(l, l.T())
		f := (st.N + nu - p - 1) / 2 * logdet
		for i := 0; i < p; i++ {
			for j := 0; j < p; j++ {
				s := st.Outer[i*p+j] - mu[i]*st.Sum[j] - st.Sum[i]*mu[j] + st.N*mu[i]*mu[j]
				f -= 0.5 * lam.At(i, j) * (s + winv[i*p+j])
				f -= 0.5 * (mu[i] - m0[i]) * cinv[i*p+j] * (mu[j] - m0[j])
			}
		}
		return -f
	}
	prob := optimize.Problem{Func: obj, Grad: func(gr, x []float64) { fd.Gradient(gr, obj, x, &fd.Settings{Formula: fd.Central, Step: 1e-6}) }}
	r, err := optimize.Minimize(prob, make([]float64, p+p*(p+1)/2), &optimize.Settings{GradientThreshold: 1e-9, MajorIterations: 5000}, &optimize.BFGS{})
	if r == nil {
		t.Fatal(err)
	}
	worst := 0.0
	for i := 0; i < p; i++ {
		worst = math.Max(worst, math.Abs(r.X[i]-mean[i]))
	}
	// Λ from the optimum's Cholesky factor
	l := mat.NewDense(p, p, nil)
	k := p
	for row := 0; row < p; row++ {
		for cc := 0; cc <= row; cc++ {
			v := r.X[k]
			if row == cc {
				v = math.Exp(v)
			}
			l.Set(row, cc, v)
			k++
		}
	}
	var lam mat.Dense
	lam.Mul(l, l.T())
	for i := 0; i < p; i++ {
		for j := 0; j < p; j++ {
			worst = math.Max(worst, math.Abs(lam.At(i, j)-prec[i*p+j]))
		}
	}
	if worst > 1e-5 {
		t.Errorf("MAP M-step differs from the numerical maximum by %.2g:\nmean %v\nprec %v\nnumerical %v", worst, mean, prec, r.X)
	}

	// Without priors: the sample mean and the mean of E[(x−μ)(x−μ)ᵀ].
	g = GaussMStep{EstimateMean: true, EstimateCov: true}
	cov := make([]float64, p*p)
	Identity(cov, p)
	if err := g.Solve(st, mean, cov); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < p; i++ {
		if want := st.Sum[i] / st.N; math.Abs(mean[i]-want) > 1e-14 {
			t.Errorf("mean[%d] = %v, want %v", i, mean[i], want)
		}
		for j := 0; j < p; j++ {
			want := st.Outer[i*p+j]/st.N - mean[i]*mean[j]
			if math.Abs(cov[i*p+j]-want) > 1e-12 {
				t.Errorf("cov[%d,%d] = %v, want %v", i, j, cov[i*p+j], want)
			}
		}
	}
}

// TestSimplexRows checks the counts M-step: rows proportional to counts
// plus smoothing, empty rows uniform.
func TestSimplexRows(t *testing.T) {
	x := []float64{1, 3, 0, 0, 0, 0}
	if empty := SimplexRows(x, 3, 0); empty != 1 {
		t.Errorf("empty rows = %d, want 1", empty)
	}
	want := []float64{0.25, 0.75, ProbFloor, 1.0 / 3, 1.0 / 3, 1.0 / 3}
	for i := range x {
		if math.Abs(x[i]-want[i]) > 1e-15 || x[i] <= 0 {
			t.Errorf("x = %v, want %v", x, want)
			break
		}
	}
	y := []float64{1, 3, 0}
	SimplexRows(y, 3, 1)
	if math.Abs(y[0]-2.0/7) > 1e-15 || math.Abs(y[2]-1.0/7) > 1e-15 {
		t.Errorf("smoothed row = %v, want [2/7 4/7 1/7]", y)
	}
}

// TestParallelForCoversEveryIndexOnce runs ParallelFor with several worker
// counts and checks each index is visited exactly once by a valid worker.
func TestParallelForCoversEveryIndexOnce(t *testing.T) {
	for _, workers := range []int{1, 2, 3, 16} {
		n := 1000
		seen := make([]int, n)
		who := make([]int, n)
		ParallelFor(n, workers, func(w, i int) {
			seen[i]++
			who[i] = w
		})
		for i := range seen {
			if seen[i] != 1 || who[i] < 0 || who[i] >= workers {
				t.Fatalf("workers %d: index %d visited %d times by worker %d", workers, i, seen[i], who[i])
			}
		}
	}
}

func TestGroupRowsListsEachGroupInOrder(t *testing.T) {
	group := []int{2, 1, 2, 4, 1, 2}
	off, rows := GroupRows(group, 4)
	wantOff := []int{0, 2, 5, 5, 6}
	wantRows := []int{2, 5, 1, 3, 6, 4}
	if fmt.Sprint(off) != fmt.Sprint(wantOff) || fmt.Sprint(rows) != fmt.Sprint(wantRows) {
		t.Fatalf("GroupRows = %v, %v; want %v, %v", off, rows, wantOff, wantRows)
	}
	for g := range 4 {
		for _, n := range rows[off[g]:off[g+1]] {
			if group[n-1] != g+1 {
				t.Errorf("point %d listed under group %d, but its group is %d", n, g+1, group[n-1])
			}
		}
	}
}
