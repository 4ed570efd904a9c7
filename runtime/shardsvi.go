package runtime

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
)

// ShardStepRunner runs the local steps of stochastic variational
// inference over shards: a minibatch's units, each in the shard holding
// it, and the ELBO's pass over all units.
type ShardStepRunner interface {
	// Units is the number of units of all shards.
	Units() int
	// Step sets every shard holding units of the minibatch to the
	// globals, updates those units' local factors (0-based among all
	// units), keeping them, and returns their statistics.
	Step(ctx context.Context, t int, globals []byte, units []int) (*ShardStats, error)
	// ELBO returns the units' part of the ELBO under globals (statistics
	// with the ELBO only) at the end of pass, and keeps every shard's
	// locals as that pass's (two passes: this one and the one before).
	ELBO(ctx context.Context, pass int, globals []byte) (*ShardStats, error)
}

// FitShardsSVI runs stochastic variational inference (FitSVI's mean-field
// global step and mean-field local step, untempered) over shards: each
// minibatch's units are updated by the shards holding them (runner), and
// the driver takes the natural-gradient step of the global factors and
// online EM's step of the params from their statistics, combined exactly.
// The minibatches are FitSVI's (the same shuffles of the same seed), so
// the fit is the single-process SVI fit up to the rounding of the
// minibatches' sums. After each pass the runner computes the units' part
// of the ELBO and keeps the shards' locals. The result's Run is FitSVI's
// (status PassesStatus, or FitSVI's "diverged: …"), and like FitSVI's its state is that of the last
// pass that ended with finite numbers and was not canceled: the globals
// and, under LocalsOf, the locals of that pass.
func FitShardsSVI(ctx context.Context, driver Shard, runner ShardStepRunner, s ShardSettings, svi SVISettings, seed uint64) (*ShardFit, error) {
	if driver.Units() != 0 {
		return nil, fmt.Errorf("the driver of a sharded fit holds no units; this one has %d", driver.Units())
	}
	if err := svi.Check(); err != nil {
		return nil, err
	}
	switch {
	case svi.Global != "" && svi.Global != GlobalMeanField:
		return nil, fmt.Errorf("a sharded SVI fit takes the mean-field global step only, not %q", svi.Global)
	case svi.Local != "" && svi.Local != LocalMeanField:
		return nil, fmt.Errorf("a sharded SVI fit takes the mean-field local step only, not %q", svi.Local)
	}
	svi = svi.WithDefaults()
	start := time.Now()
	units := runner.Units()
	if units == 0 {
		return nil, errors.New("stochastic variational inference needs units")
	}
	if _, total := driver.Span(); units != total {
		return nil, fmt.Errorf("the shards hold %d units; the driver was made for %d", units, total)
	}
	if p := driver.NonFinite(); p != "" {
		return nil, fmt.Errorf("the starting state is not finite: %s", p)
	}
	globals, err := driver.Globals()
	if err != nil {
		return nil, err
	}
	fit := &ShardFit{Run: Run{Status: PassesStatus}, Globals: globals}
	// the driver ends holding the kept globals
	defer func() { driver.SetGlobals(fit.Globals) }()
	batch := min(svi.BatchSize, units)
	rng := NewRand(seed ^ 0x5f3759df) // FitSVI's stream
	order := make([]int, units)
	for i := range order {
		order[i] = i
	}
	prevELBO := math.Inf(-1)
	guard := newDivergenceGuard(units)
	t, seen := 0, 0
	for pass := 1; pass <= svi.Passes; pass++ {
		rng.Shuffle(units, func(i, j int) { order[i], order[j] = order[j], order[i] })
		change, settled := 0.0, 0
		tr := Trouble{}
		var stepErr error
		for lo := 0; lo < units; lo += batch {
			b := order[lo:min(lo+batch, units)]
			st, err := runner.Step(ctx, t, globals, b)
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				fit.Run.Status = "canceled"
				fit.Run.Seconds = time.Since(start).Seconds()
				return fit, nil // the pass before's state, kept
			}
			if err != nil {
				return nil, err
			}
			if st.Units != len(b) {
				return nil, fmt.Errorf("step %d: statistics of %d units, want %d", t+1, st.Units, len(b))
			}
			settled += st.Settled
			for k, n := range st.Trouble {
				tr[k] += n
			}
			seen += len(b)
			rho, scale := svi.Rho(t), float64(units)/float64(len(b))
			if svi.Ramp {
				scale = float64(min(seen, units)) / float64(len(b))
			}
			t++
			c, err := driver.SVIStep(st, rho, scale, t == 1)
			change = math.Max(change, c)
			if err != nil {
				tr.Add(err.Error())
				stepErr = err
			}
			if globals, err = driver.Globals(); err != nil {
				return nil, err
			}
		}
		el, err := runner.ELBO(ctx, pass, globals)
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			fit.Run.Status = "canceled"
			break
		}
		if err != nil {
			return nil, err
		}
		if el.ELBOUnits != units {
			return nil, fmt.Errorf("the ELBO of %d units, want %d", el.ELBOUnits, units)
		}
		elbo := driver.GlobalELBO() + el.ELBO.Value(0)
		if bad := stepNonFinite(driver.NonFinite(), nil, false, elbo); bad != "" {
			fit.Run.Status = notFiniteStatus(bad, tr, "pass", pass)
			break
		}
		fit.Globals, fit.LocalsOf = globals, pass
		fit.Run.ELBO = append(fit.Run.ELBO, elbo)
		fit.Run.Iterations = pass
		rel := RelChange(prevELBO, elbo)
		if s.Progress != nil {
			s.Progress(Progress{Iteration: pass, ELBO: elbo, RelChange: rel, MeanChange: change,
				Units: units, Settled: settled, Seconds: time.Since(start).Seconds(),
				Decreased: Decreased(prevELBO, elbo)})
		}
		prevELBO = elbo
		if d := guard.observe(pass, elbo, pass == svi.Passes); d != "" {
			fit.Run.Status = d
			break
		}
		if stepErr != nil {
			fit.Run.Status = tr.String()
			break
		}
		fit.Run.Status = PassesStatus
		if len(tr) > 0 {
			fit.Run.Status += "; trouble in the last pass: " + tr.String()
		}
	}
	fit.Run.Seconds = time.Since(start).Seconds()
	return fit, nil
}

