package runtime

import (
	"fmt"
	"math/rand"
	"testing"
)

// Benchmarks of vec.go against their baselines in the same run:
//
//	asm    the exported function on this CPU (AVX2+FMA assembly; skipped
//	       where the CPU lacks it)
//	go     the pure-Go reference (what other architectures run)
//	naive  the scalar loop generated code writes today,
//	       h[a*n+b] += s*x[b] (a separate multiply and add)
//
// Each reports GFLOP/s: a rank-1 update of an n×n upper triangle is
// n(n+1)/2 multiply-adds, n(n+1) flops; a dot product of length n is 2n.
//
//	go test ./runtime -run '^$' -bench 'Syr|Dot' -benchtime 200ms
//
// The machine may be shared: compare variants of one run, and repeat
// (-count) to see the spread.

var vecBenchSizes = []int{10, 50, 104}

func vecBenchData(n, m int) (h, xs, alpha []float64) {
	rng := rand.New(rand.NewSource(int64(n*1000 + m)))
	h = make([]float64, n*n)
	xs = make([]float64, m*n)
	alpha = make([]float64, m)
	for i := range h {
		h[i] = rng.NormFloat64()
	}
	for i := range xs {
		xs[i] = rng.NormFloat64()
	}
	for i := range alpha {
		// Mixed signs keep h bounded over many iterations.
		alpha[i] = rng.NormFloat64() * 1e-3
	}
	return h, xs, alpha
}

func vecReportGFLOPS(b *testing.B, flopsPerOp float64) {
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(flopsPerOp*float64(b.N)/s/1e9, "GFLOP/s")
	}
}

// naiveSyrUpper is the loop generated code writes today.
func naiveSyrUpper(h []float64, n int, alpha float64, x []float64) {
	for a := 0; a < n; a++ {
		s := alpha * x[a]
		for b := a; b < n; b++ {
			h[a*n+b] += s * x[b]
		}
	}
}

func BenchmarkSyrUpper(b *testing.B) {
	for _, n := range vecBenchSizes {
		h, x, alpha := vecBenchData(n, 1)
		flops := float64(n * (n + 1))
		b.Run(fmt.Sprintf("n=%d/asm", n), func(b *testing.B) {
			if !hasAVX2FMA {
				b.Skip("no AVX2+FMA")
			}
			for i := 0; i < b.N; i++ {
				SyrUpper(h, n, alpha[0], x)
			}
			vecReportGFLOPS(b, flops)
		})
		b.Run(fmt.Sprintf("n=%d/go", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				syrUpperGo(h, n, alpha[0], x)
			}
			vecReportGFLOPS(b, flops)
		})
		b.Run(fmt.Sprintf("n=%d/naive", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				naiveSyrUpper(h, n, alpha[0], x)
			}
			vecReportGFLOPS(b, flops)
		})
	}
}

// BenchmarkSyrkUpper: m = 100 rank-1 updates of one triangle. asm-rows is
// 100 calls of the SyrUpper kernel and asm-syrk4 the four-row kernel
// SyrkUpper used before, to show what its register blocking gains.
func BenchmarkSyrkUpper(b *testing.B) {
	const m = 100
	for _, n := range vecBenchSizes {
		h, xs, alpha := vecBenchData(n, m)
		flops := float64(m * n * (n + 1))
		b.Run(fmt.Sprintf("n=%d/m=%d/asm", n, m), func(b *testing.B) {
			if !hasAVX2FMA {
				b.Skip("no AVX2+FMA")
			}
			for i := 0; i < b.N; i++ {
				SyrkUpper(h, n, alpha, xs)
			}
			vecReportGFLOPS(b, flops)
		})
		b.Run(fmt.Sprintf("n=%d/m=%d/asm-syrk4", n, m), func(b *testing.B) {
			if !hasAVX2FMA {
				b.Skip("no AVX2+FMA")
			}
			for i := 0; i < b.N; i++ {
				syrkUpper4AVX2(h, n, alpha, xs)
			}
			vecReportGFLOPS(b, flops)
		})
		b.Run(fmt.Sprintf("n=%d/m=%d/asm-rows", n, m), func(b *testing.B) {
			if !hasAVX2FMA {
				b.Skip("no AVX2+FMA")
			}
			for i := 0; i < b.N; i++ {
				for r := 0; r < m; r++ {
					SyrUpper(h, n, alpha[r], xs[r*n:r*n+n])
				}
			}
			vecReportGFLOPS(b, flops)
		})
		b.Run(fmt.Sprintf("n=%d/m=%d/go", n, m), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				syrkUpperGo(h, n, alpha, xs)
			}
			vecReportGFLOPS(b, flops)
		})
		b.Run(fmt.Sprintf("n=%d/m=%d/naive", n, m), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				for r := 0; r < m; r++ {
					naiveSyrUpper(h, n, alpha[r], xs[r*n:r*n+n])
				}
			}
			vecReportGFLOPS(b, flops)
		})
	}
}

