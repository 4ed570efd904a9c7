package derive

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distmat"
	"gonum.org/v1/gonum/stat/distmv"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/vigen-go/vigen/golden"
	"github.com/vigen-go/vigen/spec/ir"
)

// The distribution table is checked against gonum's independent
// implementations (log densities), against itself (the exponential-family
// decomposition must reproduce the log density), and against Monte Carlo
// with 10⁶ draws (expectations of sufficient statistics and entropies), with
// tolerances of five Monte Carlo standard errors.

const mcDraws = 1_000_000

type univariate interface {
	LogProb(float64) float64
	Rand() float64
	Mean() float64
}

// stats computes the named statistics of a scalar draw, independently of
// derive.
var scalarStats = map[string]func(x float64) float64{
	"x":         func(x float64) float64 { return x },
	"x^2":       func(x float64) float64 { return x * x },
	"log x":     math.Log,
	"log(1-x)":  func(x float64) float64 { return math.Log1p(-x) },
	"1/x":       func(x float64) float64 { return 1 / x },
	"(log x)^2": func(x float64) float64 { return math.Log(x) * math.Log(x) },
}

func testBuilder() *Builder { return NewBuilder(&ir.Model{}) }

func nums(v ...float64) []Val {
	out := make([]Val, len(v))
	for k, x := range v {
		out[k] = scalar(N(x))
	}
	return out
}

func closeTo(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

// mcCheck compares want with the Monte Carlo mean of draws.
func mcCheck(t *testing.T, what string, want float64, draw func() float64) {
	t.Helper()
	mcCheckN(t, what, want, mcDraws, draw)
}

// mcCheckN is mcCheck with n draws.
func mcCheckN(t *testing.T, what string, want float64, mcDraws int, draw func() float64) {
	t.Helper()
	var s, s2 float64
	for i := 0; i < mcDraws; i++ {
		v := draw()
		s += v
		s2 += v * v
	}
	mean := s / float64(mcDraws)
	se := math.Sqrt(math.Max(s2/float64(mcDraws)-mean*mean, 0) / float64(mcDraws))
	if math.Abs(mean-want) > 5*se+1e-12 {
		t.Errorf("%s = %.8g, Monte Carlo %.8g ± %.2g (n = %d)", what, want, mean, se, mcDraws)
	}
}

func TestScalarFamilies(t *testing.T) {
	cases := []struct {
		name string
		args []float64
		g    univariate
	}{
		{"Normal", []float64{0.3, 1.7}, distuv.Normal{Mu: 0.3, Sigma: 1.7, Src: rand.NewPCG(1, 2)}},
		{"Gamma", []float64{2.5, 1.5}, distuv.Gamma{Alpha: 2.5, Beta: 1.5, Src: rand.NewPCG(1, 2)}},
		{"InverseGamma", []float64{3.5, 2}, distuv.InverseGamma{Alpha: 3.5, Beta: 2, Src: rand.NewPCG(1, 2)}},
		{"Beta", []float64{2, 3.5}, distuv.Beta{Alpha: 2, Beta: 3.5, Src: rand.NewPCG(1, 2)}},
		{"Bernoulli", []float64{0.3}, distuv.Bernoulli{P: 0.3, Src: rand.NewPCG(1, 2)}},
		{"Binomial", []float64{7, 0.35}, distuv.Binomial{N: 7, P: 0.35, Src: rand.NewPCG(1, 2)}},
		{"Poisson", []float64{3.2}, distuv.Poisson{Lambda: 3.2, Src: rand.NewPCG(1, 2)}},
		{"Exponential", []float64{1.7}, distuv.Exponential{Rate: 1.7, Src: rand.NewPCG(1, 2)}},
		{"LogNormal", []float64{0.2, 0.6}, distuv.LogNormal{Mu: 0.2, Sigma: 0.6, Src: rand.NewPCG(1, 2)}},
		{"StudentT", []float64{5, 0.5, 1.3}, distuv.StudentsT{Nu: 5, Mu: 0.5, Sigma: 1.3, Src: rand.NewPCG(1, 2)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			env := &Env{Index: map[string]int{}, Sizes: map[string]int{}}
			d := Dists[c.name]
			if d == nil {
				t.Fatal("not in the table")
			}
			b := testBuilder()
			args := nums(c.args...)
			for i := 0; i < 20; i++ {
				x := c.g.Rand()
				lp, err := d.LogDensity(b, scalar(N(x)), args)
				if err != nil {
					t.Fatal(err)
				}
				got, want := Eval(lp, env), c.g.LogProb(x)
				if !closeTo(got, want, 1e-10) {
					t.Errorf("log p(%g) = %.15g, gonum %.15g", x, got, want)
				}
				if d.ExpFam != nil {
					ef := expFamLogDensity(b, d.ExpFam, scalar(N(x)), args)
					if v := Eval(ef, env); !closeTo(v, want, 1e-10) {
						t.Errorf("exponential-family form at %g = %.15g, log density %.15g", x, v, want)
					}
				}
			}
			for key, rule := range d.Expect {
				stat, ok := scalarStats[key]
				if key == "var" {
					// E[(x − E x)²] with gonum's mean
					m := c.g.Mean()
					stat, ok = func(x float64) float64 { return (x - m) * (x - m) }, true
				}
				if !ok {
					t.Fatalf("no independent statistic for %q", key)
				}
				want := Eval(rule(b, args, nil), env)
				mcCheck(t, "E["+key+"]", want, func() float64 { return stat(c.g.Rand()) })
			}
			if d.Entropy != nil {
				mcCheck(t, "entropy", Eval(d.Entropy(b, args), env), func() float64 { return -c.g.LogProb(c.g.Rand()) })
			}
		})
	}
}

// expFamLogDensity assembles log h(x) + Σ_k ⟨η_k, t_k(x)⟩ − a.
func expFamLogDensity(b *Builder, ef *ExpFam, x Val, args []Val) Expr {
	terms := []Expr{Neg(ef.LogNorm(b, args))}
	if ef.LogBase != nil {
		terms = append(terms, ef.LogBase(b, x, args))
	}
	for _, s := range ef.Stats {
		eta, tv := s.Eta(b, args), s.T(b, x)
		dims := eta.Dims
		var idx []Index
		var sel []Expr
		for _, d := range dims {
			i := b.freshFor(d)
			idx = append(idx, i)
			sel = append(sel, IxE(i))
		}
		terms = append(terms, Sum(idx, Mul(eta.At(sel), tv.At(sel))))
	}
	return Add(terms...)
}

// tensorVal is a Val reading the whole tensor name with the given dims.
func tensorVal(name string, sym bool, dims ...string) Val {
	return Val{Dims: dims, Tensor: name, At: func(sel []Expr) Expr {
		if sym {
			return TSym(name, sel[0], sel[1])
		}
		return T(name, sel...)
	}}
}

func symData(m *mat.SymDense) []float64 {
	n := m.SymmetricDim()
	out := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			out[i*n+j] = m.At(i, j)
		}
	}
	return out
}

