package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
)

// Held-out evaluation of bag-of-words topic models by document completion
// (Wang & Blei 2013, §5.1; Blei & Lafferty 2007): each test document is split
// into an observed half and a held-out half; the topic proportions of the
// document are inferred from the observed half with the fitted topics held
// fixed, and the held-out half is scored by its log likelihood per token,
//
//	Σ_d Σ_n c_dn log Σ_k E[θ_dk] E[β_k,w_dn] / Σ_d Σ_n c_dn.
//
// Terms that never occur in the training documents are left out of both
// halves: the training data say nothing about them, and how a model smooths
// them (or, for maximum-likelihood topics, that it gives them probability 0)
// would otherwise dominate the score. What the model-specific part supplies
// is E[θ_d] per test document, inferred from the observed half after
// KeepSeen has dropped its unseen terms, and E[β_k] per topic;
// HeldoutPerWord leaves the unseen terms out of the held-out half itself.

// SeenTerms returns seen with seen[t-1] true for every term t (1-based) that
// occurs in docs, for terms 1..v. Terms beyond v are an error.
func SeenTerms(docs [][][2]int, v int) ([]bool, error) {
	seen := make([]bool, v)
	for d, doc := range docs {
		for _, e := range doc {
			if e[0] < 1 || e[0] > v {
				return nil, fmt.Errorf("document %d: term %d is outside 1..%d", d+1, e[0], v)
			}
			if e[1] > 0 {
				seen[e[0]-1] = true
			}
		}
	}
	return seen, nil
}

// KeepSeen returns docs without the entries whose terms are not seen (see
// SeenTerms), and the number of tokens and of distinct terms it dropped.
// The documents keep their number and order; one may become empty. Terms
// beyond len(seen) count as unseen.
func KeepSeen(docs [][][2]int, seen []bool) (kept [][][2]int, tokens, terms int) {
	kept = make([][][2]int, len(docs))
	dropped := map[int]bool{}
	for d, doc := range docs {
		for _, e := range doc {
			if e[0] >= 1 && e[0] <= len(seen) && seen[e[0]-1] {
				kept[d] = append(kept[d], e)
				continue
			}
			tokens += e[1]
			dropped[e[0]] = true
		}
	}
	return kept, tokens, len(dropped)
}

// HeldoutScore is the document-completion score of held-out halves.
type HeldoutScore struct {
	// PerWord is the held-out log likelihood per scored token.
	PerWord float64 `json:"per_word"`
	// Tokens is the number of held-out tokens scored.
	Tokens int `json:"tokens"`
	// Unseen and UnseenTerms are the held-out tokens left out, and their
	// distinct terms: terms that never occur in training.
	Unseen      int `json:"unseen_tokens"`
	UnseenTerms int `json:"unseen_terms"`
	// Unsettled is the number of test documents whose local updates did
	// not settle within LocalMaxIter sweeps (set by generated packages'
	// Heldout).
	Unsettled int `json:"unsettled,omitempty"`
	// Predictive says how a generated package's Heldout computed the
	// per-token predictive: which expectations are exact and which
	// approximate.
	Predictive string `json:"predictive,omitempty"`
}

// String is the score as commands print it.
func (s HeldoutScore) String() string {
	out := fmt.Sprintf("held-out per-word log likelihood %.4f over %d tokens (%d tokens of %d terms unseen in training left out)",
		s.PerWord, s.Tokens, s.Unseen, s.UnseenTerms)
	if s.Unsettled > 0 {
		out += fmt.Sprintf("; the local updates of %d test documents did not settle", s.Unsettled)
	}
	return out
}

// HeldoutPerWord scores the held-out halves held (bags with 1-based term
// ids) under topic proportions theta (theta[d] = E[θ_d], K entries, inferred
// from document d's observed half) and topics beta (beta[k] = E[β_k], one
// probability per term): Σ_d Σ_n c_dn log Σ_k theta[d][k]·beta[k][w_dn] over
// the entries whose terms are seen in training (seen[w-1]), divided by the
// number of their tokens. Rows of theta and beta are used as given (they
// should each sum to 1). It is an error when the shapes disagree, a term
// lies beyond the topics, no token is left to score, or a scored token has
// probability 0 (the score would be −∞).
func HeldoutPerWord(theta, beta [][]float64, held [][][2]int, seen []bool) (HeldoutScore, error) {
	var s HeldoutScore
	if len(theta) != len(held) {
		return s, fmt.Errorf("held-out evaluation: %d topic proportions for %d documents", len(theta), len(held))
	}
	k := len(beta)
	if k == 0 {
		return s, fmt.Errorf("held-out evaluation: no topics")
	}
	v := len(beta[0])
	for i, row := range beta {
		if len(row) != v {
			return s, fmt.Errorf("held-out evaluation: topic %d has %d terms, topic 1 has %d", i+1, len(row), v)
		}
	}
	for d, t := range theta {
		if len(t) != k {
			return s, fmt.Errorf("held-out evaluation: document %d has %d topic proportions for %d topics", d+1, len(t), k)
		}
	}
	if len(seen) > v {
		return s, fmt.Errorf("held-out evaluation: %d terms seen in training, but the topics have %d", len(seen), v)
	}
	var kept [][][2]int
	kept, s.Unseen, s.UnseenTerms = KeepSeen(held, seen)
	ll := 0.0
	for d, doc := range kept {
		for _, e := range doc {
			p := 0.0
			for j := range k {
				p += theta[d][j] * beta[j][e[0]-1]
			}
			if !(p > 0) || math.IsInf(p, 0) {
				return s, fmt.Errorf("held-out evaluation: document %d: term %d has probability %v", d+1, e[0], p)
			}
			ll += float64(e[1]) * math.Log(p)
			s.Tokens += e[1]
		}
	}
	if s.Tokens == 0 {
		return s, fmt.Errorf("held-out evaluation: no held-out tokens of terms seen in training")
	}
	s.PerWord = ll / float64(s.Tokens)
	return s, nil
}

