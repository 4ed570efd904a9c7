// Command schoolreg fits a varying-intercept regression of exam scores on
// verbal-reasoning band (schoolreg.vi) with the package vigen generated
// from it:
//
//	mu, b1, b2 ~ Normal(0, 100),  tau, sigma ~ HalfCauchy(10)
//	a[j] ~ Normal(mu, tau)
//	score[n] ~ Normal(a[school[n]] + b1·vr1[n] + b2·vr2[n], sigma)
//
// to the ILEA exam scores (../shared/data/school/school.csv, described in
// ../shared/data/README.md). The bundled data.json holds the students of
// the first 15 schools; -full fits all 139 schools. It prints the posterior
// mean, sd and 5%, 50%, 95% quantiles of mu, b1, b2, tau and sigma (tau and
// sigma on their own scale) and of the first school intercepts.
//
//	go run ./examples/schoolreg              # the bundled 15 schools
//	go run ./examples/schoolreg -full        # all 139 schools, from ../shared/data/school/school.csv
//	go run ./examples/schoolreg -full -school PATH
//	go run ./examples/schoolreg -data FILE   # JSON with the keys of schoolreg.vi
//	go run ./examples/schoolreg -json
package main

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/vigen-go/vigen/examples/schoolreg/schoolreg"
	"github.com/vigen-go/vigen/runtime"
)

//go:embed data.json
var bundledData []byte

// SharedCSV is where the ILEA data live, relative to the repository root
// (the shared folder next to the repository).
const SharedCSV = "../shared/data/school/school.csv"

// BundledSchools is the number of schools data.json holds: the students of
// school codes 1 to BundledSchools.
const BundledSchools = 15

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "schoolreg:", err)
		}
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	flags := flag.NewFlagSet("schoolreg", flag.ContinueOnError)
	flags.SetOutput(stderr)
	var (
		dataPath, csvPath, method string
		maxIter, show             int
		full, asJSON, quiet       bool
	)
	flags.StringVar(&dataPath, "data", "", "JSON data file (keys as in schoolreg.vi; default: the bundled 15 schools)")
	flags.BoolVar(&full, "full", false, "fit all schools of the ILEA data (-school)")
	flags.StringVar(&csvPath, "school", SharedCSV, "school.csv of the ILEA data, for -full")
	flags.StringVar(&method, "method", "", "laplace or delta (default: as declared, laplace)")
	flags.IntVar(&maxIter, "maxiter", 0, "maximum coordinate-ascent iterations (0: default)")
	flags.IntVar(&show, "show", 10, "school intercepts to print")
	flags.BoolVar(&asJSON, "json", false, "print the result as JSON")
	flags.BoolVar(&quiet, "q", false, "no progress on stderr")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if flags.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", flags.Args())
	}
	var (
		data   *schoolreg.Data
		source string
		err    error
	)
	switch {
	case full && dataPath != "":
		return fmt.Errorf("-full and -data exclude each other")
	case full:
		data, err = ReadCSV(csvPath, 0)
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("-full: %s not found: the ILEA data live in the shared folder next to the repository (run from the repository root, or give the file with -school)", csvPath)
		}
		if err != nil {
			return err
		}
		source = csvPath
	case dataPath != "":
		f, err := os.Open(dataPath)
		if err != nil {
			return err
		}
		defer f.Close()
		if data, err = schoolreg.LoadData(f); err != nil {
			return fmt.Errorf("%s: %v", dataPath, err)
		}
		source = dataPath
	default:
		if data, err = schoolreg.LoadData(bytes.NewReader(bundledData)); err != nil {
			return fmt.Errorf("bundled data.json: %v", err)
		}
		source = fmt.Sprintf("the ILEA scores of schools 1–%d (bundled)", BundledSchools)
	}
	opts := schoolreg.Options{Method: method, MaxIter: maxIter}
	if !quiet && !asJSON {
		opts.Progress = func(p runtime.Progress) { fmt.Fprintln(stderr, p) }
	}
	res, err := schoolreg.Fit(context.Background(), data, opts)
	if err != nil {
		return err
	}
	if !res.Converged && !quiet {
		fmt.Fprintf(stderr, "schoolreg: warning: the fit did not converge: %s after %d iterations\n", res.Status, res.Iterations)
	}
	if asJSON {
		return json.NewEncoder(stdout).Encode(res)
	}
	j := 0
	for _, s := range data.School {
		j = max(j, s)
	}
	fmt.Fprintf(stdout, "schoolreg: %s fit to %s: %d students in %d schools; %s after %d iterations\n",
		res.Method, source, len(data.Score), j, res.Status, res.Iterations)
	fmt.Fprintf(stdout, "%-8s %8s %8s %8s %8s %8s\n", "", "mean", "sd", "5%", "50%", "95%")
	row := func(name string, s Summary) {
		fmt.Fprintf(stdout, "%-8s %8.3f %8.3f %8.3f %8.3f %8.3f\n", name, s.Mean, s.SD, s.Q05, s.Q50, s.Q95)
	}
	p := Summaries(res)
	row("mu", p.Mu)
	row("b1", p.B1)
	row("b2", p.B2)
	row("tau", p.Tau)
	row("sigma", p.Sigma)
	for k, s := range p.A {
		if k == show {
			fmt.Fprintf(stdout, "… %d more schools (-show N)\n", len(p.A)-show)
			break
		}
		row(fmt.Sprintf("a[%d]", k+1), s)
	}
	return nil
}

// Summary is a posterior summary of one quantity: mean, sd and the 5%, 50%
// and 95% quantiles.
type Summary struct {
	Mean, SD, Q05, Q50, Q95 float64
}

// Posterior holds the summaries of a fit.
type Posterior struct {
	Mu, B1, B2, Tau, Sigma Summary
	A                      []Summary
}

// z95 is the 95% quantile of the standard normal.
const z95 = 1.6448536269514722

func normalSummary(mean, sd float64) Summary {
	return Summary{mean, sd, mean - z95*sd, mean, mean + z95*sd}
}

func scaleSummary(n *runtime.Normal) Summary {
	c := n.Constrained
	return Summary{c.Mean, c.SD, c.Q05, c.Q50, c.Q95}
}

// Summaries summarizes a fit: the Gaussian factors of mu, b1, b2 and the
// intercepts, tau and sigma on their own scale (the log-normal q of the
// Gaussian on their logarithm).
func Summaries(r *schoolreg.Result) Posterior {
	l := r.Latent
	p := Posterior{Mu: normalSummary(l.Mu.Mean, l.Mu.SD), B1: normalSummary(l.B1.Mean, l.B1.SD), B2: normalSummary(l.B2.Mean, l.B2.SD),
		Tau: scaleSummary(l.Tau), Sigma: scaleSummary(l.Sigma)}
	sd := l.A.SD()
	for j, m := range l.A.Mean {
		p.A = append(p.A, normalSummary(m, sd[j]))
	}
	return p
}
