package main

// lda score-ldac: the held-out score of a model fitted by Blei's lda-c,
// computed by the same document completion that scores vigen's own fits
// (lda.Model.Heldout), so that the two numbers are comparable.
//
//	go run ./examples/lda score-ldac -model DIR/final -train ap-train.dat \
//	    -heldout-obs ap-test-obs.dat -heldout ap-test-heldout.dat
//
// lda-c writes its fit as ROOT.beta (K lines of V log-probabilities,
// log β_kv, "%5.10f" each) and ROOT.other ("num_topics K", "num_terms V",
// "alpha α"). Its topics are maximum-likelihood point estimates, not a
// posterior, so they are scored as the point mass q(β_k) = δ(β_k):
// lda.Model.Heldout takes a q(β_k) = Dirichlet(λ_k), and λ_k = c·β_k with
// a large c stands for that point mass. The evaluator reads q(β) twice:
//
//   - fitting q(θ_d) to the observed half, the φ update reads
//     E[log β_kv] = ψ(cβ_kv) − ψ(c) = log β_kv − 1/(2cβ_kv) + 1/(2c) + …,
//     where a point mass has log β_kv, as lda-c's own E-step
//     (lda-inference.c) reads it. With the default c = 1e100 the
//     correction is below 1e-15 wherever log β_kv > −195, which includes
//     the −100 lda-c writes where its expected count was 0. It also writes
//     far smaller entries, down to about −758, where that count was
//     subnormal. There E[log β_kv] is more negative than log β_kv, but
//     exp(log β_kv) < e^−195 weighs nothing in φ next to the topics that
//     explain the term. (On AP the
//     score equals document completion written by hand with log β to 1e-10
//     per word: TestScoreLDACFilesAP.)
//   - scoring the held-out half, the predictive reads E[β_kv] = λ_kv / Σ_v λ_kv
//     = β_kv (each row renormalized, since "%5.10f" rounds the logs).
//
// The document completion uses lda-c's fitted α (ROOT.other) unless -alpha
// overrides it; vigen's own fits are scored with their own α (lda.vi's
// 0.1 unless -alpha is given). η plays no part: it enters only the global
// update, which Heldout discards.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/vigen-go/vigen/examples/lda/lda"
	"github.com/vigen-go/vigen/runtime"
)

// LDACModel is a model fitted by lda-c, as its ROOT.beta and ROOT.other
// files hold it.
type LDACModel struct {
	K, V  int
	Alpha float64
	// LogBeta[k][v] is lda-c's log β_kv, as written (0-based term v is
	// LDA-C id v, vigen's term v+1).
	LogBeta [][]float64
}

// DefaultPointMassScale is the c of λ = c·β that ScoreLDAC uses when given
// 0: large enough that ψ(cβ) − ψ(c) = log β to double precision for every
// β ≥ e^−100, small enough that Σ λ (= c) and the held-out fit's sums stay
// far from overflow.
const DefaultPointMassScale = 1e100

// ReadLDACModel reads lda-c's fit from root.beta and root.other (root as
// lda-c names it, e.g. DIR/final).
func ReadLDACModel(root string) (*LDACModel, error) {
	m := new(LDACModel)
	f, err := os.Open(root + ".other")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := m.readOther(f, root+".other"); err != nil {
		return nil, err
	}
	b, err := os.Open(root + ".beta")
	if err != nil {
		return nil, err
	}
	defer b.Close()
	if err := m.readBeta(b, root+".beta"); err != nil {
		return nil, err
	}
	return m, nil
}

// readOther reads "num_topics K", "num_terms V" and "alpha α", one a line.
func (m *LDACModel) readOther(r io.Reader, name string) error {
	got := map[string]bool{}
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) != 2 {
			return fmt.Errorf("%s:%d: want \"name value\", got %q", name, line, sc.Text())
		}
		if got[f[0]] {
			return fmt.Errorf("%s:%d: %s given twice", name, line, f[0])
		}
		got[f[0]] = true
		var err error
		switch f[0] {
		case "num_topics", "num_terms":
			var n int
			if n, err = strconv.Atoi(f[1]); err == nil && n < 1 {
				err = errors.New("must be at least 1")
			}
			if f[0] == "num_topics" {
				m.K = n
			} else {
				m.V = n
			}
		case "alpha":
			if m.Alpha, err = strconv.ParseFloat(f[1], 64); err == nil && !(m.Alpha > 0 && !math.IsInf(m.Alpha, 1)) {
				err = errors.New("must be positive and finite")
			}
		default:
			err = errors.New("unknown name (want num_topics, num_terms, alpha)")
		}
		if err != nil {
			return fmt.Errorf("%s:%d: %s %s: %v", name, line, f[0], f[1], err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %v", name, err)
	}
	for _, k := range []string{"num_topics", "num_terms", "alpha"} {
		if !got[k] {
			return fmt.Errorf("%s: no %s", name, k)
		}
	}
	return nil
}

