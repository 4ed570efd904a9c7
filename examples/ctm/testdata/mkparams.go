//go:build ignore

// Mkparams fits fixed correlated-topic-model parameters (beta, mu0, Sigma0)
// to the AP training corpus and writes them, compactly, as gzip-compressed
// JSON. Run from the repository root:
//
//	go run examples/ctm/testdata/mkparams.go -K 10 -o examples/ctm/testdata/ap-k10.json.gz
//
// Method. Batch mean-field variational LDA (Blei, Ng and Jordan 2003) with a
// fixed symmetric Dirichlet prior alpha on the topic proportions: topics
// start from beta_kv ∝ 1/V + U(0,1) (seeded math/rand/v2); each EM iteration
// runs, for every document, the gamma/phi updates until the mean absolute
// change of gamma is below 1e-4 (at most 50 updates), then sets
// beta_kv ∝ expected count + 0.01. The fitted topics are sparsified: per
// topic the -top largest entries are kept (8 significant digits) and every
// other entry is replaced by one floor value, (1 − sum kept)/(V − top), so
// each row sums to 1. A final E-step under the sparsified topics gives
// gamma_d for every training document; with pi_d = gamma_d/sum(gamma_d) and
// the centred log-ratio eta_dk = log pi_dk − mean_j log pi_dj, mu0 is the
// mean of eta_d and Sigma0 their covariance (divided by D) plus ridge·I (-ridge, 0.1).
//
// Output schema:
//
//	{"K":K,"V":V,"source":"...","floor":[K],"top":[[[termId1based,prob],...] per topic, descending prob],
//	 "mu0":[K],"Sigma0":[[K] x K]}
package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/mathext"
)

type doc struct {
	ids    []int32
	counts []float64
	n      float64 // total tokens
}

func readLDAC(path string, V int) ([]doc, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var docs []doc
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	line := 0
	for sc.Scan() {
		line++
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			return nil, fmt.Errorf("%s:%d: empty line", path, line)
		}
		m, err := strconv.Atoi(fields[0])
		if err != nil || m != len(fields)-1 {
			return nil, fmt.Errorf("%s:%d: bad term count %q (%d pairs)", path, line, fields[0], len(fields)-1)
		}
		var d doc
		for _, p := range fields[1:] {
			id, c, ok := strings.Cut(p, ":")
			if !ok {
				return nil, fmt.Errorf("%s:%d: bad pair %q", path, line, p)
			}
			w, err1 := strconv.Atoi(id)
			n, err2 := strconv.Atoi(c)
			if err1 != nil || err2 != nil || w < 0 || w >= V || n < 1 {
				return nil, fmt.Errorf("%s:%d: bad pair %q", path, line, p)
			}
			d.ids = append(d.ids, int32(w))
			d.counts = append(d.counts, float64(n))
			d.n += float64(n)
		}
		docs = append(docs, d)
	}
	return docs, sc.Err()
}

func readVocab(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(b)), nil
}

// estep holds reusable buffers for the per-document variational updates.
// Topics are stored term-major: betaT[w*K+k] = beta_kw.
type estep struct {
	K        int
	alpha    float64
	betaT    []float64
	logBetaT []float64
	gamma    []float64
	newGamma []float64
	expDig   []float64
	dig      []float64
	maxIter  int
	tol      float64
}

