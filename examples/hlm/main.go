// Command hlm fits the hierarchical language model of Wang & Blei (2013,
// §2.2; hlm.vi) with the package vigen generated from it:
//
//	θ ~ N(0, I),  z_d ~ Dirichlet(exp θ),  x_d ~ Multinomial(z_d)
//
// where x_d are the word counts of document d over a vocabulary of V terms.
// θ is nonconjugate (Laplace or delta-method updates), each z_d conjugate
// (closed-form updates).
//
//	go run ./examples/hlm                      # synthetic data from a known θ
//	go run ./examples/hlm -D 1000 -V 10 -seed 3 -method delta
//	go run ./examples/hlm -data counts.json    # JSON {"x": [[counts of doc 1], ...]}
//	go run ./examples/hlm -json                # the result (and the truth) as JSON
//
// On synthetic data it prints the true θ against the posterior mean ± 2 sd
// and the RMSE ‖E[θ] − θ‖/√V.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/vigen-go/vigen/examples/hlm/hlm"
	"github.com/vigen-go/vigen/runtime"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "hlm:", err)
		}
		os.Exit(1)
	}
}

type config struct {
	data, method  string
	d, v, length  int
	seed          uint64
	maxIter       int
	asJSON, quiet bool
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("hlm", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	fs.StringVar(&c.data, "data", "", "JSON data file (keys as in hlm.vi: x, and optionally D, V, zero, I)")
	fs.StringVar(&c.method, "method", "", "laplace or delta (default: as declared in hlm.vi, laplace)")
	fs.IntVar(&c.d, "D", 200, "synthetic data: number of documents")
	fs.IntVar(&c.v, "V", 20, "synthetic data: vocabulary size")
	fs.IntVar(&c.length, "len", 100, "synthetic data: mean document length (tokens)")
	fs.Uint64Var(&c.seed, "seed", 1, "seed of the synthetic data")
	fs.IntVar(&c.maxIter, "maxiter", 0, "maximum coordinate-ascent iterations (0: default)")
	fs.BoolVar(&c.asJSON, "json", false, "print the result as JSON")
	fs.BoolVar(&c.quiet, "q", false, "no progress on stderr")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	opts := hlm.Options{Method: c.method, MaxIter: c.maxIter}
	if !c.quiet && !c.asJSON {
		opts.Progress = func(p runtime.Progress) { fmt.Fprintln(stderr, p) }
	}

	var (
		data  *hlm.Data
		truth []float64
	)
	if c.data != "" {
		d, err := loadFile(c.data)
		if err != nil {
			return err
		}
		data = d
	} else {
		if c.d < 1 || c.v < 2 || c.length < 1 {
			return fmt.Errorf("synthetic data needs -D ≥ 1, -V ≥ 2 and -len ≥ 1 (have %d, %d, %d)", c.d, c.v, c.length)
		}
		data, truth = Synthetic(c.seed, c.d, c.v, c.length)
	}
	if err := CheckData(data); err != nil {
		if c.data != "" {
			return fmt.Errorf("%s: %v", c.data, err)
		}
		return err
	}
	res, err := hlm.Fit(context.Background(), data, opts)
	if err != nil {
		return err
	}
	if !res.Converged && !c.quiet {
		fmt.Fprintf(stderr, "hlm: warning: the fit did not converge: %s after %d iterations\n", res.Status, res.Iterations)
	}
	if c.asJSON {
		out := struct {
			*hlm.Result
			Truth []float64 `json:"truth,omitempty"`
			RMSE  *float64  `json:"rmse,omitempty"`
		}{Result: res, Truth: truth}
		if truth != nil {
			r := RMSE(res.Latent.Theta.Mean, truth)
			out.RMSE = &r
		}
		return json.NewEncoder(stdout).Encode(out)
	}
	if truth != nil {
		fmt.Fprintf(stdout, "hlm: %s fit to %d synthetic documents over %d terms (mean length %d, seed %d)\n", res.Method, c.d, c.v, c.length, c.seed)
	} else {
		fmt.Fprintf(stdout, "hlm: %s fit to %s\n", res.Method, c.data)
	}
	summary(stdout, res, truth)
	return nil
}

// loadFile reads JSON data with hlm.LoadData.
func loadFile(path string) (*hlm.Data, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	d, err := hlm.LoadData(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return d, nil
}

// CheckData rejects what the generated NewModel accepts but the model
// cannot fit: negative word counts and an empty vocabulary. x is declared
// int[D, V] (a Multinomial target may be unbounded in the language), so
// NewModel accepts any integer; a negative count makes log Γ(x + 1) infinite
// and the fit meaningless (NaN ELBO, θ running off). With V = 0, Σ_v exp θ_v
// is 0 and f is not finite. Messages have the form of the generated
// package's own data errors (1-based indices).
func CheckData(d *hlm.Data) error {
	if d == nil {
		return fmt.Errorf("hlm: no data")
	}
	for i, row := range d.X {
		if len(row) == 0 {
			return fmt.Errorf("data %q[%d]: has no entries; the vocabulary must not be empty", "x", i+1)
		}
		for j, n := range row {
			if n < 0 {
				return fmt.Errorf("data %q[%d, %d]: %d is a negative count", "x", i+1, j+1, n)
			}
		}
	}
	return nil
}

// Synthetic draws data from the model with a fixed seed: θ ~ N(0, I) over
// v terms, then for each of d documents z ~ Dirichlet(exp θ), a length
// N ~ Poisson(length) (at least 1) and counts x ~ Multinomial(N, z). It
// returns the data and θ.
func Synthetic(seed uint64, d, v, length int) (*hlm.Data, []float64) {
	rng := rand.New(rand.NewPCG(seed, 0x686c6d))
	theta := make([]float64, v)
	for i := range theta {
		theta[i] = rng.NormFloat64()
	}
	return SyntheticFrom(rng, theta, d, length), theta
}

// SyntheticFrom draws d documents given θ (see Synthetic).
func SyntheticFrom(rng *rand.Rand, theta []float64, d, length int) *hlm.Data {
	v := len(theta)
	alpha := make([]float64, v)
	for i, t := range theta {
		alpha[i] = math.Exp(t)
	}
	data := &hlm.Data{D: d, V: v, X: make([][]int, d)}
	z := make([]float64, v)
	pois := distuv.Poisson{Lambda: float64(length), Src: rng}
	for doc := range data.X {
		Dirichlet(rng, alpha, z)
		n := max(int(pois.Rand()), 1)
		data.X[doc] = Multinomial(rng, n, z)
	}
	return data
}

// Dirichlet draws z ~ Dirichlet(alpha) by normalizing Gamma(alpha_i, 1)
// draws. If every draw underflows (tiny alpha), it returns a point mass on
// the largest alpha.
func Dirichlet(rng *rand.Rand, alpha, z []float64) {
	sum := 0.0
	for i, a := range alpha {
		z[i] = distuv.Gamma{Alpha: a, Beta: 1, Src: rng}.Rand()
		sum += z[i]
	}
	if sum > 0 {
		for i := range z {
			z[i] /= sum
		}
		return
	}
	best := 0
	for i, a := range alpha {
		if a > alpha[best] {
			best = i
		}
		z[i] = 0
	}
	z[best] = 1
}

// Multinomial draws counts of n tokens with probabilities p (summing to 1).
func Multinomial(rng *rand.Rand, n int, p []float64) []int {
	x := make([]int, len(p))
	for range n {
		u := rng.Float64()
		k := len(p) - 1
		for i, pi := range p {
			if u < pi {
				k = i
				break
			}
			u -= pi
		}
		x[k]++
	}
	return x
}

// RMSE is ‖mean − truth‖/√V.
func RMSE(mean, truth []float64) float64 {
	s := 0.0
	for i, t := range truth {
		s += (mean[i] - t) * (mean[i] - t)
	}
	return math.Sqrt(s / float64(len(truth)))
}

func summary(w io.Writer, res *hlm.Result, truth []float64) {
	elbo := math.NaN()
	if n := len(res.ELBO); n > 0 {
		elbo = res.ELBO[n-1]
	}
	fmt.Fprintf(w, "status %s after %d iterations (%.3f s), ELBO %.6f\n", res.Status, res.Iterations, res.Seconds, elbo)
	g := res.Latent.Theta
	sd := g.SD()
	fmt.Fprintf(w, "%-10s", "")
	if truth != nil {
		fmt.Fprintf(w, " %9s", "true")
	}
	fmt.Fprintf(w, " %9s %9s   %s\n", "mean", "sd", "mean ± 2 sd")
	covered := 0
	for i := range g.Mean {
		lo, hi := g.Mean[i]-2*sd[i], g.Mean[i]+2*sd[i]
		fmt.Fprintf(w, "%-10s", fmt.Sprintf("theta[%d]", i+1))
		if truth != nil {
			fmt.Fprintf(w, " %9.4f", truth[i])
		}
		fmt.Fprintf(w, " %9.4f %9.4f   [%8.4f, %8.4f]", g.Mean[i], sd[i], lo, hi)
		if truth != nil {
			if lo <= truth[i] && truth[i] <= hi {
				covered++
			} else {
				fmt.Fprint(w, "  *")
			}
		}
		fmt.Fprintln(w)
	}
	if truth != nil {
		meanSD := 0.0
		for _, s := range sd {
			meanSD += s / float64(len(sd))
		}
		fmt.Fprintf(w, "RMSE ‖E[θ] − θ‖/√V = %.4f (mean posterior sd %.4f); %d of %d true values within ± 2 sd (* outside)\n",
			RMSE(g.Mean, truth), meanSD, covered, len(truth))
	}
}