// readBeta reads K lines of V log-probabilities (readOther first). Each
// row must be a distribution up to the rounding of lda-c's "%5.10f":
// Σ_v exp(log β_kv) within 1e-6 of 1.
func (m *LDACModel) readBeta(r io.Reader, name string) error {
	br := bufio.NewReaderSize(r, 1<<20)
	m.LogBeta = nil
	for line := 1; ; line++ {
		text, err := br.ReadString('\n')
		if err != nil && err != io.EOF {
			return fmt.Errorf("%s: %v", name, err)
		}
		if f := strings.Fields(text); len(f) > 0 {
			if len(m.LogBeta) == m.K {
				return fmt.Errorf("%s:%d: more than num_topics = %d rows", name, line, m.K)
			}
			if len(f) != m.V {
				return fmt.Errorf("%s:%d: %d values, want num_terms = %d", name, line, len(f), m.V)
			}
			row := make([]float64, m.V)
			sum := 0.0
			for v, s := range f {
				x, perr := strconv.ParseFloat(s, 64)
				if perr != nil || math.IsNaN(x) || math.IsInf(x, 0) || x > 1e-9 {
					return fmt.Errorf("%s:%d: term %d: %q is not a log-probability", name, line, v, s)
				}
				row[v] = x
				sum += math.Exp(x)
			}
			if math.Abs(sum-1) > 1e-6 {
				return fmt.Errorf("%s:%d: the probabilities of topic %d sum to %v, not 1: not lda-c's log β", name, line, len(m.LogBeta)+1, sum)
			}
			m.LogBeta = append(m.LogBeta, row)
		}
		if err == io.EOF {
			break
		}
	}
	if len(m.LogBeta) != m.K {
		return fmt.Errorf("%s: %d rows, want num_topics = %d", name, len(m.LogBeta), m.K)
	}
	return nil
}

// Beta returns lda-c's topics as probabilities, each row renormalized (the
// written logs are rounded to 10 decimals). Entries below e^−745 (lda-c
// writes logs down to about −758 where its expected counts were
// subnormal) underflow to 0, as they do in lda-c's own computations.
func (m *LDACModel) Beta() [][]float64 {
	out := make([][]float64, m.K)
	for k := range m.LogBeta {
		out[k] = make([]float64, m.V)
		for v, x := range m.normLogBeta(k) {
			out[k][v] = math.Exp(x)
		}
	}
	return out
}

// normLogBeta returns row k of LogBeta minus its log-sum-exp.
func (m *LDACModel) normLogBeta(k int) []float64 {
	row := m.LogBeta[k]
	hi := math.Inf(-1)
	for _, x := range row {
		hi = max(hi, x)
	}
	sum := 0.0
	for _, x := range row {
		sum += math.Exp(x - hi)
	}
	norm := hi + math.Log(sum)
	out := make([]float64, len(row))
	for v, x := range row {
		out[v] = x - norm
	}
	return out
}

// Result returns lda-c's topics as an lda.Result whose q(β_k) is
// Dirichlet(c·β_k) (c = scale, 0: DefaultPointMassScale), a point mass at
// β_k (see the top of this file). λ_kv = exp(log β_kv + log c) is computed
// from the logs, so that the entries whose β_kv underflows still get a
// positive λ_kv (ψ(λ_kv) must be finite); one that would underflow even
// so gets the smallest normal float64. Only q(β) is set: Heldout reads
// no other factor of the fit.
func (m *LDACModel) Result(scale float64) *lda.Result {
	if scale == 0 {
		scale = DefaultPointMassScale
	}
	logc := math.Log(scale)
	lambda := make([]float64, 0, m.K*m.V)
	for k := range m.LogBeta {
		for _, x := range m.normLogBeta(k) {
			lambda = append(lambda, max(math.Exp(x+logc), 0x1p-1022))
		}
	}
	return &lda.Result{Latent: lda.Latent{Beta: runtime.NewFactor("Dirichlet", []int{m.K, m.V}, "param", lambda)}}
}

