package runtime

// AddTraceGram adds to the p×p matrix curv the term ½Tr{Σ D_i Σ D_j} for
// every i, j, where sig is Σ (p×p) and dH holds D_1, …, D_p (each p×p, one
// after another), the derivatives ∂∇²f/∂x_i. scratch must hold p³ values.
//
// With Σ(x) = −∇²f(x)⁻¹, ∂Σ/∂x_j = Σ D_j Σ, so this is the part of the
// Hessian of Φ(x) = g(x) − ½ log|−∇²f(x)| that comes from Σ's dependence
// on x. Φ's stationary points are the fixed points of the delta method's
// alternation of a unit's mean and covariance (μ maximizing
// g(μ) + ½Tr{∇²f(μ)Σ} with Σ fixed, then Σ = −∇²f(μ)⁻¹); the term is
// positive semidefinite (a Gram matrix) and is what makes that
// alternation slow where it nearly cancels the curvature of the objective
// with Σ fixed. Generated code maximizes Φ by Newton's method with it.
func AddTraceGram(curv, sig, dH, scratch []float64, p int) {
	s := scratch[:p*p*p]
	for i := 0; i < p; i++ {
		di, si := dH[i*p*p:(i+1)*p*p], s[i*p*p:(i+1)*p*p]
		for a := 0; a < p; a++ {
			for b := 0; b < p; b++ {
				v := 0.0
				for c := 0; c < p; c++ {
					v += sig[a*p+c] * di[c*p+b]
				}
				si[a*p+b] = v
			}
		}
	}
	for i := 0; i < p; i++ {
		si := s[i*p*p : (i+1)*p*p]
		for j := i; j < p; j++ {
			sj := s[j*p*p : (j+1)*p*p]
			t := 0.0
			for a := 0; a < p; a++ {
				for b := 0; b < p; b++ {
					t += si[a*p+b] * sj[b*p+a]
				}
			}
			curv[i*p+j] += t / 2
			if j != i {
				curv[j*p+i] += t / 2
			}
		}
	}
}
