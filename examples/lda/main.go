// Command lda fits latent Dirichlet allocation (lda.vi) by batch coordinate
// ascent with the package vigen generated from it.
//
//	go run ./examples/lda                                  # bundled synthetic corpus with known topics
//	go run ./examples/lda -ldac ap.dat -vocab vocab.txt -K 10
//	go run ./examples/lda -json > result.json              # the fitted posterior as JSON
//	go run ./examples/lda -train ap-train.dat -K 10 -heldout-obs ap-test-obs.dat -heldout ap-test-heldout.dat
//	go run ./examples/lda score-ldac -model DIR/final -train ap-train.dat -heldout-obs … -heldout …   # an lda-c fit, scored the same way
//
// It prints the most probable terms of every fitted topic (under E[β_k]);
// on the synthetic corpus it also matches the fitted topics to the true ones
// and prints their total-variation distances. With -heldout-obs and
// -heldout (the observed and held-out halves of test documents, as
// examples/ctm takes them) it also prints the held-out per-word log
// likelihood by document completion (see Heldout), terms unseen in training
// left out.
//
// Coordinate ascent for LDA finds local optima. From the generated package's
// own random start (-init random) it typically merges two of the synthetic
// topics and splits another; the default start (-init docs, see
// DocumentStart) seeds each topic with a distinct document and recovers them.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/vigen-go/vigen/examples/lda/lda"
	"github.com/vigen-go/vigen/runtime"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "lda:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "tempering" {
		return tempering(args[1:], stdout, stderr) // tempering.go: SVI vs AVI vs VT (Mandt et al. 2016, Fig. 2)
	}
	if len(args) > 0 && args[0] == "score-ldac" {
		return scoreLDAC(args[1:], stdout, stderr) // ldac.go: held-out score of an lda-c fit, by the same document completion
	}
	if len(args) > 0 && args[0] == "ssmf" {
		return ssmfExperiment(args[1:], stdout, stderr) // ssmf.go: SVI vs SSMF vs SSMF-A × mean field vs Gibbs (Hoffman 2014, Fig. 3)
	}
	fs := flag.NewFlagSet("lda", flag.ContinueOnError)
	fs.SetOutput(stderr)
	ldac := fs.String("ldac", "", "corpus in LDA-C format (default: the synthetic corpus)")
	train := fs.String("train", "", "the same as -ldac: the training corpus (LDA-C)")
	heldoutObs := fs.String("heldout-obs", "", "observed halves of test documents (LDA-C), for the held-out evaluation")
	heldout := fs.String("heldout", "", "held-out halves of the same test documents (LDA-C)")
	workers := fs.Int("workers", 0, "goroutines for the per-document updates (default GOMAXPROCS)")
	vocabFile := fs.String("vocab", "", "vocabulary of -ldac, one term per line (line i is term id i)")
	k := fs.Int("K", 5, "number of topics")
	alpha := fs.Float64("alpha", 0.1, "topic-proportion concentration α")
	eta := fs.Float64("eta", 0.01, "topic concentration η")
	maxIter := fs.Int("maxiter", 100, "maximum coordinate-ascent iterations")
	tol := fs.Float64("tol", 1e-6, "stop when the relative change of the ELBO is below tol")
	meanTol := fs.Float64("meantol", math.Inf(1), "also require the relative L2 change of λ (the topics' Dirichlet parameters) below this (inf: off, the ELBO alone decides, as in lda-c)")
	seed := fs.Uint64("seed", 1, "seed of the synthetic corpus and of -init random")
	algorithm := fs.String("algorithm", "ca", "ca (batch coordinate ascent, variational EM) or svi (stochastic variational inference)")
	batch := fs.Int("batch", 0, "SVI: documents per minibatch (0: runtime.DefaultBatchSize)")
	tau0 := fs.Float64("tau0", 0, "SVI: τ0 of the step sizes ρ_t = (τ0 + t)^-κ (0: the default)")
	kappa := fs.Float64("kappa", 0, "SVI: κ of the step sizes, in (0.5, 1] (0: the default)")
	passes := fs.Int("passes", 0, "SVI: passes over the documents (0: the default)")
	localTol := fs.Float64("localtol", 0, "relative change that settles a document's θ and z (0: the package default)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the fit here")
	allowEmpty := fs.Bool("allow-empty", false, "fit empty documents (their posteriors stay at the prior) instead of refusing them")
	evalAt := fs.String("eval-at", "", "with -heldout: also score after these numbers of iterations (ca) or passes (svi), e.g. 1,3,10, printing CPU seconds and documents per CPU second")
	start := fs.String("init", "docs", "starting topics: docs (seeded with distinct documents) or random (the generated package's start)")
	asJSON := fs.Bool("json", false, "print the result as JSON on stdout")
	quiet := fs.Bool("q", false, "no progress on stderr")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if *train != "" {
		if *ldac != "" {
			return errors.New("-train and -ldac are the same flag; give one")
		}
		*ldac = *train
	}
	if (*heldoutObs == "") != (*heldout == "") {
		return errors.New("-heldout-obs and -heldout go together: the observed and the held-out halves of the test documents")
	}
	if *heldout != "" && *ldac == "" {
		return errors.New("-heldout needs the training corpus (-train)")
	}
	var obs, held [][][2]int
	if *heldout != "" {
		var err error
		if obs, err = runtime.ReadLDACFile(*heldoutObs); err != nil {
			return err
		}
		if held, err = runtime.ReadLDACFile(*heldout); err != nil {
			return err
		}
		if len(obs) != len(held) {
			return fmt.Errorf("%s has %d documents and %s has %d; the halves must be line-aligned", *heldoutObs, len(obs), *heldout, len(held))
		}
		if len(obs) == 0 {
			return fmt.Errorf("%s: no documents", *heldoutObs)
		}
	}

	var (
		data  *lda.Data
		vocab []string
		truth [][]float64 // true topics of the synthetic corpus
	)
	if *ldac != "" {
		docs, err := runtime.ReadLDACFile(*ldac)
		if err != nil {
			return err
		}
		// V comes from the training documents (or the vocabulary): test
		// terms beyond it are unseen in training and left out of the
		// score, and must not add columns to the fitted topics.
		v := runtime.MaxTerm(docs)
		if *vocabFile != "" {
			if vocab, err = readVocab(*vocabFile); err != nil {
				return err
			}
			if v > len(vocab) {
				return fmt.Errorf("term id %d is beyond the %d terms of %s", v-1, len(vocab), *vocabFile)
			}
			v = len(vocab)
		}
		data = &lda.Data{K: *k, V: v, W: docs}
	} else {
		if *vocabFile != "" {
			return fmt.Errorf("-vocab needs -ldac")
		}
		data, truth = Synthetic(*seed, SyntheticDocs)
		data.K = *k
	}
	// Pass α and η only when given, so that lda.vi's defaults apply otherwise.
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "alpha":
			data.Alpha = alpha
		case "eta":
			data.Eta = eta
		}
	})

	opts := lda.Options{MaxIter: *maxIter, Tol: *tol, MeanTol: *meanTol, Seed: *seed, Workers: *workers,
		Algorithm: *algorithm, SVI: runtime.SVISettings{BatchSize: *batch, Tau0: *tau0, Kappa: *kappa, Passes: *passes}}
	model, err := lda.NewModel(data) // checks the data
	if err != nil {
		return err
	}
	switch *start {
	case "docs":
		if opts.Start, err = DocumentStart(data); err != nil {
			return err
		}
	case "random":
	default:
		return fmt.Errorf("-init %q: want docs or random", *start)
	}
	if !*quiet {
		opts.Progress = func(p runtime.Progress) { fmt.Fprintln(stderr, p) }
	}
	opts.LocalTol, opts.AllowEmpty = *localTol, *allowEmpty
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	if *evalAt != "" {
		if held == nil {
			return errors.New("-eval-at needs -heldout-obs and -heldout")
		}
		return evalTable(stdout, model, data, opts, *evalAt, obs, held, *workers)
	}
	res, err := model.Fit(context.Background(), opts)
	if err != nil {
		return err
	}
	var score *runtime.HeldoutScore
	if held != nil {
		s, err := model.Heldout(context.Background(), res, obs, held, lda.Options{Workers: *workers})
		if err != nil {
			return fmt.Errorf("held-out evaluation: %v", err)
		}
		if s.Unsettled > 0 && !*quiet {
			fmt.Fprintf(stderr, "lda: warning: the inference of θ did not settle for %d of %d test documents\n", s.Unsettled, len(obs))
		}
		score = &s
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(output{Result: res, Heldout: score})
	}

	steps := "iterations"
	if *algorithm == "svi" {
		steps = "passes"
	}
	fmt.Fprintf(stdout, "lda: %d documents, %d terms, %d topics: %s after %d %s (%.2f s), ELBO %.4f\n",
		len(data.W), data.V, data.K, res.Status, res.Iterations, steps, res.Seconds, res.ELBO[len(res.ELBO)-1])
	if score != nil {
		fmt.Fprintln(stdout, score)
	}
	topics := TopicMeans(res)
	var match []int
	if truth != nil {
		match = MatchTopics(topics, truth)
	}
	for k, topic := range topics {
		fmt.Fprintf(stdout, "topic %2d:", k+1)
		for _, v := range TopTerms(topic, 8) {
			if vocab != nil {
				fmt.Fprintf(stdout, " %s", vocab[v])
			} else {
				fmt.Fprintf(stdout, " %d", v+1)
			}
		}
		if match != nil && match[k] >= 0 {
			j := match[k]
			fmt.Fprintf(stdout, "   ~ true topic %d (terms %d–%d), TV %.3f", j+1, j*blockSize+1, (j+1)*blockSize, TV(topic, truth[j]))
		}
		fmt.Fprintln(stdout)
	}
	return nil
}

