package ir

// This file is the table of distribution families' signatures: what the
// checker needs to know about each family (its value's and parameters'
// shapes, classes and ranges, the kind of value it draws, and the domains
// of its value and parameters), with no mathematics. Package derive builds
// its distribution table (derive.Dists) on these entries, adding each
// family's densities, expectations and updates to the same *Family, so
// that a program linking spec alone (a formatter, a linter, a language
// server) checks models against the same signatures as the compiler.

// The families' signatures. Each is one entry of familyTable; derive's
// table entry for the family embeds the same pointer.
var (
	Normal = scalarFamily("Normal", "univariate normal with mean and standard deviation",
		realX, SupportReal, "x ∈ ℝ", "sd > 0", "mean", "sd")
	Gamma = scalarFamily("Gamma", "gamma with shape and rate",
		realX, SupportPositive, "x > 0", "shape > 0, rate > 0", "shape", "rate")
	InverseGamma = scalarFamily("InverseGamma", "inverse gamma with shape and scale",
		realX, SupportPositive, "x > 0", "shape > 0, scale > 0", "shape", "scale")
	Beta = scalarFamily("Beta", "beta on (0, 1) with shapes a and b",
		realX, SupportUnit, "0 < x < 1", "a > 0, b > 0", "a", "b")
	Bernoulli = scalarFamily("Bernoulli", "a 0/1 outcome with success probability p",
		ParamSig{Name: "y", Int: true, Range: "0..1"}, SupportInt, "y ∈ {0, 1}", "0 < p < 1", "p")
	Binomial = scalarFamily("Binomial", "successes in n trials with success probability p",
		ParamSig{Name: "k", Int: true}, SupportInt, "k ∈ {0, …, n}", "n ≥ 0, 0 < p < 1", "n", "p")
	Poisson = scalarFamily("Poisson", "a count with the given rate",
		ParamSig{Name: "k", Int: true}, SupportInt, "k ∈ {0, 1, …}", "rate > 0", "rate")
	Exponential = scalarFamily("Exponential", "exponential with the given rate",
		realX, SupportPositive, "x > 0", "rate > 0", "rate")
	LogNormal = scalarFamily("LogNormal", "x whose logarithm is normal with meanlog and sdlog",
		realX, SupportPositive, "x > 0", "sdlog > 0", "meanlog", "sdlog")
	StudentT = scalarFamily("StudentT", "Student's t with degrees of freedom, location and scale",
		realX, SupportReal, "x ∈ ℝ", "dof > 0, scale > 0", "dof", "location", "scale")
	HalfNormal = scalarFamily("HalfNormal", "half-normal: the absolute value of a Normal(0, sigma), a prior for a scale",
		realX, SupportPositive, "x ≥ 0", "sigma > 0", "sigma")
	HalfCauchy = scalarFamily("HalfCauchy", "half-Cauchy with the given scale (Stan's cauchy(0, scale) on a <lower=0> variable), a prior for a scale",
		realX, SupportPositive, "x ≥ 0", "scale > 0", "scale")
	HalfStudentT = scalarFamily("HalfStudentT", "half-Student-t with degrees of freedom and scale, a prior for a scale",
		realX, SupportPositive, "x ≥ 0", "dof > 0, scale > 0", "dof", "scale")
	Cauchy = scalarFamily("Cauchy", "Cauchy with location and scale",
		realX, SupportReal, "x ∈ ℝ", "scale > 0", "location", "scale")
	Uniform = scalarFamily("Uniform", "uniform between lower and upper (a latent must be declared with those bounds)",
		realX, SupportInterval, "x ∈ (lower, upper)", "", "lower", "upper")
	Weibull = scalarFamily("Weibull", "Weibull with shape and scale (Stan's weibull(alpha, sigma))",
		realX, SupportPositive, "x > 0", "shape > 0, scale > 0", "shape", "scale")
	NegativeBinomial = scalarFamily("NegativeBinomial", "a count with mean mu and dispersion phi: variance mu + mu²/phi (Stan's neg_binomial_2)",
		countX, SupportInt, "y ≥ 0", "mu > 0, phi > 0", "mu", "phi")
	NegativeBinomialLog = scalarFamily("NegativeBinomialLog", "NegativeBinomial(exp(eta), phi), stable for any eta (Stan's neg_binomial_2_log)",
		countX, SupportInt, "y ≥ 0", "phi > 0", "eta", "phi")
	BernoulliLogit = scalarFamily("BernoulliLogit", "a 0/1 outcome with log-odds alpha: Bernoulli(logistic(alpha))",
		ParamSig{Name: "y", Int: true, Range: "0..1"}, SupportInt, "y ∈ {0, 1}", "", "alpha")
	PoissonLog = scalarFamily("PoissonLog", "a count with log rate alpha: Poisson(exp(alpha))",
		countX, SupportInt, "y ≥ 0", "", "alpha")
	BinomialLogit = scalarFamily("BinomialLogit", "successes in n trials with log-odds alpha: Binomial(n, logistic(alpha))",
		ParamSig{Name: "k", Int: true}, SupportInt, "k ∈ {0, …, n}", "n ≥ 0", "n", "alpha")

	// MvNormal and MvNormalPrec are the multivariate normals, with a
	// covariance or a precision matrix.
	MvNormal     = mvNormalFamily("MvNormal", "cov", "multivariate normal with mean vector and covariance matrix")
	MvNormalPrec = mvNormalFamily("MvNormalPrec", "precision", "multivariate normal with mean vector and precision (inverse covariance) matrix")

	Dirichlet = &Family{Name: "Dirichlet", Value: ParamSig{Name: "x", Shape: "K", Class: Simplex},
		Params:  []ParamSig{{Name: "alpha", Shape: "K"}},
		Support: SupportSimplex, Doc: "a point on the simplex with concentrations alpha",
		SupportText: "x on the simplex", Constraints: "alpha > 0"}
	Categorical = &Family{Name: "Categorical", Value: ParamSig{Name: "z", Int: true, Range: "1..K"},
		Params:  []ParamSig{{Name: "p", Shape: "K", Class: Simplex}},
		Support: SupportInt, Doc: "an outcome in 1..K with probabilities p",
		SupportText: "z ∈ {1, …, K}", Constraints: "p on the simplex"}
	Multinomial = &Family{Name: "Multinomial", Value: ParamSig{Name: "x", Shape: "K", Int: true},
		Params:  []ParamSig{{Name: "p", Shape: "K", Class: Simplex}},
		Support: SupportInt, Doc: "counts over K outcomes with probabilities p (total given by the data)",
		SupportText: "x ∈ ℕᴷ (total given by the data)", Constraints: "p on the simplex"}
	Wishart = &Family{Name: "Wishart", Value: ParamSig{Name: "W", Shape: "KxK", Class: Cov},
		Params:  []ParamSig{{Name: "dof"}, {Name: "scale", Shape: "KxK", Class: Cov}},
		Support: SupportCov, Doc: "Wishart over K×K precision matrices with degrees of freedom and scale",
		SupportText: "W symmetric positive definite K×K", Constraints: "dof > K − 1, scale symmetric positive definite"}
	DirichletMultinomial = &Family{Name: "DirichletMultinomial", Value: ParamSig{Name: "x", Shape: "K", Int: true},
		Params:      []ParamSig{{Name: "alpha", Shape: "K"}},
		Support:     SupportInt,
		Doc:         "counts over K outcomes from a Multinomial whose probabilities are Dirichlet(alpha), summed out (total given by the data)",
		SupportText: "x ∈ ℕᴷ (total given by the data)", Constraints: "alpha > 0"}

	// OrderedLogistic and OrderedProbit are ordered regression with a
	// logistic or a probit link.
	OrderedLogistic = orderedFamily("OrderedLogistic", "logistic")
	OrderedProbit   = orderedFamily("OrderedProbit", "probit (normal)")

	// Mixture is a finite mixture of scalar families, its assignment
	// summed out: its components are arguments that are distributions.
	Mixture = &Family{Name: "Mixture",
		Doc:   "a mixture of scalar distributions with weights w, the assignment summed out: log Σ_k w_k p_k(x) (Stan's log_mix)",
		Value: realX, Elementwise: true, Variadic: true, Support: SupportReal,
		Params:      []ParamSig{{Name: "weights", Shape: "K", Class: Simplex}, {Name: "component", Dist: true}},
		SupportText: "x ∈ the components' support", Constraints: "0 ≤ weights ≤ 1"}
)

