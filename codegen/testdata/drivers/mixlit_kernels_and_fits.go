// mixlit_kernels_and_fits evaluates the objective kernels of the generated
// mixlit package (MuF, MuDelta, SigmaF, SigmaDelta, WF, WDelta) at each of
// the input's Points, and fits the data from Start with each of the
// input's Fits. It prints the kernels' values, gradients and Hessians and
// the fits' results.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"

	model "tmpe2e/PKG"
)

// point is the state of every latent's q: means, and row-major
// covariances. A kernel of latent x is evaluated at x's mean, the delta
// kernel with x's covariance as Σ, the other latents' q as given.
type point struct {
	MuMean, MuCov, SigmaMean, SigmaCov, WMean, WCov []float64
}

type eval struct {
	Value      float64
	Grad, Hess []float64
}

type fit struct {
	Method        string
	MaxIter       int
	Tol, MeanTol  float64
	NewtonTol     float64
	NewtonMaxIter int
}

func main() {
	var in struct {
		Data, Start json.RawMessage
		Points      []point
		Fits        []fit
	}
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		panic(err)
	}
	d, err := model.LoadData(bytes.NewReader(in.Data))
	if err != nil {
		panic(err)
	}
	m, err := model.NewModel(d)
	if err != nil {
		panic(err)
	}
	var out struct {
		Kernels []map[string]eval
		Fits    []*model.Result
	}
	for _, p := range in.Points {
		k := map[string]eval{}
		run := func(name string, dim int, f func(g, h []float64) float64) {
			g, h := make([]float64, dim), make([]float64, dim*dim)
			v := f(g, h)
			k[name] = eval{v, g, h}
		}
		run("MuF", 2, func(g, h []float64) float64 {
			return m.MuF(p.MuMean, p.SigmaMean, p.SigmaCov, p.WMean, p.WCov, g, h)
		})
		run("MuDelta", 2, func(g, h []float64) float64 {
			return m.MuDelta(p.MuMean, p.MuCov, p.SigmaMean, p.SigmaCov, p.WMean, p.WCov, g, h)
		})
		run("SigmaF", 2, func(g, h []float64) float64 {
			return m.SigmaF(p.SigmaMean, p.MuMean, p.MuCov, p.WMean, p.WCov, g, h)
		})
		run("SigmaDelta", 2, func(g, h []float64) float64 {
			return m.SigmaDelta(p.SigmaMean, p.SigmaCov, p.MuMean, p.MuCov, p.WMean, p.WCov, g, h)
		})
		run("WF", 1, func(g, h []float64) float64 {
			return m.WF(p.WMean, p.MuMean, p.MuCov, p.SigmaMean, p.SigmaCov, g, h)
		})
		run("WDelta", 1, func(g, h []float64) float64 {
			return m.WDelta(p.WMean, p.WCov, p.MuMean, p.MuCov, p.SigmaMean, p.SigmaCov, g, h)
		})
		out.Kernels = append(out.Kernels, k)
	}
	for _, f := range in.Fits {
		start, err := model.LoadResult(bytes.NewReader(in.Start))
		if err != nil {
			panic(err)
		}
		opts := model.Options{Method: f.Method, Start: start, MaxIter: f.MaxIter, Tol: f.Tol, MeanTol: f.MeanTol}
		opts.Newton.Tol, opts.Newton.MaxIter = f.NewtonTol, f.NewtonMaxIter
		opts.Diagnose.Off, opts.NoSummary = true, true
		r, err := m.Fit(context.Background(), opts)
		if err != nil {
			panic(err)
		}
		r.Seconds = 0
		out.Fits = append(out.Fits, r)
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		panic(err)
	}
}
