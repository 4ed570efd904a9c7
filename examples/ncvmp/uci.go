package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/vigen-go/vigen/runtime"
)

// The UCI experiment of Knowles & Minka (2011) §6.4, Table 1: Bayesian
// multinomial softmax regression with standard normal priors on every
// weight (the per-class intercept included), fitted on random 50:50
// train/test splits of Iris, Glass and Thyroid by NCVMP with the quadratic,
// tilted and adaptive bounds of §5.2 (runtime.NCVMPSoftmax), and, for
// comparison, by Laplace and delta-method variational inference
// (fitSoftmaxLaplace). Every fit is summarized as a softmaxPosterior and
// evaluated the same way:
//
//   - the marginal likelihood bound: the converged bound-ELBO on the
//     training half (NCVMP only; it is a lower bound on log p(D));
//   - an ELBO of q estimated by Monte Carlo: E_q[Σ_n log softmax_{y_n}(Wx_n)]
//     by uciDraws draws of the linear predictors per training point, plus
//     the exact E_q[log p(W)] + H[q]. For NCVMP it lies above the bound (the
//     bound replaces E_q[log Σ_k exp g_k] by something larger); for Laplace
//     and delta it is the only comparable number, and it is an estimate, not
//     a bound;
//   - the predictive likelihood, the mean over test points of
//     log p(y*|x*, D), with p(y* = k|x*, D) = E_q[softmax_k(Wx*)] estimated
//     from uciDraws draws of Wx* ~ q;
//   - the predictive error, the fraction of test points whose most probable
//     class under that predictive distribution is not y*;
//   - iterations and wall time per fit.
//
// Monte Carlo draws use fixed seeds (the same standard normals for every
// point and method), so the whole experiment is deterministic.

const (
	// uciSeed seeds the splits (split s uses PCG(uciSeed, s)); uciMCSeed
	// seeds the Monte Carlo draws.
	uciSeed   = 20110611
	uciMCSeed = 7
	// uciDraws is the number of Monte Carlo draws of the linear predictors.
	uciDraws = 1000
)

// uciData is a classification data set: n rows of d features (row-major)
// and labels in {0, …, k−1} (classes[y] is the label's name in the file).
type uciData struct {
	name    string
	x       []float64
	y       []int
	n, d, k int
	classes []string
}

// uciFiles maps the data sets to their files in dataDir/uci. Thyroid is the
// ann-thyroid training and test files concatenated (N = 7200, as in the
// paper).
var uciFiles = map[string][]string{
	"iris":    {"iris.csv"},
	"glass":   {"glass.csv"},
	"thyroid": {"thyroid-ann-train.csv", "thyroid-ann-test.csv"},
}

// loadUCI reads a data set: CSV files with one header row, numeric
// features and the class in the last column. Classes are numbered in the
// sorted order of their names.
func loadUCI(dataDir, set string) (*uciData, error) {
	files, ok := uciFiles[set]
	if !ok {
		return nil, fmt.Errorf("unknown UCI data set %q (want iris, glass or thyroid)", set)
	}
	d := &uciData{name: set, d: -1}
	var labels []string
	for _, name := range files {
		path := filepath.Join(dataDir, "uci", name)
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		recs, err := csv.NewReader(f).ReadAll()
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(recs) < 2 {
			return nil, fmt.Errorf("%s: no data rows", path)
		}
		for i, rec := range recs[1:] {
			if d.d < 0 {
				d.d = len(rec) - 1
			}
			if len(rec) != d.d+1 {
				return nil, fmt.Errorf("%s: row %d has %d fields, want %d", path, i+2, len(rec), d.d+1)
			}
			for j := 0; j < d.d; j++ {
				v, err := strconv.ParseFloat(strings.TrimSpace(rec[j]), 64)
				if err != nil {
					return nil, fmt.Errorf("%s: row %d: %w", path, i+2, err)
				}
				d.x = append(d.x, v)
			}
			labels = append(labels, strings.TrimSpace(rec[d.d]))
		}
	}
	d.classes = slices.Compact(slices.Sorted(slices.Values(labels)))
	d.k = len(d.classes)
	d.n = len(labels)
	d.y = make([]int, d.n)
	for i, l := range labels {
		d.y[i], _ = slices.BinarySearch(d.classes, l)
	}
	return d, nil
}

