package runtime

import (
	"fmt"
	"math/rand"
	"testing"
)

// Benchmarks of rowops.go against their baselines in the same run:
//
//	asm   the exported function on this CPU (AVX2+FMA assembly; skipped
//	      where the CPU lacks it)
//	go    the pure-Go reference (what other architectures run); for
//	      ScaleVec it is the plain loop itself, so there is no separate loop
//	loop  the plain Go loop generated code would otherwise write:
//	      dst[i] += x[i]*y[i], s += x[i], x[i] *= a, d := x[i]-y[i]; s += d*d,
//	      s += x[i]*x[i] (separate multiply and add, left-to-right sums)
//
//	go test ./runtime -run '^$' -bench 'MulAddFMA|SumVec|ScaleVec|SqDist|SumSq' -benchtime 200ms
//
// The machine may be shared: compare variants of one run, and repeat
// (-count) to see the spread.

var rowopsBenchSizes = []int{10, 50, 100}

var rowopsBenchSink float64

func rowopsBenchData(n int) (x, y, d []float64) {
	rng := rand.New(rand.NewSource(int64(n)))
	x = make([]float64, n)
	y = make([]float64, n)
	d = make([]float64, n)
	for i := range x {
		x[i] = rng.NormFloat64()
		y[i] = rng.NormFloat64() * 1e-3 // dst grows slowly over b.N calls
		d[i] = rng.NormFloat64()
	}
	return x, y, d
}

// rowopsBench runs the variants of one primitive at every size.
func rowopsBench(b *testing.B, asm, goRef, loop func(x, y, d []float64)) {
	for _, n := range rowopsBenchSizes {
		x, y, d := rowopsBenchData(n)
		run := func(name string, f func(x, y, d []float64)) {
			if f == nil {
				return
			}
			b.Run(fmt.Sprintf("n=%d/%s", n, name), func(b *testing.B) {
				if name == "asm" && !hasAVX2FMA {
					b.Skip("no AVX2+FMA")
				}
				for i := 0; i < b.N; i++ {
					f(x, y, d)
				}
			})
		}
		run("asm", asm)
		run("go", goRef)
		run("loop", loop)
	}
}

func BenchmarkMulAddFMA(b *testing.B) {
	rowopsBench(b,
		func(x, y, d []float64) { MulAddFMA(d, x, y) },
		func(x, y, d []float64) { mulAddFMAGo(d, x, y) },
		func(x, y, d []float64) {
			x = x[:len(d)]
			y = y[:len(d)]
			for i := range d {
				d[i] += x[i] * y[i]
			}
		})
}

func BenchmarkSumVec(b *testing.B) {
	rowopsBench(b,
		func(x, _, _ []float64) { rowopsBenchSink += SumVec(x) },
		func(x, _, _ []float64) { rowopsBenchSink += sumVecGo(x) },
		func(x, _, _ []float64) {
			s := 0.0
			for _, v := range x {
				s += v
			}
			rowopsBenchSink += s
		})
}

func BenchmarkScaleVec(b *testing.B) {
	// a = -1 keeps x bounded (and exact) over any number of calls.
	rowopsBench(b,
		func(x, _, _ []float64) { ScaleVec(x, -1) },
		nil,
		func(x, _, _ []float64) {
			for i := range x {
				x[i] *= -1
			}
		})
}

func BenchmarkSqDist(b *testing.B) {
	rowopsBench(b,
		func(x, y, _ []float64) { rowopsBenchSink += SqDist(x, y) },
		func(x, y, _ []float64) { rowopsBenchSink += sqDistGo(x, y) },
		func(x, y, _ []float64) {
			y = y[:len(x)]
			s := 0.0
			for i, v := range x {
				d := v - y[i]
				s += d * d
			}
			rowopsBenchSink += s
		})
}

func BenchmarkSumSq(b *testing.B) {
	rowopsBench(b,
		func(x, _, _ []float64) { rowopsBenchSink += SumSq(x) },
		func(x, _, _ []float64) { rowopsBenchSink += dotFMAGo(x, x) },
		func(x, _, _ []float64) {
			s := 0.0
			for _, v := range x {
				s += v * v
			}
			rowopsBenchSink += s
		})
}
