package runtime

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"
)

// CAModel is what a generated package supplies to FitCA, the coordinate
// ascent of Wang & Blei's Fig. 1: the model-specific updates over its
// variational state S, with W one worker's scratch space, P the params as
// a result reports them and R the result. The package implements it with
// an unexported adapter holding the Model and the Options of one fit.
type CAModel[S, W, P, R any] interface {
	// Shape describes the coordinate ascent of the model in state q.
	Shape(q S) CAShape
	// NewWorker returns the scratch space of one worker, whose updates
	// record the numerical trouble they meet in tr.
	NewWorker(tr Trouble) W
	// UpdateUnit is Fig. 1's inner loop for unit d (0-based): it updates
	// the unit's local factors until they settle and reports whether they
	// did. Units are updated concurrently, each by one worker.
	UpdateUnit(q S, w W, d int) bool
	// UpdateGlobals updates the global factors and returns their largest
	// relative change.
	UpdateGlobals(q S, w W) float64
	// ELBO is the evidence lower bound of q, computed on workers goroutines
	// with perUnit (one entry per unit) as scratch space.
	ELBO(q S, workers int, perUnit []float64) float64
	// Copy copies src into dst, reusing dst's arrays, and returns dst; a
	// zero dst is allocated. It may leave out what Result of a run that is
	// not a checkpoint does not read (per-token latents not kept).
	Copy(dst, src S) S
	// NonFinite names the first number of q that is NaN or infinite, or
	// returns "".
	NonFinite(q S) string
	// Result assembles the result of a run, or of a checkpoint, from the
	// state and params at the end of its last completed iteration.
	Result(run Run, q S, p P) R
}

// CAParams is what a model with params (variational EM) adds to CAModel;
// a model without params leaves it out, and its result's params are the
// zero P.
type CAParams[S, P any] interface {
	// MStep sets the params to the maximum of the expected complete log
	// likelihood under q and returns their largest relative change.
	MStep(q S) (float64, error)
	// Params returns the current params (a copy that later M-steps do not
	// change).
	Params() P
}

// CAPlates is what a model with latents local to loops other than its unit
// plate adds to CAModel (two-plate models: PPCA's loadings W[d] beside
// the scores z[n]): FitCA updates them after the units, latent by latent,
// the units of each in parallel (CAShape.Plates gives their numbers).
type CAPlates[S, W any] interface {
	// UpdatePlateUnit updates unit d (0-based) of the k-th such latent and
	// returns its relative change. It writes only that unit's factor.
	UpdatePlateUnit(q S, w W, k, d int) float64
}

// paramsOf returns pm's params, or the zero P without params.
func paramsOf[S, P any](pm CAParams[S, P]) P {
	var p P
	if pm != nil {
		p = pm.Params()
	}
	return p
}

// CAShape describes a model's coordinate ascent.
type CAShape struct {
	// Units is the number of units (0 without a unit plate).
	Units int
	// Plates is, for each latent local to a loop other than the unit
	// plate, that loop's number of units (CAPlates).
	Plates []int
	// Globals says the model has global factors.
	Globals bool
	// EM says the params are estimated, by an M-step after each iteration.
	EM bool
	// OnePass says one iteration reaches the fixed point while the params
	// stay put: no global factors (each unit ran to its own fixed point),
	// or a single global Gaussian updated by Laplace.
	OnePass bool
}

// Run is the model-independent record of a fit, the fields of a result
// besides its model, method, latents, params and fingerprint.
type Run struct {
	Converged  bool
	Status     string
	Iterations int
	ELBO       []float64
	Seconds    float64
	// Temperature and TemperedELBO trace a tempered fit (TemperSettings),
	// one value per iteration like ELBO: the temperature the iteration ran
	// at (VT: E_q[T] under q(T) as the iteration's own update of it left
	// it, which the next iteration's updates read) and the tempered
	// objective there (Eq. 4; VT's T-ELBO). ELBO stays the untempered bound,
	// at T = 1.
	Temperature, TemperedELBO []float64
	// Tempering describes the tempering (TemperSettings.String).
	Tempering string
	// UnitTemperature is, after local variational tempering, each unit's
	// E_q[T_d] at the end of the tempered phase: the units the model fits
	// worst have the highest (they flag outliers).
	UnitTemperature []float64
	// Warning says what is wrong with a result that is not an error: a
	// tempered fit whose mixture components merged (Collapser).
	Warning string
	// Unsettled lists the units (1-based) whose local updates did not
	// settle in the last iteration.
	Unsettled []int
	// Diagnostics are the approximation diagnostics of the Gaussian
	// factors (Diagnose), for a run that ended at the end of an iteration
	// without being canceled.
	Diagnostics []Diagnostic
}

