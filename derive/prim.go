package derive

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"gonum.org/v1/gonum/mathext"

	"github.com/vigen-go/vigen/runtime"
)

// Prim is one entry of the primitive table: a scalar function with its
// evaluation, its partial derivatives (as expressions, so they can be
// differentiated again) and optional simplification rules. The chain rule
// lives once, in Diff; nothing else in derive knows about particular
// primitives.
type Prim struct {
	Name  string
	Arity int
	// Eval computes the value (used for constant folding and by Eval).
	Eval func(x []float64) float64
	// Partials returns ∂self/∂args[k] for every argument; self is the call
	// itself, so derivatives can reuse it (d exp(x) = exp(x) dx).
	Partials func(args []Expr, self Expr) []Expr
	// Simplify returns a simpler equivalent of the call, or nil.
	Simplify func(args []Expr) Expr
	// Go is the Go function generated code calls (e.g. "math.Exp").
	Go string
	// Domain describes where the primitive is defined (documentation and
	// random-point generation in tests): "all", "positive", "unit".
	Domain string
	// Latex is the function's name in mathematical notation.
	Latex string
}

var prims = map[string]*Prim{}

func def(p *Prim) { prims[p.Name] = p }

// MustPrim returns the primitive called name; it panics if there is none
// (a programming error in derive, never a user error).
func MustPrim(name string) *Prim {
	p, ok := prims[name]
	if !ok {
		panic(fmt.Sprintf("derive: no primitive %q", name))
	}
	return p
}

// LookupPrim returns the primitive called name.
func LookupPrim(name string) (*Prim, bool) { p, ok := prims[name]; return p, ok }

// PrimNames lists the primitives.
func PrimNames() []string { return slices.Sorted(maps.Keys(prims)) }

// The table is filled during package variable initialization, before any
// init function that builds on it runs.
var _ = definePrims()

