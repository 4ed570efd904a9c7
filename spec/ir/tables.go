package ir

// Shapes in the signature tables are written as patterns: "" is a scalar,
// "K" a vector whose length is the size bound to K, "KxK" a square matrix.
// The checker unifies pattern letters with the actual size names; a letter
// bound twice must name the same size.

// ParamSig is one parameter of a distribution or function signature.
type ParamSig struct {
	Name  string
	Shape string // pattern, see above
	Class Class  // required class (Cov, Simplex) or Plain for any real
	Int   bool   // must be integer-valued
	Size  bool   // the argument is a size name (as in eye(P))
	// Range is, for an integer value, its required support "LO..HI": each end
	// is an int literal or a pattern letter (unified like shape letters, with
	// the size named by the value's declared range); "" allows any integer.
	Range string
	// Dist marks a parameter whose argument is a distribution, written as
	// a call of a family without its target (the Normal(mu, s) of
	// Mixture(w, Normal(mu, s), ...)): the checker checks it against that
	// family with the statement's target as its target, and it reaches
	// derive as a *DistArg.
	Dist bool
}

// Family is a distribution's signature: what its value (the target of `~`)
// and its arguments must be, and their domains. The signatures are listed
// in families.go (Families); derive's distribution table (derive.Dists)
// embeds each one in the family's entry, which adds the mathematics.
type Family struct {
	Name   string
	Value  ParamSig // the target's required shape and kind
	Params []ParamSig
	// Elementwise: a scalar family may be applied to an array target with
	// scalar or equal-shaped arguments, meaning independent draws.
	Elementwise bool
	// Support is the kind of value the family draws: what a latent or
	// param target must be declared as (a positive family's latent is a
	// real<lower=0>, whose Gaussian lives on the log scale).
	Support Support
	// Variadic: the last parameter stands for two or more arguments (the
	// components of a Mixture).
	Variadic bool
	Doc      string
	// SupportText and Constraints state the domains of the value and of
	// the parameters as documentation writes them ("x > 0"; "shape > 0,
	// rate > 0"): vigen check shows them, the language reference lists
	// them, and ParseDomains reads them for the checker's argument checks
	// and codegen's data checks.
	SupportText, Constraints string
}

// Support is the domain of a family's value, coarsely.
type Support int

// The supports of the families.
const (
	SupportReal     Support = iota // all reals (or ℝᴷ)
	SupportPositive                // reals > 0 (or ≥ 0: HalfNormal and friends)
	SupportUnit                    // reals in (0, 1)
	SupportInterval                // reals between two of the family's arguments (Uniform)
	SupportInt                     // integers (counts, outcomes, indicators)
	SupportSimplex                 // points on the simplex
	SupportCov                     // symmetric positive-definite matrices
)

// String names the support as documentation writes it.
func (s Support) String() string {
	return [...]string{"real", "positive", "unit interval", "interval", "integer", "simplex", "positive definite"}[s]
}

// Func is a built-in function's signature.
type Func struct {
	Name   string
	Params []ParamSig
	Result ParamSig
	// Elementwise functions take and return scalars but apply to arrays
	// element by element.
	Elementwise bool
	// Alias, if set, names the function this one is another name for
	// (Stan's inv_logit is logistic): derive lowers it as that one.
	Alias string
	Doc   string
}

