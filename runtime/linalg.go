package runtime

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// The functions in this file take an n×n symmetric matrix as a flat row-major
// slice a of length ≥ n·n, and read only its upper triangle a[i*n+j], j ≥ i.
// They factorize a = UᵀU (Cholesky, gonum mat.Cholesky) and report false
// when a is not (numerically) positive definite or its upper triangle holds a
// NaN or ±Inf. Like gonum, they panic if a slice is too short.

// cholesky factorizes the upper triangle of a, or returns nil if it is not
// finite and positive definite.
func cholesky(a []float64, n int) *mat.Cholesky {
	if n <= 0 {
		return nil
	}
	for i := 0; i < n; i++ {
		if !allFinite(a[i*n+i : i*n+n]) {
			return nil
		}
	}
	var c mat.Cholesky
	// mat.SymDense with Uplo Upper reads only the upper triangle of a; the
	// factorization copies it, so a may be overwritten afterwards.
	if !c.Factorize(mat.NewSymDense(n, a[:n*n:n*n])) {
		return nil
	}
	return &c
}

// InvSPD writes a⁻¹ = U⁻¹U⁻ᵀ into dst (the full symmetric matrix, both
// triangles) for a symmetric positive-definite n×n matrix a, and reports
// whether a is positive definite; on false dst is unspecified. dst may alias a.
// An ill-conditioned a gives an inaccurate inverse, not false.
func InvSPD(dst, a []float64, n int) bool {
	if n == 0 {
		return true
	}
	c := cholesky(a, n)
	if c == nil {
		return false
	}
	inv := mat.NewSymDense(n, dst[:n*n:n*n])
	if err := c.InverseTo(inv); err != nil {
		// A finite Condition only warns of ill-conditioning; an infinite one
		// means a singular factor.
		if cond, ok := err.(mat.Condition); !ok || math.IsInf(float64(cond), 1) {
			return false
		}
	}
	MirrorUpper(dst, n)
	for _, v := range dst[:n*n] {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// LogDetSPD returns log|a| = 2 Σ_i log U_ii for a symmetric positive-definite
// n×n matrix a, and whether a is positive definite. The 0×0 matrix has
// log-determinant 0.
func LogDetSPD(a []float64, n int) (float64, bool) {
	if n == 0 {
		return 0, true
	}
	c := cholesky(a, n)
	if c == nil {
		return math.NaN(), false
	}
	return c.LogDet(), true
}

// SolveSPD writes x = a⁻¹b into dst for a symmetric positive-definite n×n
// matrix a and a vector b of length n (by UᵀU x = b: two triangular solves),
// and reports whether a is positive definite. dst may alias b or a.
func SolveSPD(dst, a, b []float64, n int) bool {
	if n == 0 {
		return true
	}
	c := cholesky(a, n)
	if c == nil {
		return false
	}
	copy(dst[:n], b[:n])
	x := mat.NewVecDense(n, dst[:n:n])
	// A Condition error means an ill-conditioned a; the solution is still
	// written and is as accurate as a's conditioning allows.
	_ = c.SolveVecTo(x, x)
	for _, v := range dst[:n] {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// MirrorUpper copies the upper triangle of the n×n matrix a to the lower:
// a[j*n+i] = a[i*n+j] for j > i.
func MirrorUpper(a []float64, n int) {
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			a[j*n+i] = a[i*n+j]
		}
	}
}