// HeldoutLocalMaxIter is the LocalMaxIter with which generated packages'
// Heldout fits the test documents' local factors when Settings leave it
// at 0: a test document costs little next to training, and with the
// package default of 100 sweeps a quarter of the AP test documents have
// not settled to the default LocalTol with LDA at K = 10.
const HeldoutLocalMaxIter = 1000

// HeldoutSplit prepares document completion for a model fitted to a bag
// flattened by FlattenBag (term ids 1..v and counts): it returns the terms
// seen in training (SeenTerms) and the observed halves obs without their
// unseen terms (KeepSeen), to fit the test documents' local factors to.
// obs and held must be line-aligned, and not empty.
func HeldoutSplit(term []int, count []float64, v int, obs, held [][][2]int) (seen []bool, kept [][][2]int, err error) {
	if len(obs) != len(held) {
		return nil, nil, fmt.Errorf("held-out evaluation: %d observed halves and %d held-out halves; they must be line-aligned", len(obs), len(held))
	}
	if len(obs) == 0 {
		return nil, nil, fmt.Errorf("held-out evaluation: no test documents")
	}
	seen = make([]bool, v)
	for n, t := range term {
		if t < 1 || t > v {
			return nil, nil, fmt.Errorf("held-out evaluation: training term %d is outside 1..%d", t, v)
		}
		if count[n] > 0 {
			seen[t-1] = true
		}
	}
	kept, _, _ = KeepSeen(obs, seen)
	return seen, kept, nil
}

// HeldoutMixture scores the held-out halves held by document completion
// under the per-token predictive of a topic model,
//
//	p(w = t | d) = Σ_j mix[d·k + j] · topics[j·v + t − 1],
//
// mix holding each test document's k mixture weights (E_q[θ_d]) and topics
// the k rows of v term probabilities (E_q[β_j]), both row-major: it is
// HeldoutPerWord on flat arrays, with the same sums in the same order. A
// negative weight or topic entry (an approximate expectation gone wrong)
// is an error naming it.
func HeldoutMixture(mix, topics []float64, k int, held [][][2]int, seen []bool) (HeldoutScore, error) {
	if k < 1 || len(mix) != len(held)*k || len(topics)%k != 0 {
		return HeldoutScore{}, fmt.Errorf("held-out evaluation: %d mixture weights and %d topic entries for %d documents and %d topics", len(mix), len(topics), len(held), k)
	}
	for i, x := range mix {
		if !(x >= 0) || math.IsInf(x, 0) {
			return HeldoutScore{}, fmt.Errorf("held-out evaluation: test document %d: mixture weight %d is %v", i/k+1, i%k+1, x)
		}
	}
	for i, x := range topics {
		if !(x >= 0) || math.IsInf(x, 0) {
			return HeldoutScore{}, fmt.Errorf("held-out evaluation: topic %d: term %d has probability %v", i/(len(topics)/k)+1, i%(len(topics)/k)+1, x)
		}
	}
	v := len(topics) / k
	theta := make([][]float64, len(held))
	for d := range theta {
		theta[d] = mix[d*k : (d+1)*k : (d+1)*k]
	}
	beta := make([][]float64, k)
	for j := range beta {
		beta[j] = topics[j*v : (j+1)*v : (j+1)*v]
	}
	return HeldoutPerWord(theta, beta, held, seen)
}

