// Command ncvmp runs the experiments of Knowles & Minka (2011),
// "Non-conjugate Variational Message Passing for Multinomial and Binary
// Regression", with vigen's runtime, and prints their tables:
//
//	go run ./examples/ncvmp -exp toy     # §6.1: the logistic factor σ(x)N(x; m0, v0)
//	go run ./examples/ncvmp -exp synth   # §6.2: ten synthetic logistic regressions
//	go run ./examples/ncvmp -exp uci     # §6.4: softmax regression on Iris, Glass, Thyroid
//	go run ./examples/ncvmp -exp all
//
// Run it from the repository root (-data defaults to ../shared/data).
// -seed seeds the synthetic data sets of §6.2 (data set s uses seed+s);
// -splits is the number of random 50:50 train/test splits of §6.4.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "ncvmp:", err)
		os.Exit(1)
	}
}

// run parses the flags in args and runs the chosen experiments, writing
// their tables to stdout.
func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("ncvmp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	exp := fs.String("exp", "all", "experiment: toy (§6.1), synth (§6.2), uci (§6.4) or all")
	data := fs.String("data", "../shared/data", "directory holding the UCI data sets (uci)")
	sets := fs.String("sets", "iris,glass,thyroid", "comma-separated UCI data sets (uci)")
	splits := fs.Int("splits", 16, "random 50:50 train/test splits per UCI data set (uci)")
	seed := fs.Uint64("seed", 100, "seed of the first synthetic data set (synth)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	runs := map[string]func() error{
		"toy":   func() error { return runToy(stdout) },
		"synth": func() error { return runSynth(stdout, *seed) },
		"uci":   func() error { return runUCI(stdout, *data, strings.Split(*sets, ","), *splits) },
	}
	order := []string{"toy", "synth", "uci"}
	if *exp != "all" {
		if runs[*exp] == nil {
			return fmt.Errorf("-exp %q: want toy, synth, uci or all", *exp)
		}
		order = []string{*exp}
	}
	for i, name := range order {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		if err := runs[name](); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}
