package main

// The LDA experiment of Hoffman (2014), "Stochastic Structured Mean-Field
// Variational Inference", §4 and Fig. 3: the global step (mean-field SVI,
// SSMF, SSMF-A) crossed with the local step (mean field, Gibbs), over a
// grid of the topic smoothing η, scored by held-out per-word log
// likelihood. See SSMF.md.
//
//	go run ./examples/lda ssmf -data ap -K 50 -etas 0.01,0.03,0.1,0.3,1 -passes 10

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/vigen-go/vigen/examples/lda/lda"
	"github.com/vigen-go/vigen/runtime"
)

// ssmfRow is one fit of the experiment, as written to -out.
type ssmfRow struct {
	Data    string    `json:"data"`
	Global  string    `json:"global"`
	Local   string    `json:"local"`
	Eta     float64   `json:"eta"`
	Seed    uint64    `json:"seed"`
	Heldout float64   `json:"heldout"`
	ELBO    []float64 `json:"elbo"`
	CPU     float64   `json:"cpu_seconds"`
	Status  string    `json:"status"`
}

func ssmfExperiment(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("lda ssmf", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataName := fs.String("data", "ap", "ap or citeulike (read from -dir)")
	dir := fs.String("dir", "../shared/data", "folder holding ap/ and citeulike-t/")
	k := fs.Int("K", 50, "topics")
	alpha := fs.Float64("alpha", 0.1, "topic-proportion concentration α")
	etas := fs.String("etas", "0.01,0.03,0.1,0.3,1", "topic smoothing η values, comma separated")
	globals := fs.String("global", "meanfield,ssmf,ssmf-a", "global steps, comma separated")
	locals := fs.String("local", "meanfield,gibbs", "local steps, comma separated")
	passes := fs.Int("passes", 10, "passes over the training documents")
	batch := fs.Int("batch", 100, "documents per minibatch")
	tau0 := fs.Float64("tau0", 1, "τ0 of ρ_t = (τ0 + t)^-κ (1 with κ = 0.75 is the paper's t^-0.75)")
	kappa := fs.Float64("kappa", 0.75, "κ of the step sizes")
	burnIn := fs.Int("burnin", 10, "Gibbs: sweeps discarded per document visit")
	samples := fs.Int("samples", 10, "Gibbs: sweeps averaged per document visit")
	seed := fs.Uint64("seed", 1, "seed (random start, minibatch order, draws)")
	out := fs.String("out", "", "append one JSON line per fit here")
	workers := fs.Int("workers", 2, "goroutines of the fits")
	if err := fs.Parse(args); err != nil {
		return err
	}
	train, obs, held, err := loadCorpus(*dataName, *dir)
	if err != nil {
		return err
	}
	var etaList []float64
	for _, f := range strings.Split(*etas, ",") {
		e, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(e > 0) {
			return fmt.Errorf("-etas %q: want positive numbers", *etas)
		}
		etaList = append(etaList, e)
	}
	var outFile *os.File
	if *out != "" {
		if outFile, err = os.OpenFile(*out, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err != nil {
			return err
		}
		defer outFile.Close()
	}
	tokens := 0
	for _, n := range docLengths(train) {
		tokens += n
	}
	fmt.Fprintf(stdout, "# %s: %d training documents (%d tokens, V = %d), %d test documents; K = %d, α = %g, B = %d, ρ_t = (%g + t)^-%g, %d passes, Gibbs %d+%d sweeps, seed %d\n",
		*dataName, len(train), tokens, runtime.MaxTerm(train), len(obs), *k, *alpha, *batch, *tau0, *kappa, *passes, *burnIn, *samples, *seed)
	fmt.Fprintf(stdout, "%-10s %-9s %-9s %6s %10s %14s %8s  %s\n", "data", "global", "local", "eta", "heldout", "ELBO", "CPU s", "status")
	for _, eta := range etaList {
		data := &lda.Data{K: *k, V: runtime.MaxTerm(train), W: train, Alpha: alpha, Eta: &eta}
		model, err := lda.NewModel(data)
		if err != nil {
			return err
		}
		for _, loc := range strings.Split(*locals, ",") {
			for _, glob := range strings.Split(*globals, ",") {
				opts := lda.Options{Seed: *seed, Workers: *workers, Algorithm: "svi",
					SVI: runtime.SVISettings{BatchSize: *batch, Tau0: *tau0, Kappa: *kappa, Passes: *passes,
						Global: glob, Local: loc, BurnIn: *burnIn, Samples: *samples}}
				t0 := cpuSeconds()
				res, err := model.Fit(context.Background(), opts)
				if err != nil {
					return fmt.Errorf("η = %g, %s × %s: %v", eta, glob, loc, err)
				}
				cpu := cpuSeconds() - t0
				if len(res.ELBO) == 0 {
					return fmt.Errorf("η = %g, %s × %s: no pass completed: %s", eta, glob, loc, res.Status)
				}
				s, err := model.Heldout(context.Background(), res, obs, held, lda.Options{Workers: *workers})
				if err != nil {
					return err
				}
				row := ssmfRow{Data: *dataName, Global: glob, Local: loc, Eta: eta, Seed: *seed, Heldout: s.PerWord,
					ELBO: res.ELBO, CPU: cpu, Status: res.Status}
				fmt.Fprintf(stdout, "%-10s %-9s %-9s %6g %10.4f %14.1f %8.1f  %s\n", row.Data, glob, loc, eta, row.Heldout, res.ELBO[len(res.ELBO)-1], cpu, res.Status)
				if outFile != nil {
					b, _ := json.Marshal(row)
					if _, err := outFile.Write(append(b, '\n')); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}