// uciSplit returns split s of d: a random half of the rows (⌊N/2⌋) for
// training and the rest for testing, each standardized with the training
// half's mean and standard deviation (a constant column is only centred)
// and given a last column of ones (the intercept), so P = D + 1.
func uciSplit(d *uciData, s int) (xtr []float64, ytr []int, xte []float64, yte []int) {
	perm := rand.New(rand.NewPCG(uciSeed, uint64(s))).Perm(d.n)
	ntr := d.n / 2
	mean, sd := make([]float64, d.d), make([]float64, d.d)
	for _, i := range perm[:ntr] {
		for j := 0; j < d.d; j++ {
			mean[j] += d.x[i*d.d+j]
		}
	}
	for j := range mean {
		mean[j] /= float64(ntr)
	}
	for _, i := range perm[:ntr] {
		for j := 0; j < d.d; j++ {
			e := d.x[i*d.d+j] - mean[j]
			sd[j] += e * e
		}
	}
	for j := range sd {
		sd[j] = math.Sqrt(sd[j] / float64(ntr))
		if !(sd[j] > 0) {
			sd[j] = 1
		}
	}
	p := d.d + 1
	rows := func(idx []int) ([]float64, []int) {
		x, y := make([]float64, len(idx)*p), make([]int, len(idx))
		for r, i := range idx {
			for j := 0; j < d.d; j++ {
				x[r*p+j] = (d.x[i*d.d+j] - mean[j]) / sd[j]
			}
			x[r*p+d.d] = 1
			y[r] = d.y[i]
		}
		return x, y
	}
	xtr, ytr = rows(perm[:ntr])
	xte, yte = rows(perm[ntr:])
	return
}

// fitSoftmaxNCVMP fits q(W) = Π_k N(w_k; μ_k, Σ_k) with the prior N(0, I)
// on every weight by runtime.NCVMPSoftmax with the given bound, and
// returns it as a softmaxPosterior with a block-diagonal Cov and the
// converged bound-ELBO. The run recentres the class means after every
// sweep and backtracks class updates that lower the bound (Recentre,
// Backtrack: same fixed points, faster and, on Thyroid, convergent), and
// stops at a relative natural-parameter change of 1e-7 and a relative
// ELBO change of 1e-9 (looser than the runtime's defaults: Table 1 needs
// three digits, and Thyroid's sweeps are slow).
func fitSoftmaxNCVMP(x []float64, y []int, n, p, k int, b runtime.SoftmaxBound) (softmaxPosterior, error) {
	sigma0 := make([]float64, p*p)
	for i := 0; i < p; i++ {
		sigma0[i*p+i] = 1
	}
	res, err := runtime.NCVMPSoftmax{Factors: runtime.DenseSoftmax{X: x[:n*p], Y: y[:n], K: k, P: p},
		Sigma0: sigma0, Bound: b, Recentre: true, Backtrack: true, NCVMPControl: runtime.NCVMPControl{MaxIter: 1000, Tol: 1e-7, ELBOTol: 1e-9}}.Run()
	if err != nil {
		return softmaxPosterior{}, err
	}
	D := k * p
	post := softmaxPosterior{K: k, P: p, Mean: res.Mu, Cov: make([]float64, D*D), Iter: res.Iter,
		Converged: res.Status == runtime.StatusConverged}
	for c := 0; c < k; c++ {
		for i := 0; i < p; i++ {
			for j := 0; j < p; j++ {
				post.Cov[(c*p+i)*D+c*p+j] = res.Sigma[c*p*p+i*p+j]
			}
		}
	}
	if len(res.ELBO) > 0 {
		post.ELBO = res.ELBO[len(res.ELBO)-1]
	}
	if res.Status != runtime.StatusConverged && res.Status != runtime.StatusMaxIterations {
		return post, fmt.Errorf("NCVMP (%v): %s", b, res.Status)
	}
	return post, nil
}

