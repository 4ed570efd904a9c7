package runtime

import (
	"context"
	"errors"
	"sync"
	"testing"
)

// FitRestarts keeps the largest final ELBO among the runs that ended
// normally, not a run that blew up with a larger one; a run that failed
// outright is recorded with a null ELBO; and a canceled context marks the
// kept result canceled.
func TestFitRestartsPrefersNormalEnds(t *testing.T) {
	runs := map[uint64]*Result[int, int]{
		0: {Converged: true, Status: "converged", ELBO: []float64{-60, -50}},
		1: {Status: "not_finite: the ELBO = NaN in iteration 3", ELBO: []float64{1e6}},
		2: {Status: "max_iterations: ELBO relative change 0.1 ≥ Tol 1e-08", ELBO: []float64{-45}},
	}
	fit := func(_ context.Context, s Settings[int, int]) (*Result[int, int], error) {
		if s.Seed == 3 {
			return nil, errors.New("bad data")
		}
		r := *runs[s.Seed]
		return &r, nil
	}
	res, err := FitRestarts(context.Background(), Settings[int, int]{Restarts: 4}, fit)
	if err != nil {
		t.Fatal(err)
	}
	rec := res.Restarts
	if rec.Best != 2 || res.Status != runs[2].Status || rec.ELBO[3] != nil || *rec.ELBO[1] != 1e6 || rec.Status[3] != "error: bad data" {
		t.Errorf("kept %d (%q), record %+v; want seed 2, the not-finite run passed over, seed 3's ELBO null", rec.Best, res.Status, rec)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err = FitRestarts(ctx, Settings[int, int]{Restarts: 3}, fit)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != "canceled" || res.Converged {
		t.Errorf("canceled restarts: status %q, converged %v", res.Status, res.Converged)
	}
}

// A held-out fit is one iteration of one run: Heldout drops restarts, the
// diagnostic and kept per-token latents.
func TestHeldoutSettingsDropTheExtras(t *testing.T) {
	s := Settings[int, int]{Restarts: 4, Keep: []string{"z"}, Seed: 3}.Heldout()
	if s.Restarts != 0 || !s.Diagnose.Off || s.Keep != nil || s.Seed != 3 {
		t.Errorf("Heldout: %+v", s)
	}
}

// Once the context is done no further run starts: -restarts 100000 once
// went on setting up every canceled run, for minutes, after an interrupt.
// The first run cancels the context; at most the runs already started
// (one per concurrent slot) end, and only they are recorded.
func TestFitRestartsStopStarting(t *testing.T) {
	const n, workers = 100000, 4
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	started := 0
	fit := func(ctx context.Context, s Settings[int, int]) (*Result[int, int], error) {
		mu.Lock()
		started++
		mu.Unlock()
		cancel()
		return &Result[int, int]{Status: "canceled", ELBO: []float64{-float64(s.Seed)}}, nil
	}
	res, err := FitRestarts(ctx, Settings[int, int]{Restarts: n, Workers: workers}, fit)
	if err != nil {
		t.Fatal(err)
	}
	if started > workers {
		t.Errorf("%d runs started after the first canceled the context; want at most %d (those already running)", started, workers)
	}
	if res.Status != "canceled" || len(res.Restarts.Seeds) != started || res.Restarts.Seeds[res.Restarts.Best] > uint64(n) {
		t.Errorf("status %q, %d seeds recorded (%d started), best %d", res.Status, len(res.Restarts.Seeds), started, res.Restarts.Best)
	}
	if best := res.Restarts.Seeds[res.Restarts.Best]; res.ELBO[0] != -float64(best) {
		t.Errorf("kept the result of seed %v, recorded as best seed %d", -res.ELBO[0], best)
	}
}