// HeldoutModel adapts a generated package's model with a per-token
// predictive to Heldout: a fitted model of a bag of documents (the units)
// and the kernels of its predictive p(w = t | d) = Σ_j mix_dj · topic_jt.
type HeldoutModel[L, P any] interface {
	// Bag returns the training bag as FlattenBag flattens it: term ids
	// 1..v and their counts.
	Bag() (term []int, count []float64, v int)
	// Docs returns the model over the documents docs in place of the
	// training documents, its other data, sizes and params unchanged.
	Docs(docs [][][2]int) (HeldoutModel[L, P], error)
	// Start returns the latent factors as Fit with opts starts them.
	Start(opts Settings[L, P]) (L, error)
	// Globals returns l with its global factors (those not per unit)
	// replaced by g's.
	Globals(l, g L) L
	// Fit is the package's Model.Fit.
	Fit(ctx context.Context, opts Settings[L, P]) (*Result[L, P], error)
	// Predictive returns the predictive under the q of start.Start (with
	// its params): k mixture weights per document and k topics of v term
	// probabilities, both row-major, as HeldoutMixture takes them.
	Predictive(start Settings[L, P]) (mix, topics []float64, k int, err error)
}

// Heldout scores r, a fit of m, by document completion: obs and held are
// the observed and the held-out halves of test documents (line-aligned
// bags of 1-based term ids). The test documents' local factors are fitted
// to their observed halves with r's global factors and params held fixed
// (one coordinate-ascent iteration started from them with opts.Heldout()),
// and the held-out halves are scored under the predictive with those
// local factors and r's globals (HeldoutMixture). Terms that never occur
// in m's training bag are left out of both halves (HeldoutSplit).
// predictive says how the package computes the predictive
// (HeldoutScore.Predictive).
func Heldout[L, P any](ctx context.Context, m HeldoutModel[L, P], r *Result[L, P], obs, held [][][2]int, opts Settings[L, P], predictive string) (HeldoutScore, error) {
	var s HeldoutScore
	if r == nil {
		return s, fmt.Errorf("held-out evaluation: no fit")
	}
	term, count, v := m.Bag()
	seen, kept, err := HeldoutSplit(term, count, v, obs, held)
	if err != nil {
		return s, err
	}
	t, err := m.Docs(kept)
	if err != nil {
		return s, err
	}
	opts = opts.Heldout()
	// the test documents' local factors start as Fit starts them, the
	// globals at r's
	l, err := t.Start(opts)
	if err != nil {
		return s, err
	}
	opts.Start = &Result[L, P]{Latent: t.Globals(l, r.Latent), Params: r.Params}
	res, err := t.Fit(ctx, opts)
	if err != nil {
		return s, err
	}
	if res.Iterations != 1 {
		return s, fmt.Errorf("held-out evaluation: the fit of the test documents stopped: %s", res.Status)
	}
	// the iteration's global update moved the globals; the score reads r's
	start := Settings[L, P]{Method: opts.Method, Start: &Result[L, P]{Latent: t.Globals(res.Latent, r.Latent), Params: r.Params}, HeldoutPlugIn: opts.HeldoutPlugIn}
	mix, topics, k, err := t.Predictive(start)
	if err != nil {
		return s, err
	}
	s, err = HeldoutMixture(mix, topics, k, held, seen)
	s.Unsettled, s.Predictive = len(res.Unsettled), predictive
	if opts.HeldoutPlugIn {
		s.Predictive = "plug-in, every Gaussian factor at its mean (its covariance taken as 0), in " + predictive
	}
	return s, err
}

// WithBags returns the JSON data object src with the bags added under
// their names (as DecodeBag reads them), for data whose bags come from
// LDA-C files. A bag src already has is an error, and so is src not being
// an object. For each size in sizes (bag name → the size of its term ids)
// that src does not give, it adds the largest term id of the bag (the
// vocabulary the documents use), and returns the sizes it added.
func WithBags(src []byte, bags map[string][][][2]int, sizes map[string]string) ([]byte, map[string]int, error) {
	obj, err := dataObject(src)
	if err != nil {
		return nil, nil, err
	}
	added := map[string]int{}
	names := make([]string, 0, len(bags))
	for name := range bags {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if _, ok := obj[name]; ok {
			return nil, nil, fmt.Errorf("data %q is given both in the JSON data and as an LDA-C file; give it once", name)
		}
		var b []byte
		b = append(b, '[')
		for d, doc := range bags[name] {
			if d > 0 {
				b = append(b, ',')
			}
			b = append(b, '[')
			for i, e := range doc {
				if i > 0 {
					b = append(b, ',')
				}
				b = append(b, '[')
				b = strconv.AppendInt(b, int64(e[0]), 10)
				b = append(b, ',')
				b = strconv.AppendInt(b, int64(e[1]), 10)
				b = append(b, ']')
			}
			b = append(b, ']')
		}
		b = append(b, ']')
		obj[name] = b
		if size := sizes[name]; size != "" {
			if _, ok := obj[size]; !ok {
				added[size] = max(added[size], MaxTerm(bags[name]))
			}
		}
	}
	for size, n := range added {
		obj[size] = json.RawMessage(strconv.Itoa(n))
	}
	out, err := json.Marshal(obj)
	return out, added, err
}