// Units implements ShardStepRunner.
func (r *InProcessShards) Units() int {
	n := 0
	for _, sh := range r.Shards {
		n += sh.Units()
	}
	return n
}

// Step implements ShardStepRunner: the shards keep their local factors
// in memory.
func (r *InProcessShards) Step(ctx context.Context, t int, globals []byte, units []int) (*ShardStats, error) {
	if t == 0 {
		if err := r.start(); err != nil {
			return nil, err
		}
		r.svi = true
	}
	total := new(ShardStats)
	first := 0
	for i, sh := range r.Shards {
		var local []int
		for _, d := range units {
			if d >= first && d < first+sh.Units() {
				local = append(local, d-first)
			}
		}
		first += sh.Units()
		if len(local) == 0 {
			continue
		}
		if err := sh.SetGlobals(globals); err != nil {
			return nil, fmt.Errorf("shard %d: %w", i+1, err)
		}
		st, err := sh.EStep(ctx, false, local)
		if err != nil {
			return nil, err
		}
		if err := total.Merge(st); err != nil {
			return nil, err
		}
	}
	return total, nil
}

// ELBO implements ShardStepRunner.
func (r *InProcessShards) ELBO(ctx context.Context, pass int, globals []byte) (*ShardStats, error) {
	total := new(ShardStats)
	for i, sh := range r.Shards {
		r.passes[i][pass%2] = sh.Locals()
		if err := sh.SetGlobals(globals); err != nil {
			return nil, fmt.Errorf("shard %d: %w", i+1, err)
		}
		st, err := sh.EStep(ctx, true, []int{})
		if err != nil {
			return nil, err
		}
		if err := total.Merge(st); err != nil {
			return nil, err
		}
	}
	return total, nil
}
