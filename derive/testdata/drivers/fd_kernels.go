// fd_kernels evaluates the derivative kernels of vigen-generated packages
// and their finite differences. It reads jobs as JSON on stdin and writes
// one result per job as JSON on stdout. The test writes models.go beside
// it: models, by package name, loads a package's data and returns its
// kernels.
package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/mat"
)

type kernels struct {
	f     func(theta, grad, hess []float64) float64
	delta func(mu, cov, grad, hess []float64) float64
}

// num writes non-finite values as strings.
type num float64

func (x num) MarshalJSON() ([]byte, error) {
	f := float64(x)
	switch {
	case math.IsNaN(f):
		return []byte(`"NaN"`), nil
	case math.IsInf(f, 1):
		return []byte(`"+Inf"`), nil
	case math.IsInf(f, -1):
		return []byte(`"-Inf"`), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

func nums(x []float64) []num {
	out := make([]num, len(x))
	for i, v := range x {
		out[i] = num(v)
	}
	return out
}

type point struct {
	Theta []float64 `json:"theta"`
	Cov   []float64 `json:"cov"`
}

type job struct {
	Name   string          `json:"name"`
	Data   json.RawMessage `json:"data"`
	Points []point         `json:"points"`
}

type pointResult struct {
	F           num   `json:"f"`
	Grad        []num `json:"grad"`
	Hess        []num `json:"hess"`
	FDGrad      []num `json:"fdGrad"`
	FDHess      []num `json:"fdHess"`
	Delta       num   `json:"delta"`
	DeltaGrad   []num `json:"deltaGrad"`
	DeltaHess   []num `json:"deltaHess"`
	FDDeltaGrad []num `json:"fdDeltaGrad"`
	FDDeltaHess []num `json:"fdDeltaHess"`
}

type result struct {
	Name   string        `json:"name"`
	Error  string        `json:"error,omitempty"`
	Points []pointResult `json:"points"`
}

// central is the fourth-order central difference for a first derivative,
// (f(x−2h) − 8f(x−h) + 8f(x+h) − f(x+2h)) / 12h.
var central = fd.Formula{
	Stencil:    []fd.Point{{Loc: -2, Coeff: 1.0 / 12}, {Loc: -1, Coeff: -8.0 / 12}, {Loc: 1, Coeff: 8.0 / 12}, {Loc: 2, Coeff: -1.0 / 12}},
	Derivative: 1,
	Step:       1e-3,
}

func evaluate(k kernels, pt point) pointResult {
	p := len(pt.Theta)
	var r pointResult
	grad, hess := make([]float64, p), make([]float64, p*p)
	r.F = num(k.f(pt.Theta, grad, hess))
	r.Grad, r.Hess = nums(grad), nums(hess)
	r.FDGrad = nums(fd.Gradient(nil, func(x []float64) float64 {
		return k.f(x, make([]float64, p), make([]float64, p*p))
	}, pt.Theta, &fd.Settings{Formula: central}))
	jac := mat.NewDense(p, p, nil)
	fd.Jacobian(jac, func(y, x []float64) {
		k.f(x, y, make([]float64, p*p))
	}, pt.Theta, &fd.JacobianSettings{Formula: central})
	r.FDHess = nums(jac.RawMatrix().Data)
	grad, hess = make([]float64, p), make([]float64, p*p)
	r.Delta = num(k.delta(pt.Theta, pt.Cov, grad, hess))
	r.DeltaGrad, r.DeltaHess = nums(grad), nums(hess)
	r.FDDeltaGrad = nums(fd.Gradient(nil, func(x []float64) float64 {
		return k.delta(x, pt.Cov, make([]float64, p), make([]float64, p*p))
	}, pt.Theta, &fd.Settings{Formula: central}))
	djac := mat.NewDense(p, p, nil)
	fd.Jacobian(djac, func(y, x []float64) {
		k.delta(x, pt.Cov, y, make([]float64, p*p))
	}, pt.Theta, &fd.JacobianSettings{Formula: central})
	r.FDDeltaHess = nums(djac.RawMatrix().Data)
	return r
}

func run(j job) (res result) {
	res.Name = j.Name
	defer func() {
		if e := recover(); e != nil {
			res.Error = fmt.Sprintf("panic: %v", e)
			res.Points = nil
		}
	}()
	load, ok := models[j.Name]
	if !ok {
		res.Error = "unknown model"
		return res
	}
	k, err := load(j.Data)
	if err != nil {
		res.Error = "loading the data: " + err.Error()
		return res
	}
	for _, pt := range j.Points {
		res.Points = append(res.Points, evaluate(k, pt))
	}
	return res
}

func main() {
	var jobs []job
	if err := json.NewDecoder(os.Stdin).Decode(&jobs); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var out []result
	for _, j := range jobs {
		out = append(out, run(j))
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
