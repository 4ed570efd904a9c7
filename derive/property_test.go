package derive_test

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/vigen-go/vigen/golden"
)

// The property test: random well-typed models, each a random expression of
// θ, data and constants inside a Normal mean or a Bernoulli logit, run
// through the corpus pipeline (generate, compile, run, compare with finite
// differences).

// propertyModels is the number of random models; propertySeed fixes them.
const (
	propertyModels = 30
	propertySeed   = 20240613
)

func TestPropertyRandomExpressions(t *testing.T) {
	golden.SlowTier(t)
	if testing.Short() {
		t.Skip("skipping the derivative property test (generates, compiles and runs code) in -short mode")
	}
	t.Parallel()
	rng := rand.New(rand.NewPCG(propertySeed, 1))
	var cases []fdCase
	for k := 0; k < propertyModels; k++ {
		name := fmt.Sprintf("prop_%02d", k)
		cases = append(cases, fdCase{Name: name, File: name + ".vi", Src: []byte(randomModel(rng, name))})
	}
	rep := runFDCases(t, "tmp-corpus-prop-", "p_", cases, propertySeed)
	if len(rep.Skipped) > 0 {
		// Every construct the generator uses compiles today; a skip means
		// the generator or the code generator regressed.
		t.Errorf("%d random models were not supported", len(rep.Skipped))
	}
	t.Logf("property: %d models, %d checked", len(cases), rep.Checked)
}

// exprGen builds random expressions as .vi source. Expressions are either
// scalars or vectors of length P. An expression asked to be positive is
// positive at every θ by construction, and every argument that must be
// positive (of log, sqrt, lgamma, digamma, a divisor, the base of a
// non-integer power) is a positive expression plus a constant of at least
// ½, so no derivative blows up and no point is a domain error.
type exprGen struct {
	rng *rand.Rand
	// elem: inside `for p in 1:P`, where θ[p] and u[p] are scalars;
	// otherwise inside `for n in 1:N`, where x[n] is a vector and v[n] a
	// scalar.
	elem bool
	used map[string]bool // declared data and consts the expressions read
}

func (g *exprGen) pick(n int) int { return g.rng.IntN(n) }

// lit is a positive literal.
func (g *exprGen) lit() string { return fmt.Sprintf("%.3g", 0.2+1.6*g.rng.Float64()) }

// offset is the constant added to a positive expression to keep it away
// from zero.
func (g *exprGen) offset() string { return []string{"0.5", "1", "2"}[g.pick(3)] }

func (g *exprGen) use(name string) string {
	g.used[name] = true
	return name
}

// scalarLeaf is a scalar that may be any real.
func (g *exprGen) scalarLeaf() string {
	switch g.pick(6) {
	case 0, 1:
		if g.elem {
			return "theta[p]"
		}
		return "dot(" + g.use("x") + "[n], theta)"
	case 2:
		return "sum(theta)"
	case 3:
		if g.elem {
			return g.use("u") + "[p]"
		}
		return g.use("v") + "[n]"
	case 4:
		return g.use("s0")
	}
	return g.lit()
}

// vectorLeaf is a vector that may take any real values.
func (g *exprGen) vectorLeaf() string {
	switch g.pick(4) {
	case 0, 1:
		return "theta"
	case 2:
		if g.elem {
			return g.use("u")
		}
		return g.use("x") + "[n]"
	}
	return g.use("c0")
}

