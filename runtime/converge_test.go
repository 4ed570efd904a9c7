package runtime

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestConvergenceDefaults(t *testing.T) {
	c := Convergence{Tol: math.NaN(), MeanTol: -1}.WithDefaults()
	want := Convergence{MaxIter: DefaultMaxIter, Tol: DefaultTol, MeanTol: DefaultMeanTol, LocalMaxIter: DefaultLocalMaxIter, LocalTol: DefaultLocalTol}
	if c != want {
		t.Errorf("got %+v, want %+v", c, want)
	}
	inf := Convergence{Tol: math.Inf(1), MeanTol: math.Inf(1)}.WithDefaults()
	if !math.IsInf(inf.Tol, 1) || !math.IsInf(inf.MeanTol, 1) {
		t.Errorf("+Inf tolerances must stay (they switch a criterion off): %+v", inf)
	}
}

// Unmet names every criterion that is not met, and only those.
func TestConvergenceUnmet(t *testing.T) {
	c := Convergence{}.WithDefaults()
	for _, tc := range []struct {
		s     IterationCheck
		short []string
		long  string
	}{
		{IterationCheck{RelChange: 1e-9, GlobalChange: 1e-10}, nil, ""},
		{IterationCheck{RelChange: 1e-5, GlobalChange: 1e-10}, []string{"elbo"}, "ELBO relative change 1e-05 ≥ Tol 1e-08"},
		{IterationCheck{RelChange: 1e-9, GlobalChange: 1e-3}, []string{"global"}, "global change 0.001 ≥ MeanTol 1e-09"},
		{IterationCheck{RelChange: math.Inf(1), GlobalChange: 1, FixedPoint: true, Units: 10, Settled: 7},
			[]string{"3 units"}, "3 of 10 units unsettled after LocalMaxIter 100 sweeps (LocalTol 1e-06)"},
		{IterationCheck{RelChange: 1e-9, Trouble: Trouble{"theta: indefinite_hessian": 2}}, []string{"trouble"}, "theta: indefinite_hessian (2 units)"},
		{IterationCheck{RelChange: math.NaN()}, []string{"elbo"}, "ELBO relative change NaN"},
	} {
		short, long := c.Unmet(tc.s)
		if !reflect.DeepEqual(short, tc.short) || strings.Join(long, "; ") != tc.long && !strings.HasPrefix(strings.Join(long, "; "), tc.long) || (tc.long == "") != (len(long) == 0) {
			t.Errorf("%+v: got %q %q, want %q %q", tc.s, short, long, tc.short, tc.long)
		}
	}
	off := Convergence{Tol: math.Inf(1), MeanTol: math.Inf(1)}.WithDefaults()
	if short, _ := off.Unmet(IterationCheck{RelChange: 0.5, GlobalChange: 0.5}); len(short) != 0 {
		t.Errorf("criteria switched off by +Inf: unmet %q", short)
	}
	if got := MaxIterationsStatus([]string{"a", "b"}); got != "max_iterations: a; b" {
		t.Errorf("status %q", got)
	}
}

func TestDecreased(t *testing.T) {
	for _, c := range []struct {
		prev, cur float64
		want      bool
	}{
		{-547.779, -548.428, true},
		{-548.428, -547.779, false},
		{-1e6, -1e6 - 1e-7, false}, // rounding
		{math.Inf(-1), -5, false},
		{-5, math.NaN(), false},
	} {
		if got := Decreased(c.prev, c.cur); got != c.want {
			t.Errorf("Decreased(%g, %g) = %v", c.prev, c.cur, got)
		}
	}
}