// ScoreLDAC scores lda-c's fit m by document completion on the observed and
// held-out halves obs and held with lda.Model.Heldout, the evaluator of the
// command's own fits: q(θ_d) of each test document is fitted to its
// observed half with the topics at lda-c's β (m.Result(scale)) and the
// concentration alpha, and the held-out half is scored under Σ_k E[θ_dk]
// β_kw. train is the corpus lda-c was fitted to: its terms decide which
// test terms are left out as unseen, as for the command's fits. lda-c sets
// num_terms to the training corpus's largest id + 1; a training term
// beyond it is an error. opts go to Heldout as the command's own score
// passes them: the zero value but Workers, so LocalMaxIter and LocalTol
// take Heldout's defaults (runtime.HeldoutLocalMaxIter sweeps, relative
// change 1e-6); set them to score with a tighter document completion.
func ScoreLDAC(ctx context.Context, m *LDACModel, train, obs, held [][][2]int, alpha, scale float64, opts lda.Options) (runtime.HeldoutScore, error) {
	if v := runtime.MaxTerm(train); v > m.V {
		return runtime.HeldoutScore{}, fmt.Errorf("the training documents have term id %d, beyond lda-c's num_terms = %d: not the corpus the model was fitted to", v-1, m.V)
	}
	if !(alpha > 0 && !math.IsInf(alpha, 1)) {
		return runtime.HeldoutScore{}, fmt.Errorf("α = %v: want positive and finite", alpha)
	}
	model, err := lda.NewModel(&lda.Data{K: m.K, V: m.V, W: train, Alpha: &alpha})
	if err != nil {
		return runtime.HeldoutScore{}, err
	}
	return model.Heldout(ctx, m.Result(scale), obs, held, opts)
}

// ldacScore is what score-ldac -json prints.
type ldacScore struct {
	Model string  `json:"model"`
	K     int     `json:"K"`
	V     int     `json:"V"`
	Alpha float64 `json:"alpha"`
	// AlphaFrom is "lda-c" (ROOT.other) or "-alpha".
	AlphaFrom string               `json:"alpha_from"`
	Scale     float64              `json:"point_mass_scale"`
	Heldout   runtime.HeldoutScore `json:"heldout"`
}

// scoreLDAC is the subcommand score-ldac.
func scoreLDAC(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("lda score-ldac", flag.ContinueOnError)
	fs.SetOutput(stderr)
	root := fs.String("model", "", "lda-c's fit: ROOT of ROOT.beta and ROOT.other (e.g. DIR/final)")
	train := fs.String("train", "", "the training corpus lda-c was fitted to (LDA-C)")
	heldoutObs := fs.String("heldout-obs", "", "observed halves of test documents (LDA-C)")
	heldout := fs.String("heldout", "", "held-out halves of the same test documents (LDA-C)")
	alpha := fs.Float64("alpha", 0, "α of the document completion (default: lda-c's fitted α from ROOT.other)")
	scale := fs.Float64("scale", DefaultPointMassScale, "c of q(β_k) = Dirichlet(c·β_k), the point mass at lda-c's β")
	workers := fs.Int("workers", 0, "goroutines for the test documents (default GOMAXPROCS)")
	localMaxIter := fs.Int("localmaxiter", 0, "sweeps allowed per test document (0: Heldout's default, as the command's own score)")
	localTol := fs.Float64("localtol", 0, "relative change that settles a test document's θ (0: the package default, as the command's own score)")
	asJSON := fs.Bool("json", false, "print the score as JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("score-ldac: unexpected argument %q", fs.Arg(0))
	}
	if *root == "" || *train == "" || *heldoutObs == "" || *heldout == "" {
		return errors.New("score-ldac needs -model, -train, -heldout-obs and -heldout")
	}
	if !(*scale > 0 && !math.IsInf(*scale, 1)) {
		return fmt.Errorf("score-ldac: -scale %v: want positive and finite", *scale)
	}
	m, err := ReadLDACModel(*root)
	if err != nil {
		return err
	}
	var docs [3][][][2]int
	for i, p := range []string{*train, *heldoutObs, *heldout} {
		if docs[i], err = runtime.ReadLDACFile(p); err != nil {
			return err
		}
	}
	out := ldacScore{Model: *root, K: m.K, V: m.V, Alpha: m.Alpha, AlphaFrom: "lda-c", Scale: *scale}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "alpha" {
			out.Alpha, out.AlphaFrom = *alpha, "-alpha"
		}
	})
	opts := lda.Options{Workers: *workers, LocalMaxIter: *localMaxIter, LocalTol: *localTol}
	out.Heldout, err = ScoreLDAC(context.Background(), m, docs[0], docs[1], docs[2], out.Alpha, *scale, opts)
	if err != nil {
		return fmt.Errorf("held-out evaluation: %v", err)
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(out)
	}
	fmt.Fprintf(stdout, "lda-c %s: %d topics, %d terms, α = %g (%s)\n%s\n", *root, m.K, m.V, out.Alpha, out.AlphaFrom, out.Heldout)
	return nil
}