// scalar returns a scalar expression of the given depth; pos asks for a
// positive one. exp is false where an exponential would make values too
// large for finite differences to keep 1e-6 (inside another exponential).
func (g *exprGen) scalar(depth int, pos, exp bool) string {
	if depth <= 0 {
		if !pos {
			return g.scalarLeaf()
		}
		switch g.pick(4) {
		case 0:
			return g.lit()
		case 1:
			return "softplus(" + g.scalarLeaf() + ")"
		case 2:
			return "logistic(" + g.scalarLeaf() + ")"
		}
		return "(1 + (" + g.scalarLeaf() + ") ^ 2)"
	}
	d := depth - 1
	if pos {
		switch g.pick(13) {
		case 0:
			if exp {
				// A shallow argument keeps exp's value moderate.
				return "exp(" + g.scalar(min(d, 1), false, false) + ")"
			}
			return "softplus(" + g.scalar(d, false, exp) + ")"
		case 1:
			return "softplus(" + g.scalar(d, false, exp) + ")"
		case 2:
			return "logistic(" + g.scalar(d, false, exp) + ")"
		case 3:
			return "(1 + (" + g.scalar(d, false, exp) + ") ^ 2)"
		case 4:
			return "sqrt(" + g.offset() + " + " + g.scalar(d, true, exp) + ")"
		case 5:
			return "log1p(" + g.scalar(d, true, exp) + ")"
		case 6:
			return "(" + g.scalar(d, true, exp) + " + " + g.scalar(d, true, exp) + ")"
		case 7:
			return "(" + g.scalar(d, true, exp) + " * " + g.scalar(d, true, exp) + ")"
		case 8:
			return "(" + g.scalar(d, true, exp) + " / (" + g.offset() + " + " + g.scalar(d, true, exp) + "))"
		case 9:
			return "lgamma(3 + " + g.scalar(d, true, exp) + ")"
		case 10:
			return "digamma(2 + " + g.scalar(d, true, exp) + ")"
		case 11:
			return "sum(" + g.vector(d, true, exp) + ")"
		}
		return "dot(" + g.vector(d, true, exp) + ", " + g.vector(d, true, exp) + ")"
	}
	switch g.pick(17) {
	case 0:
		return "(" + g.scalar(d, false, exp) + " + " + g.scalar(d, false, exp) + ")"
	case 1:
		return "(" + g.scalar(d, false, exp) + " - " + g.scalar(d, false, exp) + ")"
	case 2:
		return "(" + g.scalar(d, false, exp) + " * " + g.scalar(d, false, exp) + ")"
	case 3:
		return "-(" + g.scalar(d, false, exp) + ")"
	case 4:
		return "(" + g.scalar(d, false, exp) + ") ^ 2"
	case 5:
		return "(" + g.scalar(d, false, exp) + " / (" + g.offset() + " + " + g.scalar(d, true, exp) + "))"
	case 6:
		return "log(" + g.offset() + " + " + g.scalar(d, true, exp) + ")"
	case 7:
		return "log1p(" + g.scalar(d, true, exp) + ")"
	case 8:
		return "sqrt(" + g.offset() + " + " + g.scalar(d, true, exp) + ")"
	case 9:
		return "lgamma(" + g.offset() + " + " + g.scalar(d, true, exp) + ")"
	case 10:
		return "digamma(" + g.offset() + " + " + g.scalar(d, true, exp) + ")"
	case 11:
		return "(" + g.offset() + " + " + g.scalar(d, true, exp) + ") ^ 1.5"
	case 12:
		return "logistic(" + g.scalar(d, false, exp) + ")"
	case 13:
		return "softplus(" + g.scalar(d, false, exp) + ")"
	case 14:
		return "dot(" + g.vector(d, false, exp) + ", " + g.vector(d, false, exp) + ")"
	case 15:
		return "sum(" + g.vector(d, false, exp) + ")"
	}
	return g.scalar(depth, true, exp)
}

