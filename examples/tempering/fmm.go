package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/vigen-go/vigen/runtime"
)

// The factorial-mixture experiment of Mandt et al. §4 (Fig. 3 left, Fig.
// 4): plain coordinate ascent (VI), annealed (AVI, linear from T = 10 to 1
// over 10 and over 100 iterations) and variationally tempered (VT) fits of
// the FMM (fmm_model.go) to the toy data (fmm_data.go), from the same
// random starts; the ELBO at T = 1 they end at, and the components they
// recover, matched to the truth.

// fmmConvergence is the rule every FMM fit stops by.
var fmmConvergence = runtime.Convergence{MaxIter: 5000, Tol: 1e-10, MeanTol: 1e-7}

// fmmFit is what the experiment keeps of one fit.
type fmmFit struct {
	res      fmmResult
	elbo     float64
	matched  float64 // Σ_k ‖E[μ_π(k)] − μ_k‖² under the best matching π
	perm     []int   // perm[k]: the fitted component matched to true component k
	minPair  float64 // smallest distance between two fitted components
	vtPhase  int     // iterations in VT's tempered phase (or AVI's schedule)
	temperAt []float64
}

// fitFMM fits f from the random start of seed under temper.
func fitFMM(ctx context.Context, f *fmmModel, truth []float64, seed uint64, temper runtime.TemperSettings, workers int) (fmmFit, error) {
	q := f.newState(seed)
	// FitCA resets the temperatures only when it tempers; a fit stopped
	// while still tempered must not leave them to the next, untempered one
	f.temper = runtime.Temper{}
	r, err := runtime.FitCA(ctx, runtime.CAModel[*fmmState, *fmmWorker, struct{}, fmmResult](f), q,
		runtime.CASettings{Convergence: fmmConvergence.WithDefaults(), Workers: workers, Temper: temper})
	if err != nil {
		return fmmFit{}, err
	}
	if len(r.ELBO) == 0 {
		return fmmFit{}, fmt.Errorf("no iteration completed: %s", r.Status)
	}
	out := fmmFit{res: r, elbo: r.ELBO[len(r.ELBO)-1], temperAt: r.Temperature}
	out.perm, out.matched = matchComponents(truth, r.M, f.k, f.d)
	out.minPair = math.Inf(1)
	for a := 0; a < f.k; a++ {
		for b := a + 1; b < f.k; b++ {
			out.minPair = math.Min(out.minPair, math.Sqrt(sqDist(r.M[a*f.d:(a+1)*f.d], r.M[b*f.d:(b+1)*f.d])))
		}
	}
	for _, T := range r.Temperature {
		if T > 1+1e-9 {
			out.vtPhase++
		}
	}
	return out, nil
}

func sqDist(a, b []float64) float64 {
	s := 0.0
	for i, v := range a {
		s += (v - b[i]) * (v - b[i])
	}
	return s
}

// matchComponents matches the k fitted components (rows of fit) to the
// true ones (rows of truth) by the permutation that minimizes the summed
// squared distance, found by enumerating all k! permutations (k = 8:
// 40,320), and returns it with that distance.
func matchComponents(truth, fit []float64, k, d int) ([]int, float64) {
	cost := make([]float64, k*k) // cost[t*k+f]
	for t := 0; t < k; t++ {
		for j := 0; j < k; j++ {
			cost[t*k+j] = sqDist(truth[t*d:(t+1)*d], fit[j*d:(j+1)*d])
		}
	}
	perm := make([]int, k)
	for i := range perm {
		perm[i] = i
	}
	best, bestPerm := math.Inf(1), slices.Clone(perm)
	var rec func(i int, s float64)
	rec = func(i int, s float64) {
		if s >= best {
			return
		}
		if i == k {
			best = s
			copy(bestPerm, perm)
			return
		}
		for j := i; j < k; j++ {
			perm[i], perm[j] = perm[j], perm[i]
			rec(i+1, s+cost[i*k+perm[i]])
			perm[i], perm[j] = perm[j], perm[i]
		}
	}
	rec(0, 0)
	return bestPerm, best
}

// fmmMethod is one way of fitting.
type fmmMethod struct {
	name   string
	temper runtime.TemperSettings
}

// fmmSetting is one reading of the paper's hyperparameters.
type fmmSetting struct {
	name            string
	sigmaN, sigmaMu float64
	paperLogC       bool   // also run VT with the paper's log C(T)
	svg             string // where to draw the components
	elbo            string // where to draw the ELBO traces
	short           string // the setting in a figure's title
}