func invLogDet(m *mat.SymDense) ([]float64, float64) {
	var ch mat.Cholesky
	ch.Factorize(m)
	inv := mat.NewSymDense(m.SymmetricDim(), nil)
	ch.InverseTo(inv)
	return symData(inv), ch.LogDet()
}

func TestMvNormalFamily(t *testing.T) {
	golden.SlowTier(t)
	const k = 3
	S := mat.NewSymDense(k, []float64{2, 0.3, -0.2, 0.3, 1, 0.4, -0.2, 0.4, 1.5})
	m := []float64{0.5, -1, 0.25}
	g, _ := distmv.NewNormal(m, S, rand.NewPCG(3, 4))
	inv, ld := invLogDet(S)
	env := &Env{Index: map[string]int{}, Sizes: map[string]int{"K": k}, Tensors: map[string]*Value{
		"m": {Dims: []int{k}, Data: m}, "S": {Dims: []int{k, k}, Data: symData(S)},
		"S.inv": {Dims: []int{k, k}, Data: inv}, "S.logdet": {Data: []float64{ld}},
		"x": {Dims: []int{k}, Data: make([]float64, k)},
	}}
	d := Dists["MvNormal"]
	b := testBuilder()
	args := []Val{tensorVal("m", false, "K"), tensorVal("S", true, "K", "K")}
	x := tensorVal("x", false, "K")
	lp, err := d.LogDensity(b, x, args)
	if err != nil {
		t.Fatal(err)
	}
	ef := expFamLogDensity(b, d.ExpFam, x, args)
	for i := 0; i < 20; i++ {
		g.Rand(env.Tensors["x"].Data)
		want := g.LogProb(env.Tensors["x"].Data)
		if got := Eval(lp, env); !closeTo(got, want, 1e-10) {
			t.Errorf("log p = %.15g, gonum %.15g", got, want)
		}
		if got := Eval(ef, env); !closeTo(got, want, 1e-10) {
			t.Errorf("exponential-family form %.15g, gonum %.15g", got, want)
		}
	}
	ia, ib := Index{Name: "e0", Size: "K"}, Index{Name: "e1", Size: "K"}
	draw := make([]float64, k)
	for a := 0; a < k; a++ {
		env.Index["e0"] = a
		mcCheck(t, "E[x]", Eval(d.Expect["x"](b, args, []Expr{IxE(ia)}), env), func() float64 { g.Rand(draw); return draw[a] })
		bb := (a + 1) % k
		env.Index["e1"] = bb
		mcCheck(t, "E[xxᵀ]", Eval(d.Expect["xx"](b, args, []Expr{IxE(ia), IxE(ib)}), env), func() float64 { g.Rand(draw); return draw[a] * draw[bb] })
	}
	mcCheck(t, "entropy", Eval(d.Entropy(b, args), env), func() float64 { g.Rand(draw); return -g.LogProb(draw) })
}

