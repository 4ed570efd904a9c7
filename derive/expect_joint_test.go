package derive

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distmv"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/vigen-go/vigen/golden"
)

// Expectations of polynomials that read several independent factors at
// once — a Gaussian vector, a scalar Normal, Gammas (scalar and
// elementwise), a Beta — must be exact: E over independent factors of a
// polynomial of degree ≤ 2 in each needs only their means and (co)variances.
// Random polynomials against Monte Carlo, every rule labelled exact.

// jointAtom is one read of a latent: its expression and its value at a draw.
type jointAtom struct {
	v    string // the latent it reads
	e    Expr
	eval func(d *jointDraw) float64
}

type jointDraw struct {
	theta     []float64
	mu, g, bb float64
	h         []float64
}

func jointAtoms() []jointAtom {
	e := func(n int, size string) Expr { return IxE(Index{Name: "e" + string(rune('0'+n)), Size: size}) }
	i := Index{Name: "i", Size: "P"}
	return []jointAtom{
		{"theta", T("theta", e(0, "P")), func(d *jointDraw) float64 { return d.theta[0] }},
		{"theta", T("theta", e(1, "P")), func(d *jointDraw) float64 { return d.theta[1] }},
		{"theta", Sum([]Index{i}, Mul(T("a", IxE(i)), T("theta", IxE(i)))), func(d *jointDraw) float64 { return 0.6*d.theta[0] - 1.1*d.theta[1] }},
		{"mu", T("mu"), func(d *jointDraw) float64 { return d.mu }},
		{"g", T("g"), func(d *jointDraw) float64 { return d.g }},
		{"h", T("h", e(0, "K")), func(d *jointDraw) float64 { return d.h[0] }},
		{"h", T("h", e(2, "K")), func(d *jointDraw) float64 { return d.h[2] }},
		{"bb", T("bb"), func(d *jointDraw) float64 { return d.bb }},
	}
}

func jointEnv(t *testing.T, qs []*QFactor) *Env {
	env := expectEnv()
	env.Index["e0"], env.Index["e1"], env.Index["e2"] = 0, 1, 2
	set := func(name string, v ...float64) {
		if len(v) == 1 {
			env.Tensors[name] = &Value{Data: v}
		} else {
			env.Tensors[name] = &Value{Dims: []int{len(v)}, Data: v}
		}
	}
	set("mu.mean", -0.4)
	set("mu.sd", 0.7)
	set("g.shape", 3.1)
	set("g.rate", 1.7)
	set("h.shape", 2.0, 4.5, 1.5)
	set("h.rate", 0.8, 3.0, 2.5)
	set("bb.a", 2.5)
	set("bb.b", 1.5)
	// the moment tensors the generated code keeps, from the parameters
	b := testBuilder()
	for _, q := range qs {
		if q.Moments == nil {
			continue
		}
		n := 1
		var at []Index
		if len(q.Dims) == 1 {
			n = 3
			at = []Index{{Name: "e0", Size: q.Dims[0]}}
		}
		for k, st := range q.MomentStats {
			name := q.Moments[st].Tensor
			data := make([]float64, n)
			for el := range n {
				env.Index["e0"] = el
				data[el] = Eval(b.MomentExprs(q, at)[k], env)
			}
			env.Index["e0"] = 0
			set(name, data...)
		}
	}
	return env
}

