package runtime

import (
	"math"
	"testing"
)

func TestNonFinite(t *testing.T) {
	type inner struct {
		Mean []float64
		Cov  [][]float64
	}
	type outer struct {
		Theta  []*inner
		F      *Factor
		hidden float64
		X      float64
	}
	ok := outer{Theta: []*inner{{Mean: []float64{1}, Cov: [][]float64{{1}}}}, F: NewFactor("Categorical", []int{1}, "prob", []float64{1}), hidden: math.NaN()}
	if p := NonFinite(ok); p != "" {
		t.Errorf("finite value reported: %s", p)
	}
	for _, c := range []struct {
		set  func(o *outer)
		want string
	}{
		{func(o *outer) { o.Theta[0].Cov[0][0] = math.NaN() }, "Theta[1].Cov[1][1] = NaN"},
		{func(o *outer) { o.Theta[0].Mean[0] = math.Inf(-1) }, "Theta[1].Mean[1] = -Inf"},
		{func(o *outer) { o.F.Params["prob"][0] = math.Inf(1) }, `F.Params["prob"][1] = +Inf`},
		{func(o *outer) { o.X = math.NaN() }, "X = NaN"},
	} {
		o := outer{Theta: []*inner{{Mean: []float64{1}, Cov: [][]float64{{1}}}}, F: NewFactor("Categorical", []int{1}, "prob", []float64{1})}
		c.set(&o)
		if p := NonFinite(&o); p != c.want {
			t.Errorf("got %q, want %q", p, c.want)
		}
	}
}
