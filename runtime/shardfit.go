package runtime

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
)

// ShardRunner runs the E-step of a sharded fit over every shard, wherever
// the shards are: InProcessShards here, a Beam pipeline in runtime/beam.
type ShardRunner interface {
	// EStep runs E-step it (1-based) of every shard: each sets its
	// globals from the encoding, takes its locals as E-step it−1 left
	// them (its starting values for it = 1), and, with elbo, adds the
	// units' part of the ELBO there; then it updates its units and keeps
	// its new locals as those of iteration it. It returns the statistics
	// of all units, merged.
	EStep(ctx context.Context, it int, globals []byte, elbo bool) (*ShardStats, error)
	// Units is the number of units of all shards.
	Units() int
}

// ShardSettings are the options of FitShards.
type ShardSettings struct {
	// Convergence is the rule that ends the fit (defaults as FitCA's).
	Convergence
	// Progress, if set, is called after every iteration.
	Progress func(Progress)
}

// ShardFit is the outcome of FitShards.
type ShardFit struct {
	// Run records the fit as FitCA's does: iterations, the ELBO after
	// each, the status.
	Run Run
	// Globals encodes the global factors and params at the end of the
	// last kept iteration (the driver's Shard holds them too).
	Globals []byte
	// LocalsOf is the iteration (the pass, under SVI) that left the kept
	// locals (0: the starting values): the runner holds them under it.
	LocalsOf int
}

// LocalsKept is how many generations of a shard's locals a runner keeps:
// E-step it+1 writes while those of it, which the fit may still keep,
// and of it−1, which it keeps if iteration it turns out not finite, stay.
const LocalsKept = 3

// FitShards runs variational EM over shards: Wang & Blei's Fig. 1 with
// the E-step of every unit done by runner, shard by shard, and the
// global factors' closed-form updates (Eq. 18) and the params' M-step
// done by the driver from the shards' expected sufficient statistics,
// which runner combines exactly (ShardStats). Each iteration is FitCA's,
// in the same order (units, global factors, params, ELBO), so the fit is
// the single-process fit's up to the rounding of its sums: within a shard
// units are summed in unit order, across shards exactly.
//
// The ELBO of iteration i needs the units' local factors of E-step i
// under the globals that M-step i produced; E-step i+1 starts from just
// those, so it computes them on its way (elbo = true) rather than in a
// pass of its own. Iteration i's convergence is therefore known after
// E-step i+1, which the fit runs once more than it keeps: the kept
// locals are E-step i's (LocalsOf), which the runner still holds.
//
// driver is the model's Shard of no units (Model.Shard on data without
// units), started as the single-process fit starts (same Options, same
// seed).
func FitShards(ctx context.Context, driver Shard, runner ShardRunner, s ShardSettings) (*ShardFit, error) {
	if driver.Units() != 0 {
		return nil, fmt.Errorf("the driver of a sharded fit holds no units; this one has %d", driver.Units())
	}
	start := time.Now()
	conv := s.Convergence.WithDefaults()
	if _, total := driver.Span(); runner.Units() != total {
		return nil, fmt.Errorf("the shards hold %d units; the driver was made for %d", runner.Units(), total)
	}
	if p := driver.NonFinite(); p != "" {
		return nil, fmt.Errorf("the starting state is not finite: %s", p)
	}
	globals, err := driver.Globals()
	if err != nil {
		return nil, err
	}
	fit := &ShardFit{Run: Run{Status: "max_iterations"}, Globals: globals}
	// the driver ends holding the kept globals
	defer func() { driver.SetGlobals(fit.Globals) }()
	st, err := runner.EStep(ctx, 1, globals, false)
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		fit.Run.Status = "canceled"
		fit.Run.Seconds = time.Since(start).Seconds()
		return fit, nil
	}
	if err != nil {
		return nil, err
	}
	prevELBO := math.Inf(-1)
	for it := 1; ; it++ {
		tr := Trouble{}
		for k, n := range st.Trouble {
			tr[k] += n
		}
		change, paramChange, mErr := driver.MStep(st)
		if mErr != nil {
			tr.Add(mErr.Error())
		}
		if bad := driver.NonFinite(); bad != "" {
			fit.Run.Status = notFiniteStatus(bad, tr, "iteration", it)
			break
		}
		next, err := driver.Globals()
		if err != nil {
			return nil, err
		}
		following, err := runner.EStep(ctx, it+1, next, true)
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			fit.Run.Status = "canceled"
			break
		}
		if err != nil {
			return nil, err
		}
		elbo := driver.GlobalELBO() + following.ELBO.Value(0)
		if !isFinite(elbo) {
			fit.Run.Status = notFiniteStatus(fmt.Sprintf("the ELBO = %v", elbo), tr, "iteration", it)
			break
		}
		fit.Globals, fit.LocalsOf = next, it
		fit.Run.ELBO = append(fit.Run.ELBO, elbo)
		fit.Run.Iterations = it
		rel := RelChange(prevELBO, elbo)
		check := IterationCheck{RelChange: rel, GlobalChange: change, Units: st.Units, Settled: st.Settled, Trouble: tr}
		pending, unmet := conv.Unmet(check)
		if s.Progress != nil {
			s.Progress(Progress{Iteration: it, ELBO: elbo, RelChange: rel, MeanChange: math.Max(change, paramChange),
				Units: st.Units, Settled: st.Settled, Seconds: time.Since(start).Seconds(),
				Decreased: Decreased(prevELBO, elbo), Pending: pending})
		}
		if mErr != nil {
			fit.Run.Status = tr.String()
			break
		}
		if len(unmet) == 0 {
			fit.Run.Converged, fit.Run.Status = true, "converged"
			break
		}
		fit.Run.Status = MaxIterationsStatus(unmet)
		if it >= conv.MaxIter {
			break
		}
		prevELBO, st = elbo, following
	}
	fit.Run.Seconds = time.Since(start).Seconds()
	return fit, nil
}

