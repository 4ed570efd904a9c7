// Command ctm fits the correlated topic model (Wang & Blei 2013, §4.1,
// §5.1 and Appendix B; ctm.vi) with the package vigen generated from it.
//
// Fit mode (-train) estimates the topics β and the logistic-normal prior
// μ0, Σ0 by variational EM, prints progress per EM iteration on stderr,
// optionally scores held-out documents as in §5.1 and saves the fitted
// model for later inference:
//
//	go run ./examples/ctm -train ap-train.dat -K 10 [-method laplace|delta] [-maxiter N] [-seed N] \
//	    [-heldout-obs ap-test-obs.dat -heldout ap-test-heldout.dat] [-save model.json.gz] [-json]
//	go run ./examples/ctm -train ap-train.dat -K 10 -algorithm svi [-batch 256 -passes 10 -tau0 1024 -kappa 0.7] ...
//	go run ./examples/ctm -params model.json.gz -heldout-obs ap-test-obs.dat -heldout ap-test-heldout.dat
//
// Inference mode (the default) runs per-document inference given β, μ0, Σ0:
// it fits q(θ_d) for the topic weights of every document (Laplace or delta
// method) and q(z) for its topic assignments (closed form).
//
//	go run ./examples/ctm                          # synthetic documents drawn from the bundled AP parameters
//	go run ./examples/ctm -D 1000 -seed 2 -method delta
//	go run ./examples/ctm -ldac ap-test.dat        # documents in LDA-C format, term ids of the AP vocabulary
//	go run ./examples/ctm -params my.json.gz -ldac docs.dat
//	go run ./examples/ctm -json > result.json      # the fitted posterior as JSON
//
// The parameters default to testdata/ap-k10.json.gz (K = 10 topics over the
// 10,473-term AP vocabulary, fitted by testdata/mkparams.go; embedded in the
// command); -params reads another file of the same schema (see
// testdata/README.md). The synthetic documents are drawn from the model:
// θ_d ~ N(μ0, Σ0), π_d = softmax(θ_d), 50 to 150 tokens, each with a topic
// z ~ π_d and a term w ~ β_z.
//
// The command prints the time per document, the per-word log likelihood
// Σ_n c_n log Σ_k π_dk β_k,w_n / Σ_n c_n with π_d ∝ exp E[θ_d], and, on
// synthetic documents, how well E[θ_d] recovers the true θ_d.
//
// The package's tests check the generated kernels and the whole
// per-document fit against Appendix B written by hand, and benchmark them.
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
	"runtime/pprof"
	"sort"

	"gonum.org/v1/gonum/mat"

	"github.com/vigen-go/vigen/examples/ctm/ctm"
	"github.com/vigen-go/vigen/runtime"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "ctm:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("ctm", flag.ContinueOnError)
	fs.SetOutput(stderr)
	ldac := fs.String("ldac", "", "documents in LDA-C format (default: synthetic documents drawn from the parameters)")
	paramsFile := fs.String("params", "", "CTM parameters, gzip-compressed JSON as testdata/README.md describes (default: the bundled "+bundledParamsName+")")
	numDocs := fs.Int("D", 100, "number of synthetic documents")
	seed := fs.Uint64("seed", 1, "seed of the synthetic documents")
	method := fs.String("method", "", "laplace or delta (default: as declared in ctm.vi, laplace)")
	asJSON := fs.Bool("json", false, "print the result as JSON on stdout")
	keep := fs.Bool("keep-z", false, "fit mode, -json: keep every word's q(z) in the result (left out by default)")
	quiet := fs.Bool("q", false, "no progress on stderr")
	var fc fitConfig
	fs.StringVar(&fc.train, "train", "", "fit mode: fit β, μ0, Σ0 by variational EM to these documents (LDA-C format)")
	fs.IntVar(&fc.K, "K", 10, "fit mode: number of topics")
	fs.IntVar(&fc.maxIter, "maxiter", 100, "fit mode: at most this many EM iterations")
	fs.Float64Var(&fc.tol, "tol", 1e-4, "fit mode: stop when the relative change of the ELBO is below this")
	fs.Float64Var(&fc.smooth, "smooth", 0, "fit mode: pseudo-count added to the expected counts of β in the M-step")
	fs.Float64Var(&fc.shrink, "shrink", 0, "fit mode: shrinkage of Σ0 toward a scaled identity, in [0, 1]")
	fs.IntVar(&fc.workers, "workers", 0, "goroutines for the per-document updates (default GOMAXPROCS)")
	fs.StringVar(&fc.heldoutObs, "heldout-obs", "", "observed halves of test documents (LDA-C), for the held-out evaluation of §5.1")
	fs.StringVar(&fc.heldout, "heldout", "", "held-out halves of the same test documents (LDA-C)")
	fs.StringVar(&fc.checkpoint, "checkpoint", "", "fit mode: save the EM state to this file every -every iterations")
	fs.IntVar(&fc.every, "every", 5, "fit mode: iterations between checkpoints")
	fs.StringVar(&fc.resume, "resume", "", "fit mode: continue the EM run saved in this checkpoint (same data and flags)")
	fs.StringVar(&fc.save, "save", "", "fit mode: write the fitted β, μ0, Σ0 here (gzip JSON; -params reads it)")
	fs.StringVar(&fc.algorithm, "algorithm", "", "fit mode: ca (variational EM, the default) or svi (online EM: the M-steps on running averages of minibatches' statistics)")
	fs.IntVar(&fc.svi.BatchSize, "batch", 0, "fit mode, -algorithm svi: documents per minibatch (default 256)")
	fs.IntVar(&fc.svi.Passes, "passes", 0, "fit mode, -algorithm svi: passes over the documents (default 10)")
	fs.Float64Var(&fc.svi.Tau0, "tau0", 0, "fit mode, -algorithm svi: step sizes (τ0 + t)^-κ, τ0 (default 1024)")
	fs.Float64Var(&fc.svi.Kappa, "kappa", 0, "fit mode, -algorithm svi: step sizes (τ0 + t)^-κ, κ in (0.5, 1] (default 0.7)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile here")
	if err := fs.Parse(args); err != nil {
		return err
	}
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
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if *method != "" && *method != "laplace" && *method != "delta" {
		return fmt.Errorf("-method %q: want laplace or delta", *method)
	}
	if fc.train != "" {
		var bad error
		fs.Visit(func(f *flag.Flag) {
			if f.Name == "ldac" || f.Name == "params" || f.Name == "D" {
				bad = fmt.Errorf("-%s is for inference with given parameters, not -train", f.Name)
			}
		})
		if bad != nil {
			return bad
		}
		fc.method, fc.seed, fc.asJSON, fc.quiet = *method, *seed, *asJSON, *quiet
		if *keep {
			fc.keep = []string{"z"}
		}
		return runFit(fc, stdout, stderr)
	}
	if fc.heldout != "" || fc.heldoutObs != "" {
		// held-out evaluation of given parameters
		p, err := loadParams(*paramsFile)
		if err != nil {
			return err
		}
		obs, held, err := readHalves(fc.heldoutObs, fc.heldout)
		if err != nil {
			return err
		}
		if v := max(runtime.MaxTerm(obs), runtime.MaxTerm(held)); v > p.V {
			return fmt.Errorf("the test documents have term ids up to %d, beyond the V = %d terms of the parameters", v-1, p.V)
		}
		ho, err := evalHeldout(p, obs, held, *method, fc.workers)
		if err != nil {
			return err
		}
		ho.print(stdout)
		return nil
	}
	if *ldac != "" {
		var bad error
		fs.Visit(func(f *flag.Flag) {
			if f.Name == "D" || f.Name == "seed" {
				bad = fmt.Errorf("-%s is for synthetic documents, not -ldac", f.Name)
			}
		})
		if bad != nil {
			return bad
		}
	} else if *numDocs < 1 {
		return fmt.Errorf("-D %d: want at least 1 document", *numDocs)
	}

	var (
		p       *apParams
		pSource = bundledParamsName
		err     error
	)
	p, err = loadParams(*paramsFile)
	if *paramsFile != "" {
		pSource = *paramsFile
	}
	if err != nil {
		return err
	}

	var (
		docs   [][][2]int
		truth  [][]float64 // true θ_d of the synthetic documents
		source string
	)
	if *ldac != "" {
		if docs, err = runtime.ReadLDACFile(*ldac); err != nil {
			return err
		}
		if len(docs) == 0 {
			return fmt.Errorf("%s: no documents", *ldac)
		}
		// ctm.NewModel rejects such terms too, but names them 1-based.
		for d, doc := range docs {
			for _, e := range doc {
				if e[0] > p.V {
					return fmt.Errorf("%s: document %d: term id %d is beyond the V = %d terms of %s (LDA-C ids are 0..%d)",
						*ldac, d+1, e[0]-1, p.V, pSource, p.V-1)
				}
			}
		}
		source = *ldac
	} else {
		if docs, truth, err = Synthetic(p, *seed, *numDocs); err != nil {
			return fmt.Errorf("%s: %v", pSource, err)
		}
		source = fmt.Sprintf("%d synthetic documents (seed %d)", len(docs), *seed)
	}

	data := &ctm.Data{K: p.K, V: p.V, W: docs, Beta: p.Beta, Mu0: p.Mu0, Sigma0: p.Sigma0}
	model, err := ctm.NewModel(data) // checks the data and the parameters
	if err != nil {
		if *ldac != "" {
			return fmt.Errorf("%s with the parameters of %s (K = %d, V = %d): %v", *ldac, pSource, p.K, p.V, err)
		}
		return fmt.Errorf("%s: %v", pSource, err)
	}
	opts := ctm.Options{Method: *method, FixParams: true}
	if !*quiet {
		opts.Progress = func(pr runtime.Progress) { fmt.Fprintln(stderr, pr) }
	}
	res, err := model.Fit(context.Background(), opts)
	if err != nil {
		return err
	}
	if !res.Converged && !*quiet {
		fmt.Fprintf(stderr, "ctm: warning: the fit did not converge: %s after %d iterations\n", res.Status, res.Iterations)
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(res)
	}

	means := make([][]float64, len(res.Latent.Theta))
	for d, g := range res.Latent.Theta {
		means[d] = g.Mean
	}
	tokens := 0
	for _, doc := range docs {
		for _, e := range doc {
			tokens += e[1]
		}
	}
	fmt.Fprintf(stdout, "ctm: %s on %s: %d tokens, K = %d topics, V = %d terms (%s)\n",
		res.Method, source, tokens, p.K, p.V, pSource)
	fmt.Fprintf(stdout, "status %s after %d iteration(s), ELBO %.4f\n", res.Status, res.Iterations, res.ELBO[len(res.ELBO)-1])
	fmt.Fprintf(stdout, "time %.3f s, %.0f µs per document\n", res.Seconds, res.Seconds/float64(len(docs))*1e6)
	ll := PerWordLogLik(p.Beta, docs, means)
	if truth != nil {
		fmt.Fprintf(stdout, "per-word log likelihood %.4f (π_d ∝ exp E[θ_d]; %.4f under the true θ_d)\n", ll, PerWordLogLik(p.Beta, docs, truth))
		corr, n := MeanCorrelation(means, truth)
		fmt.Fprintf(stdout, "correlation of E[θ_d] and the true θ_d %.4f (centered, mean over %d documents)\n", corr, n)
		agree := TopAgreement(means, truth)
		fmt.Fprintf(stdout, "top topic agreement %.4f (%d of %d documents)\n", agree, int(math.Round(agree*float64(len(docs)))), len(docs))
	} else {
		fmt.Fprintf(stdout, "per-word log likelihood %.4f (π_d ∝ exp E[θ_d])\n", ll)
	}
	return nil
}