func definePrims() bool {
	def(&Prim{Name: "exp", Arity: 1, Go: "math.Exp", Domain: "all", Latex: `\exp`,
		Eval:     func(x []float64) float64 { return math.Exp(x[0]) },
		Partials: func(a []Expr, self Expr) []Expr { return []Expr{self} },
		Simplify: func(a []Expr) Expr {
			if c, ok := a[0].(*Call); ok && c.Prim.Name == "log" {
				return c.Args[0]
			}
			return nil
		}})
	def(&Prim{Name: "log", Arity: 1, Go: "math.Log", Domain: "positive", Latex: `\log`,
		Eval:     func(x []float64) float64 { return math.Log(x[0]) },
		Partials: func(a []Expr, self Expr) []Expr { return []Expr{Pow(a[0], N(-1))} },
		Simplify: func(a []Expr) Expr {
			if c, ok := a[0].(*Call); ok {
				switch c.Prim.Name {
				case "exp":
					return c.Args[0]
				case "logistic": // log σ(u) = −softplus(−u)
					return Neg(Call1("softplus", Neg(c.Args[0])))
				case "Phi": // log Φ(u), stable in the lower tail
					return Call1("logPhi", c.Args[0])
				case "sqrt": // log √x = ½ log x
					return Mul(N(0.5), Call1("log", c.Args[0]))
				case "pow": // log x^c = c log x (x > 0 in the log's domain)
					if _, ok := c.Args[1].(*Num); ok {
						return Mul(c.Args[1], Call1("log", c.Args[0]))
					}
				}
			}
			return nil
		}})
	def(&Prim{Name: "log1p", Arity: 1, Go: "math.Log1p", Domain: "x > -1", Latex: `\operatorname{log1p}`,
		Eval:     func(x []float64) float64 { return math.Log1p(x[0]) },
		Partials: func(a []Expr, self Expr) []Expr { return []Expr{Pow(Add(N(1), a[0]), N(-1))} },
		Simplify: func(a []Expr) Expr {
			// log(1 − Φ(u)) = log Φ(−u), stable in the upper tail;
			// log(1 − σ(u)) = −softplus(u)
			if m, ok := a[0].(*MulNode); ok && len(m.Factors) == 2 {
				if c, ok := m.Factors[0].(*Num); ok && c.V == -1 {
					if p, ok := m.Factors[1].(*Call); ok && p.Prim.Name == "Phi" {
						return Call1("logPhi", Neg(p.Args[0]))
					}
					if p, ok := m.Factors[1].(*Call); ok && p.Prim.Name == "logistic" {
						return Neg(Call1("softplus", p.Args[0]))
					}
				}
			}
			return nil
		}})
	def(&Prim{Name: "expm1", Arity: 1, Go: "math.Expm1", Domain: "all", Latex: `\operatorname{expm1}`,
		Eval:     func(x []float64) float64 { return math.Expm1(x[0]) },
		Partials: func(a []Expr, self Expr) []Expr { return []Expr{Call1("exp", a[0])} }})
	def(&Prim{Name: "sqrt", Arity: 1, Go: "math.Sqrt", Domain: "positive", Latex: `\sqrt`,
		Eval:     func(x []float64) float64 { return math.Sqrt(x[0]) },
		Partials: func(a []Expr, self Expr) []Expr { return []Expr{Mul(N(0.5), Pow(self, N(-1)))} }})
	def(&Prim{Name: "logistic", Arity: 1, Go: "runtime.Logistic", Domain: "all", Latex: `\sigma`,
		Eval: func(x []float64) float64 { return 1 / (1 + math.Exp(-x[0])) },
		// σ' = σ(1−σ)
		Partials: func(a []Expr, self Expr) []Expr { return []Expr{Mul(self, Sub(N(1), self))} }})
	def(&Prim{Name: "logit", Arity: 1, Go: "runtime.Logit", Domain: "unit", Latex: `\operatorname{logit}`,
		Eval: func(x []float64) float64 { return math.Log(x[0] / (1 - x[0])) },
		Partials: func(a []Expr, self Expr) []Expr {
			return []Expr{Pow(Mul(a[0], Sub(N(1), a[0])), N(-1))}
		},
		Simplify: func(a []Expr) Expr {
			if c, ok := a[0].(*Call); ok {
				switch c.Prim.Name {
				case "logistic":
					return c.Args[0]
				case "Phi": // logit Φ(u) = log Φ(u) − log Φ(−u)
					return Sub(Call1("logPhi", c.Args[0]), Call1("logPhi", Neg(c.Args[0])))
				}
			}
			return nil
		}})
	def(&Prim{Name: "softplus", Arity: 1, Go: "runtime.Softplus", Domain: "all", Latex: `\operatorname{softplus}`,
		Eval: func(x []float64) float64 {
			if x[0] > 30 {
				return x[0] + math.Log1p(math.Exp(-x[0]))
			}
			return math.Log1p(math.Exp(x[0]))
		},
		Partials: func(a []Expr, self Expr) []Expr { return []Expr{Call1("logistic", a[0])} }})
	def(&Prim{Name: "lgamma", Arity: 1, Go: "runtime.Lgamma", Domain: "positive", Latex: `\log\Gamma`,
		Eval:     func(x []float64) float64 { v, _ := math.Lgamma(x[0]); return v },
		Partials: func(a []Expr, self Expr) []Expr { return []Expr{Call1("digamma", a[0])} }})
	def(&Prim{Name: "digamma", Arity: 1, Go: "runtime.Digamma", Domain: "positive", Latex: `\psi`,
		Eval:     func(x []float64) float64 { return mathext.Digamma(x[0]) },
		Partials: func(a []Expr, self Expr) []Expr { return []Expr{Call1("trigamma", a[0])} }})
	def(&Prim{Name: "trigamma", Arity: 1, Go: "runtime.Trigamma", Domain: "positive", Latex: `\psi_1`,
		Eval: func(x []float64) float64 { return mathext.Zeta(2, x[0]) },
		// ψ₂(x) = −2 ζ(3, x)
		Partials: func(a []Expr, self Expr) []Expr { return []Expr{Mul(N(-2), Call1("zeta3", a[0]))} }})
	// ζ(n, x) for n = 3…6, with d/dx ζ(n, x) = −n ζ(n+1, x): the
	// derivatives of trigamma (the delta method's Newton matrix takes f's
	// fourth derivative, so the chain goes on to ζ(6, ·)).
	for n := 3; n <= 6; n++ {
		p := &Prim{Name: fmt.Sprintf("zeta%d", n), Arity: 1, Go: fmt.Sprintf("runtime.Zeta%d", n), Domain: "positive", Latex: fmt.Sprintf(`\zeta_%d`, n),
			Eval: func(x []float64) float64 { return mathext.Zeta(float64(n), x[0]) }}
		if n < 6 {
			next := fmt.Sprintf("zeta%d", n+1)
			p.Partials = func(a []Expr, self Expr) []Expr { return []Expr{Mul(N(-float64(n)), Call1(next, a[0]))} }
		}
		def(p)
	}
	// The standard normal distribution function and its logarithm, for
	// probit links: log Φ is a primitive of its own (log(Phi(x)) simplifies
	// to it), with derivative the inverse Mills ratio φ/Φ, so that
	// likelihoods stay accurate far in the tails where Φ underflows.
	def(&Prim{Name: "Phi", Arity: 1, Go: "runtime.Phi", Domain: "all", Latex: `\Phi`,
		Eval: func(x []float64) float64 { return runtime.Phi(x[0]) },
		// Φ' = φ(x) = exp(−x²/2)/√(2π)
		Partials: func(a []Expr, self Expr) []Expr { return []Expr{normalDensity(a[0])} }})
	def(&Prim{Name: "logPhi", Arity: 1, Go: "runtime.LogPhi", Domain: "all", Latex: `\log\Phi`,
		Eval:     func(x []float64) float64 { return runtime.LogPhi(x[0]) },
		Partials: func(a []Expr, self Expr) []Expr { return []Expr{Call1("invmills", a[0])} }})
	// invmills(x) = φ(x)/Φ(x), with derivative −m(x)(x + m(x))
	def(&Prim{Name: "invmills", Arity: 1, Go: "runtime.InvMills", Domain: "all", Latex: `\lambda`,
		Eval: func(x []float64) float64 { return runtime.InvMills(x[0]) },
		Partials: func(a []Expr, self Expr) []Expr {
			return []Expr{Neg(Mul(self, Add(a[0], self)))}
		}})
	// logdiffPhi(u, l) = log(Φ(u) − Φ(l)) for u > l (an interval
	// probability of ordered probit), with ∂/∂u = φ(u)/(Φ(u) − Φ(l)) =
	// exp(log φ(u) − self) and ∂/∂l = −exp(log φ(l) − self).
	def(&Prim{Name: "logdiffPhi", Arity: 2, Go: "runtime.LogDiffPhi", Domain: "u > l", Latex: `\operatorname{logdiff}\Phi`,
		Eval: func(x []float64) float64 { return runtime.LogDiffPhi(x[0], x[1]) },
		Partials: func(a []Expr, self Expr) []Expr {
			return []Expr{Call1("exp", Sub(logNormalDensity(a[0]), self)), Neg(Call1("exp", Sub(logNormalDensity(a[1]), self)))}
		}})
	// logaddexp(a, b) = log(e^a + e^b), stable for any a and b (the log
	// density of a mixture, summed over its components): ∂/∂a = e^{a −
	// self} = logistic(a − b), the posterior weight of a's component.
	def(&Prim{Name: "logaddexp", Arity: 2, Go: "runtime.LogAddExp", Domain: "all", Latex: `\operatorname{logaddexp}`,
		Eval: func(x []float64) float64 { return runtime.LogAddExp(x[0], x[1]) },
		Partials: func(a []Expr, self Expr) []Expr {
			return []Expr{Call1("logistic", Sub(a[0], a[1])), Call1("logistic", Sub(a[1], a[0]))}
		}})
	// xlogx(x) = x log x, continued by 0 at x = 0 (entropies of
	// probabilities that underflowed).
	def(&Prim{Name: "xlogx", Arity: 1, Go: "runtime.XLogX", Domain: "x ≥ 0", Latex: `\operatorname{xlogx}`,
		Eval: func(x []float64) float64 {
			if x[0] == 0 {
				return 0
			}
			return x[0] * math.Log(x[0])
		},
		Partials: func(a []Expr, self Expr) []Expr { return []Expr{Add(N(1), Call1("log", a[0]))} }})
	// group(x) is x: a product the chain rule keeps as one factor (see
	// chainProduct in diff.go), so that differentiating it again applies
	// the product rule to its few factors rather than to the whole chain.
	def(&Prim{Name: "group", Arity: 1, Go: "", Domain: "all", Latex: `\operatorname{group}`,
		Eval:     func(x []float64) float64 { return x[0] },
		Partials: func(a []Expr, self Expr) []Expr { return []Expr{N(1)} },
		Simplify: func(a []Expr) Expr {
			switch a[0].(type) {
			case *MulNode, *SumNode, *AddNode:
				return nil
			}
			return a[0]
		}})
	// eq(a, b) is 1 when two integer values are equal (from indirect deltas).
	def(&Prim{Name: "eq", Arity: 2, Go: "runtime.Eq", Domain: "integers", Latex: `\mathbb{1}`,
		Eval: func(x []float64) float64 {
			if x[0] == x[1] {
				return 1
			}
			return 0
		},
		Partials: func(a []Expr, self Expr) []Expr { return []Expr{N(0), N(0)} }})
	def(&Prim{Name: "pow", Arity: 2, Go: "math.Pow", Domain: "positive base, or any base with an integer exponent", Latex: `\operatorname{pow}`,
		Eval: func(x []float64) float64 { return math.Pow(x[0], x[1]) },
		// ∂x^y/∂x = y x^(y−1), ∂x^y/∂y = x^y log x
		Partials: func(a []Expr, self Expr) []Expr {
			return []Expr{Mul(a[1], Pow(a[0], Sub(a[1], N(1)))), Mul(self, Call1("log", a[0]))}
		},
		Simplify: func(a []Expr) Expr {
			if y, ok := a[1].(*Num); ok {
				switch y.V {
				case 0:
					return N(1)
				case 1:
					return a[0]
				}
				// (x^p)^q = x^(pq) for integer q
				if c, ok := a[0].(*Call); ok && c.Prim.Name == "pow" && y.V == math.Trunc(y.V) {
					return Pow(c.Args[0], Mul(c.Args[1], y))
				}
				// (√x)^q = x^(q/2)
				if c, ok := a[0].(*Call); ok && c.Prim.Name == "sqrt" {
					return Pow(c.Args[0], N(y.V/2))
				}
			}
			return nil
		}})
	return true
}

// logNormalDensity is log φ(x) = −x²/2 − ½log 2π.
func logNormalDensity(x Expr) Expr {
	return Sub(Mul(N(-0.5), Pow(x, N(2))), N(0.5*math.Log(2*math.Pi)))
}

// normalDensity is φ(x), the standard normal density.
func normalDensity(x Expr) Expr { return Call1("exp", logNormalDensity(x)) }