// output is the JSON that -json prints: the result and, with held-out
// halves, their score.
type output struct {
	*lda.Result
	Heldout *runtime.HeldoutScore `json:"heldout,omitempty"`
}

// The synthetic corpus: topic k puts 90% of its mass on its own block of
// blockSize terms (terms k·blockSize+1 … (k+1)·blockSize, geometrically
// decreasing within the block) and 10% uniformly on all terms.
const (
	SyntheticK    = 5
	SyntheticV    = 50
	SyntheticDocs = 300
	blockSize     = SyntheticV / SyntheticK
	trueAlpha     = 0.1 // concentration of the true topic proportions (lda.vi's α)
)

// Synthetic draws a corpus of d documents of 40 to 120 tokens from LDA with
// the known topics above, proportions θ_d ~ Dirichlet(trueAlpha), and a fixed
// seed. It returns the data (K, α, η left for the caller) and the topics.
func Synthetic(seed uint64, d int) (*lda.Data, [][]float64) {
	rng := rand.New(rand.NewPCG(seed, 0x6c6461))
	topics := make([][]float64, SyntheticK)
	for k := range topics {
		t := make([]float64, SyntheticV)
		block, w := 0.0, 1.0
		for j := 0; j < blockSize; j++ {
			t[k*blockSize+j] = w
			block += w
			w *= 0.8
		}
		for v := range t {
			t[v] = 0.9*t[v]/block + 0.1/SyntheticV
		}
		topics[k] = t
	}
	gamma := distuv.Gamma{Alpha: trueAlpha, Beta: 1, Src: rng}
	docs := make([][][2]int, d)
	theta := make([]float64, SyntheticK)
	for i := range docs {
		sum := 0.0
		for k := range theta {
			theta[k] = gamma.Rand()
			sum += theta[k]
		}
		counts := make([]int, SyntheticV)
		for n := 40 + rng.IntN(81); n > 0; n-- {
			z := draw(rng, theta, sum)
			counts[draw(rng, topics[z], 1)]++
		}
		for v, c := range counts {
			if c > 0 {
				docs[i] = append(docs[i], [2]int{v + 1, c})
			}
		}
	}
	return &lda.Data{V: SyntheticV, W: docs}, topics
}