// vector returns a P-vector expression; see scalar.
func (g *exprGen) vector(depth int, pos, exp bool) string {
	if depth <= 0 {
		if !pos {
			return g.vectorLeaf()
		}
		switch g.pick(3) {
		case 0:
			return "softplus(" + g.vectorLeaf() + ")"
		case 1:
			return "logistic(" + g.vectorLeaf() + ")"
		}
		return "(1 + (" + g.vectorLeaf() + ") ^ 2)"
	}
	d := depth - 1
	if pos {
		switch g.pick(8) {
		case 0:
			if exp {
				return "exp(" + g.vector(min(d, 1), false, false) + ")"
			}
			return "softplus(" + g.vector(d, false, exp) + ")"
		case 1:
			return "softplus(" + g.vector(d, false, exp) + ")"
		case 2:
			return "logistic(" + g.vector(d, false, exp) + ")"
		case 3:
			return "(1 + (" + g.vector(d, false, exp) + ") ^ 2)"
		case 4:
			return "(" + g.vector(d, true, exp) + " + " + g.vector(d, true, exp) + ")"
		case 5:
			return "(" + g.scalar(d, true, exp) + " * " + g.vector(d, true, exp) + ")"
		case 6:
			return "sqrt(" + g.offset() + " + " + g.vector(d, true, exp) + ")"
		}
		return "lgamma(3 + " + g.vector(d, true, exp) + ")"
	}
	switch g.pick(12) {
	case 0:
		return "(" + g.vector(d, false, exp) + " + " + g.vector(d, false, exp) + ")"
	case 1:
		return "(" + g.vector(d, false, exp) + " - " + g.vector(d, false, exp) + ")"
	case 2:
		return "(" + g.vector(d, false, exp) + " * " + g.vector(d, false, exp) + ")"
	case 3:
		return "(" + g.scalar(d, false, exp) + " * " + g.vector(d, false, exp) + ")"
	case 4:
		return "-(" + g.vector(d, false, exp) + ")"
	case 5:
		return "(" + g.vector(d, false, exp) + ") ^ 2"
	case 6:
		return "(" + g.vector(d, false, exp) + " / (" + g.offset() + " + " + g.vector(d, true, exp) + "))"
	case 7:
		return "logistic(" + g.vector(d, false, exp) + ")"
	case 8:
		return "log(" + g.offset() + " + " + g.vector(d, true, exp) + ")"
	case 9:
		return "digamma(" + g.offset() + " + " + g.vector(d, true, exp) + ")"
	case 10:
		return "softplus(" + g.vector(d, false, exp) + ")"
	}
	return g.vector(depth, true, exp)
}

// thetaExpr returns a random scalar expression that reads θ.
func (g *exprGen) thetaExpr() string {
	for {
		used := map[string]bool{}
		for k := range g.used {
			used[k] = true
		}
		e := g.scalar(1+g.pick(3), false, true)
		if strings.Contains(e, "theta") {
			return e
		}
		g.used = used // drop what the discarded expression used
	}
}

// randomModel returns the source of a random well-typed model: θ under a
// random prior, a likelihood over n in 1:N and possibly one over p in 1:P,
// each y ~ Normal(EXPR, 1) or y ~ Bernoulli(logistic(EXPR)).
func randomModel(rng *rand.Rand, name string) string {
	g := &exprGen{rng: rng, used: map[string]bool{}}
	var stmts, decls []string
	switch g.pick(4) {
	case 0:
		stmts = append(stmts, "theta ~ Normal(0, 1)")
	case 1:
		stmts = append(stmts, "theta ~ Normal("+g.use("m0")+", 1.5)")
	case 2:
		stmts = append(stmts, "theta ~ MvNormal("+g.use("m0")+", "+g.use("S0")+")")
	default:
		stmts = append(stmts, "theta ~ MvNormalPrec("+g.use("m0")+", "+g.use("S0")+")")
	}
	likelihood := func(target, index, size string) {
		e := g.thetaExpr()
		if g.pick(2) == 0 {
			decls = append(decls, fmt.Sprintf("data %s : real[%s]", target, size))
			stmts = append(stmts, fmt.Sprintf("for %s in 1:%s {\n  %s[%s] ~ Normal(%s, 1)\n}", index, size, target, index, e))
		} else {
			decls = append(decls, fmt.Sprintf("data %s : int[%s] in 0..1", target, size))
			stmts = append(stmts, fmt.Sprintf("for %s in 1:%s {\n  %s[%s] ~ Bernoulli(logistic(%s))\n}", index, size, target, index, e))
		}
	}
	likelihood("y", "n", "N")
	if g.pick(2) == 0 {
		g.elem = true
		likelihood("yp", "p", "P")
	}
	types := map[string]string{
		"x": "data x : real[N, P]", "v": "data v : real[N]", "u": "data u : real[P]",
		"c0": "const c0 : real[P]", "s0": "const s0 : real", "m0": "const m0 : real[P]", "S0": "const S0 : cov[P]",
	}
	for k := range g.used {
		decls = append(decls, types[k])
	}
	sort.Strings(decls)
	var sb strings.Builder
	fmt.Fprintf(&sb, "# a random model of the derivative property test\nmodel %s\n\nsize N, P\n", name)
	for _, d := range decls {
		sb.WriteString(d + "\n")
	}
	sb.WriteString("latent theta : real[P] nonconjugate laplace\n\n")
	for _, s := range stmts {
		sb.WriteString(s + "\n")
	}
	return sb.String()
}
