package main

import (
	"math/rand/v2"
)

// The toy data of Mandt et al. §4: eight 4×4 black-and-white components
// drawn by hand, each weighted by a uniform draw from [0.5, 1], and points
// X_n = Σ_k Z_nk μ_k + ε_n with Z_nk ~ Bernoulli(0.3), ε_n ~ N(0, 0.1² I).
// The paper's shapes (its Fig. 4c) are not given as numbers; these are
// shapes of the same kind: bars, diagonals, a square, a cross, a corner
// and a checker.
var fmmShapes = [8][4]string{
	{"####", "....", "....", "...."}, // top bar
	{"#...", "#...", "#...", "#..."}, // left bar
	{"#...", ".#..", "..#.", "...#"}, // diagonal
	{"...#", "..#.", ".#..", "#..."}, // anti-diagonal
	{"....", ".##.", ".##.", "...."}, // centre square
	{"..#.", ".###", "..#.", "...."}, // cross
	{"....", "...#", "...#", ".###"}, // corner
	{"....", "....", "#.#.", ".#.#"}, // checker
}

// The FMM's sizes and hyperparameters in the paper's toy experiment.
const (
	fmmD       = 16
	fmmK       = 8
	fmmN       = 10000
	fmmSigmaN  = 0.1
	fmmSigmaMu = 0.35
	fmmPi      = 0.3
)

// fmmTruth returns the K×D true components, the shapes weighted by
// uniform draws from [0.5, 1] from rng.
func fmmTruth(rng *rand.Rand) []float64 {
	mu := make([]float64, fmmK*fmmD)
	for k, s := range fmmShapes {
		w := 0.5 + 0.5*rng.Float64()
		for r, row := range s {
			for c, ch := range row {
				if ch == '#' {
					mu[k*fmmD+4*r+c] = w
				}
			}
		}
	}
	return mu
}

// fmmData draws the toy data set from seed: the true components, n points
// (N×D, row-major) and the true assignments (N×K, 0 or 1).
func fmmData(n int, seed uint64) (truth, x, z []float64) {
	return fmmDataNoise(n, seed, fmmSigmaN)
}

// fmmDataNoise is fmmData with noise sd sigmaN.
func fmmDataNoise(n int, seed uint64, sigmaN float64) (truth, x, z []float64) {
	rng := rand.New(rand.NewPCG(seed, 0xf33))
	truth = fmmTruth(rng)
	x = make([]float64, n*fmmD)
	z = make([]float64, n*fmmK)
	for i := 0; i < n; i++ {
		xi := x[i*fmmD : (i+1)*fmmD]
		for k := 0; k < fmmK; k++ {
			if rng.Float64() < fmmPi {
				z[i*fmmK+k] = 1
				for d := range xi {
					xi[d] += truth[k*fmmD+d]
				}
			}
		}
		for d := range xi {
			xi[d] += sigmaN * rng.NormFloat64()
		}
	}
	return truth, x, z
}