// predictorMoments sets mean (K) and cov (K×K) to the mean and covariance
// of g = Wx under q.
func predictorMoments(q softmaxPosterior, x, mean, cov []float64) {
	K, P, D := q.K, q.P, q.K*q.P
	for k := 0; k < K; k++ {
		var s float64
		for d := 0; d < P; d++ {
			s += q.Mean[k*P+d] * x[d]
		}
		mean[k] = s
		for l := 0; l <= k; l++ {
			var c float64
			for d := 0; d < P; d++ {
				row := q.Cov[(k*P+d)*D+l*P:]
				var r float64
				for e := 0; e < P; e++ {
					r += row[e] * x[e]
				}
				c += x[d] * r
			}
			cov[k*K+l], cov[l*K+k] = c, c
		}
	}
}

// semiChol writes into l the lower Cholesky factor of the K×K positive
// semidefinite c, with pivots that rounding makes non-positive set to 0
// (so a degenerate direction gets no spread).
func semiChol(l, c []float64, K int) {
	clear(l)
	for j := 0; j < K; j++ {
		s := c[j*K+j]
		for t := 0; t < j; t++ {
			s -= l[j*K+t] * l[j*K+t]
		}
		if !(s > 1e-14*math.Max(1, c[j*K+j])) {
			continue
		}
		ljj := math.Sqrt(s)
		l[j*K+j] = ljj
		for i := j + 1; i < K; i++ {
			t := c[i*K+j]
			for u := 0; u < j; u++ {
				t -= l[i*K+u] * l[j*K+u]
			}
			l[i*K+j] = t / ljj
		}
	}
}

// softmaxMC estimates, from the draws z (uciDraws × K standard normals),
// the predictive probabilities E_q[softmax(Wx)] into prob and returns
// E_q[log softmax_y(Wx)] for label y.
type softmaxMC struct {
	K               int
	z               []float64
	mean, cov, l, g []float64
	prob            []float64
}

func newSoftmaxMC(K int) *softmaxMC {
	r := rand.New(rand.NewPCG(uciMCSeed, uint64(K)))
	z := make([]float64, uciDraws*K)
	for i := range z {
		z[i] = r.NormFloat64()
	}
	return &softmaxMC{K: K, z: z, mean: make([]float64, K), cov: make([]float64, K*K), l: make([]float64, K*K),
		g: make([]float64, K), prob: make([]float64, K)}
}

// at draws g = Wx ~ q uciDraws times; it sets mc.prob to the mean of
// softmax(g) and returns the mean of log softmax_y(g).
func (mc *softmaxMC) at(q softmaxPosterior, x []float64, y int) float64 {
	K := mc.K
	predictorMoments(q, x, mc.mean, mc.cov)
	semiChol(mc.l, mc.cov, K)
	clear(mc.prob)
	var elog float64
	for s := 0; s < uciDraws; s++ {
		z := mc.z[s*K : (s+1)*K]
		mx := math.Inf(-1)
		for k := 0; k < K; k++ {
			g := mc.mean[k]
			for j := 0; j <= k; j++ {
				g += mc.l[k*K+j] * z[j]
			}
			mc.g[k] = g
			mx = math.Max(mx, g)
		}
		var sum float64
		for k := 0; k < K; k++ {
			sum += math.Exp(mc.g[k] - mx)
		}
		lse := mx + math.Log(sum)
		for k := 0; k < K; k++ {
			mc.prob[k] += math.Exp(mc.g[k] - lse)
		}
		elog += mc.g[y] - lse
	}
	for k := range mc.prob {
		mc.prob[k] /= uciDraws
	}
	return elog / uciDraws
}

// uciEval holds the evaluation of one fit.
type uciEval struct {
	bound, mcELBO, predLik, predErr float64
	iter                            int
	converged                       bool
	seconds                         float64
}

