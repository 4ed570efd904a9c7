package main

import (
	"github.com/vigen-go/vigen/runtime"

	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/vigen-go/vigen/derive"
)

// factor is a conjugate factor as a fit's Result stores it.
type factor struct {
	family string
	shape  []int
	params map[string][]float64
}

// newFactor takes the parameters as name, values pairs.
func newFactor(family string, shape []int, kv ...any) *factor {
	f := &factor{family: family, shape: shape, params: map[string][]float64{}}
	for k := 0; k+1 < len(kv); k += 2 {
		f.params[kv[k].(string)] = kv[k+1].([]float64)
	}
	return f
}

func (f *factor) Moments() (mean, sd []float64, err error) {
	mean, sd, _, err = runtime.FactorMarginals(f.family, f.shape, f.params, 1)
	return mean, sd, err
}

// TestFactorMoments checks each family's moments against gonum's
// distributions (a Dirichlet's marginals are Beta(α_i, α₀−α_i); a
// Categorical's one-hot components are Bernoulli) and, for the
// InverseGamma, which gonum lacks, against a Monte Carlo estimate through
// 1/Gamma draws.
func TestFactorMoments(t *testing.T) {
	type ms struct{ mean, sd float64 }
	cases := []struct {
		f    *factor
		want []ms
	}{
		{newFactor("Dirichlet", []int{2, 3}, "param", []float64{1, 2, 3, 0.5, 0.5, 4}), []ms{
			betaMS(1, 5), betaMS(2, 4), betaMS(3, 3), betaMS(0.5, 4.5), betaMS(0.5, 4.5), betaMS(4, 1)}},
		{newFactor("Beta", []int{2}, "a", []float64{2, 0.3}, "b", []float64{5, 7}), []ms{betaMS(2, 5), betaMS(0.3, 7)}},
		{newFactor("Gamma", []int{2}, "shape", []float64{3, 0.4}, "rate", []float64{2, 10}), []ms{
			{distuv.Gamma{Alpha: 3, Beta: 2}.Mean(), distuv.Gamma{Alpha: 3, Beta: 2}.StdDev()},
			{distuv.Gamma{Alpha: 0.4, Beta: 10}.Mean(), distuv.Gamma{Alpha: 0.4, Beta: 10}.StdDev()}}},
		{newFactor("Categorical", []int{1, 2}, "prob", []float64{0.25, 0.75}), []ms{
			{0.25, distuv.Bernoulli{P: 0.25}.StdDev()}, {0.75, distuv.Bernoulli{P: 0.75}.StdDev()}}},
		{newFactor("Normal", []int{2}, "mean", []float64{-1, 3}, "sd", []float64{0.5, 2}), []ms{{-1, 0.5}, {3, 2}}},
		{newFactor("LogNormal", []int{1}, "meanlog", []float64{0.3}, "sdlog", []float64{0.8}), []ms{
			{distuv.LogNormal{Mu: 0.3, Sigma: 0.8}.Mean(), distuv.LogNormal{Mu: 0.3, Sigma: 0.8}.StdDev()}}},
	}
	for _, c := range cases {
		mean, sd, err := c.f.Moments()
		if err != nil {
			t.Fatalf("%s: %v", c.f.family, err)
		}
		for i, w := range c.want {
			if math.Abs(mean[i]-w.mean) > 1e-12*math.Abs(w.mean) || math.Abs(sd[i]-w.sd) > 1e-12*w.sd {
				t.Errorf("%s[%d]: mean, sd = %v, %v; want %v, %v", c.f.family, i, mean[i], sd[i], w.mean, w.sd)
			}
		}
	}

	// InverseGamma(a, b) is 1/Gamma(a, rate b). With 4e5 draws and a = 6
	// the standard errors of the sample mean and sd are below 0.3% of
	// them; 2% is six or more standard errors.
	f := newFactor("InverseGamma", []int{3}, "shape", []float64{6, 1.5, 0.8}, "scale", []float64{2, 1, 1})
	mean, sd, err := f.Moments()
	if err != nil {
		t.Fatal(err)
	}
	g := distuv.Gamma{Alpha: 6, Beta: 2, Src: rand.New(rand.NewPCG(1, 2))}
	var s, s2 float64
	const n = 400000
	for range n {
		x := 1 / g.Rand()
		s += x
		s2 += x * x
	}
	mcMean := s / n
	mcSD := math.Sqrt(s2/n - mcMean*mcMean)
	if math.Abs(mean[0]-mcMean) > 0.02*mcMean || math.Abs(sd[0]-mcSD) > 0.02*mcSD {
		t.Errorf("InverseGamma(6, 2): mean, sd = %v, %v; Monte Carlo %v, %v", mean[0], sd[0], mcMean, mcSD)
	}
	// Shape 1.5 has a mean but no variance; shape 0.8 neither.
	if !(mean[1] == 2) || !math.IsNaN(sd[1]) || !math.IsNaN(mean[2]) || !math.IsNaN(sd[2]) {
		t.Errorf("InverseGamma shapes 1.5, 0.8: mean %v, sd %v; want [2 NaN], [NaN NaN]", mean[1:], sd[1:])
	}
}

func betaMS(a, b float64) struct{ mean, sd float64 } {
	d := distuv.Beta{Alpha: a, Beta: b}
	return struct{ mean, sd float64 }{d.Mean(), d.StdDev()}
}

// TestFactorMomentsCoverConjugateFamilies: every family the generator
// emits as a Factor has moments, read from the parameters it writes.
func TestFactorMomentsCoverConjugateFamilies(t *testing.T) {
	for _, fam := range derive.ConjugateFamilies() {
		if derive.Dists[fam].Conj.Joint {
			continue // a Gaussian over the whole vector, reported as mean and cov
		}
		if derive.Dists[fam].Conj.Family != "" {
			continue // q in another family (Exponential: Gamma), written as that one
		}
		names := derive.ConjugateParamNames(fam)
		if len(names) == 0 {
			t.Fatalf("derive has no parameters for %s", fam)
		}
		var params []any
		for _, n := range names {
			params = append(params, n, []float64{3, 4})
		}
		if _, _, err := newFactor(fam, []int{2}, params...).Moments(); err != nil {
			t.Errorf("%s with parameters %v: %v", fam, names, err)
		}
		if len(names) > 1 {
			short := newFactor(fam, []int{2}, params[:2]...)
			if _, _, err := short.Moments(); err == nil {
				t.Errorf("%s without %q: no error", fam, names[len(names)-1])
			}
		}
	}
	if _, _, err := newFactor("Wishart", []int{2}, "x", []float64{1, 2}).Moments(); err == nil {
		t.Error("unknown family: no error")
	}
	if !slices.Equal(derive.ConjugateParamNames("Gamma"), []string{"shape", "rate"}) {
		t.Errorf("Gamma parameters %v", derive.ConjugateParamNames("Gamma"))
	}
}