// BenchmarkSyrkBatch: one SyrkUpper call of m = 4, 8 or 16 rows, the
// batches SyrBatch applies. asm is the register-blocked kernel
// (syrkTileAVX2), asm-syrk4 the kernel it replaced (one pass over the
// triangle per four rows, syrk4AVX2), go the pure-Go reference.
//
//	go test ./runtime -run '^$' -bench SyrkBatch -benchtime 200ms
func BenchmarkSyrkBatch(b *testing.B) {
	for _, n := range []int{50, 104} {
		for _, m := range []int{4, 8, 16} {
			h, xs, alpha := vecBenchData(n, m)
			flops := float64(m * n * (n + 1))
			b.Run(fmt.Sprintf("n=%d/m=%d/asm", n, m), func(b *testing.B) {
				if !hasAVX2FMA {
					b.Skip("no AVX2+FMA")
				}
				for i := 0; i < b.N; i++ {
					SyrkUpper(h, n, alpha, xs)
				}
				vecReportGFLOPS(b, flops)
			})
			b.Run(fmt.Sprintf("n=%d/m=%d/asm-syrk4", n, m), func(b *testing.B) {
				if !hasAVX2FMA {
					b.Skip("no AVX2+FMA")
				}
				for i := 0; i < b.N; i++ {
					syrkUpper4AVX2(h, n, alpha, xs)
				}
				vecReportGFLOPS(b, flops)
			})
			b.Run(fmt.Sprintf("n=%d/m=%d/go", n, m), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					syrkUpperGo(h, n, alpha, xs)
				}
				vecReportGFLOPS(b, flops)
			})
		}
	}
}

// BenchmarkSyrBatch: 64 Adds and a Flush, the generated kernels' path.
// batch is SyrBatch (SyrBatchRows rows per SyrkUpper call); old-batch4 is
// what it was before the register-blocked kernel: batches of four rows
// applied by the four-row kernel (syrk4AVX2).
func BenchmarkSyrBatch(b *testing.B) {
	const m = 64
	for _, n := range []int{50, 104} {
		h, xs, alpha := vecBenchData(n, m)
		flops := float64(m * n * (n + 1))
		b.Run(fmt.Sprintf("n=%d/batch", n), func(b *testing.B) {
			buf := make([]float64, SyrBatchRows*n)
			for i := 0; i < b.N; i++ {
				sb := NewSyrBatch(h, n, buf)
				for r := 0; r < m; r++ {
					sb.Add(alpha[r], xs[r*n:r*n+n])
				}
				sb.Flush()
			}
			vecReportGFLOPS(b, flops)
		})
		b.Run(fmt.Sprintf("n=%d/old-batch4", n), func(b *testing.B) {
			if !hasAVX2FMA {
				b.Skip("no AVX2+FMA")
			}
			bx := make([]float64, 4*n)
			var ba [4]float64
			for i := 0; i < b.N; i++ {
				k := 0
				for r := 0; r < m; r++ {
					copy(bx[k*n:(k+1)*n], xs[r*n:r*n+n])
					ba[k] = alpha[r]
					if k++; k == 4 {
						syrkUpper4AVX2(h, n, ba[:], bx)
						k = 0
					}
				}
				if k > 0 {
					syrkUpper4AVX2(h, n, ba[:k], bx[:k*n])
				}
			}
			vecReportGFLOPS(b, flops)
		})
	}
}

var vecBenchSink float64

func BenchmarkDotFMA(b *testing.B) {
	for _, n := range append(append([]int{}, vecBenchSizes...), 1000) {
		_, xs, _ := vecBenchData(n, 2)
		x, y := xs[:n], xs[n:]
		flops := float64(2 * n)
		b.Run(fmt.Sprintf("n=%d/asm", n), func(b *testing.B) {
			if !hasAVX2FMA {
				b.Skip("no AVX2+FMA")
			}
			s := 0.0
			for i := 0; i < b.N; i++ {
				s += DotFMA(x, y)
			}
			vecBenchSink = s
			vecReportGFLOPS(b, flops)
		})
		b.Run(fmt.Sprintf("n=%d/go", n), func(b *testing.B) {
			s := 0.0
			for i := 0; i < b.N; i++ {
				s += dotFMAGo(x, y)
			}
			vecBenchSink = s
			vecReportGFLOPS(b, flops)
		})
		b.Run(fmt.Sprintf("n=%d/naive", n), func(b *testing.B) {
			s := 0.0
			for i := 0; i < b.N; i++ {
				d := 0.0
				for j := range x {
					d += x[j] * y[j]
				}
				s += d
			}
			vecBenchSink = s
			vecReportGFLOPS(b, flops)
		})
	}
}