// familyTable lists every family, in the order of derive's table.
var familyTable = []*Family{
	Normal, Gamma, InverseGamma, Beta, Bernoulli, Binomial,
	Poisson, Exponential, LogNormal, StudentT,
	HalfNormal, HalfCauchy, HalfStudentT, Cauchy, Uniform, Weibull,
	NegativeBinomial, NegativeBinomialLog, BernoulliLogit, PoissonLog, BinomialLogit,
	OrderedLogistic, OrderedProbit, DirichletMultinomial,
	MvNormal, MvNormalPrec,
	Dirichlet, Categorical, Multinomial, Wishart, Mixture,
}

// Families are the distribution signatures, keyed by name.
var Families = func() map[string]*Family {
	m := make(map[string]*Family, len(familyTable))
	for _, f := range familyTable {
		m[f.Name] = f
	}
	return m
}()

// realX is the value of a family over real numbers, countX over counts.
var (
	realX  = ParamSig{Name: "x"}
	countX = ParamSig{Name: "y", Int: true}
)

// scalarFamily is the signature of an elementwise family over scalars,
// whose parameters are plain reals.
func scalarFamily(name, doc string, value ParamSig, support Support, supportText, constraints string, params ...string) *Family {
	f := &Family{Name: name, Value: value, Elementwise: true, Support: support, Doc: doc,
		SupportText: supportText, Constraints: constraints}
	for _, p := range params {
		f.Params = append(f.Params, ParamSig{Name: p})
	}
	return f
}

// mvNormalFamily is the signature of a multivariate normal whose matrix
// parameter is named matrix (a covariance or a precision).
func mvNormalFamily(name, matrix, doc string) *Family {
	return &Family{Name: name, Value: ParamSig{Name: "x", Shape: "K"},
		Params:  []ParamSig{{Name: "mean", Shape: "K"}, {Name: matrix, Shape: "KxK", Class: Cov}},
		Support: SupportReal, Doc: doc,
		SupportText: "x ∈ ℝᴷ", Constraints: "cov (precision) symmetric positive definite"}
}

// orderedFamily is the signature of ordered regression with the named
// link: an outcome in 1..C+1, a linear predictor and C cutpoints.
func orderedFamily(name, link string) *Family {
	return &Family{Name: name, Value: ParamSig{Name: "y", Int: true},
		Params:      []ParamSig{{Name: "eta"}, {Name: "cutpoints", Shape: "C"}},
		Support:     SupportInt,
		Doc:         "an ordered outcome in 1..C+1 with linear predictor eta and increasing cutpoints (" + link + " link)",
		SupportText: "1 ≤ y ≤ C + 1", Constraints: ""}
}