// DocumentStart returns a starting point for Fit in which every topic is
// seeded with one document, as lda-c's "seeded" start does (λ_k = 1 + the
// counts of document k), but with the documents chosen by farthest-first
// traversal rather than at random: first the document whose term
// distribution is farthest, in total variation, from the whole corpus's, then
// repeatedly the one farthest from all documents chosen so far. Only
// documents at least as long as the median take part, so that short
// documents, far from everything by chance, are not chosen. θ and z start
// uniform (the first update of θ_d overwrites its start).
//
// It is deterministic. data must be valid (lda.NewModel checks it).
func DocumentStart(data *lda.Data) (*lda.Result, error) {
	k, v, docs := data.K, data.V, data.W
	// Candidate documents: those with at least the median number of tokens.
	length := make([]int, len(docs))
	entries := 0
	for d, doc := range docs {
		for _, p := range doc {
			length[d] += p[1]
		}
		entries += len(doc)
	}
	median := slices.Clone(length)
	slices.Sort(median)
	var cand []int
	for d, n := range length {
		if n > 0 && n >= median[len(median)/2] {
			cand = append(cand, d)
		}
	}
	if k < 1 || len(cand) < k {
		return nil, fmt.Errorf("cannot seed %d topics with %d documents of at least median length", k, len(cand))
	}
	// tv returns the total variation between document d's term distribution
	// and the distribution q: ½ Σ_v |p_v − q_v| over the document's terms plus
	// ½ Σ q_v over the others.
	tv := func(d int, q []float64) float64 {
		s := 1.0
		for _, p := range docs[d] {
			pv, qv := float64(p[1])/float64(length[d]), q[p[0]-1]
			s += math.Abs(pv-qv) - qv
		}
		return s / 2
	}
	dist := func(d int) []float64 {
		q := make([]float64, v)
		for _, p := range docs[d] {
			q[p[0]-1] += float64(p[1]) / float64(length[d])
		}
		return q
	}
	corpus := make([]float64, v)
	total := 0.0
	for d, doc := range docs {
		for _, p := range doc {
			corpus[p[0]-1] += float64(p[1])
		}
		total += float64(length[d])
	}
	for i := range corpus {
		corpus[i] /= total
	}
	// far[i] is the distance of candidate cand[i] to the nearest chosen
	// document (to the corpus before the first is chosen); −1 once chosen.
	far := make([]float64, len(cand))
	for i, d := range cand {
		far[i] = tv(d, corpus)
	}
	lambda := make([]float64, k*v)
	for t := range k {
		best := 0
		for i := range far {
			if far[i] > far[best] {
				best = i
			}
		}
		far[best] = -1
		doc := cand[best]
		row := lambda[t*v : (t+1)*v]
		runtime.Fill(row, 1)
		for _, p := range docs[doc] {
			row[p[0]-1] += float64(p[1])
		}
		q := dist(doc)
		for i, d := range cand {
			if far[i] >= 0 {
				far[i] = min(far[i], tv(d, q))
			}
		}
	}
	theta := make([]float64, len(docs)*k)
	runtime.Fill(theta, 1)
	z := make([]float64, entries*k)
	runtime.Fill(z, 1/float64(k))
	return &lda.Result{Latent: lda.Latent{
		Beta:  runtime.NewFactor("Dirichlet", []int{k, v}, "param", lambda),
		Theta: runtime.NewFactor("Dirichlet", []int{len(docs), k}, "param", theta),
		Z:     runtime.NewFactor("Categorical", []int{entries, k}, "prob", z),
	}}, nil
}

