package lda

// Tests of the generated UnitLogNormalizers (local variational tempering),
// written by hand: vigen gen leaves this file alone.

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vigen-go/vigen/runtime"
)

// lvtCorpus is a small random corpus: D documents over V terms.
func lvtCorpus(seed uint64, D, K, V int) *Data {
	rng := rand.New(rand.NewPCG(seed, 1))
	docs := make([][][2]int, D)
	for d := range docs {
		for v := 1; v <= V; v++ {
			if rng.IntN(3) == 0 {
				docs[d] = append(docs[d], [2]int{v, 1 + rng.IntN(4)})
			}
		}
		if len(docs[d]) == 0 {
			docs[d] = [][2]int{{1 + rng.IntN(V), 2}}
		}
	}
	alpha, eta := 0.3, 0.2
	return &Data{K: K, V: V, W: docs, Alpha: &alpha, Eta: &eta}
}

// UnitLogNormalizers against its formula written out here from the
// definitions, at a random state: N_d log Σ_k E θ_dk^s + Σ_n c_n Σ_k φ_nk
// log Σ_v E β_kv^s, with E x^s of a Dirichlet coordinate
// Γ(a + s)Γ(a0)/(Γ(a)Γ(a0 + s)) (θ_d's prior is not tempered, so it has
// no normalizer); and 0 at T = 1.
func TestUnitLogNormalizers(t *testing.T) {
	const D, K, V = 7, 3, 11
	m, err := NewModel(lvtCorpus(5, D, K, V))
	if err != nil {
		t.Fatal(err)
	}
	q, err := m.newState(Options{Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(2, 3))
	for i := range q.zProb {
		q.zProb[i] = rng.Float64()
	}
	runtime.NormalizeRows(q.zProb, K)
	for i := range q.thetaParam {
		q.thetaParam[i] = 0.05 + 3*rng.Float64()
	}
	grid := []float64{1, 1.3, 2.5, 7}
	lg := func(x float64) float64 { v, _ := math.Lgamma(x); return v }
	logSumPow := func(a []float64, s float64) float64 {
		a0 := 0.0
		for _, x := range a {
			a0 += x
		}
		sum := 0.0
		for _, x := range a {
			sum += math.Exp(lg(x+s) - lg(x) + lg(a0) - lg(a0+s))
		}
		return math.Log(sum)
	}
	a := &caModel{m: m, opts: Options{Workers: 2}}
	unit := a.UnitLogNormalizers(q, grid)
	out := make([]float64, len(grid))
	for d := range D {
		unit(d, out)
		if out[0] != 0 {
			t.Errorf("document %d, T = 1: %v, want 0", d, out[0])
		}
		for i, T := range grid[1:] {
			s := 1 / T
			want, tokens := 0.0, 0.0
			for n := m.wOff[d]; n < m.wOff[d+1]; n++ {
				tokens += m.wCount[n]
				for k := range K {
					want += m.wCount[n] * q.zProb[n*K+k] * logSumPow(q.betaParam[k*V:(k+1)*V], s)
				}
			}
			want += tokens * logSumPow(q.thetaParam[d*K:(d+1)*K], s)
			if got := out[i+1]; math.Abs(got-want) > 1e-9*(1+math.Abs(want)) {
				t.Errorf("document %d, T = %g: %.12g, by hand %.12g", d, T, got, want)
			}
		}
	}
}

// LVT fits LDA under coordinate ascent and SVI: one temperature per
// document, each in the grid's range, the same whatever the workers.
func TestLocalTemperingLDA(t *testing.T) {
	data := lvtCorpus(7, 40, 3, 30)
	m, err := NewModel(data)
	if err != nil {
		t.Fatal(err)
	}
	grid := []float64{1, 1.5, 2.25, 3.4, 5}
	for _, alg := range []string{"ca", "svi"} {
		var first *Result
		for _, workers := range []int{1, 3} {
			opts := Options{Seed: 4, Workers: workers, Temper: runtime.TemperSettings{Mode: "local", Grid: grid}}
			opts.MaxIter = 30
			if alg == "svi" {
				opts.Algorithm = "svi"
				opts.SVI = runtime.SVISettings{BatchSize: 8, Passes: 5}
			}
			r, err := m.Fit(context.Background(), opts)
			if err != nil {
				t.Fatalf("%s: %v", alg, err)
			}
			if len(r.UnitTemperature) != len(data.W) {
				t.Fatalf("%s: %d temperatures for %d documents", alg, len(r.UnitTemperature), len(data.W))
			}
			for d, T := range r.UnitTemperature {
				if !(T >= 1 && T <= 5) {
					t.Errorf("%s: document %d: E_q[T_d] = %v outside the grid", alg, d+1, T)
				}
			}
			if first == nil {
				first = r
				continue
			}
			for d := range r.UnitTemperature {
				if r.UnitTemperature[d] != first.UnitTemperature[d] {
					t.Errorf("%s: document %d: E_q[T_d] = %v with 3 workers, %v with 1", alg, d+1, r.UnitTemperature[d], first.UnitTemperature[d])
				}
			}
		}
	}
}