// evaluate computes the Monte Carlo ELBO of q on the training data (prior
// N(0, I)) and the predictive likelihood and error on the test data.
func evaluate(q softmaxPosterior, xtr []float64, ytr []int, xte []float64, yte []int) uciEval {
	K, P := q.K, q.P
	D := K * P
	mc := newSoftmaxMC(K)
	ev := uciEval{bound: q.ELBO, iter: q.Iter, converged: q.Converged}
	var lik float64
	for i, y := range ytr {
		lik += mc.at(q, xtr[i*P:(i+1)*P], y)
	}
	var quad, tr float64
	for i := 0; i < D; i++ {
		quad += q.Mean[i] * q.Mean[i]
		tr += q.Cov[i*D+i]
	}
	ld, ok := runtime.LogDetSPD(q.Cov, D)
	if !ok {
		ld = math.NaN()
	}
	// E_q[log N(W; 0, I)] + H[q] = −½(|μ|² + tr Σ) + ½log|Σ| + D/2.
	ev.mcELBO = lik - 0.5*(quad+tr) + 0.5*ld + 0.5*float64(D)
	var errs int
	for i, y := range yte {
		mc.at(q, xte[i*P:(i+1)*P], y)
		ev.predLik += math.Log(mc.prob[y])
		best := 0
		for k := 1; k < K; k++ {
			if mc.prob[k] > mc.prob[best] {
				best = k
			}
		}
		if best != y {
			errs++
		}
	}
	ev.predLik /= float64(len(yte))
	ev.predErr = float64(errs) / float64(len(yte))
	return ev
}

// uciMethod is one row of Table 1.
type uciMethod struct {
	name string
	fit  func(x []float64, y []int, n, p, k int) (softmaxPosterior, error)
	// ncvmp says the posterior's ELBO is the NCVMP bound.
	ncvmp bool
}

func uciMethods() []uciMethod {
	nc := func(b runtime.SoftmaxBound) uciMethod {
		return uciMethod{name: b.String(), ncvmp: true, fit: func(x []float64, y []int, n, p, k int) (softmaxPosterior, error) {
			return fitSoftmaxNCVMP(x, y, n, p, k, b)
		}}
	}
	return []uciMethod{
		nc(runtime.SoftmaxBoundQuadratic), nc(runtime.SoftmaxBoundTilted), nc(runtime.SoftmaxBoundAdaptive),
		{name: "Laplace", fit: func(x []float64, y []int, n, p, k int) (softmaxPosterior, error) {
			return fitSoftmaxLaplace(x, y, n, p, k, false)
		}},
		{name: "delta", fit: func(x []float64, y []int, n, p, k int) (softmaxPosterior, error) {
			return fitSoftmaxLaplace(x, y, n, p, k, true)
		}},
	}
}

// uciSetResult holds, for one data set, every method's evaluations over
// the splits (evals[method][split]).
type uciSetResult struct {
	data    *uciData
	methods []uciMethod
	evals   [][]uciEval
}

// runUCISet fits every method on every split of one data set.
func runUCISet(dataDir, set string, splits int) (*uciSetResult, error) {
	d, err := loadUCI(dataDir, set)
	if err != nil {
		return nil, err
	}
	r := &uciSetResult{data: d, methods: uciMethods()}
	r.evals = make([][]uciEval, len(r.methods))
	p := d.d + 1
	for s := 0; s < splits; s++ {
		xtr, ytr, xte, yte := uciSplit(d, s)
		for m, meth := range r.methods {
			start := time.Now()
			q, err := meth.fit(xtr, ytr, len(ytr), p, d.k)
			secs := time.Since(start).Seconds()
			if err != nil {
				return nil, fmt.Errorf("%s split %d, %s: %w", set, s, meth.name, err)
			}
			ev := evaluate(q, xtr, ytr, xte, yte)
			ev.seconds = secs
			if !meth.ncvmp {
				ev.bound = math.NaN()
			}
			r.evals[m] = append(r.evals[m], ev)
		}
	}
	return r, nil
}

// uciPaper holds Table 1 of the paper: marginal likelihood, predictive
// likelihood and predictive error, as printed (mean ± sd over 16 splits).
var uciPaper = map[string]map[string][3]string{
	"iris": {
		"quadratic": {"−65 ± 3.5", "−0.216 ± 0.07", "0.0892 ± 0.039"},
		"tilted":    {"−31.2 ± 2", "−0.201 ± 0.039", "0.065 ± 0.038"},
		"adaptive":  {"−31.2 ± 2", "−0.201 ± 0.039", "0.0642 ± 0.037"},
	},
	"glass": {
		"quadratic": {"−319 ± 5.6", "−0.58 ± 0.12", "0.197 ± 0.032"},
		"tilted":    {"−193 ± 5.4", "−0.531 ± 0.1", "0.200 ± 0.032"},
		"adaptive":  {"−193 ± 3.9", "−0.542 ± 0.11", "0.200 ± 0.032"},
	},
	"thyroid": {
		"quadratic": {"−1814 ± 43", "−0.114 ± 0.019", "0.0241 ± 0.0026"},
		"tilted":    {"−916 ± 31", "−0.0753 ± 0.008", "0.0226 ± 0.0023"},
		"adaptive":  {"−909 ± 30", "−0.0916 ± 0.010", "0.0225 ± 0.0024"},
	},
}

