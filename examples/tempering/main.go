// Command tempering runs the experiments of Mandt, McInerney, Abrol,
// Ranganath & Blei (2016), "Variational Tempering", on models written in
// .vi and fitted by the packages vigen generates from them, and prints
// their tables:
//
//	go run ./examples/tempering -exp gmm     # Gaussian mixtures: CA vs AVI vs VT over 20 seeds
//	go run ./examples/tempering -exp fmm     # §4's factorial mixture toy data: VI vs AVI vs VT
//	go run ./examples/tempering -exp all
//
// Run it from the repository root (-data defaults to ../shared/data; the
// real data sets are skipped, with a note, when it is absent).
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "tempering:", err)
		os.Exit(1)
	}
}

// run parses the flags in args and runs the chosen experiments, writing
// their tables to stdout and notes to stderr.
func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("tempering", flag.ContinueOnError)
	fs.SetOutput(stderr)
	exp := fs.String("exp", "all", "experiment: gmm, fmm or all")
	data := fs.String("data", "../shared/data", "directory holding the real data sets (uci/iris.csv)")
	seeds := fs.Int("seeds", 20, "random starts per method")
	workers := fs.Int("workers", 1, "goroutines per fit (results do not depend on it)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *seeds < 1 {
		return fmt.Errorf("-seeds %d: want at least 1", *seeds)
	}
	runs := map[string]func() error{
		"gmm": func() error { return runGMM(stdout, stderr, *data, *seeds, *workers) },
		"fmm": func() error { return runFMM(stdout, stderr, *seeds, *workers) },
	}
	order := []string{"gmm", "fmm"}
	if *exp != "all" {
		if runs[*exp] == nil {
			return fmt.Errorf("-exp %q: want gmm, fmm or all", *exp)
		}
		order = []string{*exp}
	}
	for i, name := range order {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		if err := runs[name](); err != nil {
			return err
		}
	}
	return nil
}