func TestJointPolynomialExpectationsAreExact(t *testing.T) {
	golden.SlowTier(t)
	qs := []*QFactor{GaussianQ("theta", "P"), TableQ("mu", "Normal"), TableQ("g", "Gamma"), TableQ("h", "Gamma", "K"), TableQ("bb", "Beta")}
	env := jointEnv(t, qs)
	atoms := jointAtoms()
	rng := rand.New(rand.NewPCG(41, 42))
	lit := func() float64 { return math.Round((rng.Float64()*3-1.5)*100) / 100 }
	latents := []string{"theta", "mu", "g", "h", "bb"}
	cov := mat.NewSymDense(2, env.Tensors["theta.cov"].Data)
	thetaQ, _ := distmv.NewNormal(env.Tensors["theta.mean"].Data, cov, rand.NewPCG(43, 44))
	muQ := distuv.Normal{Mu: -0.4, Sigma: 0.7, Src: rand.NewPCG(45, 46)}
	gQ := distuv.Gamma{Alpha: 3.1, Beta: 1.7, Src: rand.NewPCG(47, 48)}
	hQ := []distuv.Gamma{
		{Alpha: 2.0, Beta: 0.8, Src: rand.NewPCG(49, 50)},
		{Alpha: 4.5, Beta: 3.0, Src: rand.NewPCG(51, 52)},
		{Alpha: 1.5, Beta: 2.5, Src: rand.NewPCG(53, 54)},
	}
	bbQ := distuv.Beta{Alpha: 2.5, Beta: 1.5, Src: rand.NewPCG(55, 56)}
	d := &jointDraw{theta: make([]float64, 2), h: make([]float64, 3)}

	for trial := range 40 {
		// 2–3 factors, and atoms over them only
		perm := rng.Perm(len(latents))
		use := map[string]bool{}
		for _, k := range perm[:2+rng.IntN(2)] {
			use[latents[k]] = true
		}
		var pool []jointAtom
		for _, a := range atoms {
			if use[a.v] {
				pool = append(pool, a)
			}
		}
		// affine forms c0 + Σ c_k atom_k
		affine := func() (Expr, func(*jointDraw) float64, map[string]bool) {
			c0 := lit()
			terms := []Expr{N(c0)}
			var cs []float64
			var as []jointAtom
			reads := map[string]bool{}
			for range 1 + rng.IntN(3) {
				a := pool[rng.IntN(len(pool))]
				c := lit()
				terms = append(terms, Mul(N(c), a.e))
				cs, as = append(cs, c), append(as, a)
				reads[a.v] = true
			}
			return Add(terms...), func(d *jointDraw) float64 {
				s := c0
				for k, a := range as {
					s += cs[k] * a.eval(d)
				}
				return s
			}, reads
		}
		// a sum of products of affine forms, each latent in at most two
		// forms of a product (degree ≤ 2 in every latent)
		var terms []Expr
		var evals []func(*jointDraw) float64
		for range 1 + rng.IntN(3) {
			deg := map[string]int{}
			c := lit()
			factors := []Expr{N(c)}
			fns := []func(*jointDraw) float64{}
			for range 1 + rng.IntN(3) {
				e, f, reads := affine()
				power := 1
				if rng.IntN(3) == 0 {
					power = 2
				}
				ok := true
				for v := range reads {
					if deg[v]+power > 2 {
						ok = false
					}
				}
				if !ok {
					continue
				}
				for v := range reads {
					deg[v] += power
				}
				if power == 2 {
					factors = append(factors, Pow(e, N(2)))
					fns = append(fns, func(d *jointDraw) float64 { v := f(d); return v * v })
				} else {
					factors = append(factors, e)
					fns = append(fns, f)
				}
			}
			terms = append(terms, Mul(factors...))
			evals = append(evals, func(d *jointDraw) float64 {
				p := c
				for _, f := range fns {
					p *= f(d)
				}
				return p
			})
		}
		e := Add(terms...)
		name := fmt.Sprintf("trial %d: E[%s]", trial, String(e))
		r, log := testBuilder().Expect(e, qs)
		if r == nil {
			t.Errorf("%s: no expectation; log %+v", name, log)
			continue
		}
		for _, l := range log {
			if !l.Exact {
				t.Errorf("%s: term %s taken by %q, not exactly", name, l.Term, l.Rule)
			}
		}
		want := Eval(r, env)
		mcCheckN(t, name, want, 200_000, func() float64 {
			thetaQ.Rand(d.theta)
			d.mu, d.g, d.bb = muQ.Rand(), gQ.Rand(), bbQ.Rand()
			for k := range d.h {
				d.h[k] = hQ[k].Rand()
			}
			s := 0.0
			for _, f := range evals {
				s += f(d)
			}
			return s
		})
	}
}

// A term of degree 3 in a Gaussian read with another factor is not exact
// by these rules: Eq. 19 takes it, and the label says so and names the
// factor whose mean is substituted.
func TestJointTaylorLabelNamesWhatItDoes(t *testing.T) {
	qs := []*QFactor{GaussianQ("theta", "P"), TableQ("g", "Gamma")}
	e0 := IxE(Index{Name: "e0", Size: "P"})
	cases := []struct {
		e    Expr
		want string
	}{
		{Call1("logistic", Mul(T("theta", e0), T("g"))), "Taylor (Eq. 19) in theta; the means of g substituted (first-order)"},
		{Call1("logistic", Mul(T("g"), T("g"))), "no rule for this function of g under q = Gamma"},
		{Mul(Call1("exp", T("theta", e0)), Pow(Call1("exp", T("theta", e0)), N(-2))), "exact: E[exp(linear)] of a Gaussian"},
	}
	for _, c := range cases {
		_, log := testBuilder().Expect(c.e, qs)
		found := false
		for _, l := range log {
			if l.Rule == c.want {
				found = true
			}
			if l.Rule == "Taylor (Eq. 19) in " || l.Rule == "Taylor (Eq. 19) in []" {
				t.Errorf("E[%s]: label %q names no Gaussian", String(c.e), l.Rule)
			}
		}
		if !found {
			t.Errorf("E[%s]: log %+v, want a rule %q", String(c.e), log, c.want)
		}
	}
}
