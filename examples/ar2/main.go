// Command ar2 fits an autoregression of order 2 (ar2.vi) with the package
// vigen generated from it:
//
//	alpha ~ Normal(0, 10),  beta1, beta2 ~ Normal(0, 1),  sigma ~ HalfNormal(1)
//	y[t] ~ Normal(alpha + beta1·y[t−1] + beta2·y[t−2], sigma),  t = 3, …, T
//
// By default it fits a synthetic series drawn from known coefficients (the
// bundled data.json) and prints the truth, the fit's posterior mean, sd
// and 5%, 50%, 95% quantiles, and those of the exact posterior: given
// sigma the coefficients are Gaussian, so the posterior is a
// one-dimensional integral over sigma (see Exact).
//
//	go run ./examples/ar2                   # the bundled synthetic series
//	go run ./examples/ar2 -T 1000 -seed 3   # another synthetic series
//	go run ./examples/ar2 -data FILE        # JSON {"y": [...]}
//	go run ./examples/ar2 -json             # the result, the truth and the exact summary as JSON
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"

	"github.com/vigen-go/vigen/examples/ar2/ar2"
	"github.com/vigen-go/vigen/runtime"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "ar2:", err)
		}
		os.Exit(1)
	}
}

// Truth holds the values the synthetic series is drawn from.
type Truth struct {
	Alpha float64 `json:"alpha"`
	Beta1 float64 `json:"beta1"`
	Beta2 float64 `json:"beta2"`
	Sigma float64 `json:"sigma"`
}

// DefaultTruth is a stationary AR(2) with complex roots (damped
// oscillation) and mean alpha/(1 − beta1 − beta2) = 1.
var DefaultTruth = Truth{Alpha: 0.5, Beta1: 0.9, Beta2: -0.4, Sigma: 0.5}

// Synthetic draws a series of length n from the AR(2) with parameters tr,
// with a fixed seed, after a burn-in of 100 steps from the process mean.
func Synthetic(seed uint64, n int, tr Truth) *ar2.Data {
	rng := rand.New(rand.NewPCG(seed, 0x617232))
	mean := tr.Alpha / (1 - tr.Beta1 - tr.Beta2)
	y1, y2 := mean, mean // y[t−1], y[t−2]
	d := &ar2.Data{T: n, Y: make([]float64, n)}
	for k := -100; k < n; k++ {
		v := tr.Alpha + tr.Beta1*y1 + tr.Beta2*y2 + tr.Sigma*rng.NormFloat64()
		y1, y2 = v, y1
		if k >= 0 {
			d.Y[k] = v
		}
	}
	return d
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("ar2", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		dataPath, method string
		n, maxIter       int
		seed             uint64
		asJSON, quiet    bool
	)
	fs.StringVar(&dataPath, "data", "", "JSON data file (key y and optionally T, as in ar2.vi)")
	fs.StringVar(&method, "method", "", "laplace or delta (default: as declared, laplace)")
	fs.IntVar(&n, "T", 200, "synthetic data: length of the series")
	fs.Uint64Var(&seed, "seed", 1, "seed of the synthetic data")
	fs.IntVar(&maxIter, "maxiter", 0, "maximum coordinate-ascent iterations (0: default)")
	fs.BoolVar(&asJSON, "json", false, "print the result, the truth and the exact summary as JSON")
	fs.BoolVar(&quiet, "q", false, "no progress on stderr")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	var (
		data   *ar2.Data
		truth  *Truth
		source string
	)
	if dataPath != "" {
		f, err := os.Open(dataPath)
		if err != nil {
			return err
		}
		defer f.Close()
		if data, err = ar2.LoadData(f); err != nil {
			return fmt.Errorf("%s: %v", dataPath, err)
		}
		source = dataPath
	} else {
		if n < 3 {
			return fmt.Errorf("-T %d: the series needs at least 3 values", n)
		}
		tr := DefaultTruth
		data, truth = Synthetic(seed, n, tr), &tr
		source = fmt.Sprintf("a synthetic series of %d values (seed %d)", n, seed)
	}
	opts := ar2.Options{Method: method, MaxIter: maxIter}
	if !quiet && !asJSON {
		opts.Progress = func(p runtime.Progress) { fmt.Fprintln(stderr, p) }
	}
	res, err := ar2.Fit(context.Background(), data, opts)
	if err != nil {
		return err
	}
	if !res.Converged && !quiet {
		fmt.Fprintf(stderr, "ar2: warning: the fit did not converge: %s after %d iterations\n", res.Status, res.Iterations)
	}
	exact, err := Exact(data.Y)
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(stdout).Encode(struct {
			*ar2.Result
			Truth *Truth     `json:"truth,omitempty"`
			Exact *Posterior `json:"exact"`
		}{res, truth, exact})
	}
	fmt.Fprintf(stdout, "ar2: %s fit to %s: %s after %d iterations\n", res.Method, source, res.Status, res.Iterations)
	vi := Summaries(res)
	fmt.Fprintf(stdout, "%-6s %-6s %8s %8s %8s %8s %8s %8s\n", "", "", "true", "mean", "sd", "5%", "50%", "95%")
	names := []string{"alpha", "beta1", "beta2", "sigma"}
	var tv []float64
	if truth != nil {
		tv = []float64{truth.Alpha, truth.Beta1, truth.Beta2, truth.Sigma}
	}
	for k, name := range names {
		tstr := "       —"
		if tv != nil {
			tstr = fmt.Sprintf("%8.4f", tv[k])
		}
		for f, s := range []Summary{vi.get(k), exact.get(k)} {
			label, fit := name, "VI"
			if f == 1 {
				label, fit, tstr = "", "exact", ""
			}
			fmt.Fprintf(stdout, "%-6s %-6s %8s %8.4f %8.4f %8.4f %8.4f %8.4f\n", label, fit, tstr, s.Mean, s.SD, s.Q05, s.Q50, s.Q95)
		}
	}
	fmt.Fprintln(stdout, "exact: the posterior by quadrature over log sigma, the coefficients Gaussian given sigma")
	return nil
}

// Summary is a posterior summary of one quantity: mean, sd and the 5%, 50%
// and 95% quantiles.
type Summary struct {
	Mean float64 `json:"mean"`
	SD   float64 `json:"sd"`
	Q05  float64 `json:"q05"`
	Q50  float64 `json:"q50"`
	Q95  float64 `json:"q95"`
}

// Posterior holds the summaries of the four parameters.
type Posterior struct {
	Alpha Summary `json:"alpha"`
	Beta1 Summary `json:"beta1"`
	Beta2 Summary `json:"beta2"`
	Sigma Summary `json:"sigma"`
}

func (p *Posterior) get(k int) Summary {
	return [...]Summary{p.Alpha, p.Beta1, p.Beta2, p.Sigma}[k]
}

// z95 is the 95% quantile of the standard normal.
const z95 = 1.6448536269514722

func normalSummary(n *runtime.Normal) Summary {
	return Summary{n.Mean, n.SD, n.Mean - z95*n.SD, n.Mean, n.Mean + z95*n.SD}
}

// Summaries summarizes a fit: the coefficients' Gaussian factors, sigma on
// its own scale (the log-normal q(sigma) of the Gaussian on log sigma).
func Summaries(r *ar2.Result) *Posterior {
	l := r.Latent
	c := l.Sigma.Constrained
	return &Posterior{Alpha: normalSummary(l.Alpha), Beta1: normalSummary(l.Beta1), Beta2: normalSummary(l.Beta2),
		Sigma: Summary{c.Mean, c.SD, c.Q05, c.Q50, c.Q95}}
}
