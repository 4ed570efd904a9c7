package main

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/vigen-go/vigen/examples/logreg/logreg"
	"github.com/vigen-go/vigen/runtime"
)

// benchData is Yeast label 1 when the shared data is present, otherwise
// synthetic data of the same shape (1500 × 104).
func benchData(b *testing.B) *logreg.Data {
	dir, _ := os.Getwd()
	p := filepath.Join(dir, "..", "..", "..", "shared", "data", "yeast", "train.csv")
	if _, err := os.Stat(p); err == nil {
		d, err := readLabeled(p, "Class1", `^f[0-9]+$`)
		if err != nil {
			b.Fatal(err)
		}
		return d
	}
	d, _ := Synthetic(1, 1500, 104)
	return d
}

// BenchmarkLaplaceFit compares the generated Laplace fit with a hand-written
// Newton method for the same posterior, in the same run.
func BenchmarkLaplaceFit(b *testing.B) {
	d := benchData(b)
	b.Run("generated", func(b *testing.B) {
		for b.Loop() {
			if _, err := logreg.Fit(context.Background(), d, logreg.Options{Diagnose: runtime.DiagnoseSettings{Off: true}}); err != nil {
				b.Fatal(err)
			}
		}
	})
	// the fit alone, the model built once (as numpy's fit takes its
	// arrays): what vs_numpy.sh compares
	m, err := logreg.NewModel(d)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("generated-model", func(b *testing.B) {
		cpu := processCPU()
		for b.Loop() {
			if _, err := m.Fit(context.Background(), logreg.Options{Workers: 1, Diagnose: runtime.DiagnoseSettings{Off: true}}); err != nil {
				b.Fatal(err)
			}
		}
		// CPU time per fit: on a busy machine the wall time is not it
		b.ReportMetric(float64(processCPU()-cpu)/float64(b.N)/1e6, "cpu-ms/op")
	})
	b.Run("handwritten", func(b *testing.B) {
		for b.Loop() {
			handNewton(d.X, d.Y)
		}
	})
}

// handNewton is the baseline a careful person writes by hand: Newton with
// backtracking on the log posterior under a N(0, I) prior, one pass over
// the data per evaluation, upper triangle of the Hessian only.
func handNewton(x [][]float64, y []int) ([]float64, *mat.SymDense) {
	p := len(x[0])
	theta := make([]float64, p)
	g := make([]float64, p)
	h := mat.NewSymDense(p, nil)
	eval := func(th []float64, withDerivs bool) float64 {
		f := 0.0
		for i := 0; i < p; i++ {
			f -= 0.5 * th[i] * th[i]
		}
		if withDerivs {
			for i := 0; i < p; i++ {
				g[i] = -th[i]
				for j := i; j < p; j++ {
					v := 0.0
					if i == j {
						v = -1
					}
					h.SetSym(i, j, v)
				}
			}
		}
		raw := h.RawSymmetric().Data
		for n, row := range x {
			u := 0.0
			for j, v := range row {
				u += v * th[j]
			}
			z := float64(y[n])
			f += z*u - (math.Max(u, 0) + math.Log1p(math.Exp(-math.Abs(u))))
			if !withDerivs {
				continue
			}
			s := 1 / (1 + math.Exp(-u))
			r, w := z-s, s*(1-s)
			for a, xa := range row {
				g[a] += r * xa
				wa := w * xa
				hr := raw[a*p:]
				for bb := a; bb < p; bb++ {
					hr[bb] -= wa * row[bb]
				}
			}
		}
		return f
	}
	var ch mat.Cholesky
	neg := mat.NewSymDense(p, nil)
	d := mat.NewVecDense(p, nil)
	trial := make([]float64, p)
	f := eval(theta, true)
	for it := 0; it < 100; it++ {
		neg.ScaleSym(-1, h)
		if !ch.Factorize(neg) {
			break
		}
		if err := ch.SolveVecTo(d, mat.NewVecDense(p, g)); err != nil {
			break
		}
		slope := mat.Dot(d, mat.NewVecDense(p, g))
		if slope/2 <= 1e-12*(1+math.Abs(f)) {
			break
		}
		t := 1.0
		for k := 0; k < 40; k++ {
			for i := range trial {
				trial[i] = theta[i] + t*d.AtVec(i)
			}
			if ft := eval(trial, false); ft >= f+1e-4*t*slope {
				copy(theta, trial)
				break
			}
			t /= 2
		}
		f = eval(theta, true)
	}
	neg.ScaleSym(-1, h)
	ch.Factorize(neg)
	cov := mat.NewSymDense(p, nil)
	ch.InverseTo(cov)
	return theta, cov
}

// BenchmarkDerivativeKernel compares one evaluation of f, ∇f and ∇²f by the
// generated ThetaF with the same computation written by hand (Appendix C:
// one pass over the data computing σ(θᵀt_n) once per row), in the same run.
func BenchmarkDerivativeKernel(b *testing.B) {
	d := benchData(b)
	m, err := logreg.NewModel(d)
	if err != nil {
		b.Fatal(err)
	}
	p := len(d.X[0])
	theta := make([]float64, p)
	for i := range theta {
		theta[i] = 0.01 * float64(i%5)
	}
	g, h := make([]float64, p), make([]float64, p*p)
	b.Run("generated", func(b *testing.B) {
		for b.Loop() {
			m.ThetaF(theta, g, h)
		}
	})
	x := make([]float64, 0, len(d.X)*p)
	for _, row := range d.X {
		x = append(x, row...)
	}
	b.Run("handwritten", func(b *testing.B) {
		for b.Loop() {
			handKernel(x, d.Y, theta, g, h)
		}
	})
}

// handKernel is Appendix C's f, gradient and Hessian under a N(0, I) prior.
func handKernel(x []float64, y []int, theta, g, h []float64) float64 {
	p := len(theta)
	f := 0.0
	clear(h)
	for i, v := range theta {
		f -= 0.5 * v * v
		g[i] = -v
		h[i*p+i] = -1
	}
	for n, z := range y {
		row := x[n*p : n*p+p]
		u := 0.0
		for j, v := range row {
			u += v * theta[j]
		}
		s := 1 / (1 + math.Exp(-u))
		f += float64(z)*u - (math.Max(u, 0) + math.Log1p(math.Exp(-math.Abs(u))))
		r, w := float64(z)-s, s*(1-s)
		for a, xa := range row {
			g[a] += r * xa
			wa := w * xa
			ha := h[a*p : a*p+p]
			for bb := a; bb < p; bb++ {
				ha[bb] -= wa * row[bb]
			}
		}
	}
	for a := 0; a < p; a++ {
		for bb := 0; bb < a; bb++ {
			h[a*p+bb] = h[bb*p+a]
		}
	}
	return f
}

func TestHandNewtonAgrees(t *testing.T) {
	d, _ := Synthetic(2, 300, 6)
	theta, _ := handNewton(d.X, d.Y)
	res, err := logreg.Fit(context.Background(), d, logreg.Options{Diagnose: runtime.DiagnoseSettings{Off: true}})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range theta {
		if math.Abs(res.Latent.Theta.Mean[i]-v) > 1e-8*math.Max(1, math.Abs(v)) {
			t.Errorf("baseline theta[%d] = %g, generated %g", i, v, res.Latent.Theta.Mean[i])
		}
	}
}