// CASettings are the model-independent options of FitCA.
type CASettings struct {
	// Convergence is the rule that ends the fit; zero fields take their
	// defaults.
	Convergence
	// Workers is the number of goroutines updating units (0: GOMAXPROCS).
	// The result does not depend on it.
	Workers int
	// Progress, if set, is called after every iteration.
	Progress func(Progress)
	// Checkpoint says where and how often to save the run, as the JSON of
	// the model's Result with status CheckpointStatus.
	Checkpoint Checkpoint
	// Resume, if set, is the record of a checkpointed run to continue (the
	// state and params it saved are the state FitCA is given and the
	// model's params).
	Resume *Run
	// Start is when the fit started, for Seconds (zero: when FitCA is
	// called).
	Start time.Time
	// Temper tempers the fit (AVI or VT); the zero value does not.
	Temper TemperSettings
	// Diagnose tunes the approximation diagnostic run at the end of the
	// fit (Diagnose), whose draws come from Seed.
	Diagnose DiagnoseSettings
	Seed     uint64
}

// FitCA runs coordinate ascent (Fig. 1) from state q, as variational EM
// when the model's shape says so: each iteration updates every unit's
// local factors until they settle (the E-step, on s.Workers goroutines),
// then the global factors, then the params (the M-step), and computes the
// ELBO. It stops when the convergence rule (Convergence) is met, after
// MaxIter iterations, or when ctx is done. A cancellation is seen between
// units, so within one iteration; the result then has status "canceled"
// and holds the state and params at the end of the last completed
// iteration (the one whose ELBO ends the trace). Likewise an iteration
// that produces a NaN or an infinity is discarded and reported in the
// status ("not_finite: ..."): no number in a result is ever NaN or ±Inf.
// q is updated in place; the result is assembled from a copy.
func FitCA[S, W, P, R any](ctx context.Context, m CAModel[S, W, P, R], q S, s CASettings) (R, error) {
	var zero R
	start := s.Start
	if start.IsZero() {
		start = time.Now()
	}
	conv := s.Convergence.WithDefaults()
	shape := m.Shape(q)
	run := Run{Status: "max_iterations"}
	// more workers than units would only hold scratch (and a huge
	// -workers would run out of memory); results do not depend on it
	workers := min(Workers(s.Workers), max(shape.Units, slices.Max(append([]int{1}, shape.Plates...))))
	ws, troubles := newWorkers(workers, m.NewWorker)
	units := shape.Units
	done := make([]bool, units) // units that settled
	perUnit := make([]float64, units)
	prevELBO := math.Inf(-1)
	first := 1
	if r := s.Resume; r != nil {
		if len(r.ELBO) != r.Iterations {
			return zero, fmt.Errorf("resume: %d ELBO values for %d iterations", len(r.ELBO), r.Iterations)
		}
		first = r.Iterations + 1
		run.Iterations = r.Iterations
		run.ELBO = append(run.ELBO, r.ELBO...)
		if len(r.ELBO) > 0 {
			prevELBO = r.ELBO[len(r.ELBO)-1]
		}
		run.Seconds = r.Seconds
		if r.Iterations > 0 {
			for d := range done {
				done[d] = true
			}
		}
		for _, d := range r.Unsettled {
			if d < 1 || d > units {
				return zero, fmt.Errorf("resume: unsettled unit %d is outside 1..%d", d, units)
			}
			done[d-1] = false
		}
	}
	// kept is the state at the end of the last completed iteration whose
	// numbers are all finite: what FitCA returns, also when a cancellation
	// cuts the next iteration short or the next one produces a NaN.
	var kept S
	kept = m.Copy(kept, q)
	pm, _ := m.(CAParams[S, P])
	plates, _ := m.(CAPlates[S, W])
	if len(shape.Plates) > 0 && plates == nil {
		return zero, fmt.Errorf("the model has latents local to other loops (CAShape.Plates) but no update for them (CAPlates)")
	}
	var plateChange []float64
	for _, n := range shape.Plates {
		plateChange = make([]float64, max(len(plateChange), n))
	}
	keptParams, keptDone := paramsOf(pm), append([]bool(nil), done...)
	if p := m.NonFinite(q); p != "" {
		return zero, fmt.Errorf("the starting state is not finite: %s", p)
	}
	em := shape.EM
	if em && pm == nil {
		return zero, fmt.Errorf("the model estimates params (CAShape.EM) but has no M-step (CAParams)")
	}
	tt, err := newTemperer(m, q, s.Temper)
	if err != nil {
		return zero, err
	}
	defer tt.reset()
	if tt != nil && (s.Resume != nil || s.Checkpoint.On()) {
		return zero, errors.New("a tempered fit (annealing or variational tempering) cannot checkpoint or resume yet")
	}
	tempering := tt != nil // in the tempered phase, before the fit runs at T = 1
	run.Tempering = s.Temper.String()
	var ljPerUnit []float64
	if tt != nil {
		ljPerUnit = make([]float64, units)
	}
	prevTELBO := math.Inf(-1)
	atEnd := true // q is kept: the run is at the end of an iteration
	for it := first; it <= conv.MaxIter; it++ {
		if err := ctx.Err(); err != nil {
			run.Status = "canceled"
			break
		}
		atEnd = false
		if tempering && !tt.learns() && tt.setAnneal(float64(it-1)) == 1 {
			tempering = false // the schedule has ended
		}
		if !tempering && tt != nil {
			*tt.tp = Temper{}
		}
		for _, tr := range troubles {
			clear(tr)
		}
		complete := ParallelForUntil(ctx.Done(), units, workers, func(w, d int) {
			if !shape.Globals && len(shape.Plates) == 0 && !em && done[d] {
				return // nothing a settled unit reads has changed since
			}
			done[d] = m.UpdateUnit(q, ws[w], d)
		})
		if !complete {
			run.Status = "canceled"
			break
		}
		change := 0.0
		canceled := false
		for k, n := range shape.Plates {
			// each unit's change in its own slot, folded in unit order
			if !ParallelForUntil(ctx.Done(), n, workers, func(w, d int) {
				plateChange[d] = plates.UpdatePlateUnit(q, ws[w], k, d)
			}) {
				canceled = true
				break
			}
			for _, c := range plateChange[:n] {
				change = math.Max(change, c)
			}
		}
		if canceled {
			run.Status = "canceled"
			break
		}
		if shape.Globals {
			if tempering && !tt.tp.Off() {
				change = temperedGlobals(tt.gm, tt.shape, q, ws[0], units, tt.tp, tt.eta, tt.prev)
			} else {
				change = m.UpdateGlobals(q, ws[0])
			}
		}
		tr := Trouble{}
		for _, t := range troubles {
			for k, n := range t {
				tr[k] += n
			}
		}
		settled := 0
		for _, ok := range done {
			if ok {
				settled++
			}
		}
		paramChange := 0.0
		if em {
			if paramChange, err = pm.MStep(q); err != nil {
				tr.Add(err.Error())
			}
		}
		elbo := m.ELBO(q, workers, perUnit)
		telbo, temp := elbo, 1.0
		if tempering {
			lj := unitLogJoint(tt.tm, q, units, workers, ljPerUnit)
			if tt.vt != nil {
				// q(y), the temperature's factor (Eq. 9), then E_q[1/T] for
				// the next iteration's updates
				eta := tt.eta[:len(tt.s.Grid)]
				tt.vt.natural(lj, eta)
				tt.vt.set(eta)
				tt.tp.Global = tt.vt.invT()
			}
			if tt.lt != nil {
				// each unit's q(T_d) (Eq. 10), then its E_q[1/T_d]
				tt.lt.prepare(q)
				ParallelFor(units, workers, func(_, d int) { tt.lt.update(d, ljPerUnit[d]) })
				run.UnitTemperature = tt.lt.unitT()
			}
			telbo, temp = temperedELBO(elbo, tt.tp, ljPerUnit), tt.temperature()
			if tt.vt != nil {
				telbo += tt.vt.bound()
			}
			if tt.lt != nil {
				telbo += tt.lt.bound()
			}
		}
		// Params move only in M-steps; without them the kept copy stands.
		params := keptParams
		if em {
			params = pm.Params()
		}
		if bad := stepNonFinite(m.NonFinite(q), params, em, elbo); bad == "" && !isFinite(telbo) {
			run.Status = notFiniteStatus(fmt.Sprintf("the tempered ELBO = %v", telbo), tr, "iteration", it)
			break
		} else if bad != "" {
			if settled < units {
				tr.Add(fmt.Sprintf("%d of %d units did not settle in %d sweeps", units-settled, units, conv.LocalMaxIter))
			}
			run.Status = notFiniteStatus(bad, tr, "iteration", it)
			break
		}
		kept = m.Copy(kept, q)
		keptParams = params
		copy(keptDone, done)
		atEnd = true
		run.ELBO = append(run.ELBO, elbo)
		run.Iterations = it
		rel := RelChange(prevELBO, elbo)
		check := IterationCheck{RelChange: rel, GlobalChange: change, Units: units, Settled: settled,
			Trouble: tr, FixedPoint: !em && shape.OnePass}
		if tt != nil {
			run.Temperature = append(run.Temperature, temp)
			run.TemperedELBO = append(run.TemperedELBO, telbo)
			if tempering && tt.learns() {
				// VT's and LVT's phase ends at a fixed point of the T-ELBO.
				// (LVT's updates of the other factors leave out how its
				// units' normalizers depend on them, as the paper's Eq. 11
				// does, so they do not raise its T-ELBO factor by factor;
				// the T-ELBO is still a lower bound.)
				check.RelChange = RelChange(prevTELBO, telbo)
			}
			prevTELBO = telbo
		}
		// An M-step that moved the params since makes another iteration
		// necessary even where one is a fixed point.
		pending, unmet := conv.Unmet(check)
		if tempering {
			if tt.learns() && len(unmet) == 0 {
				tempering = false // VT or LVT has converged: on to T = 1
			}
			pending = append(pending, "temperature")
			unmet = append(unmet, fmt.Sprintf("the fit is still tempered (T = %.4g), and converges only at T = 1", temp))
		}
		if s.Progress != nil {
			p := Progress{Iteration: it, ELBO: elbo, RelChange: rel, MeanChange: math.Max(change, paramChange),
				Units: units, Settled: settled, Seconds: time.Since(start).Seconds(),
				Decreased: Decreased(prevELBO, elbo), Pending: pending}
			if tt != nil {
				p.Temperature, p.TemperedELBO = temp, telbo
			}
			s.Progress(p)
		}
		if err != nil {
			run.Status = tr.String() // the params could not be estimated
			break
		}
		if len(unmet) == 0 {
			run.Converged = true
			run.Status = "converged"
			break
		}
		run.Status = MaxIterationsStatus(unmet)
		prevELBO = elbo
		if c := s.Checkpoint; c.On() && it%c.Every == 0 && it < conv.MaxIter {
			cp := run
			cp.Status, cp.Seconds = CheckpointStatus, run.Seconds+time.Since(start).Seconds()
			cp.Unsettled = unsettledUnits(keptDone)
			// q is kept's equal here, and holds what Copy leaves out of
			// kept (per-token latents not in Settings.Keep)
			if err := WriteCheckpoint(c.Path, m.Result(cp, q, keptParams)); err != nil {
				run.Status = "checkpoint failed: " + err.Error()
				break
			}
		}
	}
	// q holds the last iteration's modes, also of one that was not finite
	// (the ELBO of an improper q can be −Inf)
	improperEnd(m, q, &run)
	if dm, ok := m.(Diagnosed[S]); ok && atEnd && run.Status != "canceled" {
		// q holds all that kept does, and what Copy leaves out of it
		diagnoseRun(ctx, &run, dm, q, s.Diagnose, s.Seed, workers)
	}
	run.Seconds += time.Since(start).Seconds()
	run.Unsettled = unsettledUnits(keptDone)
	if c, ok := m.(Collapser[S]); ok && tt != nil && units > 0 {
		run.Warning = collapseWarning(c.Collapsed(kept))
	}
	return m.Result(run, kept, keptParams), nil
}

// unsettledUnits lists the units (1-based) not marked done.
func unsettledUnits(done []bool) []int {
	var out []int
	for d, ok := range done {
		if !ok {
			out = append(out, d+1)
		}
	}
	return out
}

// newWorkers makes n workers with newWorker, each counting its troubles in
// a Trouble of its own.
func newWorkers[W any](n int, newWorker func(Trouble) W) ([]W, []Trouble) {
	troubles := make([]Trouble, n)
	ws := make([]W, n)
	for w := range ws {
		troubles[w] = Trouble{}
		ws[w] = newWorker(troubles[w])
	}
	return ws, troubles
}
