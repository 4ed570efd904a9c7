// Command hierlogreg fits hierarchical Bayesian logistic regression
// (hierlogreg.vi, Wang & Blei 2013 §4.2) with the package vigen generated
// from it, by variational EM: Laplace or delta-method updates of each
// group's coefficients and MAP updates of their shared prior (App. C).
//
//	go run ./examples/hierlogreg                       # synthetic groups, fixed seed
//	go run ./examples/hierlogreg -data data.json       # JSON with keys x, y, group (as in hierlogreg.vi)
//	go run ./examples/hierlogreg -school ../shared/data/school/school.csv [-splits 10] [-method laplace|delta|both] [-json]
//
// With -school it reproduces the experiment of §5.2 (Table 2): separate,
// pooled and hierarchical fits on ten seeded 75/25 splits within each school,
// scored by accuracy and mean predictive log likelihood on the held-out 25%.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"

	"github.com/vigen-go/vigen/examples/hierlogreg/hierlogreg"
	"github.com/vigen-go/vigen/runtime"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "hierlogreg:", err)
		os.Exit(1)
	}
}

type config struct {
	data, school, method string
	splits, maxIter      int
	seed                 uint64
	asJSON, quiet        bool
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("hierlogreg", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	fs.StringVar(&c.data, "data", "", "JSON data file (keys as in hierlogreg.vi)")
	fs.StringVar(&c.school, "school", "", "school.csv of the ILEA School data: run the §5.2 experiment")
	fs.IntVar(&c.splits, "splits", 10, "number of seeded 75/25 splits (with -school)")
	fs.StringVar(&c.method, "method", "", "laplace or delta (default: as declared in hierlogreg.vi); with -school also \"both\"")
	fs.Uint64Var(&c.seed, "seed", 1, "seed of the synthetic data and of the splits")
	fs.IntVar(&c.maxIter, "maxiter", 500, "maximum EM iterations")
	fs.BoolVar(&c.asJSON, "json", false, "print the results as JSON")
	fs.BoolVar(&c.quiet, "q", false, "no progress on stderr")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (flags go before arguments; see -h)", fs.Arg(0))
	}
	if c.school != "" {
		return runSchool(c, stdout, stderr)
	}
	if c.method == "both" {
		return fmt.Errorf("-method both needs -school")
	}
	opts := hierlogreg.Options{Method: c.method, MaxIter: c.maxIter}
	if !c.quiet && !c.asJSON {
		opts.Progress = func(p runtime.Progress) { fmt.Fprintln(stderr, p) }
	}
	var d *hierlogreg.Data
	var truth *Truth
	if c.data != "" {
		f, err := os.Open(c.data)
		if err != nil {
			return err
		}
		defer f.Close()
		if d, err = hierlogreg.LoadData(f); err != nil {
			return fmt.Errorf("%s: %v", c.data, err)
		}
	} else {
		d, truth = Synthetic(c.seed, 100, 3)
	}
	res, err := hierlogreg.Fit(context.Background(), d, opts)
	if err != nil {
		return err
	}
	if c.asJSON {
		return json.NewEncoder(stdout).Encode(res)
	}
	if truth != nil {
		fmt.Fprintf(stdout, "hierlogreg: %s fit to %d synthetic groups, %d rows × %d coefficients (seed %d)\n", res.Method, len(truth.Theta), len(d.Y), len(truth.Mu0), c.seed)
	}
	fmt.Fprintf(stdout, "status %s after %d EM iterations (%.3f s), ELBO %.6f\n", res.Status, res.Iterations, res.Seconds, res.ELBO[len(res.ELBO)-1])
	fmt.Fprintf(stdout, "%-8s %10s %12s", "", "mu0", "sd0 (Λ0⁻¹)")
	if truth != nil {
		fmt.Fprintf(stdout, " %10s %10s", "true mu0", "true sd0")
	}
	fmt.Fprintln(stdout)
	sd0, err := priorSD(res.Params.Lambda0)
	if err != nil {
		return err
	}
	for i, v := range res.Params.Mu0 {
		fmt.Fprintf(stdout, "mu0[%d]   %10.4f %12.4f", i+1, v, sd0[i])
		if truth != nil {
			fmt.Fprintf(stdout, " %10.4f %10.4f", truth.Mu0[i], truth.SD0)
		}
		fmt.Fprintln(stdout)
	}
	return nil
}

// priorSD returns the marginal standard deviations of the prior with
// precision lambda: sqrt(diag(lambda⁻¹)).
func priorSD(lambda [][]float64) ([]float64, error) {
	p := len(lambda)
	flat := make([]float64, 0, p*p)
	for _, row := range lambda {
		flat = append(flat, row...)
	}
	inv := make([]float64, p*p)
	if !runtime.InvSPD(inv, flat, p) {
		return nil, fmt.Errorf("the fitted Lambda0 is not positive definite")
	}
	sd := make([]float64, p)
	for i := range sd {
		sd[i] = math.Sqrt(inv[i*p+i])
	}
	return sd, nil
}

// Truth is what Synthetic drew.
type Truth struct {
	Mu0   []float64
	SD0   float64     // the coefficients' prior sd around Mu0
	Theta [][]float64 // each group's coefficients
}

// Synthetic draws m groups of 10 to 50 rows each: an intercept plus p−1
// standard-normal features, coefficients θ_m ~ N(μ0, 0.5² I) and labels
// from the model, with a fixed seed.
func Synthetic(seed uint64, m, p int) (*hierlogreg.Data, *Truth) {
	rng := rand.New(rand.NewPCG(seed, 0x68696572))
	t := &Truth{Mu0: make([]float64, p), SD0: 0.5, Theta: make([][]float64, m)}
	for i := range t.Mu0 {
		t.Mu0[i] = 2*rng.Float64() - 1
	}
	d := &hierlogreg.Data{M: m, P: p}
	for g := range t.Theta {
		th := make([]float64, p)
		for i := range th {
			th[i] = t.Mu0[i] + t.SD0*rng.NormFloat64()
		}
		t.Theta[g] = th
		for range 10 + rng.IntN(41) {
			row := make([]float64, p)
			row[0] = 1
			u := th[0]
			for j := 1; j < p; j++ {
				row[j] = rng.NormFloat64()
				u += row[j] * th[j]
			}
			y := 0
			if rng.Float64() < runtime.Logistic(u) {
				y = 1
			}
			d.X, d.Y, d.Group = append(d.X, row), append(d.Y, y), append(d.Group, g+1)
		}
	}
	d.N = len(d.Y)
	return d, t
}