// InProcessShards runs the shards' E-steps in this process, one shard
// after another: the reference a distributed runner is checked against,
// and a way to fit data that are already split.
type InProcessShards struct {
	Shards []Shard
	// locals[i][it%LocalsKept] are shard i's locals after E-step it (0:
	// its starting values).
	locals [][LocalsKept][]byte
	// passes[i][pass%2] are, under SVI, shard i's locals at the end of a
	// pass (0: its starting values).
	passes [][2][]byte
	svi    bool
}

// start checks that the shards tile their units, in order, and saves
// their starting locals.
func (r *InProcessShards) start() error {
	if len(r.Shards) == 0 {
		return errors.New("a sharded fit needs at least one shard")
	}
	next := 0
	for i, sh := range r.Shards {
		first, total := sh.Span()
		if first != next || total != r.Units() {
			return fmt.Errorf("shard %d holds units %d..%d of %d; the shards before it end at unit %d of %d", i+1, first+1, first+sh.Units(), total, next, r.Units())
		}
		next += sh.Units()
	}
	r.locals = make([][LocalsKept][]byte, len(r.Shards))
	r.passes = make([][2][]byte, len(r.Shards))
	for i, sh := range r.Shards {
		r.locals[i][0] = sh.Locals()
		r.passes[i][0] = r.locals[i][0]
	}
	return nil
}

// EStep implements ShardRunner.
func (r *InProcessShards) EStep(ctx context.Context, it int, globals []byte, elbo bool) (*ShardStats, error) {
	if it == 1 {
		if err := r.start(); err != nil {
			return nil, err
		}
	}
	var total *ShardStats
	for i, sh := range r.Shards {
		if err := sh.SetGlobals(globals); err != nil {
			return nil, fmt.Errorf("shard %d: %w", i+1, err)
		}
		if err := sh.SetLocals(r.locals[i][(it-1)%LocalsKept]); err != nil {
			return nil, fmt.Errorf("shard %d: %w", i+1, err)
		}
		st, err := sh.EStep(ctx, elbo, nil)
		if err != nil {
			return nil, err
		}
		r.locals[i][it%LocalsKept] = sh.Locals()
		if total == nil {
			total = st
		} else if err := total.Merge(st); err != nil {
			return nil, err
		}
	}
	return total, nil
}

// Locals returns the shards' locals the fit kept, joined (ConcatLocals):
// after E-step it, FitShards' LocalsOf; under SVI, after pass it.
func (r *InProcessShards) Locals(it int) ([]byte, error) {
	if r.locals == nil {
		return nil, errors.New("the shards have not been fitted")
	}
	parts := make([][]byte, len(r.Shards))
	for i := range r.Shards {
		if r.svi {
			parts[i] = r.passes[i][it%2]
		} else {
			parts[i] = r.locals[i][it%LocalsKept]
		}
		if parts[i] == nil {
			return nil, fmt.Errorf("shard %d: no locals of iteration %d", i+1, it)
		}
	}
	return ConcatLocals(parts)
}

// WholeResult is a sharded fit's result: whole, a Shard of all the units
// (Model.Shard on all the data, from 0 of them all), set to the fit's
// kept globals and to locals, its shards' joined (the runner's Locals of
// fit.LocalsOf); its Result is the generated package's *Result, with the
// approximation diagnostic and the summary that Fit's would have.
func WholeResult(ctx context.Context, whole Shard, fit *ShardFit, locals []byte) (any, error) {
	if first, total := whole.Span(); first != 0 || whole.Units() != total {
		return nil, fmt.Errorf("the whole result needs a shard of all %d units; this one has %d from unit %d", total, whole.Units(), first+1)
	}
	if err := whole.SetGlobals(fit.Globals); err != nil {
		return nil, err
	}
	if err := whole.SetLocals(locals); err != nil {
		return nil, err
	}
	return whole.Result(ctx, fit.Run), nil
}