// draw returns i with probability p[i]/sum.
func draw(rng *rand.Rand, p []float64, sum float64) int {
	u := rng.Float64() * sum
	for i, x := range p {
		if u < x {
			return i
		}
		u -= x
	}
	return len(p) - 1
}

// TopicMeans returns E_q[β_k] = λ_k / Σ_v λ_kv for every topic.
func TopicMeans(res *lda.Result) [][]float64 {
	lambda, v := res.Latent.Beta.Params["param"], res.Latent.Beta.Shape[1]
	out := make([][]float64, res.Latent.Beta.Shape[0])
	for k := range out {
		row := slices.Clone(lambda[k*v : (k+1)*v])
		sum := 0.0
		for _, x := range row {
			sum += x
		}
		for i := range row {
			row[i] /= sum
		}
		out[k] = row
	}
	return out
}

// TopTerms returns the indexes (0-based) of the n largest entries of p.
func TopTerms(p []float64, n int) []int {
	idx := make([]int, len(p))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case p[a] > p[b]:
			return -1
		case p[a] < p[b]:
			return 1
		}
		return 0
	})
	return idx[:min(n, len(idx))]
}

// TV is the total-variation distance ½ Σ |p_i − q_i|.
func TV(p, q []float64) float64 {
	s := 0.0
	for i := range p {
		if d := p[i] - q[i]; d > 0 {
			s += d
		} else {
			s -= d
		}
	}
	return s / 2
}