// uciPaperDims is the paper's description of each data set.
var uciPaperDims = map[string]string{
	"iris":    "paper: N = 150, D = 4, K = 3",
	"glass":   "paper: N = 214, D = 8, K = 6 (the file has 9 features, all used here)",
	"thyroid": "paper: N = 7200, D = 21, K = 3",
}

// meanSD returns the mean and sample standard deviation of f over the
// evaluations.
func meanSD(evs []uciEval, f func(uciEval) float64) (mean, sd float64) {
	for _, e := range evs {
		mean += f(e)
	}
	mean /= float64(len(evs))
	if len(evs) > 1 {
		for _, e := range evs {
			d := f(e) - mean
			sd += d * d
		}
		sd = math.Sqrt(sd / float64(len(evs)-1))
	}
	return
}

func fmtMeanSD(evs []uciEval, f func(uciEval) float64, prec int) string {
	m, s := meanSD(evs, f)
	if math.IsNaN(m) {
		return "—"
	}
	return fmt.Sprintf("%.*f ± %.*f", prec, m, prec, s)
}

// write prints the data set's table: our numbers for each method, with the
// paper's beside them.
func (r *uciSetResult) write(w io.Writer) {
	d := r.data
	splits := len(r.evals[0])
	fmt.Fprintf(w, "%s: N = %d, D = %d, K = %d (%s); %d random %d:%d splits\n",
		d.name, d.n, d.d, d.k, uciPaperDims[d.name], splits, d.n/2, d.n-d.n/2)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "method\tML bound\tMC ELBO\tpred. lik.\tpred. error\titers\tconv.\tms/fit\tpaper ML\tpaper pred. lik.\tpaper error\t")
	for m, meth := range r.methods {
		evs := r.evals[m]
		conv := 0
		for _, e := range evs {
			if e.converged {
				conv++
			}
		}
		paper := uciPaper[d.name][meth.name]
		for i := range paper {
			if paper[i] == "" {
				paper[i] = "—"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d/%d\t%s\t%s\t%s\t%s\t\n", meth.name,
			fmtMeanSD(evs, func(e uciEval) float64 { return e.bound }, 1),
			fmtMeanSD(evs, func(e uciEval) float64 { return e.mcELBO }, 1),
			fmtMeanSD(evs, func(e uciEval) float64 { return e.predLik }, 3),
			fmtMeanSD(evs, func(e uciEval) float64 { return e.predErr }, 3),
			fmtMeanSD(evs, func(e uciEval) float64 { return float64(e.iter) }, 0),
			conv, len(evs),
			fmtMeanSD(evs, func(e uciEval) float64 { return 1000 * e.seconds }, 0),
			paper[0], paper[1], paper[2])
	}
	tw.Flush()
}

// runUCI runs the §6.4 experiment on the named data sets (iris, glass,
// thyroid) found in dataDir/uci with the given number of random splits and
// prints one table per data set.
func runUCI(w io.Writer, dataDir string, sets []string, splits int) error {
	if splits < 1 {
		return fmt.Errorf("-splits %d: want at least 1", splits)
	}
	fmt.Fprintf(w, "§6.4 / Table 1: softmax regression, prior N(0, 1) on every weight; ML bound = converged NCVMP bound-ELBO (training half);\n")
	fmt.Fprintf(w, "MC ELBO = E_q[log p(y|W)] by %d draws + exact E_q[log p(W)] + H[q] (an estimate, not a bound); pred. lik./error by %d draws of Wx* ~ q.\n", uciDraws, uciDraws)
	for i, set := range sets {
		if i > 0 {
			fmt.Fprintln(w)
		}
		r, err := runUCISet(dataDir, strings.TrimSpace(set), splits)
		if err != nil {
			return err
		}
		r.write(w)
	}
	return nil
}
