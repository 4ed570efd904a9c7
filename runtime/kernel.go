package runtime

// Helpers that generated kernels call in their inner loops.

// AddUpper adds v to the symmetric n×n matrix a at (i, j) if that entry is
// on or above the diagonal. Kernels that scatter into a Hessian add every
// contribution this way and mirror the upper triangle at the end: the
// contributions below the diagonal are, by symmetry, the mirrored ones.
func AddUpper(a []float64, n, i, j int, v float64) {
	if i <= j {
		a[i*n+j] += v
	}
}

// Eq is 1 when two integer values are equal, else 0.
func Eq(a, b float64) float64 {
	if a == b {
		return 1
	}
	return 0
}

// Sq is x².
func Sq(x float64) float64 { return x * x }