// run fits gamma (and implicitly phi) for one document; if ss != nil it adds
// the expected counts c_n·phi_nk to ss[w*K+k]. It returns the document's
// ELBO and the number of gamma updates.
func (e *estep) run(d *doc, ss []float64) (float64, int) {
	K := e.K
	g, ng := e.gamma, e.newGamma
	for k := range g {
		g[k] = e.alpha + d.n/float64(K)
	}
	iters := 0
	for iters < e.maxIter {
		iters++
		for k := range g {
			e.expDig[k] = math.Exp(mathext.Digamma(g[k]))
			ng[k] = e.alpha
		}
		for i, w := range d.ids {
			b := e.betaT[int(w)*K : int(w)*K+K]
			z := 0.0
			for k, bk := range b {
				z += bk * e.expDig[k]
			}
			s := d.counts[i] / z
			for k, bk := range b {
				ng[k] += s * bk * e.expDig[k]
			}
		}
		change := 0.0
		for k := range g {
			change += math.Abs(ng[k] - g[k])
			g[k] = ng[k]
		}
		if change/float64(K) < e.tol {
			break
		}
	}
	// Final pass: phi under the final gamma, for the sufficient statistics
	// and the bound.
	gsum := 0.0
	for k := range g {
		gsum += g[k]
		e.dig[k] = mathext.Digamma(g[k])
		e.expDig[k] = math.Exp(e.dig[k])
	}
	digsum := mathext.Digamma(gsum)
	lg, _ := math.Lgamma(float64(K) * e.alpha)
	la, _ := math.Lgamma(e.alpha)
	lgs, _ := math.Lgamma(gsum)
	elbo := lg - float64(K)*la - lgs
	for k := range g {
		lgk, _ := math.Lgamma(g[k])
		elbo += (e.alpha-g[k])*(e.dig[k]-digsum) + lgk
	}
	// With phi_nk = beta_kw exp(dig_k)/Z_n, the word terms
	// sum_k phi_nk (E log theta_k + log beta_kw − log phi_nk) equal log Z_n − digsum.
	for i, w := range d.ids {
		b := e.betaT[int(w)*K : int(w)*K+K]
		z := 0.0
		for k, bk := range b {
			z += bk * e.expDig[k]
		}
		elbo += d.counts[i] * (math.Log(z) - digsum)
		if ss != nil {
			s := d.counts[i] / z
			row := ss[int(w)*K : int(w)*K+K]
			for k, bk := range b {
				row[k] += s * bk * e.expDig[k]
			}
		}
	}
	return elbo, iters
}

// f8 marshals a float64 with 8 significant digits.
type f8 float64

func (x f8) MarshalJSON() ([]byte, error) {
	return strconv.AppendFloat(nil, float64(x), 'g', 8, 64), nil
}

func round8(x float64) float64 {
	y, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 8, 64), 64)
	return y
}

// entry is one kept topic entry, marshalled as [termId1based, prob].
type entry struct {
	id   int
	prob float64
}

func (e entry) MarshalJSON() ([]byte, error) {
	b := []byte{'['}
	b = strconv.AppendInt(b, int64(e.id), 10)
	b = append(b, ',')
	b = strconv.AppendFloat(b, e.prob, 'g', 8, 64)
	return append(b, ']'), nil
}

type output struct {
	K      int       `json:"K"`
	V      int       `json:"V"`
	Source string    `json:"source"`
	Floor  []float64 `json:"floor"`
	Top    [][]entry `json:"top"`
	Mu0    []f8      `json:"mu0"`
	Sigma0 [][]f8    `json:"Sigma0"`
}

