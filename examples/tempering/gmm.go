package main

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/vigen-go/vigen/examples/tempering/gmm"
	"github.com/vigen-go/vigen/examples/tempering/gmmsigma"
	"github.com/vigen-go/vigen/runtime"
)

// The Gaussian-mixture experiment: how often coordinate ascent from a
// random start reaches the best optimum found, plain (CA), annealed (AVI,
// Mandt et al. §2.2) and variationally tempered (VT, §2.3). gmm.vi has
// unknown precisions, for which C(T) is infinite and VT does not apply
// (logc.go); gmmsigma.vi has a known sd and runs all three.

// mixtureData is a one-dimensional data set and the mixture fitted to it.
type mixtureData struct {
	name  string
	y     []float64
	k     int
	sigma float64 // gmmsigma.vi's known component sd
}

// syntheticMixture draws n points from five well-separated unit-variance
// components, from seed.
func syntheticMixture(n int, seed uint64) mixtureData {
	rng := rand.New(rand.NewPCG(seed, 17))
	means := []float64{-10, -4, 0, 3, 8}
	weights := []float64{0.15, 0.25, 0.2, 0.25, 0.15}
	y := make([]float64, n)
	for i := range y {
		u, k := rng.Float64(), 0
		for u > weights[k] && k < len(weights)-1 {
			u -= weights[k]
			k++
		}
		y[i] = means[k] + rng.NormFloat64()
	}
	return mixtureData{name: fmt.Sprintf("synthetic (N = %d, 5 components)", n), y: y, k: 5, sigma: 1}
}

// irisPetals reads the petal lengths of Fisher's iris data (150 flowers,
// three species) from dir/uci/iris.csv.
func irisPetals(dir string) (mixtureData, error) {
	f, err := os.Open(filepath.Join(dir, "uci", "iris.csv"))
	if err != nil {
		return mixtureData{}, err
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return mixtureData{}, err
	}
	var y []float64
	for i, r := range rows[1:] {
		v, err := strconv.ParseFloat(r[2], 64)
		if err != nil {
			return mixtureData{}, fmt.Errorf("iris.csv row %d: petal_length %q: %v", i+2, r[2], err)
		}
		y = append(y, v)
	}
	return mixtureData{name: "iris petal length (N = 150, 3 species)", y: y, k: 3, sigma: 0.5}, nil
}

// method is one way of fitting: the model and its tempering.
type method struct {
	name   string
	known  bool // gmmsigma.vi (known sd) rather than gmm.vi
	temper runtime.TemperSettings
}

// fitOutcome is what the table reports of one fit.
type fitOutcome struct {
	elbo       float64
	iterations int
	seconds    float64
	converged  bool
	status     string
}

func fitMixture(ctx context.Context, md mixtureData, m method, seed uint64, workers int) (fitOutcome, error) {
	var (
		elbo              []float64
		it                int
		secs              float64
		converged         bool
		status            string
		err               error
		maxIter, tol, mtl = 20000, 1e-10, 1e-8
	)
	if m.known {
		var r *gmmsigma.Result
		r, err = gmmsigma.Fit(ctx, &gmmsigma.Data{N: len(md.y), K: md.k, Y: md.y, Sigma: &md.sigma},
			gmmsigma.Options{Seed: seed, MaxIter: maxIter, Tol: tol, MeanTol: mtl, Workers: workers, Temper: m.temper})
		if r != nil {
			elbo, it, secs, converged, status = r.ELBO, r.Iterations, r.Seconds, r.Converged, r.Status
		}
	} else {
		var r *gmm.Result
		r, err = gmm.Fit(ctx, &gmm.Data{N: len(md.y), K: md.k, Y: md.y},
			gmm.Options{Seed: seed, MaxIter: maxIter, Tol: tol, MeanTol: mtl, Workers: workers, Temper: m.temper})
		if r != nil {
			elbo, it, secs, converged, status = r.ELBO, r.Iterations, r.Seconds, r.Converged, r.Status
		}
	}
	if err != nil {
		return fitOutcome{}, err
	}
	if len(elbo) == 0 {
		return fitOutcome{}, fmt.Errorf("no iteration completed: %s", status)
	}
	return fitOutcome{elbo: elbo[len(elbo)-1], iterations: it, seconds: secs, converged: converged, status: status}, nil
}

