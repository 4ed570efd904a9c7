package runtime

import (
	"fmt"
	"math"
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
}

// String is the score as commands print it.
func (s HeldoutScore) String() string {
	return fmt.Sprintf("held-out per-word log likelihood %.4f over %d tokens (%d tokens of %d terms unseen in training left out)",
		s.PerWord, s.Tokens, s.Unseen, s.UnseenTerms)
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
