package main

import (
	"context"
	"fmt"

	"github.com/vigen-go/vigen/examples/lda/lda"
	"github.com/vigen-go/vigen/runtime"
)

// The held-out evaluation written by hand, the oracle the generated
// lda.Model.Heldout (which the command uses) is tested against
// (predictive_test.go). Document completion (runtime.HeldoutPerWord; the
// protocol of examples/ctm and ../shared/data/README.md): q(θ_d) is fitted
// to the observed half of each test document with the topics held fixed at
// the trained q(β), and the held-out half is scored with
// Σ_k E[θ_dk] E[β_kw]. In lda.vi β is a latent with q(β_k) =
// Dirichlet(λ_k), so E[β_kw] = λ_kw / Σ_v λ_kv (TopicMeans), and E[θ_dk] =
// γ_dk / Σ_j γ_dj. Terms that never occur in the training documents are
// left out of both halves.

// InferTheta fits q(θ_d) = Dirichlet(γ_d) for every document of docs with
// the topics held fixed at q(β) = Dirichlet(lambda) (K×V, row-major) and the
// concentrations alpha and eta (nil: lda.vi's defaults), and returns the γ_d
// and the number of documents whose updates did not settle.
//
// It runs one iteration of lda.Fit started from q(β) = lambda: the
// iteration's E-step fits every document's θ and z to convergence
// (Options.LocalMaxIter, LocalTol) against the start's β; the global update
// that follows it moves β, which is not used. Empty documents keep γ_d = α.
func InferTheta(ctx context.Context, lambda []float64, k, v int, alpha, eta *float64, docs [][][2]int, workers int) (gamma [][]float64, unsettled int, err error) {
	if k < 1 || v < 1 || len(lambda) != k*v {
		return nil, 0, fmt.Errorf("topics: %d parameters for K = %d and V = %d", len(lambda), k, v)
	}
	if len(docs) == 0 {
		return nil, 0, fmt.Errorf("no documents to infer")
	}
	data := &lda.Data{D: len(docs), K: k, V: v, W: docs, Alpha: alpha, Eta: eta}
	model, err := lda.NewModel(data)
	if err != nil {
		return nil, 0, err
	}
	entries := 0
	for _, doc := range docs {
		entries += len(doc)
	}
	theta := make([]float64, len(docs)*k)
	runtime.Fill(theta, 1)
	z := make([]float64, entries*k)
	runtime.Fill(z, 1/float64(k))
	start := &lda.Result{Latent: lda.Latent{
		Beta:  runtime.NewFactor("Dirichlet", []int{k, v}, "param", lambda),
		Theta: runtime.NewFactor("Dirichlet", []int{len(docs), k}, "param", theta),
		Z:     runtime.NewFactor("Categorical", []int{entries, k}, "prob", z),
	}}
	res, err := model.Fit(ctx, lda.Options{Start: start, MaxIter: 1, LocalMaxIter: inferMaxSweeps, Workers: workers, AllowEmpty: true})
	if err != nil {
		return nil, 0, err
	}
	if res.Iterations != 1 {
		return nil, 0, fmt.Errorf("inference of θ stopped: %s", res.Status)
	}
	g := res.Latent.Theta.Params["param"]
	gamma = make([][]float64, len(docs))
	for d := range gamma {
		gamma[d] = g[d*k : (d+1)*k]
	}
	return gamma, len(res.Unsettled), nil
}

// normalized returns the rows of x divided by their sums: the means of
// Dirichlets with parameters x.
func normalized(x [][]float64) [][]float64 {
	out := make([][]float64, len(x))
	for i, row := range x {
		s := 0.0
		for _, v := range row {
			s += v
		}
		out[i] = make([]float64, len(row))
		for j, v := range row {
			out[i][j] = v / s
		}
	}
	return out
}

// Heldout scores the fitted topics of res (an lda.Result fitted to train)
// by document completion on the observed halves obs and the held-out halves
// held (line-aligned): see InferTheta and runtime.HeldoutPerWord. alpha and
// eta are the concentrations of the fit (nil: lda.vi's defaults). It also
// returns the number of test documents whose inference did not settle.
func Heldout(ctx context.Context, res *lda.Result, alpha, eta *float64, train, obs, held [][][2]int, workers int) (runtime.HeldoutScore, int, error) {
	var s runtime.HeldoutScore
	if len(obs) != len(held) {
		return s, 0, fmt.Errorf("%d observed halves and %d held-out halves; they must be line-aligned", len(obs), len(held))
	}
	beta := res.Latent.Beta
	if beta == nil || len(beta.Shape) != 2 {
		return s, 0, fmt.Errorf("the result has no fitted topics")
	}
	k, v := beta.Shape[0], beta.Shape[1]
	// test terms beyond the topics' V never occur in training: SeenTerms
	// covers 1..V, and KeepSeen and HeldoutPerWord leave the others out
	seen, err := runtime.SeenTerms(train, v)
	if err != nil {
		return s, 0, fmt.Errorf("training documents: %v", err)
	}
	kept, _, _ := runtime.KeepSeen(obs, seen)
	gamma, unsettled, err := InferTheta(ctx, beta.Params["param"], k, v, alpha, eta, kept, workers)
	if err != nil {
		return s, 0, err
	}
	s, err = runtime.HeldoutPerWord(normalized(gamma), TopicMeans(res), held, seen)
	return s, unsettled, err
}

// inferMaxSweeps is Options.LocalMaxIter of InferTheta. With the package's
// default, 100, a quarter of the AP test documents have not settled to the
// default LocalTol (relative change 1e-6) with K = 10; a test document costs
// little next to training, so the inference may take more sweeps.
const inferMaxSweeps = 1000
