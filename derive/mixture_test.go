package derive

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/vigen-go/vigen/golden"
)

// The Mixture family: its log density against the sum of the components'
// densities computed directly (gonum), its normalization, and its
// derivatives through logaddexp against finite differences.

func component(name string, args ...float64) Val {
	return Val{Dist: &DistVal{Name: name, Args: nums(args...)}}
}

// simplexVal is a constant weight vector read at literal (1-based) indices.
func simplexVal(w ...float64) Val {
	return Val{Dims: []string{"K"}, At: func(sel []Expr) Expr { return N(w[int(sel[0].(*Num).V)-1]) }}
}

func mixtureAt(t *testing.T, x float64, args ...Val) float64 {
	t.Helper()
	lp, err := Dists["Mixture"].LogDensity(testBuilder(), scalar(N(x)), args)
	if err != nil {
		t.Fatal(err)
	}
	return Eval(lp, &Env{Index: map[string]int{}, Sizes: map[string]int{}})
}

func TestMixtureLogDensity(t *testing.T) {
	golden.SlowTier(t)
	n1, n2, n3 := distuv.Normal{Mu: -2, Sigma: 0.7}, distuv.Normal{Mu: 3, Sigma: 1.2}, distuv.Normal{Mu: 0.5, Sigma: 0.3}
	st := distuv.StudentsT{Nu: 4, Mu: 1, Sigma: 2}
	cases := []struct {
		name string
		args []Val
		want func(x float64) float64 // the density, summed directly
	}{
		{"two normals, scalar weight", []Val{scalar(N(0.35)), component("Normal", -2, 0.7), component("Normal", 3, 1.2)},
			func(x float64) float64 { return 0.35*n1.Prob(x) + 0.65*n2.Prob(x) }},
		{"normal and Student-t", []Val{scalar(N(0.8)), component("Normal", -2, 0.7), component("StudentT", 4, 1, 2)},
			func(x float64) float64 { return 0.8*n1.Prob(x) + 0.2*st.Prob(x) }},
		{"two normals, simplex", []Val{simplexVal(0.6, 0.4), component("Normal", -2, 0.7), component("Normal", 3, 1.2)},
			func(x float64) float64 { return 0.6*n1.Prob(x) + 0.4*n2.Prob(x) }},
		{"three normals, simplex", []Val{simplexVal(0.2, 0.5, 0.3), component("Normal", -2, 0.7), component("Normal", 3, 1.2), component("Normal", 0.5, 0.3)},
			func(x float64) float64 { return 0.2*n1.Prob(x) + 0.5*n2.Prob(x) + 0.3*n3.Prob(x) }},
	}
	for _, c := range cases {
		for _, x := range []float64{-5, -2, -0.3, 0, 0.5, 1.7, 3, 8} {
			got, want := mixtureAt(t, x, c.args...), math.Log(c.want(x))
			if !closeTo(got, want, 1e-12) {
				t.Errorf("%s: log p(%g) = %.15g, direct %.15g", c.name, x, got, want)
			}
		}
		// ∫ p = 1 (Simpson's rule on [−40, 40]; the normals' tails beyond
		// are negligible)
		const lo, hi, n = -40.0, 40.0, 40000
		h := (hi - lo) / n
		sum := 0.0
		for i := 0; i <= n; i++ {
			w := 2.0
			switch {
			case i == 0 || i == n:
				w = 1
			case i%2 == 1:
				w = 4
			}
			sum += w * math.Exp(mixtureAt(t, lo+float64(i)*h, c.args...))
		}
		// less the Student-t's tail mass beyond ±40
		want := 1.0
		if c.name == "normal and Student-t" {
			want -= 0.2 * (st.CDF(lo) + st.Survival(hi))
		}
		if integral := sum * h / 3; math.Abs(integral-want) > 1e-9 {
			t.Errorf("%s: ∫ p = %.12f, want %.12f", c.name, integral, want)
		}
	}
	// far apart components: the log density stays finite where one
	// component's density underflows (logaddexp, not log of a sum)
	got := mixtureAt(t, 60, scalar(N(0.5)), component("Normal", 0, 0.5), component("Normal", 60, 1))
	far := distuv.Normal{Mu: 60, Sigma: 1}
	if want := math.Log(0.5) + far.LogProb(60); !closeTo(got, want, 1e-12) {
		t.Errorf("far apart components: log p(60) = %v, want %v", got, want)
	}
	// a Poisson mixture sums to one over the counts
	sum := 0.0
	for k := 0; k < 200; k++ {
		lp := mixtureAt(t, float64(k), simplexVal(0.3, 0.7), component("Poisson", 2.5), component("Poisson", 14))
		want := 0.3*distuv.Poisson{Lambda: 2.5}.Prob(float64(k)) + 0.7*distuv.Poisson{Lambda: 14}.Prob(float64(k))
		if !closeTo(math.Exp(lp), want, 1e-12) {
			t.Errorf("Poisson mixture: p(%d) = %v, direct %v", k, math.Exp(lp), want)
		}
		sum += math.Exp(lp)
	}
	if math.Abs(sum-1) > 1e-12 {
		t.Errorf("Poisson mixture: Σ p = %.15f, want 1", sum)
	}
}

// TestLogAddExpDerivatives checks the logaddexp primitive's partial
// derivatives, to second order, against central differences, including
// arguments far apart.
func TestLogAddExpDerivatives(t *testing.T) {
	env := &Env{Index: map[string]int{}, Sizes: map[string]int{}}
	for _, ab := range [][2]float64{{0, 0}, {1.3, -0.4}, {-3, 2}, {40, -40}, {-700, -690}} {
		a, b := ab[0], ab[1]
		f := func(a, b float64) float64 { return Eval(CallE(MustPrim("logaddexp"), N(a), N(b)), env) }
		if want := math.Log(math.Exp(a) + math.Exp(b)); math.Abs(want) < 700 && !math.IsInf(want, 0) && !closeTo(f(a, b), want, 1e-12) {
			t.Errorf("logaddexp(%g, %g) = %v, want %v", a, b, f(a, b), want)
		}
		p := MustPrim("logaddexp")
		self := CallE(p, N(a), N(b))
		parts := p.Partials([]Expr{N(a), N(b)}, self)
		const h = 1e-5
		fd := []float64{(f(a+h, b) - f(a-h, b)) / (2 * h), (f(a, b+h) - f(a, b-h)) / (2 * h)}
		for k := range parts {
			if got := Eval(parts[k], env); math.Abs(got-fd[k]) > 1e-8 {
				t.Errorf("∂logaddexp(%g, %g)/∂arg%d = %v, finite differences %v", a, b, k+1, got, fd[k])
			}
		}
	}
}
