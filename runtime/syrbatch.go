package runtime

// SyrBatchRows is how many rank-1 updates a SyrBatch gathers before it
// applies them in one pass over the triangle: SyrkUpper loads and stores
// each element of the triangle once per 16 rows (on amd64 with AVX2), so
// a batch of 16 runs it at its fastest (at n = 50 about 1.25 times the
// speed of batches of 4, at n = 104 about 1.1 times). A kernel's stack
// buffer for the batch is SyrBatchRows·StackVec float64s, 8 KB.
const SyrBatchRows = 16

// SyrBatch gathers symmetric rank-1 updates α·x·xᵀ of the upper triangle
// of an n×n matrix and applies them SyrBatchRows at a time with SyrkUpper,
// which reads and writes the triangle once per batch instead of once per
// update. The result is bit-identical to calling SyrUpper for each Add in
// order. Add copies x, so the caller may overwrite it (a kernel's vector
// temporary); Flush applies what is left, and must be called before the
// matrix is read.
type SyrBatch struct {
	h     []float64
	n, k  int
	alpha [SyrBatchRows]float64
	xs    []float64 // SyrBatchRows rows of n
}

// NewSyrBatch returns a batch of updates of h (n×n), keeping its rows in
// buf when it holds SyrBatchRows·n values (a kernel's stack array), else in
// a new slice.
func NewSyrBatch(h []float64, n int, buf []float64) SyrBatch {
	if len(buf) < SyrBatchRows*n {
		buf = make([]float64, SyrBatchRows*n)
	}
	return SyrBatch{h: h, n: n, xs: buf[:SyrBatchRows*n]}
}

// Add adds alpha·x·xᵀ (x of length n) to the batch, applying the batch when
// it is full.
func (b *SyrBatch) Add(alpha float64, x []float64) {
	copy(b.xs[b.k*b.n:(b.k+1)*b.n], x[:b.n])
	b.alpha[b.k] = alpha
	b.k++
	if b.k == SyrBatchRows {
		SyrkUpper(b.h, b.n, b.alpha[:], b.xs)
		b.k = 0
	}
}

// Flush applies the updates added since the last full batch.
func (b *SyrBatch) Flush() {
	if b.k > 0 {
		SyrkUpper(b.h, b.n, b.alpha[:b.k], b.xs)
		b.k = 0
	}
}
