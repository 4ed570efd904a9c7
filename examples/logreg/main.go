// Command logreg fits Bayesian logistic regression (logreg.vi) with the
// package vigen generated from it.
//
//	go run ./examples/logreg                       # bundled synthetic data
//	go run ./examples/logreg -data data.json       # JSON with keys x, y (and optionally mu0, Sigma0)
//	go run ./examples/logreg -csv train.csv -label Class1 [-test test.csv] [-json]
//	go run ./examples/logreg -csv train.csv -label all -test test.csv   # every label column
//
// With -csv, the feature columns are those matching -features (default
// f1, f2, …) and an intercept column of ones is added in front.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"regexp"

	"github.com/vigen-go/vigen/examples/logreg/logreg"
	"github.com/vigen-go/vigen/runtime"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "logreg:", err)
		os.Exit(1)
	}
}

type config struct {
	data, csv, label, features, test, method string
	seed                                     uint64
	maxIter                                  int
	asJSON, quiet                            bool
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("logreg", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	fs.StringVar(&c.data, "data", "", "JSON data file (keys as in logreg.vi)")
	fs.StringVar(&c.csv, "csv", "", "CSV training file with a header row")
	fs.StringVar(&c.label, "label", "", "label column of -csv (0/1), or \"all\" for every non-feature column")
	fs.StringVar(&c.features, "features", `^f[0-9]+$`, "regexp selecting the feature columns of -csv")
	fs.StringVar(&c.test, "test", "", "CSV test file to score the fit on (accuracy, mean log p(z | μ, t))")
	fs.StringVar(&c.method, "method", "", "laplace or delta (default: as declared in logreg.vi)")
	fs.Uint64Var(&c.seed, "seed", 1, "seed of the synthetic data")
	fs.IntVar(&c.maxIter, "maxiter", 0, "maximum coordinate-ascent iterations (0: default)")
	fs.BoolVar(&c.asJSON, "json", false, "print the result as JSON")
	fs.BoolVar(&c.quiet, "q", false, "no progress on stderr")
	if err := fs.Parse(args); err != nil {
		return err
	}
	opts := logreg.Options{Method: c.method, MaxIter: c.maxIter}
	if !c.quiet && !c.asJSON {
		opts.Progress = func(p runtime.Progress) { fmt.Fprintln(stderr, p) }
	}
	switch {
	case c.csv != "" && c.label == "all":
		return runAllLabels(c, opts, stdout)
	case c.csv != "":
		if c.label == "" {
			return fmt.Errorf("-csv needs -label COLUMN")
		}
		train, err := readLabeled(c.csv, c.label, c.features)
		if err != nil {
			return err
		}
		return fitAndReport(c, opts, train, stdout)
	case c.data != "":
		f, err := os.Open(c.data)
		if err != nil {
			return err
		}
		defer f.Close()
		d, err := logreg.LoadData(f)
		if err != nil {
			return fmt.Errorf("%s: %v", c.data, err)
		}
		return fitAndReport(c, opts, d, stdout)
	}
	d, truth := Synthetic(c.seed, 500, 4)
	res, err := logreg.Fit(context.Background(), d, opts)
	if err != nil {
		return err
	}
	if c.asJSON {
		return json.NewEncoder(stdout).Encode(res)
	}
	fmt.Fprintf(stdout, "logreg: %s fit to %d synthetic rows × %d coefficients (seed %d)\n", res.Method, len(d.Y), len(truth), c.seed)
	summary(stdout, res, truth)
	return nil
}

// Synthetic draws n rows of an intercept plus p−1 standard-normal features,
// coefficients from N(0, I) and labels from the model, with a fixed seed.
func Synthetic(seed uint64, n, p int) (*logreg.Data, []float64) {
	rng := rand.New(rand.NewPCG(seed, 0x76696765))
	theta := make([]float64, p)
	for i := range theta {
		theta[i] = rng.NormFloat64()
	}
	d := &logreg.Data{X: make([][]float64, n), Y: make([]int, n)}
	for r := range d.X {
		row := make([]float64, p)
		row[0] = 1
		u := theta[0]
		for j := 1; j < p; j++ {
			row[j] = rng.NormFloat64()
			u += row[j] * theta[j]
		}
		d.X[r] = row
		if rng.Float64() < runtime.Logistic(u) {
			d.Y[r] = 1
		}
	}
	return d, theta
}

func summary(w io.Writer, res *logreg.Result, truth []float64) {
	fmt.Fprintf(w, "status %s after %d iterations (%.3f s), ELBO %.6f\n", res.Status, res.Iterations, res.Seconds, res.ELBO[len(res.ELBO)-1])
	g := res.Latent.Theta
	sd := g.SD()
	fmt.Fprintf(w, "%-10s %10s %10s", "", "mean", "sd")
	if truth != nil {
		fmt.Fprintf(w, " %10s", "true")
	}
	fmt.Fprintln(w)
	for i := range g.Mean {
		if i == 10 {
			fmt.Fprintf(w, "… %d more\n", len(g.Mean)-10)
			break
		}
		fmt.Fprintf(w, "theta[%d]%*s %10.4f %10.4f", i+1, 2-len(fmt.Sprint(i+1)), "", g.Mean[i], sd[i])
		if truth != nil {
			fmt.Fprintf(w, " %10.4f", truth[i])
		}
		fmt.Fprintln(w)
	}
}

// Score is a fit's performance on labeled test rows (Wang & Blei §5.2).
type Score struct {
	Accuracy float64 `json:"accuracy"`
	LogLik   float64 `json:"loglik"` // mean log p(z | μ, t)
}

// Evaluate scores the posterior mean mu on d: accuracy of σ(μᵀt) > ½ and
// the mean predictive log likelihood z log σ(μᵀt) + (1−z) log σ(−μᵀt).
func Evaluate(mu []float64, d *logreg.Data) Score {
	var s Score
	for r, row := range d.X {
		u := 0.0
		for j, v := range row {
			u += mu[j] * v
		}
		z := d.Y[r]
		if (u > 0) == (z == 1) {
			s.Accuracy++
		}
		if z == 1 {
			s.LogLik += runtime.LogLogistic(u)
		} else {
			s.LogLik += runtime.LogLogistic(-u)
		}
	}
	n := float64(len(d.X))
	s.Accuracy /= n
	s.LogLik /= n
	return s
}

func fitAndReport(c config, opts logreg.Options, train *logreg.Data, stdout io.Writer) error {
	res, err := logreg.Fit(context.Background(), train, opts)
	if err != nil {
		return err
	}
	var score *Score
	if c.test != "" {
		test, err := readLabeled(c.test, c.label, c.features)
		if err != nil {
			return err
		}
		s := Evaluate(res.Latent.Theta.Mean, test)
		score = &s
	}
	if c.asJSON {
		return json.NewEncoder(stdout).Encode(struct {
			*logreg.Result
			Test *Score `json:"test,omitempty"`
		}{res, score})
	}
	summary(stdout, res, nil)
	if score != nil {
		fmt.Fprintf(stdout, "test: accuracy %.4f, mean log p(z | μ, t) %.4f\n", score.Accuracy, score.LogLik)
	}
	return nil
}

// readLabeled reads a CSV file into logreg data: an intercept column of ones
// followed by the columns matching features, and the 0/1 column label.
func readLabeled(path, label, features string) (*logreg.Data, error) {
	header, rows, err := readCSV(path)
	if err != nil {
		return nil, err
	}
	re, err := regexp.Compile(features)
	if err != nil {
		return nil, fmt.Errorf("-features: %v", err)
	}
	li := -1
	var fi []int
	for j, h := range header {
		switch {
		case h == label:
			li = j
		case re.MatchString(h):
			fi = append(fi, j)
		}
	}
	if li < 0 {
		return nil, fmt.Errorf("%s: no column %q", path, label)
	}
	if len(fi) == 0 {
		return nil, fmt.Errorf("%s: no feature column matches %q", path, features)
	}
	d := &logreg.Data{X: make([][]float64, len(rows)), Y: make([]int, len(rows))}
	for r, row := range rows {
		x := make([]float64, 1+len(fi))
		x[0] = 1
		for k, j := range fi {
			x[k+1] = row[j]
		}
		d.X[r] = x
		z := row[li]
		if z != 0 && z != 1 {
			return nil, fmt.Errorf("%s: row %d: label %q is %v, want 0 or 1", path, r+2, label, z)
		}
		d.Y[r] = int(z)
	}
	return d, nil
}

func readCSV(path string) ([]string, [][]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	h, rows, err := runtime.ReadCSV(f)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %v", path, err)
	}
	return h, rows, nil
}