func TestDirichletFamily(t *testing.T) {
	alpha := []float64{0.7, 2, 1.3, 4}
	k := len(alpha)
	g := distmv.NewDirichlet(alpha, rand.NewPCG(5, 6))
	env := &Env{Index: map[string]int{}, Sizes: map[string]int{"K": k}, Tensors: map[string]*Value{
		"alpha": {Dims: []int{k}, Data: alpha}, "x": {Dims: []int{k}, Data: make([]float64, k)},
	}}
	d := Dists["Dirichlet"]
	b := testBuilder()
	args := []Val{tensorVal("alpha", false, "K")}
	x := tensorVal("x", false, "K")
	lp, _ := d.LogDensity(b, x, args)
	ef := expFamLogDensity(b, d.ExpFam, x, args)
	for i := 0; i < 20; i++ {
		g.Rand(env.Tensors["x"].Data)
		want := g.LogProb(env.Tensors["x"].Data)
		if got := Eval(lp, env); !closeTo(got, want, 1e-10) {
			t.Errorf("log p = %.15g, gonum %.15g", got, want)
		}
		if got := Eval(ef, env); !closeTo(got, want, 1e-10) {
			t.Errorf("exponential-family form %.15g, gonum %.15g", got, want)
		}
	}
	draw := make([]float64, k)
	sel := []Expr{IxE(Index{Name: "e0", Size: "K"})}
	for a := 0; a < k; a++ {
		env.Index["e0"] = a
		mcCheck(t, "E[log x]", Eval(d.Expect["log x"](b, args, sel), env), func() float64 { g.Rand(draw); return math.Log(draw[a]) })
		mcCheck(t, "E[x]", Eval(d.Expect["x"](b, args, sel), env), func() float64 { g.Rand(draw); return draw[a] })
	}
	mcCheck(t, "entropy", Eval(d.Entropy(b, args), env), func() float64 { g.Rand(draw); return -g.LogProb(draw) })
}

func TestCategoricalAndMultinomial(t *testing.T) {
	p := []float64{0.1, 0.5, 0.15, 0.25}
	k := len(p)
	g := distuv.NewCategorical(p, rand.NewPCG(7, 8))
	env := &Env{Index: map[string]int{}, Sizes: map[string]int{"K": k}, Tensors: map[string]*Value{
		"p": {Dims: []int{k}, Data: p}, "z": {Data: []float64{0}}, "x": {Dims: []int{k}, Data: make([]float64, k)},
	}}
	b := testBuilder()
	args := []Val{tensorVal("p", false, "K")}
	d := Dists["Categorical"]
	z := scalar(TInt("z"))
	lp, _ := d.LogDensity(b, z, args)
	ef := expFamLogDensity(b, d.ExpFam, Val{Dims: []string{"K"}, At: z.At}, args)
	for zz := 1; zz <= k; zz++ {
		env.Tensors["z"].Data[0] = float64(zz) // 1-based, as in the language
		want := g.LogProb(float64(zz - 1))
		if got := Eval(lp, env); !closeTo(got, want, 1e-12) {
			t.Errorf("log p(%d) = %g, gonum %g", zz, got, want)
		}
		if got := Eval(ef, env); !closeTo(got, want, 1e-12) {
			t.Errorf("exponential-family form at %d = %g, want %g", zz, got, want)
		}
	}
	sel := []Expr{IxE(Index{Name: "e0", Size: "K"})}
	for a := 0; a < k; a++ {
		env.Index["e0"] = a
		mcCheck(t, "E[onehot]", Eval(d.Expect["onehot"](b, args, sel), env), func() float64 {
			if int(g.Rand()) == a {
				return 1
			}
			return 0
		})
	}
	mcCheck(t, "entropy", Eval(d.Entropy(b, args), env), func() float64 { return -g.LogProb(g.Rand()) })

	// Multinomial against a direct computation of n!/Πx_k! Πp_k^x_k.
	dm := Dists["Multinomial"]
	x := tensorVal("x", false, "K")
	lpm, _ := dm.LogDensity(b, x, args)
	efm := expFamLogDensity(b, dm.ExpFam, x, args)
	rng := rand.New(rand.NewPCG(9, 10))
	for i := 0; i < 20; i++ {
		n := 0.0
		want := 0.0
		for j := range p {
			c := float64(rng.IntN(6))
			env.Tensors["x"].Data[j] = c
			n += c
			lc, _ := math.Lgamma(c + 1)
			want += c*math.Log(p[j]) - lc
		}
		ln, _ := math.Lgamma(n + 1)
		want += ln
		if got := Eval(lpm, env); !closeTo(got, want, 1e-12) {
			t.Errorf("multinomial log p = %g, want %g", got, want)
		}
		if got := Eval(efm, env); !closeTo(got, want, 1e-12) {
			t.Errorf("multinomial exponential-family form %g, want %g", got, want)
		}
	}
}