// Funcs is the table of built-in function signatures, keyed by name.
var Funcs = map[string]*Func{
	"exp":         {Name: "exp", Params: []ParamSig{{Name: "x"}}, Elementwise: true, Doc: "exponential"},
	"log":         {Name: "log", Params: []ParamSig{{Name: "x"}}, Elementwise: true, Doc: "natural logarithm"},
	"log1p":       {Name: "log1p", Params: []ParamSig{{Name: "x"}}, Elementwise: true, Doc: "log(1 + x)"},
	"sqrt":        {Name: "sqrt", Params: []ParamSig{{Name: "x"}}, Elementwise: true, Doc: "square root"},
	"logistic":    {Name: "logistic", Params: []ParamSig{{Name: "x"}}, Elementwise: true, Doc: "1 / (1 + exp(-x))"},
	"softplus":    {Name: "softplus", Params: []ParamSig{{Name: "x"}}, Elementwise: true, Doc: "log(1 + exp(x))"},
	"lgamma":      {Name: "lgamma", Params: []ParamSig{{Name: "x"}}, Elementwise: true, Doc: "log Γ(x)"},
	"digamma":     {Name: "digamma", Params: []ParamSig{{Name: "x"}}, Elementwise: true, Doc: "ψ(x), the derivative of log Γ"},
	"trigamma":    {Name: "trigamma", Params: []ParamSig{{Name: "x"}}, Elementwise: true, Doc: "ψ₁(x), the derivative of ψ"},
	"expm1":       {Name: "expm1", Params: []ParamSig{{Name: "x"}}, Elementwise: true, Doc: "exp(x) − 1, accurate for small x"},
	"loglogistic": {Name: "loglogistic", Params: []ParamSig{{Name: "x"}}, Elementwise: true, Doc: "log(logistic(x)), computed stably"},
	"inv_logit":   {Name: "inv_logit", Params: []ParamSig{{Name: "x"}}, Elementwise: true, Alias: "logistic", Doc: "logistic(x) (Stan's name)"},
	"log_inv_logit": {Name: "log_inv_logit", Params: []ParamSig{{Name: "x"}}, Elementwise: true, Alias: "loglogistic",
		Doc: "loglogistic(x) (Stan's name)"},
	"Phi": {Name: "Phi", Params: []ParamSig{{Name: "x"}}, Elementwise: true,
		Doc: "Φ(x), the standard normal distribution function (the probit link); log(Phi(x)) and log(1 - Phi(x)) are computed stably in the tails"},
	"dot": {Name: "dot", Params: []ParamSig{{Name: "x", Shape: "K"}, {Name: "y", Shape: "K"}},
		Result: ParamSig{}, Doc: "inner product of two vectors"},
	"sum": {Name: "sum", Params: []ParamSig{{Name: "x", Shape: "K"}},
		Result: ParamSig{}, Doc: "sum of a vector's entries"},
	"prod": {Name: "prod", Params: []ParamSig{{Name: "x", Shape: "K"}},
		Result: ParamSig{}, Doc: "product of a vector's entries (entries must be positive)"},
	"softmax": {Name: "softmax", Params: []ParamSig{{Name: "x", Shape: "K"}},
		Result: ParamSig{Shape: "K", Class: Simplex}, Doc: "exp(x) / sum(exp(x))"},
	"logsumexp": {Name: "logsumexp", Params: []ParamSig{{Name: "x", Shape: "K"}},
		Result: ParamSig{}, Doc: "log(sum(exp(x))), computed stably"},
	"rows_dot_product": {Name: "rows_dot_product", Params: []ParamSig{{Name: "x", Shape: "NxP"}, {Name: "y", Shape: "NxP"}},
		Result: ParamSig{Shape: "N"}, Doc: "the dot products of the rows of two matrices"},
	"append": {Name: "append", Params: []ParamSig{{Name: "a"}, {Name: "b"}},
		Result: ParamSig{Shape: "K"}, Doc: "the vector of a's elements then b's (each a vector or a scalar); also append_row"},
	"append_row": {Name: "append_row", Params: []ParamSig{{Name: "a"}, {Name: "b"}},
		Result: ParamSig{Shape: "K"}, Doc: "append(a, b), Stan's name"},
	"eye": {Name: "eye", Params: []ParamSig{{Name: "n", Size: true}},
		Result: ParamSig{Shape: "KxK", Class: Cov}, Doc: "the n×n identity matrix (in defaults)"},
}
