package runtime

import (
	"context"
	"errors"
	"fmt"
	"math"
)

// Restarts records a fit run from several seeds (Settings.Restarts): the
// result is the one with the largest final ELBO.
type Restarts struct {
	// Seeds are the seeds run, Seed, Seed+1, …; ELBO and Status each one's
	// final ELBO and status (ELBO 0 for a fit with none).
	Seeds  []uint64  `json:"seeds"`
	ELBO   []float64 `json:"elbo"`
	Status []string  `json:"status"`
	// Best is the index of the result kept; Spread is the largest final
	// ELBO minus the smallest, which says how much the start matters.
	Best   int     `json:"best"`
	Spread float64 `json:"spread"`
}

// FitRestarts runs fit under s from the seeds s.Seed, …, s.Seed+s.Restarts−1
// and returns the result with the largest final ELBO (the lowest seed
// among equals), with Result.Restarts recording every run. The fits run
// concurrently, at most s.Workers (0: GOMAXPROCS) at a time, with the
// workers shared among them; since a fit does not depend on its number of
// workers, neither does the result. A fit that fails or ends with a
// non-finite ELBO is not chosen; if all fail, the first error is returned.
// Progress is not reported during restarts, and Start, Resume and
// Checkpoint are refused (one start point, one run to save).
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
	ParallelFor(n, concurrent, func(_, i int) {
		o := s
		o.Restarts, o.Seed, o.Workers, o.Progress = 0, s.Seed+uint64(i), per, nil
		results[i], errs[i] = fit(ctx, o)
	})
	rec := &Restarts{Best: -1}
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, r := range results {
		rec.Seeds = append(rec.Seeds, s.Seed+uint64(i))
		elbo, status := 0.0, ""
		switch {
		case errs[i] != nil:
			status = "error: " + errs[i].Error()
		case len(r.ELBO) == 0:
			status = r.Status
		default:
			elbo, status = r.ELBO[len(r.ELBO)-1], r.Status
			lo, hi = math.Min(lo, elbo), math.Max(hi, elbo)
			if rec.Best < 0 || elbo > rec.ELBO[rec.Best] {
				rec.Best = i
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
	best := results[rec.Best]
	best.Restarts = rec
	return best, nil
}
