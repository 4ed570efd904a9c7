package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/vigen-go/vigen/examples/ctm/ctm"
	"github.com/vigen-go/vigen/runtime"
)

// fitConfig is the fit mode's command line: variational EM on training
// documents, then optionally the held-out evaluation of §5.1.
type fitConfig struct {
	train               string
	K                   int
	method              string
	maxIter             int
	tol                 float64
	seed                uint64
	smooth, shrink      float64
	workers             int
	heldoutObs, heldout string
	save                string
	checkpoint, resume  string
	every               int
	asJSON, quiet       bool
	keep                []string // per-token latents the result keeps (Options.Keep)
	algorithm           string   // "" or "ca": variational EM; "svi": online EM
	svi                 runtime.SVISettings
}

// fitOutput is the JSON the fit mode prints with -json: the generated
// package's result plus the timing of each EM iteration and, with held-out
// files, the per-word held-out log likelihood.
type fitOutput struct {
	*ctm.Result
	SecondsPerIteration []float64 `json:"seconds_per_iteration"`
	HeldoutPerWord      *float64  `json:"heldout_per_word,omitempty"`
}

func runFit(c fitConfig, stdout, stderr io.Writer) error {
	if c.K < 2 {
		return fmt.Errorf("-K %d: want at least 2 topics", c.K)
	}
	docs, err := runtime.ReadLDACFile(c.train)
	if err != nil {
		return err
	}
	if len(docs) == 0 {
		return fmt.Errorf("%s: no documents", c.train)
	}
	V := runtime.MaxTerm(docs)
	obs, held, err := readHalves(c.heldoutObs, c.heldout)
	if err != nil {
		return err
	}
	V = max(V, runtime.MaxTerm(obs), runtime.MaxTerm(held))
	data := &ctm.Data{K: c.K, V: V, W: docs, Beta: seedTopics(docs, c.K, V, c.seed)}
	opts := ctm.Options{Method: c.method, MaxIter: c.maxIter, Tol: c.tol, Seed: c.seed, Smoothing: c.smooth, Shrinkage: c.shrink, Workers: c.workers,
		Checkpoint: runtime.Checkpoint{Path: c.checkpoint, Every: c.every}, Algorithm: c.algorithm, SVI: c.svi, Keep: c.keep}
	what := "variational EM"
	if c.algorithm == "svi" {
		what = "online EM (SVI)"
	}
	if c.resume != "" {
		f, err := os.Open(c.resume)
		if err != nil {
			return err
		}
		opts.Resume, err = ctm.LoadResult(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %v", c.resume, err)
		}
	}
	var perIter []float64
	last := 0.0
	opts.Progress = func(p runtime.Progress) {
		perIter = append(perIter, p.Seconds-last)
		last = p.Seconds
		if !c.quiet {
			fmt.Fprintln(stderr, p)
		}
	}
	if !c.quiet {
		fmt.Fprintf(stderr, "ctm: %s on %s: %d documents, V = %d, K = %d\n", what, c.train, len(docs), V, c.K)
	}
	// Ctrl-C stops the fit within an iteration; what it has is then saved
	// and reported as usual, with status "canceled".
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := ctm.Fit(ctx, data, opts)
	stop()
	if err != nil {
		return err
	}
	if !res.Converged && !strings.HasPrefix(res.Status, runtime.PassesStatus) && !c.quiet {
		fmt.Fprintf(stderr, "ctm: the fit stopped before converging: %s after %d iterations\n", res.Status, res.Iterations)
	}
	fitted := &apParams{K: c.K, V: V, Beta: res.Params.Beta, Mu0: res.Params.Mu0, Sigma0: res.Params.Sigma0}
	if c.save != "" {
		if err := saveModel(c.save, fitted, c); err != nil {
			return err
		}
	}
	out := fitOutput{Result: res, SecondsPerIteration: perIter}
	var ho heldoutResult
	if c.heldout != "" {
		start := time.Now()
		if ho, err = evalHeldout(fitted, obs, held, c.method, c.workers); err != nil {
			return err
		}
		out.HeldoutPerWord = &ho.PerWord
		if !c.quiet {
			fmt.Fprintf(stderr, "ctm: held-out inference on %d documents in %.2fs\n", len(obs), time.Since(start).Seconds())
		}
	}
	if c.asJSON {
		return json.NewEncoder(stdout).Encode(out)
	}
	total := 0.0
	for _, s := range perIter {
		total += s
	}
	unit, units := "iteration", "iterations"
	if c.algorithm == "svi" {
		unit, units = "pass", "passes"
	}
	fmt.Fprintf(stdout, "ctm: %s %s on %s, K = %d: %s after %d %s, ELBO %.4f\n",
		res.Method, what, c.train, c.K, res.Status, res.Iterations, units, res.ELBO[len(res.ELBO)-1])
	fmt.Fprintf(stdout, "time %.2f s, %.3f s per %s (%.3f s over the first five)\n", res.Seconds, total/float64(len(perIter)), unit, meanFirst(perIter, 5))
	if c.save != "" {
		fmt.Fprintf(stdout, "fitted model written to %s\n", c.save)
	}
	if c.heldout != "" {
		ho.print(stdout)
	}
	return nil
}