// LabelColumns returns the columns of a CSV header that are not features.
func LabelColumns(header []string, features string) ([]string, error) {
	re, err := regexp.Compile(features)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, h := range header {
		if !re.MatchString(h) {
			out = append(out, h)
		}
	}
	return out, nil
}

// runAllLabels fits every label column and reports per-label and mean test
// scores (the protocol of Wang & Blei's Table 1).
func runAllLabels(c config, opts logreg.Options, stdout io.Writer) error {
	if c.test == "" {
		return fmt.Errorf("-label all needs -test FILE")
	}
	header, _, err := readCSV(c.csv)
	if err != nil {
		return err
	}
	labels, err := LabelColumns(header, c.features)
	if err != nil {
		return err
	}
	type row struct {
		Label      string  `json:"label"`
		Status     string  `json:"status"`
		Iterations int     `json:"iterations"`
		Seconds    float64 `json:"seconds"`
		Score
	}
	var rows []row
	var mean Score
	opts.Progress = nil
	for _, l := range labels {
		train, err := readLabeled(c.csv, l, c.features)
		if err != nil {
			return err
		}
		test, err := readLabeled(c.test, l, c.features)
		if err != nil {
			return err
		}
		res, err := logreg.Fit(context.Background(), train, opts)
		if err != nil {
			return fmt.Errorf("label %s: %v", l, err)
		}
		s := Evaluate(res.Latent.Theta.Mean, test)
		rows = append(rows, row{l, res.Status, res.Iterations, res.Seconds, s})
		mean.Accuracy += s.Accuracy / float64(len(labels))
		mean.LogLik += s.LogLik / float64(len(labels))
	}
	if c.asJSON {
		return json.NewEncoder(stdout).Encode(struct {
			Labels []row `json:"labels"`
			Mean   Score `json:"mean"`
		}{rows, mean})
	}
	fmt.Fprintf(stdout, "%-12s %-10s %5s %8s %9s %9s\n", "label", "status", "iter", "seconds", "accuracy", "loglik")
	for _, r := range rows {
		fmt.Fprintf(stdout, "%-12s %-10s %5d %8.3f %9.4f %9.4f\n", r.Label, r.Status, r.Iterations, r.Seconds, r.Accuracy, r.LogLik)
	}
	fmt.Fprintf(stdout, "%-12s %-10s %5s %8s %9.4f %9.4f\n", "mean", "", "", "", mean.Accuracy, mean.LogLik)
	return nil
}