// MatchTopics matches fitted topics to true ones greedily, closest pair (in
// total variation) first; match[k] is the true topic of fitted topic k, or
// −1 when there are more fitted topics than true ones.
func MatchTopics(fitted, truth [][]float64) []int {
	match := make([]int, len(fitted))
	for k := range match {
		match[k] = -1
	}
	used := make([]bool, len(truth))
	for range min(len(fitted), len(truth)) {
		bk, bj, best := -1, -1, 2.0
		for k, f := range fitted {
			if match[k] >= 0 {
				continue
			}
			for j, t := range truth {
				if d := TV(f, t); !used[j] && d < best {
					bk, bj, best = k, j, d
				}
			}
		}
		match[bk], used[bj] = bj, true
	}
	return match
}

// readVocab reads one term per line.
func readVocab(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var vocab []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		vocab = append(vocab, strings.TrimSpace(sc.Text()))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return vocab, nil
}

// evalTable fits and scores the held-out halves after each number of
// iterations (coordinate ascent: one run continued from its own result,
// which is where it would have been) or passes (SVI: a run of that many
// passes from the start, since its step sizes and minibatches depend on
// the pass), printing a line per count with the fit's CPU seconds.
func evalTable(w io.Writer, model *lda.Model, data *lda.Data, opts lda.Options, at string, obs, held [][][2]int, workers int) error {
	var counts []int
	for _, f := range strings.Split(at, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || len(counts) > 0 && n <= counts[len(counts)-1] {
			return fmt.Errorf("-eval-at %q: want increasing positive counts, as 1,3,10", at)
		}
		counts = append(counts, n)
	}
	svi := opts.Algorithm == "svi"
	opts.Tol, opts.MeanTol = math.SmallestNonzeroFloat64, math.SmallestNonzeroFloat64 // run the counts through
	var prev *lda.Result
	cpu, done := 0.0, 0
	for _, n := range counts {
		o := opts
		if svi {
			o.SVI.Passes = n
			cpu = 0
		} else {
			o.MaxIter = n - done
			if prev != nil {
				o.Start = prev
			}
		}
		t0 := cpuSeconds()
		res, err := model.Fit(context.Background(), o)
		if err != nil {
			return err
		}
		cpu += cpuSeconds() - t0
		if res.Iterations != o.MaxIter && !svi || svi && res.Iterations != n {
			return fmt.Errorf("the fit stopped early: %s", res.Status)
		}
		done, prev = n, res
		s, err := model.Heldout(context.Background(), res, obs, held, lda.Options{Workers: workers})
		if err != nil {
			return err
		}
		unit := "iterations"
		if svi {
			unit = "passes"
		}
		fmt.Fprintf(w, "%s after %3d %s: held-out %.4f  ELBO %.6g  CPU %.2f s  %.0f documents per CPU second\n",
			opts.Algorithm, n, unit, s.PerWord, res.ELBO[len(res.ELBO)-1], cpu, float64(len(data.W)*n)/cpu)
	}
	return nil
}
