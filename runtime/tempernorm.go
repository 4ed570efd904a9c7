package runtime

import "math"

// Tempered log normalizers: what local variational tempering (Mandt et al.
// 2016, §2.4, Eq. 10) needs of a unit's statements. A statement
// p(x | θ) tempered by s = 1/T integrates to Z(θ, s) = ∫ p(x | θ)^s dx;
// LVT weighs each unit's temperatures by E_q[log Z], and where that has no
// closed form, by an upper bound of it, so that the tempered ELBO stays a
// lower bound. One function per distribution.

// DirichletLogSumPow writes into out, for each inverse temperature s of
// invT, log Σ_v E_q[p_v^s] with q(p) = Dirichlet(λ): by Jensen's
// inequality an upper bound of E_q[log Σ_v p_v^s], the log normalizer of a
// Categorical(p) statement tempered by s. Each p_v is Beta(λ_v, λ_0 − λ_v)
// under q, so E[p_v^s] = Γ(λ_v + s) Γ(λ_0) / (Γ(λ_v) Γ(λ_0 + s)). At s = 1
// the value is log Σ_v E[p_v] = 0. lgam is scratch of len(lambda) (nil
// allocates).
func DirichletLogSumPow(lambda, invT, out, lgam []float64) {
	if len(lgam) < len(lambda) {
		lgam = make([]float64, len(lambda))
	}
	lgam = lgam[:len(lambda)]
	l0 := 0.0
	for v, l := range lambda {
		l0 += l
		lgam[v] = Lgamma(l)
	}
	for m, s := range invT {
		if s == 1 {
			out[m] = 0
			continue
		}
		c := Lgamma(l0) - Lgamma(l0+s)
		sum := 0.0
		for v, l := range lambda {
			// each term is E[p_v^s] ≤ 1: no overflow
			sum += math.Exp(Lgamma(l+s) - lgam[v] + c)
		}
		out[m] = math.Log(sum)
	}
}

// DirichletTemperedLogNorm writes into out, for each inverse temperature s
// of invT, log ∫ Dirichlet(p; α)^s dp = log B(s(α − 1) + 1) − s log B(α),
// with log B(a) = Σ_k log Γ(a_k) − log Γ(Σ_k a_k): the tempered density is
// Dirichlet(s(α − 1) + 1) up to that constant. It is 0 at s = 1.
func DirichletTemperedLogNorm(alpha, invT, out []float64) {
	logB := func(s float64) float64 {
		sum, lb := 0.0, 0.0
		for _, a := range alpha {
			x := s*(a-1) + 1
			sum += x
			lb += Lgamma(x)
		}
		return lb - Lgamma(sum)
	}
	b1 := logB(1)
	for m, s := range invT {
		out[m] = logB(s) - s*b1
	}
}

// LSPTable holds, at each inverse temperature of InvT, DirichletLogSumPow
// of every row of a Dirichlet factor's parameters (rows of K entries): the
// tables that a generated model's unit normalizers read for its
// Categorical statements over a simplex latent.
type LSPTable struct {
	InvT []float64
	K    int
	At   [][]float64 // At[m][row]
}

// InverseTemperatures returns 1/T for each temperature of grid.
func InverseTemperatures(grid []float64) []float64 {
	out := make([]float64, len(grid))
	for i, t := range grid {
		out[i] = 1 / t
	}
	return out
}

// NewLSPTable allocates the table of rows rows of k entries.
func NewLSPTable(invT []float64, rows, k int) *LSPTable {
	t := &LSPTable{InvT: invT, K: k, At: make([][]float64, len(invT))}
	for m := range t.At {
		t.At[m] = make([]float64, rows)
	}
	return t
}

// Fill sets rows lo..hi−1 from the Dirichlet parameters param (row r at
// param[r·K:(r+1)·K]). Calls for disjoint rows may run concurrently.
func (t *LSPTable) Fill(param []float64, lo, hi int) {
	out := make([]float64, len(t.InvT))
	lgam := make([]float64, t.K)
	for r := lo; r < hi; r++ {
		DirichletLogSumPow(param[r*t.K:(r+1)*t.K], t.InvT, out, lgam)
		for m, v := range out {
			t.At[m][r] = v
		}
	}
}

// FillAll sets every row, on workers goroutines.
func (t *LSPTable) FillAll(param []float64, workers int) {
	rows := 0
	if len(t.At) > 0 {
		rows = len(t.At[0])
	}
	ParallelFor(rows, workers, func(_, r int) { t.Fill(param, r, r+1) })
}

// LSPCache keeps a model's LSPTables from one preparation of its units'
// normalizers to the next (under SVI, local variational tempering
// prepares them every minibatch), allocating a table only when its shape
// changes. The zero value is ready to use; it is not safe for concurrent
// use (the preparations are not concurrent).
type LSPCache struct{ tables []*LSPTable }

// Table returns table i of rows rows of k entries at the inverse
// temperatures invT, reused from the last call when it has that shape.
func (c *LSPCache) Table(i int, invT []float64, rows, k int) *LSPTable {
	for len(c.tables) <= i {
		c.tables = append(c.tables, nil)
	}
	t := c.tables[i]
	if t == nil || t.K != k || len(t.At) != len(invT) || len(t.At) > 0 && len(t.At[0]) != rows {
		t = NewLSPTable(invT, rows, k)
		c.tables[i] = t
	}
	t.InvT = invT
	return t
}