func main() {
	var (
		K       = flag.Int("K", 10, "number of topics")
		V       = flag.Int("V", 10473, "vocabulary size")
		top     = flag.Int("top", 300, "entries kept exactly per topic")
		iters   = flag.Int("iters", 30, "EM iterations")
		alpha   = flag.Float64("alpha", 0.1, "symmetric Dirichlet prior on topic proportions (fixed)")
		eta     = flag.Float64("smooth", 0.01, "topic smoothing added to expected counts")
		seed    = flag.Uint64("seed", 1, "random seed")
		data    = flag.String("data", "/work/shared/data/ap/ap-train.dat", "LDA-C training corpus")
		vocabF  = flag.String("vocab", "/work/shared/data/ap/vocab.txt", "vocabulary file")
		outPath = flag.String("o", "", "output file (.json.gz)")
		ridge   = flag.Float64("ridge", 0.1, "added to Sigma0's diagonal (the centred log-ratios are singular)")
	)
	flag.Parse()
	if *outPath == "" {
		fail(fmt.Errorf("-o is required"))
	}
	if *top < 1 || *top >= *V {
		fail(fmt.Errorf("-top must be in [1, V)"))
	}
	start := time.Now()
	docs, err := readLDAC(*data, *V)
	if err != nil {
		fail(err)
	}
	vocab, err := readVocab(*vocabF)
	if err != nil {
		fail(err)
	}
	if len(vocab) != *V {
		fail(fmt.Errorf("vocabulary has %d terms, want %d", len(vocab), *V))
	}
	nK, nV := *K, *V
	tokens := 0.0
	for i := range docs {
		tokens += docs[i].n
	}
	fmt.Fprintf(os.Stderr, "%d documents, %.0f tokens, V=%d, K=%d\n", len(docs), tokens, nV, nK)

	// Initial topics: beta_kv ∝ 1/V + U(0,1).
	rng := rand.New(rand.NewPCG(*seed, 0x6374_6d70_6172_616d))
	beta := make([][]float64, nK)
	for k := range beta {
		beta[k] = make([]float64, nV)
		s := 0.0
		for v := range beta[k] {
			beta[k][v] = 1/float64(nV) + rng.Float64()
			s += beta[k][v]
		}
		for v := range beta[k] {
			beta[k][v] /= s
		}
	}

	e := &estep{
		K: nK, alpha: *alpha, maxIter: 50, tol: 1e-4,
		betaT:    make([]float64, nV*nK),
		gamma:    make([]float64, nK),
		newGamma: make([]float64, nK),
		expDig:   make([]float64, nK),
		dig:      make([]float64, nK),
	}
	setBeta := func(beta [][]float64) {
		for k := range beta {
			for v, b := range beta[k] {
				e.betaT[v*nK+k] = b
			}
		}
	}
	ss := make([]float64, nV*nK)
	gammas := make([][]float64, len(docs))
	// eStep runs the E-step over all documents; with keep it stores gamma_d.
	eStep := func(ss []float64, keep bool) (elbo float64, meanIters float64) {
		if ss != nil {
			clear(ss)
		}
		total := 0
		for i := range docs {
			l, n := e.run(&docs[i], ss)
			elbo += l
			total += n
			if keep {
				gammas[i] = append([]float64(nil), e.gamma...)
			}
		}
		return elbo, float64(total) / float64(len(docs))
	}

	prev := math.Inf(-1)
	for it := 1; it <= *iters; it++ {
		t0 := time.Now()
		setBeta(beta)
		elbo, mi := eStep(ss, false)
		// M-step.
		for k := range beta {
			s := 0.0
			for v := range beta[k] {
				s += ss[v*nK+k]
			}
			den := s + *eta*float64(nV)
			for v := range beta[k] {
				beta[k][v] = (ss[v*nK+k] + *eta) / den
			}
		}
		fmt.Fprintf(os.Stderr, "iter %2d  ELBO %.2f  per-word %.6f  perplexity %.2f  rel.change %.2e  mean gamma updates %.1f  %v\n",
			it, elbo, elbo/tokens, math.Exp(-elbo/tokens), (elbo-prev)/math.Abs(elbo), mi, time.Since(t0).Round(time.Millisecond))
		prev = elbo
	}
	setBeta(beta)
	elboDense, _ := eStep(nil, false)
	fmt.Fprintf(os.Stderr, "final dense topics:      ELBO %.2f  per-word %.6f  perplexity %.2f\n",
		elboDense, elboDense/tokens, math.Exp(-elboDense/tokens))

	// Sparsify.
	out := output{K: nK, V: nV, Floor: make([]float64, nK), Top: make([][]entry, nK)}
	sparse := make([][]float64, nK)
	idx := make([]int, nV)
	for k := range beta {
		for v := range idx {
			idx[v] = v
		}
		b := beta[k]
		sort.Slice(idx, func(i, j int) bool {
			if b[idx[i]] != b[idx[j]] {
				return b[idx[i]] > b[idx[j]]
			}
			return idx[i] < idx[j]
		})
		kept := 0.0
		entries := make([]entry, *top)
		for i := 0; i < *top; i++ {
			p := round8(b[idx[i]])
			entries[i] = entry{id: idx[i] + 1, prob: p}
			kept += p
		}
		floor := (1 - kept) / float64(nV-*top)
		if !(floor > 0) || floor >= entries[*top-1].prob {
			fail(fmt.Errorf("topic %d: bad floor %g (smallest kept %g)", k, floor, entries[*top-1].prob))
		}
		out.Floor[k] = floor
		out.Top[k] = entries
		sparse[k] = make([]float64, nV)
		for v := range sparse[k] {
			sparse[k][v] = floor
		}
		for _, en := range entries {
			sparse[k][en.id-1] = en.prob
		}
		fmt.Fprintf(os.Stderr, "topic %d: top %d keep mass %.4f, floor %.3g:", k, *top, kept, floor)
		for i := 0; i < 10; i++ {
			fmt.Fprintf(os.Stderr, " %s", vocab[idx[i]])
		}
		fmt.Fprintln(os.Stderr)
	}
	setBeta(sparse)
	elboSparse, _ := eStep(nil, true)
	fmt.Fprintf(os.Stderr, "final sparsified topics: ELBO %.2f  per-word %.6f  perplexity %.2f\n",
		elboSparse, elboSparse/tokens, math.Exp(-elboSparse/tokens))

	// Logistic-normal fit to the centred log-ratios of pi_d = gamma_d/sum(gamma_d).
	D := len(docs)
	etas := make([][]float64, D)
	mu0 := make([]float64, nK)
	for d, g := range gammas {
		s := 0.0
		for _, x := range g {
			s += x
		}
		l := make([]float64, nK)
		m := 0.0
		for k, x := range g {
			l[k] = math.Log(x / s)
			m += l[k]
		}
		m /= float64(nK)
		for k := range l {
			l[k] -= m
			mu0[k] += l[k]
		}
		etas[d] = l
	}
	for k := range mu0 {
		mu0[k] /= float64(D)
	}
	sigma := mat.NewSymDense(nK, nil)
	for i := 0; i < nK; i++ {
		for j := i; j < nK; j++ {
			c := 0.0
			for _, l := range etas {
				c += (l[i] - mu0[i]) * (l[j] - mu0[j])
			}
			c /= float64(D)
			if i == j {
				c += *ridge
			}
			sigma.SetSym(i, j, round8(c))
		}
	}
	var chol mat.Cholesky
	if !chol.Factorize(sigma) {
		fail(fmt.Errorf("Sigma0 is not positive definite"))
	}
	var ev mat.EigenSym
	if !ev.Factorize(sigma, false) {
		fail(fmt.Errorf("eigendecomposition of Sigma0 failed"))
	}
	vals := ev.Values(nil)
	fmt.Fprintf(os.Stderr, "Sigma0 eigenvalues: %.4g\n", vals)
	out.Mu0 = make([]f8, nK)
	out.Sigma0 = make([][]f8, nK)
	for i := range mu0 {
		out.Mu0[i] = f8(mu0[i])
		out.Sigma0[i] = make([]f8, nK)
		for j := range out.Sigma0[i] {
			out.Sigma0[i][j] = f8(sigma.At(i, j))
		}
	}
	fmt.Fprintf(os.Stderr, "mu0: %.4f\n", mu0)

	out.Source = fmt.Sprintf("Fitted to %s (%d documents, %d-term vocabulary) by batch mean-field variational LDA "+
		"(Blei et al. 2003): alpha=%g symmetric fixed, topics initialised beta_kv ∝ 1/V + U(0,1) (math/rand/v2 PCG seed %d), "+
		"%d EM iterations, E-step until mean |Δgamma| < 1e-4 or 50 updates, M-step beta_kv ∝ expected count + %g. "+
		"Each topic keeps its %d largest entries (8 significant digits); all other entries equal floor[k]. "+
		"mu0, Sigma0: mean and covariance (divided by D) of the centred log-ratio of gamma_d/sum(gamma_d) from a final E-step "+
		"under the sparsified topics, plus %g*I on Sigma0. Term ids in top are 1-based. "+
		"Command: go run examples/ctm/testdata/mkparams.go -K %d -top %d -ridge %g -o %s",
		lastPathElems(*data, 2), D, nV, *alpha, *seed, *iters, *eta, *top, *ridge, nK, *top, *ridge, *outPath)

	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		fail(err)
	}
	js := buf.Bytes() // ends in a newline
	f, err := os.Create(*outPath)
	if err != nil {
		fail(err)
	}
	zw, err := gzip.NewWriterLevel(f, gzip.BestCompression)
	if err != nil {
		fail(err)
	}
	if _, err := zw.Write(js); err != nil {
		fail(err)
	}
	if err := zw.Close(); err != nil {
		fail(err)
	}
	if err := f.Close(); err != nil {
		fail(err)
	}
	fmt.Fprintf(os.Stderr, "wrote %s (%d bytes JSON) in %v\n", *outPath, len(js), time.Since(start).Round(time.Millisecond))
}

func lastPathElems(p string, n int) string {
	parts := strings.Split(p, "/")
	if len(parts) > n {
		parts = parts[len(parts)-n:]
	}
	return strings.Join(parts, "/")
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "mkparams:", err)
	os.Exit(1)
}
