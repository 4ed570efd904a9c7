package main

import (
	"context"
	"math"
	"os"
	"testing"

	"github.com/vigen-go/vigen/examples/hierlogreg/hierlogreg"
	"github.com/vigen-go/vigen/golden"
	"github.com/vigen-go/vigen/runtime"
)

// handScore is §5.2's score written out: accuracy of σ(μᵀt) > ½ and the
// mean of z log σ(μᵀt) + (1−z) log σ(−μᵀt), μ the posterior mean of the
// student's school (of the one group if pooled).
func handScore(res *hierlogreg.Result, s Setting, test []Student) Score {
	var sc Score
	for _, st := range test {
		g := st.School - 1
		if s == Pooled {
			g = 0
		}
		mu := res.Latent.Theta[g].Mean
		u := 0.0
		for j, v := range st.X {
			u += mu[j] * v
		}
		if (u > 0) == (st.Good == 1) {
			sc.Accuracy++
		}
		if st.Good == 1 {
			sc.LogLik += runtime.LogLogistic(u)
		} else {
			sc.LogLik += runtime.LogLogistic(-u)
		}
	}
	n := float64(len(test))
	sc.Accuracy /= n
	sc.LogLik /= n
	return sc
}

// The School experiment's held-out score comes from the generated Predict
// (Evaluate) and equals the formula of §5.2 computed by hand, in each of
// Table 2's settings, on the first split.
func TestSchoolScoreFromPredict(t *testing.T) {
	golden.SlowTier(t)
	path := "../../../shared/data/school/school.csv"
	if _, err := os.Stat(path); err != nil {
		t.Skipf("the School data are not here (%v): ../shared is absent in a fresh clone", err)
	}
	students, schools, err := ReadSchool(path)
	if err != nil {
		t.Fatal(err)
	}
	train, test := Split(students, schools, 1, 0)
	for _, s := range Settings {
		res, err := hierlogreg.Fit(context.Background(), SchoolData(s, train, schools), hierlogreg.Options{MaxIter: 500, FixParams: s != Hierarchical})
		if err != nil {
			t.Fatal(err)
		}
		got, err := Evaluate(res, s, test)
		if err != nil {
			t.Fatal(err)
		}
		want := handScore(res, s, test)
		if got.Accuracy != want.Accuracy || math.Abs(got.LogLik-want.LogLik) > 1e-12 {
			t.Errorf("%s: Predict scores %+v, the hand formula %+v", s, got, want)
		}
		t.Logf("%s: accuracy %.4f, loglik %.5f", s, got.Accuracy, got.LogLik)
	}
}
