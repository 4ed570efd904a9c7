package runtime

import (
	"math"
	"testing"
)

func TestRelChange(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	for _, c := range []struct{ prev, cur, want float64 }{
		{-100, -99, 0.01},
		{100, 100, 0},
		{0, 1e-300, 1},
		{0, 0, 0},
		{-2, 2, 2},
		{inf, 1, inf},
		{1, -inf, inf},
		{nan, 1, inf},
		{1, nan, inf},
	} {
		if got := RelChange(c.prev, c.cur); !close(got, c.want, 1e-15, 0) {
			t.Errorf("RelChange(%g, %g) = %g, want %g", c.prev, c.cur, got, c.want)
		}
	}
}

func TestL2Change(t *testing.T) {
	if got := L2Change([]float64{3, 4}, []float64{0, 0}); got != 5 {
		t.Errorf("against zero: %g, want 5 (norm of b floored at 1)", got)
	}
	if got := L2Change([]float64{30, 40.5}, []float64{30, 40}); !close(got, 0.5/50, 1e-15, 0) {
		t.Errorf("relative: %g, want 0.01", got)
	}
	if got := L2Change([]float64{1e300, 1e300}, []float64{-1e300, -1e300}); !close(got, 2, 1e-15, 0) {
		t.Errorf("no overflow: %g, want 2", got)
	}
	if got := L2Change(nil, nil); got != 0 {
		t.Errorf("empty: %g", got)
	}
}

func TestProgressString(t *testing.T) {
	p := Progress{Iteration: 3, ELBO: -812.3456789, RelChange: 1.2e-5, MeanChange: 3.4e-4, Seconds: 0.1234}
	if got, want := p.String(), "iter   3  elbo -812.3456789  rel 1.2e-05  dmean 3.4e-04  0.12s"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	p = Progress{Iteration: 4, ELBO: -548.428, RelChange: 1.2e-3, MeanChange: 3.4e-4, Units: 8, Settled: 6, Seconds: 0.5, Decreased: true, Pending: []string{"elbo", "2 units"}}
	if got, want := p.String(), "iter   4  elbo -548.4280000  rel 1.2e-03  dmean 3.4e-04  units 6/8  0.50s  decreased  pending: elbo, 2 units"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	p = Progress{Iteration: 5, ELBO: -548.428, RelChange: 1.2e-3, MeanChange: 3.4e-4, Units: 8, Settled: 8, Seconds: 0.5, Pending: []string{"temperature"}, Temperature: 4.6, TemperedELBO: -123.25}
	if got, want := p.String(), "iter   5  elbo -548.4280000  rel 1.2e-03  dmean 3.4e-04  T 4.6  tempered -123.2500000  units 8/8  0.50s  pending: temperature"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	p.Temperature, p.TemperedELBO, p.Pending = 1, -548.428, nil
	if got, want := p.String(), "iter   5  elbo -548.4280000  rel 1.2e-03  dmean 3.4e-04  T 1  units 8/8  0.50s"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	p = Progress{Iteration: 1234, ELBO: 5, RelChange: math.Inf(1), MeanChange: 0, Seconds: 61}
	if got, want := p.String(), "iter 1234  elbo 5.0000000  rel +Inf  dmean 0.0e+00  61.00s"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}