// loadParams reads the parameters from path, or the bundled ones if path
// is empty.
func loadParams(path string) (*apParams, error) {
	if path != "" {
		return readParamsFile(path)
	}
	return loadBundledParams()
}

// Synthetic draws d documents from the CTM with parameters p and a fixed
// seed: θ_d ~ N(μ0, Σ0) (through the Cholesky factor of Σ0), π_d =
// softmax(θ_d), a length of 50 to 150 tokens (uniform), and for each token a
// topic z ~ π_d and a term w ~ β_z. It returns the documents as bags of
// [term, count] pairs (1-based term ids, ascending) and the θ_d.
func Synthetic(p *apParams, seed uint64, d int) ([][][2]int, [][]float64, error) {
	K, V := p.K, p.V
	sigma := mat.NewSymDense(K, nil)
	for i := range K {
		for j := i; j < K; j++ {
			sigma.SetSym(i, j, p.Sigma0[i][j])
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(sigma) {
		return nil, nil, errors.New("Sigma0 is not positive definite")
	}
	var l mat.TriDense
	ch.LTo(&l)
	// cum[k] is the cumulative sum of β_k, for drawing terms by bisection.
	cum := make([][]float64, K)
	for k, row := range p.Beta {
		c := make([]float64, V)
		s := 0.0
		for v, b := range row {
			if !(b >= 0) {
				return nil, nil, fmt.Errorf("beta[%d][%d] = %v, want a probability", k+1, v+1, b)
			}
			s += b
			c[v] = s
		}
		if !(s > 0) {
			return nil, nil, fmt.Errorf("beta row %d sums to %v", k+1, s)
		}
		cum[k] = c
	}
	rng := rand.New(rand.NewPCG(seed, 0x63746d))
	docs := make([][][2]int, d)
	thetas := make([][]float64, d)
	eps, pi := make([]float64, K), make([]float64, K)
	counts := make(map[int]int)
	for i := range docs {
		for k := range eps {
			eps[k] = rng.NormFloat64()
		}
		theta := make([]float64, K)
		for k := range K {
			theta[k] = p.Mu0[k]
			for j := 0; j <= k; j++ {
				theta[k] += l.At(k, j) * eps[j]
			}
		}
		thetas[i] = theta
		softmax(theta, pi)
		clear(counts)
		for n := 50 + rng.IntN(101); n > 0; n-- {
			z := draw(rng, pi)
			c := cum[z]
			u := rng.Float64() * c[V-1]
			w := min(sort.Search(V, func(v int) bool { return c[v] > u }), V-1)
			counts[w+1]++
		}
		doc := make([][2]int, 0, len(counts))
		for w, c := range counts {
			doc = append(doc, [2]int{w, c})
		}
		sort.Slice(doc, func(a, b int) bool { return doc[a][0] < doc[b][0] })
		docs[i] = doc
	}
	return docs, thetas, nil
}

// draw returns k with probability p[k] (p sums to 1).
func draw(rng *rand.Rand, p []float64) int {
	u := rng.Float64()
	for k, x := range p {
		if u < x {
			return k
		}
		u -= x
	}
	return len(p) - 1
}

// softmax sets pi to exp(theta) normalized.
func softmax(theta, pi []float64) {
	m := math.Inf(-1)
	for _, t := range theta {
		m = math.Max(m, t)
	}
	s := 0.0
	for k, t := range theta {
		pi[k] = math.Exp(t - m)
		s += pi[k]
	}
	for k := range pi {
		pi[k] /= s
	}
}

// PerWordLogLik is Σ_d Σ_n c_dn log Σ_k π_dk β_k,w_dn / Σ_d Σ_n c_dn with
// π_d = softmax(theta[d]): the log likelihood per token of the documents
// under the topic weights theta. It is NaN if there are no tokens.
func PerWordLogLik(beta [][]float64, docs [][][2]int, theta [][]float64) float64 {
	K := len(beta)
	pi := make([]float64, K)
	ll, n := 0.0, 0
	for d, doc := range docs {
		softmax(theta[d], pi)
		for _, e := range doc {
			p := 0.0
			for k := range K {
				p += pi[k] * beta[k][e[0]-1]
			}
			ll += float64(e[1]) * math.Log(p)
			n += e[1]
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return ll / float64(n)
}

// MeanCorrelation returns the mean over documents of the Pearson
// correlation across topics of est[d] and truth[d] — the cosine of the
// angle between the two after each is centered (softmax ignores a shift of
// θ) — and the number of documents it averages: those where neither vector
// is constant.
func MeanCorrelation(est, truth [][]float64) (float64, int) {
	sum, n := 0.0, 0
	for d := range est {
		if r := correlation(est[d], truth[d]); !math.IsNaN(r) {
			sum += r
			n++
		}
	}
	return sum / float64(n), n
}

func correlation(x, y []float64) float64 {
	mx, my := 0.0, 0.0
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx /= float64(len(x))
	my /= float64(len(y))
	sxy, sxx, syy := 0.0, 0.0, 0.0
	for i := range x {
		a, b := x[i]-mx, y[i]-my
		sxy += a * b
		sxx += a * a
		syy += b * b
	}
	if sxx == 0 || syy == 0 {
		return math.NaN()
	}
	return sxy / math.Sqrt(sxx*syy)
}

// TopAgreement is the fraction of documents d whose largest entry of est[d]
// is at the same topic as the largest of truth[d].
func TopAgreement(est, truth [][]float64) float64 {
	agree := 0
	for d := range est {
		if argmax(est[d]) == argmax(truth[d]) {
			agree++
		}
	}
	return float64(agree) / float64(len(est))
}

func argmax(x []float64) int {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return best
}