func anneal(t0, length float64) runtime.TemperSettings {
	return runtime.TemperSettings{Anneal: runtime.Anneal{T0: t0, Length: length}}
}

func runGMM(stdout, stderr io.Writer, dir string, seeds, workers int) error {
	sets := []mixtureData{syntheticMixture(400, 1)}
	if iris, err := irisPetals(dir); err != nil {
		fmt.Fprintf(stderr, "tempering: skipping the iris data: %v\n", err)
	} else {
		sets = append(sets, iris)
	}
	ctx := context.Background()
	for _, md := range sets {
		grid := expGrid(30, 10)
		vt := runtime.TemperSettings{Mode: "global", Grid: grid, LogC: gmmSigmaLogC(grid, len(md.y), md.k, 1, md.sigma)}
		lvt := runtime.TemperSettings{Mode: "local", Grid: grid}
		lvtCold := lvt
		lvtCold.Cold = true
		methods := []method{
			{name: "CA", known: false},
			{name: "AVI linear:10:50", temper: anneal(10, 50)},
			{name: "AVI linear:2:50", temper: anneal(2, 50)},
			{name: "AVI linear:1.5:50", temper: anneal(1.5, 50)},
			{name: "LVT " + lvt.String()[5:], temper: lvt},
			{name: "LVT " + lvtCold.String()[5:], temper: lvtCold},
			{name: "CA", known: true},
			{name: "AVI linear:10:50", known: true, temper: anneal(10, 50)},
			{name: "AVI linear:2:50", known: true, temper: anneal(2, 50)},
			{name: "VT " + vt.String()[4:], known: true, temper: vt},
			{name: "LVT " + lvt.String()[5:], known: true, temper: lvt},
			{name: "LVT " + lvtCold.String()[5:], known: true, temper: lvtCold},
		}
		fmt.Fprintf(stdout, "%s, K = %d, %d random starts per method\n", md.name, md.k, seeds)
		for _, known := range []bool{false, true} {
			model := "gmm.vi (unknown precisions; VT does not apply: C(T) = ∞)"
			if known {
				model = fmt.Sprintf("gmmsigma.vi (sd %g known)", md.sigma)
			}
			var rows [][]fitOutcome
			var names []string
			best := math.Inf(-1)
			for _, m := range methods {
				if m.known != known {
					continue
				}
				var outs []fitOutcome
				for s := 1; s <= seeds; s++ {
					o, err := fitMixture(ctx, md, m, uint64(s), workers)
					if err != nil {
						return fmt.Errorf("%s, %s, seed %d: %v", md.name, m.name, s, err)
					}
					outs = append(outs, o)
					best = math.Max(best, o.elbo)
				}
				rows, names = append(rows, outs), append(names, m.name)
			}
			fmt.Fprintf(stdout, "  %s: best ELBO %.4f\n", model, best)
			fmt.Fprintf(stdout, "    %-44s %8s %11s %11s %11s %8s %8s\n", "method", "at best", "median", "worst", "unconv.", "iters", "seconds")
			for i, outs := range rows {
				var els []float64
				hit, unconv, iters, secs := 0, 0, 0, 0.0
				for _, o := range outs {
					els = append(els, o.elbo)
					if best-o.elbo <= 1e-6*math.Abs(best) {
						hit++
					}
					if !o.converged {
						unconv++
					}
					iters += o.iterations
					secs += o.seconds
				}
				slices.Sort(els)
				fmt.Fprintf(stdout, "    %-44s %5d/%-2d %11.4f %11.4f %11d %8.0f %8.2f\n", names[i], hit, len(outs),
					els[len(els)/2], els[0], unconv, float64(iters)/float64(len(outs)), secs)
			}
		}
		fmt.Fprintln(stdout)
	}
	return nil
}
