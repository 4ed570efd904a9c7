package runtime

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
)

// Restarts records a fit run from several seeds (Settings.Restarts): the
// result is the one with the largest final ELBO.
type Restarts struct {
	// Seeds are the seeds run, Seed, Seed+1, …; ELBO and Status each one's
	// final ELBO (null for a fit with none) and status.
	Seeds  []uint64   `json:"seeds"`
	ELBO   []*float64 `json:"elbo"`
	Status []string   `json:"status"`
	// Best is the index of the result kept; Spread is the largest final
	// ELBO minus the smallest, which says how much the start matters.
	Best   int     `json:"best"`
	Spread float64 `json:"spread"`
}

// FitRestarts runs fit under s from the seeds s.Seed, …, s.Seed+s.Restarts−1
// and returns the best result, with Result.Restarts recording every run:
// among the runs that ended normally (converged, stopped at the iteration
// limit, or ran their SVI passes), the one with the largest final ELBO
// (the lowest seed among equals). A run that met trouble, produced a NaN or
// an infinity, or was canceled is chosen only if no run ended normally. The fits run concurrently, at most s.Workers (0:
// GOMAXPROCS) at a time, with the workers shared among them; since a fit
// does not depend on its number of workers, neither does the result. If
// ctx is done before every run finished, the result is marked canceled:
// the runs that did not finish are recorded, those that had not started
// are not, and none starts after it. Progress is not reported
// during restarts, and Start, Resume and Checkpoint are refused (one start
// point, one run to save).
func FitRestarts[L, P any](ctx context.Context, s Settings[L, P], fit func(context.Context, Settings[L, P]) (*Result[L, P], error)) (*Result[L, P], error) {
	n := s.Restarts
	if s.Start != nil || s.Resume != nil || s.Checkpoint.On() {
		return nil, errors.New("restarts: Start, Resume and Checkpoint apply to one run; drop them or Restarts")
	}
	total := Workers(s.Workers)
	concurrent := min(n, total)
	per := max(1, total/concurrent)
	results := make([]*Result[L, P], n)
	errs := make([]error, n)
	run := func(_, i int) {
		o := s
		o.Restarts, o.Seed, o.Workers, o.Progress = 0, s.Seed+uint64(i), per, nil
		o.NoSummary = true // the kept run's alone, below
		results[i], errs[i] = fit(ctx, o)
	}
	// Once ctx is done no run starts (a canceled run still sets itself up,
	// and 10⁵ of them took minutes); the first always runs, so that there
	// is a result to return.
	if !ParallelForUntil(ctx.Done(), n, concurrent, run) && results[0] == nil && errs[0] == nil {
		run(0, 0)
	}
	rec := &Restarts{Best: -1}
	lo, hi := math.Inf(1), math.Inf(-1)
	bestClass := -1
	for i, r := range results {
		if r == nil && errs[i] == nil {
			continue // not started: canceled before its turn
		}
		rec.Seeds = append(rec.Seeds, s.Seed+uint64(i))
		var elbo *float64
		status := ""
		class := -1
		switch {
		case errs[i] != nil:
			status = "error: " + errs[i].Error()
		case len(r.ELBO) == 0:
			status = r.Status
		default:
			e := r.ELBO[len(r.ELBO)-1]
			elbo, status, class = &e, r.Status, restartClass(r)
			lo, hi = math.Min(lo, e), math.Max(hi, e)
			if class > bestClass || class == bestClass && e > *rec.ELBO[rec.Best] {
				rec.Best, bestClass = len(rec.Seeds)-1, class
			}
		}
		rec.ELBO, rec.Status = append(rec.ELBO, elbo), append(rec.Status, status)
	}
	if rec.Best < 0 {
		for _, err := range errs {
			if err != nil {
				return nil, fmt.Errorf("restarts: every run failed; the first: %w", err)
			}
		}
		return results[0], nil // no ELBO at all (canceled before one iteration)
	}
	if hi > lo {
		rec.Spread = hi - lo
	}
	best := results[rec.Seeds[rec.Best]-s.Seed]
	best.Restarts = rec
	best.summarize(s)
	if ctx.Err() != nil {
		// the best of the runs so far, not of all of them
		best.Converged, best.Status = false, "canceled"
	}
	return best, nil
}

// restartClass ranks how a run ended, for FitRestarts: 1 normally
// (converged, at the iteration limit, or its SVI passes run), 0 otherwise
// (trouble, a non-finite number, canceled).
func restartClass[L, P any](r *Result[L, P]) int {
	if r.Converged || strings.HasPrefix(r.Status, "max_iterations") || strings.HasPrefix(r.Status, PassesStatus) {
		return 1
	}
	return 0
}