// readHalves reads the observed and held-out halves of the test
// documents (both or neither path given; none read if neither).
func readHalves(obsPath, heldPath string) (obs, held [][][2]int, err error) {
	if (obsPath == "") != (heldPath == "") {
		return nil, nil, errors.New("-heldout-obs and -heldout go together: the observed and the held-out halves of the test documents")
	}
	if obsPath == "" {
		return nil, nil, nil
	}
	if obs, err = runtime.ReadLDACFile(obsPath); err != nil {
		return nil, nil, err
	}
	if held, err = runtime.ReadLDACFile(heldPath); err != nil {
		return nil, nil, err
	}
	if len(obs) != len(held) {
		return nil, nil, fmt.Errorf("%s has %d documents and %s has %d; the halves must be line-aligned", obsPath, len(obs), heldPath, len(held))
	}
	return obs, held, nil
}

func meanFirst(x []float64, n int) float64 {
	n = min(n, len(x))
	s := 0.0
	for _, v := range x[:n] {
		s += v
	}
	return s / float64(n)
}

// seedTopics starts each topic as lda-c's "seeded" initialization does:
// the term counts of one training document drawn at random, plus one for
// every term, normalized.
func seedTopics(docs [][][2]int, K, V int, seed uint64) [][]float64 {
	rng := rand.New(rand.NewPCG(seed, 0x73656564))
	beta := make([][]float64, K)
	for k := range beta {
		row := make([]float64, V)
		for v := range row {
			row[v] = 1
		}
		total := float64(V)
		for _, e := range docs[rng.IntN(len(docs))] {
			row[e[0]-1] += float64(e[1])
			total += float64(e[1])
		}
		for v := range row {
			row[v] /= total
		}
		beta[k] = row
	}
	return beta
}

// heldoutResult is the §5.1 evaluation of a fitted model.
type heldoutResult struct {
	PerWord             float64
	Tokens              int // held-out tokens scored
	Unseen, UnseenTerms int // held-out tokens left out: their terms have β_kw = 0 for every k
}

func (r heldoutResult) print(w io.Writer) {
	fmt.Fprintf(w, "held-out per-word log likelihood %.4f over %d tokens (%d tokens of %d terms unseen in training left out)\n",
		r.PerWord, r.Tokens, r.Unseen, r.UnseenTerms)
}

// evalHeldout scores the params p by document completion (Wang & Blei
// §5.1) through the generated package's Heldout: q(θ_d) is fitted to the
// observed half of each test document with the params held fixed, and the
// held-out half is scored with p(w) = Σ_k π_k β_kw, π = softmax(E[θ_d])
// (Options.HeldoutPlugIn: the Gaussian factors at their means). The terms
// seen in training are those with β_kw above runtime.ProbFloor for some k:
// maximum-likelihood topics give the others probability 0 (floored), so
// they are dropped from the observed halves and left out of the held-out
// score, and their number is reported (the data README discusses them).
// p needs no training corpus: Heldout reads the seen terms from a
// one-document bag holding each of them once.
func evalHeldout(p *apParams, obs, held [][][2]int, method string, workers int) (heldoutResult, error) {
	var seen [][2]int
	for w := 1; w <= p.V; w++ {
		for k := range p.K {
			if p.Beta[k][w-1] > runtime.ProbFloor {
				seen = append(seen, [2]int{w, 1})
				break
			}
		}
	}
	m, err := ctm.NewModel(&ctm.Data{K: p.K, V: p.V, W: [][][2]int{seen}, Beta: p.Beta, Mu0: p.Mu0, Sigma0: p.Sigma0})
	if err != nil {
		return heldoutResult{}, err
	}
	fit := &ctm.Result{Params: ctm.Params{Beta: p.Beta, Mu0: p.Mu0, Sigma0: p.Sigma0}}
	s, err := m.Heldout(context.Background(), fit, obs, held, ctm.Options{Method: method, Workers: workers, HeldoutPlugIn: true})
	if err != nil {
		return heldoutResult{}, err
	}
	return heldoutResult{PerWord: s.PerWord, Tokens: s.Tokens, Unseen: s.Unseen, UnseenTerms: s.UnseenTerms}, nil
}

// modelMarker marks files this command writes, so -save overwrites only
// its own earlier output.
const modelMarker = "examples/ctm fit"

// savedModel is the file -save writes: the full-β form readParams accepts.
type savedModel struct {
	WrittenBy string      `json:"written_by"`
	Source    string      `json:"source"`
	K         int         `json:"K"`
	V         int         `json:"V"`
	Beta      [][]float64 `json:"beta"`
	Mu0       []float64   `json:"mu0"`
	Sigma0    [][]float64 `json:"Sigma0"`
}

// saveModel writes p gzip-compressed to path through a temporary file,
// refusing to replace a file this command did not write.
func saveModel(path string, p *apParams, c fitConfig) error {
	if _, err := os.Stat(path); err == nil {
		prev, err := readParamsFile(path)
		if err != nil || !prev.written {
			return fmt.Errorf("-save %s: the file exists and was not written by this command; choose another name", path)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	m := savedModel{WrittenBy: modelMarker, Source: fmt.Sprintf("variational EM (%s) on %s, K = %d, seed %d", c.method, c.train, c.K, c.seed),
		K: p.K, V: p.V, Beta: p.Beta, Mu0: p.Mu0, Sigma0: p.Sigma0}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if err := json.NewEncoder(zw).Encode(m); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return runtime.WriteFileAtomic(path, buf.Bytes())
}