func runFMM(stdout, stderr io.Writer, seeds, workers int) error {
	settings := []fmmSetting{
		{name: "σ_n = 0.1 and σ_μ = 0.35 as standard deviations", sigmaN: fmmSigmaN, sigmaMu: fmmSigmaMu, paperLogC: true,
			svg: "examples/tempering/fmm_components.svg", elbo: "examples/tempering/fmm_elbo.svg", short: "noise sd 0.1"},
		{name: "σ_n = 0.1 and σ_μ = 0.35 as variances (the paper's Appendix C writes N(x; μ, σ_n I))",
			sigmaN: math.Sqrt(fmmSigmaN), sigmaMu: math.Sqrt(fmmSigmaMu), paperLogC: true, svg: "examples/tempering/fmm_components_var.svg",
			elbo: "examples/tempering/fmm_elbo_var.svg", short: "noise variance 0.1"},
	}
	for i, s := range settings {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		if err := runFMMSetting(stdout, stderr, s, seeds, workers); err != nil {
			return err
		}
	}
	return nil
}

func runFMMSetting(stdout, stderr io.Writer, set fmmSetting, seeds, workers int) error {
	ctx := context.Background()
	truth, x, _ := fmmDataNoise(fmmN, 1, set.sigmaN)
	f := newFMMModel(x, fmmD, fmmK, set.sigmaN, set.sigmaMu, fmmPi)
	grid := expGrid(30, 10)
	vt := runtime.TemperSettings{Mode: "global", Grid: grid, LogC: fmmLogC(grid, f.n, f.d, f.k, f.pi, f.sigmaN, false)}
	methods := []fmmMethod{
		{name: "VI"},
		{name: "AVI linear:10:10", temper: anneal(10, 10)},
		{name: "AVI linear:10:100", temper: anneal(10, 100)},
		{name: "VT (exact log C)", temper: vt},
		{name: "LVT", temper: runtime.TemperSettings{Mode: "local", Grid: grid}},
	}
	if set.paperLogC {
		vtPaper := runtime.TemperSettings{Mode: "global", Grid: grid, LogC: fmmLogC(grid, f.n, f.d, f.k, f.pi, f.sigmaN, true)}
		methods = append(methods, fmmMethod{name: "VT (paper's log C)", temper: vtPaper})
	}
	// the truth's neighbourhood: one iteration from the true components and
	// assignments, untempered, to its fixed point
	_, _, zTrue := fmmDataNoise(fmmN, 1, set.sigmaN)
	qt := f.newState(1)
	copy(qt.m, truth)
	copy(qt.nu, zTrue)
	f.refresh(qt)
	rt, err := runtime.FitCA(ctx, runtime.CAModel[*fmmState, *fmmWorker, struct{}, fmmResult](f), qt,
		runtime.CASettings{Convergence: fmmConvergence.WithDefaults(), Workers: workers})
	if err != nil {
		return err
	}
	truthELBO := rt.ELBO[len(rt.ELBO)-1]
	fmt.Fprintf(stdout, "factorial mixture, toy data: %s\n", set.name)
	fmt.Fprintf(stdout, "N = %d, D = %d, K = %d, noise sd %.4g, prior sd of μ %.4g, π = %g; %d random starts per method; VT grid %s\n",
		f.n, f.d, f.k, f.sigmaN, f.sigmaMu, f.pi, seeds, vt.String()[4:])
	fmt.Fprintf(stdout, "CA started at the true components and assignments ends at ELBO %.1f (matched d² %.4f)\n",
		truthELBO, func() float64 { _, d := matchComponents(truth, rt.M, f.k, f.d); return d }())
	fits := make([][]fmmFit, len(methods))
	best := math.Inf(-1)
	for i, m := range methods {
		for s := 1; s <= seeds; s++ {
			o, err := fitFMM(ctx, f, truth, uint64(s), m.temper, workers)
			if err != nil {
				return fmt.Errorf("fmm, %s, seed %d: %v", m.name, s, err)
			}
			if !o.res.Converged {
				fmt.Fprintf(stderr, "tempering: fmm, %s, seed %d: %s\n", m.name, s, o.res.Status)
			}
			fits[i] = append(fits[i], o)
			best = math.Max(best, o.elbo)
		}
	}
	tol := 1e-3 // nats: ELBOs within it count as the best optimum
	fmt.Fprintf(stdout, "best ELBO at T = 1 over all fits: %.1f (\"at best\": within %g nats of it; \"near truth\": matched d² < 0.1)\n", best, tol)
	fmt.Fprintf(stdout, "%-20s %7s %10s %11s %11s %11s %9s %6s %6s %7s %7s\n",
		"method", "at best", "near truth", "mean ELBO", "min", "max", "match d²", "ident", "unconv", "iters", "seconds")
	for i, m := range methods {
		hit, near, unconv, ident, iters, secs := 0, 0, 0, 0, 0, 0.0
		var els, dists []float64
		for _, o := range fits[i] {
			els = append(els, o.elbo)
			dists = append(dists, o.matched)
			if best-o.elbo <= tol {
				hit++
			}
			if o.matched < 0.1 {
				near++
			}
			if !o.res.Converged {
				unconv++
			}
			if o.minPair < 1e-6 {
				ident++
			}
			iters += o.res.Iterations
			secs += o.res.Seconds
		}
		fmt.Fprintf(stdout, "%-20s %4d/%-2d %7d/%-2d %11.1f %11.1f %11.1f %9.3f %6d %6d %7.0f %7.1f\n", m.name, hit, len(els), near, len(els),
			mean(els), slices.Min(els), slices.Max(els), median(dists), ident, unconv, float64(iters)/float64(len(els)), secs)
	}
	fmt.Fprintln(stdout, "match d²: median over seeds of Σ_k ‖E[μ_k] − μ_k(true)‖² after the best matching; ident: fits with two components within 1e-6 of each other;")
	fmt.Fprintln(stdout, "iters: mean iterations; seconds: all seeds together")

	// the temperature traces of seed 1
	for i, m := range methods {
		if m.temper.Mode == "" {
			continue
		}
		o := fits[i][0]
		fmt.Fprintf(stdout, "%s, seed 1: E_q[T] by iteration %s; T = 1 from iteration %d of %d\n",
			m.name, traceString(o.temperAt, o.vtPhase), o.vtPhase+1, o.res.Iterations)
	}

	// Fig. 3 (left): the ELBO at T = 1 of seed 1 of each method by iteration
	colors := []string{"#000", "#e69f00", "#d55e00", "#0072b2", "#009e73", "#56b4e9"}
	var lines []traceLine
	lo, hi, n := math.Inf(1), truthELBO, 0
	for i, m := range methods {
		y := fits[i][0].res.ELBO
		lines = append(lines, traceLine{label: m.name, color: colors[i], y: y})
		lo = math.Min(lo, y[min(5, len(y)-1)])
		hi = math.Max(hi, slices.Max(y))
		n = max(n, len(y))
	}
	flat := make([]float64, n)
	for i := range flat {
		flat[i] = truthELBO
	}
	lines = append(lines, traceLine{label: "CA from the truth", color: "#999", y: flat})
	span := hi - lo
	if err := os.WriteFile(set.elbo, []byte(tracesSVG("ELBO at T = 1, seed 1: "+set.short, lines, lo-0.05*span, hi+0.05*span)), 0o644); err != nil {
		fmt.Fprintf(stderr, "tempering: %v\n", err)
	} else {
		fmt.Fprintf(stdout, "ELBO traces of seed 1 drawn in %s\n", set.elbo)
	}

	// Fig. 4: the truth, VI's worst and best fits, AVI's and VT's best.
	rows := []componentRow{{label: "truth", m: truth}}
	pick := func(i int, worst bool, label string) {
		j := 0
		for s, o := range fits[i] {
			if (!worst && o.elbo > fits[i][j].elbo) || (worst && o.elbo < fits[i][j].elbo) {
				j = s
			}
		}
		o := fits[i][j]
		rows = append(rows, componentRow{label: fmt.Sprintf("%s: seed %d, ELBO %.0f, matched d² %.2f", label, j+1, o.elbo, o.matched),
			m: permuted(o.res.M, o.perm, f.d)})
		fmt.Fprintf(stdout, "%s: seed %d, ELBO %.1f, matched d² %.4f\n", label, j+1, o.elbo, o.matched)
	}
	pick(0, true, "VI worst")
	pick(0, false, "VI best")
	pick(2, false, "AVI linear:10:100 best")
	pick(3, false, "VT best")
	if err := os.WriteFile(set.svg, []byte(componentsSVG(rows, 4)), 0o644); err != nil {
		fmt.Fprintf(stderr, "tempering: %v\n", err)
	} else {
		fmt.Fprintf(stdout, "components (matched to the truth) drawn in %s\n", set.svg)
	}
	return nil
}

func mean(x []float64) float64 {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

func median(x []float64) float64 {
	y := slices.Clone(x)
	slices.Sort(y)
	if len(y)%2 == 1 {
		return y[len(y)/2]
	}
	return (y[len(y)/2-1] + y[len(y)/2]) / 2
}

// traceString lists the first n values of a temperature trace, at most
// twelve of them evenly spaced.
func traceString(t []float64, n int) string {
	n = min(n, len(t))
	if n == 0 {
		return "(none)"
	}
	step := max(1, (n+11)/12)
	var parts []string
	for i := 0; i < n; i += step {
		parts = append(parts, fmt.Sprintf("%d:%.2f", i+1, t[i]))
	}
	if (n-1)%step != 0 {
		parts = append(parts, fmt.Sprintf("%d:%.2f", n, t[n-1]))
	}
	return strings.Join(parts, " ")
}

// permuted returns the rows of m (k×d) in the order perm.
func permuted(m []float64, perm []int, d int) []float64 {
	out := make([]float64, 0, len(m))
	for _, j := range perm {
		out = append(out, m[j*d:(j+1)*d]...)
	}
	return out
}
