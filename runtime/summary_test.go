package runtime

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// Summarize writes one row per element of every latent, whatever its
// kind, named as in the model: a scalar Normal, a Gaussian vector, one per
// unit ([d,k]), conjugate Gamma and Dirichlet factors (their quantiles
// checked by the CDF at them) and a categorical (no quantiles: null in
// JSON). A nil latent has no rows, and one above SummaryLimit is listed
// instead.
func TestSummarize(t *testing.T) {
	type latent struct {
		Mu    *Normal     `json:"mu"`
		Theta *Gaussian   `json:"theta"`
		Eta   []*Gaussian `json:"eta"`
		Rate  *Factor     `json:"rate"`
		Pi    *Factor     `json:"pi"`
		Z     *Factor     `json:"z"`
		Gone  *Factor     `json:"gone"`
		Big   *Factor     `json:"big"`
	}
	l := latent{
		Mu:    &Normal{Family: "Normal", Mean: 1, SD: 2},
		Theta: NewGaussian("MvNormal", []float64{0, 3}, []float64{4, 0, 0, 9}),
		Eta:   []*Gaussian{NewGaussian("MvNormal", []float64{1}, []float64{1}), NewGaussian("MvNormal", []float64{2}, []float64{4})},
		Rate:  NewFactor("Gamma", []int{2}, "shape", []float64{2, 0.5}, "rate", []float64{4, 1}),
		Pi:    NewFactor("Dirichlet", []int{3}, "param", []float64{1, 2, 3}),
		Z:     NewFactor("Categorical", []int{1, 2}, "prob", []float64{0.25, 0.75}),
		Big:   NewFactor("Gamma", []int{SummaryLimit + 1}, "shape", make([]float64, SummaryLimit+1), "rate", make([]float64, SummaryLimit+1)),
	}
	rows, omitted, err := Summarize(&l)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range rows {
		names = append(names, r.Name)
	}
	want := "mu theta[1] theta[2] eta[1,1] eta[2,1] rate[1] rate[2] pi[1] pi[2] pi[3] z[1,1] z[1,2]"
	if strings.Join(names, " ") != want || len(omitted) != 1 || omitted[0] != "big: 10001 elements" {
		t.Fatalf("rows %v, omitted %v", names, omitted)
	}
	z := 1.6448536269514722
	close := func(what string, got, want float64) {
		if math.Abs(got-want) > 1e-12*math.Max(1, math.Abs(want)) {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	close("theta[2] sd", rows[2].SD, 3)
	close("theta[2] q95", rows[2].Q95, 3+3*z)
	close("eta[2,1] q05", rows[4].Q05, 2-2*z)
	close("rate[2] mean", rows[6].Mean, 0.5)
	close("rate[2] sd", rows[6].SD, math.Sqrt(0.5))
	close("pi[3] mean", rows[9].Mean, 0.5)
	close("pi[3] sd", rows[9].SD, math.Sqrt(3*3/(36*7.0)))
	for i, r := range rows[5:10] {
		var cdf func(float64) float64
		if i < 2 {
			g := distuv.Gamma{Alpha: l.Rate.Params["shape"][i], Beta: l.Rate.Params["rate"][i]}
			cdf = g.CDF
		} else {
			a := l.Pi.Params["param"][i-2]
			cdf = distuv.Beta{Alpha: a, Beta: 6 - a}.CDF
		}
		for _, c := range []struct{ q, p float64 }{{r.Q05, 0.05}, {r.Q50, 0.5}, {r.Q95, 0.95}} {
			if math.Abs(cdf(c.q)-c.p) > 1e-6 {
				t.Errorf("%s: CDF at its %v quantile is %v", r.Name, c.p, cdf(c.q))
			}
		}
	}
	b, err := json.Marshal(rows[11])
	if err != nil || string(b) != `{"name":"z[1,2]","family":"Categorical","mean":0.75,"sd":0.4330127018922193,"q05":null,"q50":null,"q95":null}` {
		t.Errorf("categorical row as JSON: %s (%v)", b, err)
	}
	var back SummaryRow
	if err := json.Unmarshal(b, &back); err != nil || back.HasQuantiles || back.Mean != 0.75 || !back.HasSD {
		t.Errorf("read back: %+v (%v)", back, err)
	}
}

// Degenerate factors summarize without panicking: a Dirichlet over one
// category is 1 for certain, and parameters outside a family's domain (a
// Gamma of shape 0) have no quantiles (NaN, null in JSON).
func TestSummarizeDegenerate(t *testing.T) {
	type latent struct {
		One  *Factor `json:"one"`
		Flat *Factor `json:"flat"`
	}
	rows, _, err := Summarize(latent{
		One:  NewFactor("Dirichlet", []int{2, 1}, "param", []float64{2, 3}),
		Flat: NewFactor("Gamma", []int{}, "shape", []float64{0}, "rate", []float64{1}),
	})
	if err != nil || len(rows) != 3 {
		t.Fatalf("%v, %v", rows, err)
	}
	if rows[0].Q05 != 1 || rows[1].Q95 != 1 || rows[0].Mean != 1 {
		t.Errorf("one category: %+v", rows[:2])
	}
	if b, _ := json.Marshal(rows[2]); !strings.Contains(string(b), `"q05":null`) {
		t.Errorf("Gamma of shape 0: %s", b)
	}
}

// A latent the summary cannot summarize is listed with why, and the
// others are kept; beyond SummaryTotal rows, latents are listed too. A row
// with one quantile undefined reads back and writes again the same.
func TestSummarizeLeavesOutWhatItCannot(t *testing.T) {
	type latent struct {
		Odd *Factor `json:"odd"`
		Neg *Factor `json:"neg"`
		A   *Factor `json:"a"`
		B   *Factor `json:"b"`
		C   *Factor `json:"c"`
		Mu  *Normal `json:"mu"`
	}
	ones := make([]float64, SummaryLimit)
	for i := range ones {
		ones[i] = 1
	}
	big := func() *Factor { return NewFactor("Gamma", []int{SummaryLimit}, "shape", ones, "rate", ones) }
	rows, omitted, err := Summarize(latent{
		Odd: NewFactor("Bernoulli", []int{1}, "p", []float64{0.5}),
		Neg: NewFactor("Dirichlet", []int{2}, "param", []float64{3, -1}),
		A:   big(), B: big(), C: big(),
		Mu: &Normal{Family: "Normal", Mean: 0, SD: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(omitted) != 3 || !strings.HasPrefix(omitted[0], "odd: no moments for a Bernoulli") || !strings.HasPrefix(omitted[1], "b: ") || !strings.HasPrefix(omitted[2], "c: ") {
		t.Errorf("omitted %q", omitted)
	}
	if n := len(rows); n != 2+SummaryLimit+1 || rows[0].Name != "neg[1]" || !math.IsNaN(rows[0].Q05) || rows[len(rows)-1].Name != "mu" {
		t.Errorf("%d rows, first %+v, last %+v", len(rows), rows[0], rows[len(rows)-1])
	}
	r := SummaryRow{Name: "x", Family: "InverseGamma", Mean: math.NaN(), SD: math.NaN(), HasSD: true, Q05: 1, Q50: 2, Q95: math.Inf(1), HasQuantiles: true}
	a, _ := json.Marshal(r)
	var back SummaryRow
	if err := json.Unmarshal(a, &back); err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(back); string(a) != string(b) || !strings.Contains(string(a), `"q05":1,"q50":2,"q95":null`) {
		t.Errorf("round trip: %s, then %s", a, b)
	}
}