func TestWishartFamily(t *testing.T) {
	golden.SlowTier(t)
	const k = 2
	V := mat.NewSymDense(k, []float64{1.5, 0.4, 0.4, 0.8})
	nu := 5.0
	g, ok := distmat.NewWishart(V, nu, rand.NewPCG(11, 12))
	if !ok {
		t.Fatal("bad Wishart")
	}
	inv, ld := invLogDet(V)
	env := &Env{Index: map[string]int{}, Sizes: map[string]int{"K": k}, Tensors: map[string]*Value{
		"V": {Dims: []int{k, k}, Data: symData(V)}, "V.inv": {Dims: []int{k, k}, Data: inv}, "V.logdet": {Data: []float64{ld}},
		"W": {Dims: []int{k, k}, Data: make([]float64, k*k)}, "W.logdet": {Data: []float64{0}},
	}}
	d := Dists["Wishart"]
	b := testBuilder()
	args := []Val{scalar(N(nu)), tensorVal("V", true, "K", "K")}
	w := tensorVal("W", true, "K", "K")
	lp, err := d.LogDensity(b, w, args)
	if err != nil {
		t.Fatal(err)
	}
	ef := expFamLogDensity(b, d.ExpFam, w, args)
	draw := mat.NewSymDense(k, nil)
	set := func() {
		g.RandSymTo(draw)
		copy(env.Tensors["W"].Data, symData(draw))
		_, l := invLogDet(draw)
		env.Tensors["W.logdet"].Data[0] = l
	}
	for i := 0; i < 20; i++ {
		set()
		want := g.LogProbSym(draw)
		if got := Eval(lp, env); !closeTo(got, want, 1e-10) {
			t.Errorf("log p = %.15g, gonum %.15g", got, want)
		}
		if got := Eval(ef, env); !closeTo(got, want, 1e-10) {
			t.Errorf("exponential-family form %.15g, gonum %.15g", got, want)
		}
	}
	env.Index["e0"], env.Index["e1"] = 0, 1
	sel := []Expr{IxE(Index{Name: "e0", Size: "K"}), IxE(Index{Name: "e1", Size: "K"})}
	// One set of draws for the three statistics (a 2×2 log-determinant in
	// closed form keeps this fast).
	wants := []float64{
		Eval(d.Expect["W"](b, args, sel), env),
		Eval(d.Expect["log|W|"](b, args, nil), env),
		Eval(d.Entropy(b, args), env),
	}
	names := []string{"E[W]", "E[log|W|]", "entropy"}
	var s, s2 [3]float64
	for n := 0; n < mcDraws; n++ {
		g.RandSymTo(draw)
		a, c, e := draw.At(0, 0), draw.At(0, 1), draw.At(1, 1)
		ld := math.Log(a*e - c*c)
		lp := g.LogProbSym(draw)
		for k, v := range [3]float64{c, ld, -lp} {
			s[k] += v
			s2[k] += v * v
		}
	}
	for k := range wants {
		mean := s[k] / mcDraws
		se := math.Sqrt((s2[k]/mcDraws - mean*mean) / mcDraws)
		if math.Abs(mean-wants[k]) > 5*se+1e-12 {
			t.Errorf("%s = %.8g, Monte Carlo %.8g ± %.2g", names[k], wants[k], mean, se)
		}
	}
}

// Every family of the language has an entry, and vice versa; each entry's
// signature is the language's (the same *ir.Family, not a copy).
func TestDistTableMatchesLanguage(t *testing.T) {
	for name, fam := range ir.Families {
		if Dists[name] == nil {
			t.Errorf("family %s is in the language but not in derive's table", name)
		} else if Dists[name].Family != fam {
			t.Errorf("derive's entry for %s has a signature other than ir.Families'", name)
		}
	}
	for name := range Dists {
		if ir.Families[name] == nil {
			t.Errorf("family %s is in derive's table but not in the language", name)
		}
	}
}

// Tempering divides natural parameters by T only for families whose base
// measure is constant.
func TestConstantBase(t *testing.T) {
	for fam, want := range map[string]bool{"Normal": true, "Gamma": true, "Dirichlet": true, "Beta": true,
		"InverseGamma": true, "Categorical": true, "LogNormal": false, "NoSuchFamily": false} {
		if got := ConstantBase(fam); got != want {
			t.Errorf("ConstantBase(%s) = %v, want %v", fam, got, want)
		}
	}
}
