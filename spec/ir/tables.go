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
}

// Family is a distribution's signature: what its value (the target of `~`)
// and its arguments must be. The mathematics of each family (log density,
// exponential-family pieces, expectations) lives in derive's table, keyed by
// Name; a test checks the two tables agree.
type Family struct {
	Name   string
	Value  ParamSig // the target's required shape and kind
	Params []ParamSig
	// Elementwise: a scalar family may be applied to an array target with
	// scalar or equal-shaped arguments, meaning independent draws.
	Elementwise bool
	Doc         string
}

// Families is the table of distribution signatures, keyed by name.
var Families = map[string]*Family{
	"Normal": {Name: "Normal", Value: ParamSig{Name: "x"},
		Params:      []ParamSig{{Name: "mean"}, {Name: "sd"}},
		Elementwise: true, Doc: "univariate normal with mean and standard deviation"},
	"MvNormal": {Name: "MvNormal", Value: ParamSig{Name: "x", Shape: "K"},
		Params: []ParamSig{{Name: "mean", Shape: "K"}, {Name: "cov", Shape: "KxK", Class: Cov}},
		Doc:    "multivariate normal with mean vector and covariance matrix"},
	"MvNormalPrec": {Name: "MvNormalPrec", Value: ParamSig{Name: "x", Shape: "K"},
		Params: []ParamSig{{Name: "mean", Shape: "K"}, {Name: "precision", Shape: "KxK", Class: Cov}},
		Doc:    "multivariate normal with mean vector and precision (inverse covariance) matrix"},
	"Bernoulli": {Name: "Bernoulli", Value: ParamSig{Name: "y", Int: true, Range: "0..1"},
		Params:      []ParamSig{{Name: "p"}},
		Elementwise: true, Doc: "a 0/1 outcome with success probability p"},
	"Categorical": {Name: "Categorical", Value: ParamSig{Name: "z", Int: true, Range: "1..K"},
		Params: []ParamSig{{Name: "p", Shape: "K", Class: Simplex}},
		Doc:    "an outcome in 1..K with probabilities p"},
	"Dirichlet": {Name: "Dirichlet", Value: ParamSig{Name: "x", Shape: "K", Class: Simplex},
		Params: []ParamSig{{Name: "alpha", Shape: "K"}},
		Doc:    "a point on the simplex with concentrations alpha"},
	"Multinomial": {Name: "Multinomial", Value: ParamSig{Name: "x", Shape: "K", Int: true},
		Params: []ParamSig{{Name: "p", Shape: "K", Class: Simplex}},
		Doc:    "counts over K outcomes with probabilities p (total given by the data)"},
	"Gamma": {Name: "Gamma", Value: ParamSig{Name: "x"},
		Params:      []ParamSig{{Name: "shape"}, {Name: "rate"}},
		Elementwise: true, Doc: "gamma with shape and rate"},
	"Wishart": {Name: "Wishart", Value: ParamSig{Name: "W", Shape: "KxK", Class: Cov},
		Params: []ParamSig{{Name: "dof"}, {Name: "scale", Shape: "KxK", Class: Cov}},
		Doc:    "Wishart over K×K precision matrices with degrees of freedom and scale"},
	"InverseGamma": {Name: "InverseGamma", Value: ParamSig{Name: "x"},
		Params:      []ParamSig{{Name: "shape"}, {Name: "scale"}},
		Elementwise: true, Doc: "inverse gamma with shape and scale"},
	"Beta": {Name: "Beta", Value: ParamSig{Name: "x"},
		Params:      []ParamSig{{Name: "a"}, {Name: "b"}},
		Elementwise: true, Doc: "beta on (0, 1) with shapes a and b"},
	"Binomial": {Name: "Binomial", Value: ParamSig{Name: "k", Int: true},
		Params:      []ParamSig{{Name: "n"}, {Name: "p"}},
		Elementwise: true, Doc: "successes in n trials with success probability p"},
	"Poisson": {Name: "Poisson", Value: ParamSig{Name: "k", Int: true},
		Params:      []ParamSig{{Name: "rate"}},
		Elementwise: true, Doc: "a count with the given rate"},
	"Exponential": {Name: "Exponential", Value: ParamSig{Name: "x"},
		Params:      []ParamSig{{Name: "rate"}},
		Elementwise: true, Doc: "exponential with the given rate"},
	"LogNormal": {Name: "LogNormal", Value: ParamSig{Name: "x"},
		Params:      []ParamSig{{Name: "meanlog"}, {Name: "sdlog"}},
		Elementwise: true, Doc: "x whose logarithm is normal with meanlog and sdlog"},
	"StudentT": {Name: "StudentT", Value: ParamSig{Name: "x"},
		Params:      []ParamSig{{Name: "dof"}, {Name: "location"}, {Name: "scale"}},
		Elementwise: true, Doc: "Student's t with degrees of freedom, location and scale"},
}

// Func is a built-in function's signature.
type Func struct {
	Name   string
	Params []ParamSig
	Result ParamSig
	// Elementwise functions take and return scalars but apply to arrays
	// element by element.
	Elementwise bool
	Doc         string
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
	"eye": {Name: "eye", Params: []ParamSig{{Name: "n", Size: true}},
		Result: ParamSig{Shape: "KxK", Class: Cov}, Doc: "the n×n identity matrix (in defaults)"},
}
