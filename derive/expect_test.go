package derive

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distmv"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/vigen-go/vigen/golden"
)

// The expectation engine's exact rules against Monte Carlo with 10⁶ draws
// (tolerance: five standard errors), and its Taylor fallback against the
// formula of Eq. 19 written out by hand.

func expectEnv() *Env {
	return &Env{Index: map[string]int{}, Sizes: map[string]int{"P": 2, "K": 3}, Tensors: map[string]*Value{
		"theta.mean": {Dims: []int{2}, Data: []float64{0.3, -0.5}},
		"theta.cov":  {Dims: []int{2, 2}, Data: []float64{0.4, 0.1, 0.1, 0.25}},
		"z.param":    {Dims: []int{3}, Data: []float64{0.8, 2.5, 1.2}},
		"g.shape":    {Data: []float64{2.2}},
		"g.rate":     {Data: []float64{1.3}},
		"c.prob":     {Dims: []int{3}, Data: []float64{0.2, 0.5, 0.3}},
		"beta":       {Dims: []int{3}, Data: []float64{1.5, -0.7, 0.4}},
		"a":          {Dims: []int{2}, Data: []float64{0.6, -1.1}},
	}}
}

type sampler struct {
	theta *distmv.Normal
	z     *distmv.Dirichlet
	g     distuv.Gamma
	c     distuv.Categorical
}

func newSampler(env *Env) *sampler {
	cov := mat.NewSymDense(2, env.Tensors["theta.cov"].Data)
	th, _ := distmv.NewNormal(env.Tensors["theta.mean"].Data, cov, rand.NewPCG(21, 22))
	return &sampler{
		theta: th,
		z:     distmv.NewDirichlet(env.Tensors["z.param"].Data, rand.NewPCG(23, 24)),
		g:     distuv.Gamma{Alpha: 2.2, Beta: 1.3, Src: rand.NewPCG(25, 26)},
		c:     distuv.NewCategorical(env.Tensors["c.prob"].Data, rand.NewPCG(27, 28)),
	}
}

func expectQs() []*QFactor {
	return []*QFactor{GaussianQ("theta", "P"), DirichletQ("z", "K"), GammaQ("g"), CategoricalQ("c", "K")}
}

func TestExactExpectations(t *testing.T) {
	golden.SlowTier(t)
	i := Index{Name: "i", Size: "P"}
	ix := func(n int) Expr { return IxE(Index{Name: "e" + string(rune('0'+n)), Size: "P"}) }
	env := expectEnv()
	env.Index["e0"], env.Index["e1"] = 0, 1
	beta := env.Tensors["beta"].Data
	a := env.Tensors["a"].Data
	cases := []struct {
		name string
		e    Expr
		draw func(s *sampler, th, z []float64) float64
	}{
		{"E[θ0]", T("theta", ix(0)), func(s *sampler, th, z []float64) float64 { return th[0] }},
		{"E[θ0θ1]", Mul(T("theta", ix(0)), T("theta", ix(1))), func(s *sampler, th, z []float64) float64 { return th[0] * th[1] }},
		{"E[3(θ0−1)² + θ1]", Add(Mul(N(3), Pow(Sub(T("theta", ix(0)), N(1)), N(2))), T("theta", ix(1))),
			func(s *sampler, th, z []float64) float64 { return 3*(th[0]-1)*(th[0]-1) + th[1] }},
		{"E[exp θ0]", Call1("exp", T("theta", ix(0))), func(s *sampler, th, z []float64) float64 { return math.Exp(th[0]) }},
		{"E[exp(aᵀθ + 0.2)]", Call1("exp", Add(Sum([]Index{i}, Mul(T("a", IxE(i)), T("theta", IxE(i)))), N(0.2))),
			func(s *sampler, th, z []float64) float64 { return math.Exp(a[0]*th[0] + a[1]*th[1] + 0.2) }},
		{"E[log z1]", Call1("log", T("z", IxE(Index{Name: "e1", Size: "K"}))), func(s *sampler, th, z []float64) float64 { return math.Log(z[1]) }},
		{"E[z1]", T("z", IxE(Index{Name: "e1", Size: "K"})), func(s *sampler, th, z []float64) float64 { return z[1] }},
		{"E[g]", T("g"), func(s *sampler, th, z []float64) float64 { return s.g.Rand() }},
		{"E[log g]", Call1("log", T("g")), func(s *sampler, th, z []float64) float64 { return math.Log(s.g.Rand()) }},
		{"E[θ0·log z1] (independence)", Mul(T("theta", ix(0)), Call1("log", T("z", IxE(Index{Name: "e1", Size: "K"})))),
			func(s *sampler, th, z []float64) float64 { return th[0] * math.Log(z[1]) }},
		{"E[β[c]] (categorical)", T("beta", TInt("c")), func(s *sampler, th, z []float64) float64 { return beta[int(s.c.Rand())] }},
		{"E[exp(θ0)·β[c]]", Mul(Call1("exp", T("theta", ix(0))), T("beta", TInt("c"))),
			func(s *sampler, th, z []float64) float64 { return math.Exp(th[0]) * beta[int(s.c.Rand())] }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := testBuilder()
			r, log := b.Expect(c.e, expectQs())
			for _, l := range log {
				if !l.Exact {
					t.Fatalf("rule for %s is not exact: %s", l.Term, l.Rule)
				}
			}
			if len(log) == 0 {
				t.Fatal("no rule recorded")
			}
			want := Eval(r, env)
			s := newSampler(env)
			th, z := make([]float64, 2), make([]float64, 3)
			mcCheck(t, c.name, want, func() float64 {
				s.theta.Rand(th)
				s.z.Rand(z)
				return c.draw(s, th, z)
			})
		})
	}
}

// Nonlinear functions without a rule fall back to Eq. 19 and say so.
func TestTaylorFallback(t *testing.T) {
	env := expectEnv()
	env.Index["e0"] = 0
	e := Call1("logistic", T("theta", IxE(Index{Name: "e0", Size: "P"})))
	b := testBuilder()
	r, log := b.Expect(e, expectQs())
	if len(log) != 1 || log[0].Exact || !strings.Contains(log[0].Rule, "Taylor") {
		t.Fatalf("log = %+v, want one Taylor entry", log)
	}
	// By hand: σ(μ) + ½σ''(μ)Σ₀₀ with σ'' = σ(1−σ)(1−2σ).
	mu, v := 0.3, 0.4
	s := 1 / (1 + math.Exp(-mu))
	want := s + 0.5*s*(1-s)*(1-2*s)*v
	if got := Eval(r, env); math.Abs(got-want) > 1e-14 {
		t.Errorf("Taylor expectation %.16g, Eq. 19 by hand %.16g", got, want)
	}
}
