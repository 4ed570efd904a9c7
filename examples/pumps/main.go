// Command pumps fits the BUGS pumps model (pumps.vi) with the package
// vigen generated from it:
//
//	alpha ~ Exponential(1),  beta ~ Gamma(0.1, 1)
//	theta[i] ~ Gamma(alpha, beta),  y[i] ~ Poisson(theta[i]·t[i])
//
// q(beta) and q(theta[i]) are Gamma factors updated in closed form, q(log
// alpha) a Gaussian (Laplace). It prints the posterior mean, sd and 5%,
// 50%, 95% quantiles of alpha, beta and each pump's failure rate under the
// fit and under the exact posterior, a two-dimensional integral over
// (alpha, beta) with the rates integrated out (see Exact).
//
//	go run ./examples/pumps                  # the bundled data (the BUGS manual's)
//	go run ./examples/pumps -method delta    # the delta method for alpha
//	go run ./examples/pumps -data FILE       # JSON {"y": [...], "t": [...]}
//	go run ./examples/pumps -json            # the result and the exact summary as JSON
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/vigen-go/vigen/examples/pumps/pumps"
	"github.com/vigen-go/vigen/runtime"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "pumps:", err)
		}
		os.Exit(1)
	}
}

// The BUGS manual's data (Examples Vol. I, "Pumps: conjugate gamma-Poisson
// hierarchical model"; Gaver & O'Muircheartaigh 1987): failures of ten
// power-plant pumps and their operating times in thousands of hours.
var (
	BUGSFailures = []int{5, 1, 5, 14, 3, 19, 1, 1, 4, 22}
	BUGSTimes    = []float64{94.3, 15.7, 62.9, 126, 5.24, 31.4, 1.05, 1.05, 2.1, 10.5}
)

// The BUGS manual's posterior means of alpha and beta (MCMC; approximate).
const (
	BUGSAlpha = 0.70
	BUGSBeta  = 0.93
)

// Pumps returns the BUGS manual's data as the model's Data.
func Pumps() *pumps.Data {
	return &pumps.Data{N: len(BUGSFailures), Y: append([]int(nil), BUGSFailures...), T: append([]float64(nil), BUGSTimes...)}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("pumps", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		dataPath, method string
		maxIter          int
		asJSON, quiet    bool
	)
	fs.StringVar(&dataPath, "data", "", "JSON data file (keys y, t and optionally N, as in pumps.vi; default: the BUGS manual's data)")
	fs.StringVar(&method, "method", "", "laplace or delta for alpha (default: as declared, laplace)")
	fs.IntVar(&maxIter, "maxiter", 0, "maximum coordinate-ascent iterations (0: default)")
	fs.BoolVar(&asJSON, "json", false, "print the result and the exact summary as JSON")
	fs.BoolVar(&quiet, "q", false, "no progress on stderr")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	data, source := Pumps(), "the BUGS pumps data"
	if dataPath != "" {
		f, err := os.Open(dataPath)
		if err != nil {
			return err
		}
		defer f.Close()
		if data, err = pumps.LoadData(f); err != nil {
			return fmt.Errorf("%s: %v", dataPath, err)
		}
		source = dataPath
	}
	opts := pumps.Options{Method: method, MaxIter: maxIter}
	if !quiet && !asJSON {
		opts.Progress = func(p runtime.Progress) { fmt.Fprintln(stderr, p) }
	}
	res, err := pumps.Fit(context.Background(), data, opts)
	if err != nil {
		return err
	}
	if !res.Converged && !quiet {
		fmt.Fprintf(stderr, "pumps: warning: the fit did not converge: %s after %d iterations\n", res.Status, res.Iterations)
	}
	exact, err := Exact(data.Y, data.T)
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(stdout).Encode(struct {
			*pumps.Result
			Exact *Posterior `json:"exact"`
		}{res, exact})
	}
	fmt.Fprintf(stdout, "pumps: %s fit to %s (%d pumps): %s after %d iterations\n", res.Method, source, len(data.Y), res.Status, res.Iterations)
	vi := Summaries(res)
	fmt.Fprintf(stdout, "%-9s %-6s %8s %8s %8s %8s %8s\n", "", "", "mean", "sd", "5%", "50%", "95%")
	row := func(name, fit string, s Summary) {
		fmt.Fprintf(stdout, "%-9s %-6s %8.4f %8.4f %8.4f %8.4f %8.4f\n", name, fit, s.Mean, s.SD, s.Q05, s.Q50, s.Q95)
	}
	row("alpha", "VI", vi.Alpha)
	row("", "exact", exact.Alpha)
	row("beta", "VI", vi.Beta)
	row("", "exact", exact.Beta)
	for i := range vi.Theta {
		row(fmt.Sprintf("theta[%d]", i+1), "VI", vi.Theta[i])
		row("", "exact", exact.Theta[i])
	}
	fmt.Fprintln(stdout, "exact: the posterior by quadrature over (log alpha, log beta), the rates integrated out in closed form")
	if dataPath == "" {
		fmt.Fprintf(stdout, "the BUGS manual (MCMC) reports posterior means alpha ≈ %.2f, beta ≈ %.2f\n", BUGSAlpha, BUGSBeta)
	}
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

// Posterior holds the summaries of alpha, beta and the rates theta.
type Posterior struct {
	Alpha Summary   `json:"alpha"`
	Beta  Summary   `json:"beta"`
	Theta []Summary `json:"theta"`
}

func gammaSummary(shape, rate float64) Summary {
	g := distuv.Gamma{Alpha: shape, Beta: rate}
	return Summary{shape / rate, math.Sqrt(shape) / rate, g.Quantile(0.05), g.Quantile(0.5), g.Quantile(0.95)}
}

// Summaries summarizes a fit: alpha on its own scale (the log-normal
// q(alpha) of the Gaussian on log alpha), beta and the rates from their
// Gamma factors.
func Summaries(r *pumps.Result) Posterior {
	a := r.Latent.Alpha.Constrained
	p := Posterior{Alpha: Summary{a.Mean, a.SD, a.Q05, a.Q50, a.Q95}}
	b := r.Latent.Beta.Params
	p.Beta = gammaSummary(b["shape"][0], b["rate"][0])
	th := r.Latent.Theta.Params
	for i := range th["shape"] {
		p.Theta = append(p.Theta, gammaSummary(th["shape"][i], th["rate"][i]))
	}
	return p
}
