package runtime

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Stochastic variational inference (Hoffman, Blei, Wang & Paisley 2013;
// Chen's notes, §SVI). Each step samples a minibatch B of units, fits their
// local factors with the global factors held fixed (the same UpdateUnit as
// coordinate ascent), and moves each conjugate global factor along its
// natural gradient: with λ̂ = prior + (D/|B|)·Σ_{b∈B} E[t(x_b, z_b)], the
// natural parameter the global would have if every unit looked like the
// minibatch,
//
//	λ ← (1 − ρ_t)·λ + ρ_t·λ̂,   ρ_t = (τ0 + t)^(−κ),  t = 0, 1, 2, …
//
// which for κ ∈ (0.5, 1] satisfies Robbins–Monro (t counts from 0 as in
// Hoffman et al.'s code; τ0 = 1, κ = 1 gives ρ_t = 1/(t+1), under which λ
// is the running average of the λ̂). Params (variational EM's
// point estimates) get the stochastic analogue, online EM (Cappé & Moulines
// 2009): their expected sufficient statistics are averaged the same way,
// s ← (1 − ρ_t)·s + ρ_t·(D/|B|)·Σ_b s_b, and the M-step is taken from s.

// SVIModel is what a generated package supplies to FitSVI besides the
// coordinate-ascent kernels: Stochastic says what the steps update, and
// the model implements SVIGlobals if it has conjugate global factors and
// SVIParams if it has params.
type SVIModel[S, W, P, R any] interface {
	CAModel[S, W, P, R]
	// Stochastic describes the global factors and params SVI steps.
	Stochastic() SVIShape
}

// SVIGlobals are the natural parameters of a model's conjugate global
// factors, split into the part from statements outside the unit plate (the
// prior) and each unit's part (its expected sufficient statistics).
type SVIGlobals[S, W any] interface {
	// Natural writes the natural parameters of global factor g (in the
	// order of SVIShape.Natural) under q into eta.
	Natural(q S, g int, eta []float64)
	// SetNatural sets global factor g of q to natural parameters eta and
	// refreshes the expectations other updates read.
	SetNatural(q S, g int, eta []float64)
	// PriorNatural adds into eta the part of global factor g's optimal
	// natural parameters (Eq. 18) from the statements outside the unit
	// plate, under the current q of the other factors.
	PriorNatural(q S, g int, eta []float64)
	// UnitNatural adds into eta unit d's part: E_q[η] of the unit's
	// statements in g's Markov blanket, its expected sufficient statistics,
	// times invT, the unit's inverse temperature in a tempered fit (Mandt
	// et al. 2016, Eq. 8 and 11; 1 untempered, which leaves them exact).
	UnitNatural(q S, w W, g, d int, invT float64, eta []float64)
}

// SVIParams are the M-steps of a model's params as functions of expected
// sufficient statistics, summed over units, for online EM.
type SVIParams[S, W any] interface {
	// UnitParamStats adds into stats unit d's expected sufficient
	// statistics of the params' M-steps (SVIShape.ParamStats numbers).
	UnitParamStats(q S, w W, d int, stats []float64)
	// ParamStep sets the params to the M-step's maximum for the expected
	// sufficient statistics stats of all units, and returns their largest
	// relative change.
	ParamStep(q S, stats []float64) (float64, error)
}

// SVIShape describes what a model's stochastic steps update.
type SVIShape struct {
	// Natural is the length of the natural parameter of each conjugate
	// global factor, in update order.
	Natural []int
	// Names names them, for errors.
	Names []string
	// Families are their families (Dirichlet, Gamma, Normal, …), and Rows
	// the length of a vector family's rows (the last dimension of a
	// Dirichlet; 1 for elementwise families): what SSMF draws them by.
	Families []string
	Rows     []int
	// ParamStats is the number of expected sufficient statistics of the
	// params' M-steps (0: no params, or FixParams).
	ParamStats int
}

// SVISettings are the options of stochastic variational inference. A
// zero field takes its default.
type SVISettings struct {
	// BatchSize is the number of units in a minibatch (default 256; at
	// most the number of units).
	BatchSize int `json:"batch_size,omitempty"`
	// Tau0 > 0 and Kappa ∈ (0.5, 1] set the step sizes ρ_t = (τ0 + t)^−κ,
	// t = 0, 1, …: τ0 down-weights the early steps, κ is the rate at which
	// old information is forgotten. The defaults, 16 and 0.7, did best on
	// the AP corpus (a sweep over τ0 ∈ {1, 4, 16, 64} and κ ∈ {0.6, 0.7,
	// 0.9}); Hoffman et al. 2010 found larger τ0 (up to 1024) better for
	// corpora of millions of documents.
	Tau0  float64 `json:"tau0,omitempty"`
	Kappa float64 `json:"kappa,omitempty"`
	// Passes is the number of passes over the units (default 10). Each
	// pass visits every unit once, in an order drawn from the seed.
	Passes int `json:"passes,omitempty"`
	// Global is the global step: "" or "meanfield" (SVI's), "ssmf" (Hoffman
	// 2014's Algorithm 1: draw β̃ from q(β), fit the local factors given it,
	// and follow the stochastic natural gradient of Eq. 26) or "ssmf-a"
	// (Algorithm 2, the approximate gradient of Eq. 29). SSMF and SSMF-A
	// ramp the data size N up over the first pass (§2.2).
	Global string `json:"global,omitempty"`
	// Local is the local step: "" or "meanfield" (coordinate ascent on the
	// unit's factors, UpdateUnit) or "gibbs" (GibbsUnit: BurnIn sweeps,
	// then Samples sweeps whose draws of the categorical latents are
	// averaged; 0 takes the defaults, 10 and 10).
	Local   string `json:"local,omitempty"`
	BurnIn  int    `json:"burn_in,omitempty"`
	Samples int    `json:"samples,omitempty"`
	// Ramp ramps N up over the first pass for the mean-field global step
	// too (SSMF always does).
	Ramp bool `json:"ramp,omitempty"`
}

// SVI defaults.
const (
	DefaultBatchSize = 256
	DefaultTau0      = 16
	DefaultKappa     = 0.7
	DefaultPasses    = 10
	DefaultBurnIn    = 10
	DefaultSamples   = 10
	// DefaultSVILocalTol is Settings.LocalTol's default under SVI: a
	// minibatch's local fits need not be tighter than the noise of the
	// step (on AP, 1e-3 gives the held-out likelihood of 1e-6 in 60% of
	// the time).
	DefaultSVILocalTol = 1e-3
)

// WithDefaults fills the zero fields of s with their defaults.
func (s SVISettings) WithDefaults() SVISettings {
	if s.BatchSize == 0 {
		s.BatchSize = DefaultBatchSize
	}
	if s.Tau0 == 0 {
		s.Tau0 = DefaultTau0
	}
	if s.Kappa == 0 {
		s.Kappa = DefaultKappa
	}
	if s.Passes == 0 {
		s.Passes = DefaultPasses
	}
	if s.Global == "" {
		s.Global = GlobalMeanField
	}
	if s.Local == "" {
		s.Local = LocalMeanField
	}
	if s.BurnIn == 0 {
		s.BurnIn = DefaultBurnIn
	}
	if s.Samples == 0 {
		s.Samples = DefaultSamples
	}
	return s
}

// Check reports a setting outside its range.
func (s SVISettings) Check() error {
	switch {
	case s.BatchSize < 0:
		return fmt.Errorf("SVI batch size %d is negative", s.BatchSize)
	case s.Passes < 0:
		return fmt.Errorf("SVI passes %d is negative", s.Passes)
	case !(s.Tau0 >= 0) || math.IsInf(s.Tau0, 0):
		return fmt.Errorf("SVI τ0 = %v must be a finite number > 0 (0: the default)", s.Tau0)
	case s.Kappa != 0 && !(s.Kappa > 0.5 && s.Kappa <= 1):
		return fmt.Errorf("SVI κ = %v is outside (0.5, 1], where the step sizes converge (Robbins–Monro)", s.Kappa)
	case s.Global != "" && s.Global != GlobalMeanField && s.Global != GlobalSSMF && s.Global != GlobalSSMFA:
		return fmt.Errorf("unknown global step %q: give \"meanfield\" (SVI), \"ssmf\" or \"ssmf-a\" (Hoffman 2014's Algorithms 1 and 2)", s.Global)
	case s.Local == "cvb0":
		return errors.New("the CVB0 local step (Asuncion et al. 2009) is not implemented: it collapses LDA's topic proportions, which the generated local updates do not; use \"meanfield\" or \"gibbs\"")
	case s.Local != "" && s.Local != LocalMeanField && s.Local != LocalGibbs:
		return fmt.Errorf("unknown local step %q: give \"meanfield\" or \"gibbs\"", s.Local)
	case s.BurnIn < 0 || s.Samples < 0:
		return fmt.Errorf("Gibbs burn-in %d and samples %d must not be negative", s.BurnIn, s.Samples)
	}
	return nil
}

// sviParts returns m's natural parameters (nil without conjugate global
// factors) and params' statistics (nil without params to step) for
// shape st, or why its globals cannot be updated from statistics (an
// error reading after "stochastic variational inference").
func sviParts[S, W any](m any, st SVIShape) (SVIGlobals[S, W], SVIParams[S, W], error) {
	if len(st.Natural) == 0 && st.ParamStats == 0 {
		return nil, nil, errors.New("needs conjugate global latents or params to step; this fit has neither (params held fixed by FixParams do not count)")
	}
	gm, _ := m.(SVIGlobals[S, W])
	if len(st.Natural) > 0 && gm == nil {
		return nil, nil, errors.New("does not apply: the model has global factors to step but no natural parameters for them (SVIGlobals)")
	}
	pm, _ := m.(SVIParams[S, W])
	if st.ParamStats > 0 && pm == nil {
		return nil, nil, errors.New("does not apply: the model has params to step but no statistics for them (SVIParams)")
	}
	return gm, pm, nil
}

// Rho is the step size ρ_t = (τ0 + t)^−κ of step t (0-based).
func (s SVISettings) Rho(t int) float64 {
	return math.Pow(s.Tau0+float64(t), -s.Kappa)
}

// PassesStatus is the status of an SVI run that completed its passes: it
// has not been checked for convergence (its ELBO is noisy by design). If
// the last pass met numerical trouble, the status goes on with
// "; trouble in the last pass: " and what it was.
const PassesStatus = "passes_completed"

// FitSVI runs stochastic variational inference from state q for s.SVI's
// passes. Each pass draws an order of the units from seed, cuts it into
// minibatches of BatchSize (the last may be smaller), and takes one
// stochastic step per minibatch: the minibatch's units are fitted on
// s.Workers goroutines; their natural parameter parts are summed in
// minibatch order, so the result does not depend on the workers. After
// each pass the ELBO of the current q is computed (a true lower bound: the
// local factors of each unit are those of its last visit), the state is
// checked for NaN and infinities and Progress is called. The result's
// Iterations counts passes, its ELBO has one value per pass, and its status
// is PassesStatus ("canceled", or "not_finite: …" with the state after the
// last good pass, or "diverged: …" when the ELBO fell far below its best
// and stayed there, divergenceGuard, with the state of that pass). Checkpoints and Resume are not supported yet.
func FitSVI[S, W, P, R any](ctx context.Context, m SVIModel[S, W, P, R], q S, s CASettings, svi SVISettings, seed uint64) (R, error) {
	var zero R
	start := s.Start
	if start.IsZero() {
		start = time.Now()
	}
	err := svi.Check()
	if err != nil {
		return zero, err
	}
	if s.Resume != nil || s.Checkpoint.On() {
		return zero, errors.New("stochastic variational inference cannot checkpoint or resume a run yet")
	}
	svi = svi.WithDefaults()
	shape, st := m.Shape(q), m.Stochastic()
	units := shape.Units
	if units == 0 {
		return zero, errors.New("stochastic variational inference needs a unit plate (a loop `for d in 1:D` holding local latents)")
	}
	gm, pm, err := sviParts[S, W](m, st)
	if err != nil {
		return zero, fmt.Errorf("stochastic variational inference %w", err)
	}
	if p := m.NonFinite(q); p != "" {
		return zero, fmt.Errorf("the starting state is not finite: %s", p)
	}
	sampled := svi.Global != GlobalMeanField
	var sm SVISampled[S]
	var draws []*globalDraw
	if sampled {
		if sm, err = ssmfModel(m, st); err != nil {
			return zero, err
		}
		for g, fam := range st.Families {
			draws = append(draws, newGlobalDraw(fam, st.Natural[g], st.Rows[g], svi.Global == GlobalSSMF))
		}
	}
	var gu GibbsUnits[S, W]
	if svi.Local == LocalGibbs {
		var ok bool
		if gu, ok = m.(GibbsUnits[S, W]); !ok {
			why := "the model has no Gibbs sampler for its local latents"
			if n, ok := m.(interface{ NoGibbs() string }); ok {
				why = n.NoGibbs()
			}
			return zero, fmt.Errorf("the Gibbs local step does not apply: %s", why)
		}
	}
	if (sampled || gu != nil) && s.Temper.On() {
		return zero, errors.New("tempering is not supported with the SSMF global steps or the Gibbs local step yet")
	}
	tt, err := newTemperer(m, q, s.Temper)
	if err != nil {
		return zero, err
	}
	defer tt.reset()
	var ljPerUnit, etaY, etaYHat []float64
	if tt != nil {
		ljPerUnit = make([]float64, units)
		if tt.vt != nil {
			etaY, etaYHat = make([]float64, len(tt.s.Grid)), make([]float64, len(tt.s.Grid))
		}
	}
	batch := min(svi.BatchSize, units)
	workers := min(Workers(s.Workers), batch)
	ws, troubles := newWorkers(workers, m.NewWorker)
	rng := NewRand(seed ^ 0x5f3759df)
	order := make([]int, units)
	for i := range order {
		order[i] = i
	}
	// λ, λ̂ and the minibatch sums per global factor; the params' running
	// statistics.
	lam := make([][]float64, len(st.Natural))
	hat := make([][]float64, len(st.Natural))
	for g, n := range st.Natural {
		lam[g], hat[g] = make([]float64, n), make([]float64, n)
	}
	var stats, statsHat []float64
	if st.ParamStats > 0 {
		stats, statsHat = make([]float64, st.ParamStats), make([]float64, st.ParamStats)
	}
	done := make([]bool, units)
	perUnit := make([]float64, units)
	t, seen := 0, 0 // steps taken, units visited
	// anti: Algorithm 1 with an antithetic family (Normal) among the
	// globals evaluates each step's local steps three times, given the
	// draw, its reflection and the mean (antitheticNormalNatGrad), into
	// hat and more
	anti := false
	for _, gd := range draws {
		anti = anti || gd.antithetic()
	}
	var more [][][]float64
	if anti {
		more = make([][][]float64, len(st.Natural))
		for g, n := range st.Natural {
			more[g] = [][]float64{make([]float64, n), make([]float64, n)}
		}
	}
	// fitLocals fits (or samples) minibatch b's local factors given the
	// global factors as they are set, evaluation half of step t (0, or 1
	// for the other evaluations of an antithetic step: their own Gibbs
	// streams); false
	// if ctx was canceled
	fitLocals := func(b []int, eval uint64) bool {
		return ParallelForUntil(ctx.Done(), len(b), workers, func(w, i int) {
			if gu != nil {
				rng := rand.New(rand.NewPCG(seed^0x6a09e667f3bcc909^eval*0xbb67ae8584caa73b, uint64(t)<<32|uint64(b[i])))
				gu.GibbsUnit(q, ws[w], b[i], rng, svi.BurnIn, svi.Samples)
				done[b[i]] = true
				return
			}
			done[b[i]] = m.UpdateUnit(q, ws[w], b[i])
		})
	}
	var kept S
	kept = m.Copy(kept, q)
	cp, _ := m.(CAParams[S, P])
	keptParams := paramsOf(cp)
	run := Run{Status: PassesStatus, Tempering: s.Temper.String()}
	prevELBO := math.Inf(-1)
	guard := newDivergenceGuard(units)
	atEnd := true // q is kept: the run is at the end of a pass
passes:
	for pass := 1; pass <= svi.Passes; pass++ {
		atEnd = false
		rng.Shuffle(units, func(i, j int) { order[i], order[j] = order[j], order[i] })
		change := 0.0
		steps := 0 // this pass's
		shortSteps := make([]int, len(lam))
		for _, tr := range troubles {
			clear(tr)
		}
		for lo := 0; lo < units; lo += batch {
			if ctx.Err() != nil {
				run.Status = "canceled"
				break passes
			}
			b := order[lo:min(lo+batch, units)]
			if tt != nil {
				if tt.vt != nil {
					tt.tp.Global = tt.vt.invT()
				} else {
					// the schedule's length is in passes over the data
					tt.setAnneal(float64(pass-1) + float64(lo)/float64(units))
				}
			}
			if sampled {
				// β̃ ~ q(β), and the local steps see a point mass at it
				for g := range lam {
					gm.Natural(q, g, lam[g])
					draws[g].sample(lam[g], seed^uint64(t+1)*0x9e3779b97f4a7c15^uint64(g), workers)
					sm.SetMoments(q, g, draws[g].t)
				}
			}
			if !fitLocals(b, 0) {
				for g := range draws {
					gm.SetNatural(q, g, lam[g]) // q(β) back from the point mass
				}
				run.Status = "canceled"
				break passes
			}
			seen += len(b)
			steps++
			rho, scale := svi.Rho(t), float64(units)/float64(len(b))
			if sampled || svi.Ramp {
				scale = float64(min(seen, units)) / float64(len(b)) // N_t (§2.2)
			}
			t++
			// unitPart sets h to the minibatch's part of global factor g's
			// natural parameters, scaled to the data (each unit's at its
			// inverse temperature)
			unitPart := func(g int, h []float64) {
				clear(h)
				for _, d := range b {
					invT := 1.0
					if tt != nil {
						invT = tt.tp.At(d)
					}
					gm.UnitNatural(q, ws[0], g, d, invT, h)
				}
				for i := range h {
					h[i] *= scale
				}
			}
			if sampled {
				// every factor's statistics given β̃, then (antithetic
				// steps) given its reflection and the mean, then q(β)'s
				// expectations back for the priors' parts
				for g := range lam {
					unitPart(g, hat[g])
				}
				for e := evalMinus; anti && e < antitheticEvals; e++ {
					for g := range lam {
						sm.SetMoments(q, g, draws[g].at(e))
					}
					if !fitLocals(b, uint64(e)) {
						for g := range draws {
							gm.SetNatural(q, g, lam[g])
						}
						run.Status = "canceled"
						break passes
					}
					for g := range lam {
						unitPart(g, more[g][e-1])
					}
				}
				for g := range lam {
					gm.SetNatural(q, g, lam[g])
				}
				for g := range lam {
					h := hat[g]
					if svi.Global == GlobalSSMF {
						var mg [][]float64
						if anti {
							mg = more[g]
						}
						draws[g].controlledNatGrad(lam[g], h, mg, func(prior []float64) { gm.PriorNatural(q, g, prior) }, workers)
					}
					gm.PriorNatural(q, g, h)
					c, short := draws[g].step(lam[g], h, rho)
					if short > 0 {
						shortSteps[g]++
					}
					change = math.Max(change, c)
					gm.SetNatural(q, g, lam[g])
				}
				if stats != nil {
					if perr := sviParamStep(pm, q, ws[0], b, stats, statsHat, rho, scale, t, troubles[0], &change); perr != nil {
						err = perr
					}
				}
				continue
			}
			if tt != nil && tt.lt != nil {
				// each visited unit's q(T_d) (Eq. 10) before its statistics
				// enter the step, weighed by E_q[1/T_d] (Eq. 11)
				tt.lt.prepare(q)
				ParallelFor(len(b), workers, func(_, i int) { tt.lt.update(b[i], tt.tm.UnitLogJoint(q, b[i])) })
			}
			for g := range lam {
				h := hat[g]
				unitPart(g, h)
				gm.PriorNatural(q, g, h)
				gm.Natural(q, g, lam[g])
				c := NaturalStep(lam[g], h, rho)
				change = math.Max(change, c)
				gm.SetNatural(q, g, lam[g])
			}
			if tt != nil && tt.vt != nil {
				// q(y)'s natural-gradient step (Eq. 9 with the minibatch
				// standing for all units), like the globals'
				lj := 0.0
				for _, d := range b {
					lj += tt.tm.UnitLogJoint(q, d)
				}
				tt.vt.natural(scale*lj, etaYHat)
				if t == 1 {
					copy(etaY, etaYHat)
				} else {
					NaturalStep(etaY, etaYHat, rho)
				}
				tt.vt.set(etaY)
			}
			if stats != nil {
				if perr := sviParamStep(pm, q, ws[0], b, stats, statsHat, rho, scale, t, troubles[0], &change); perr != nil {
					err = perr
				}
			}
		}
		tr := Trouble{}
		for _, x := range troubles {
			for k, n := range x {
				tr[k] += n
			}
		}
		elbo := m.ELBO(q, Workers(s.Workers), perUnit)
		telbo, temp := elbo, 1.0
		if tt != nil {
			unitLogJoint(tt.tm, q, units, Workers(s.Workers), ljPerUnit)
			if tt.vt != nil {
				tt.tp.Global = tt.vt.invT()
			}
			telbo, temp = temperedELBO(elbo, tt.tp, ljPerUnit), tt.temperature()
			if tt.vt != nil {
				telbo += tt.vt.bound()
			}
			if tt.lt != nil {
				telbo += tt.lt.bound() // with each unit's normalizer as of its last visit
				run.UnitTemperature = tt.lt.unitT()
			}
		}
		params := paramsOf(cp)
		bad := stepNonFinite(m.NonFinite(q), params, true, elbo)
		if bad == "" && !isFinite(telbo) {
			bad = fmt.Sprintf("the tempered ELBO = %v", telbo)
		}
		if bad != "" {
			run.Status = notFiniteStatus(bad, tr, "pass", pass)
			break
		}
		kept = m.Copy(kept, q)
		keptParams = params
		atEnd = true
		run.ELBO = append(run.ELBO, elbo)
		run.Iterations = pass
		settled := 0
		for _, ok := range done {
			if ok {
				settled++
			}
		}
		rel := RelChange(prevELBO, elbo)
		if tt != nil {
			run.Temperature = append(run.Temperature, temp)
			run.TemperedELBO = append(run.TemperedELBO, telbo)
		}
		if s.Progress != nil {
			p := Progress{Iteration: pass, ELBO: elbo, RelChange: rel, MeanChange: change,
				Units: units, Settled: settled, Seconds: time.Since(start).Seconds(),
				Decreased: Decreased(prevELBO, elbo)}
			if tt != nil {
				p.Temperature, p.TemperedELBO = temp, telbo
			}
			s.Progress(p)
		}
		prevELBO = elbo
		if d := guard.observe(pass, elbo, pass == svi.Passes); d != "" {
			run.Status = d
			break
		}
		if err != nil {
			run.Status = tr.String() // the params could not be estimated
			break
		}
		run.Status = PassesStatus
		if len(tr) > 0 {
			run.Status += "; trouble in the last pass: " + tr.String()
		}
		for g, n := range shortSteps {
			if n > 0 {
				run.Status += fmt.Sprintf("; SSMF shortened %d of the last pass's %d steps of %s where the full step would leave its family (a larger batch makes the gradient less noisy)", n, steps, st.Names[g])
			}
		}
		if temp > 1+1e-3 {
			run.Status += fmt.Sprintf("; still tempered after the last pass (T = %.4g): the posterior is of the tempered model", temp)
		}
	}
	// q holds the last pass's modes, also of one that was not finite, as
	// FitCA's does
	improperEnd(m, q, &run)
	if dm, ok := m.(Diagnosed[S]); ok && atEnd && run.Status != "canceled" {
		// q holds all that kept does, and what Copy leaves out of it
		diagnoseRun(ctx, &run, dm, q, s.Diagnose, s.Seed, Workers(s.Workers))
	}
	run.Seconds = time.Since(start).Seconds()
	var unsettled []int
	for d, ok := range done {
		if !ok {
			unsettled = append(unsettled, d+1)
		}
	}
	run.Unsettled = unsettled
	if c, ok := m.(Collapser[S]); ok && tt != nil {
		run.Warning = collapseWarning(c.Collapsed(kept))
	}
	return m.Result(run, kept, keptParams), nil
}

// sviParamStep is online EM's step of the params (t counts this step):
// their running statistics move towards the minibatch's, scaled by scale,
// and the M-step is taken from them. An M-step error is counted in tr and
// returned.
func sviParamStep[S, W any](pm SVIParams[S, W], q S, w W, b []int, stats, statsHat []float64, rho, scale float64, t int, tr Trouble, change *float64) error {
	clear(statsHat)
	for _, d := range b {
		pm.UnitParamStats(q, w, d, statsHat)
	}
	c, err := onlineParamStep(pm, q, stats, statsHat, rho, scale, t == 1)
	if err != nil {
		tr.Add(err.Error())
	}
	*change = math.Max(*change, c)
	return err
}

// onlineParamStep moves the running statistics stats to (1 − ρ)·stats +
// ρ·scale·hat, hat being a minibatch's (the first minibatch's start
// them), and sets the params to their M-step for them.
func onlineParamStep[S, W any](pm SVIParams[S, W], q S, stats, hat []float64, rho, scale float64, first bool) (float64, error) {
	r := rho
	if first {
		r = 1
	}
	for i := range stats {
		stats[i] = (1-r)*stats[i] + r*scale*hat[i]
	}
	return pm.ParamStep(q, stats)
}

// ssmfModel checks that m supports SSMF's global steps: it draws its local
// steps from a point mass (SVISampled) and every global factor is of a
// family the reparameterization table has.
func ssmfModel[S, W, P, R any](m SVIModel[S, W, P, R], st SVIShape) (SVISampled[S], error) {
	sm, ok := m.(SVISampled[S])
	if !ok {
		why := "the model cannot fit its local factors given a draw of the global ones"
		if n, ok := m.(interface{ NoSSMF() string }); ok {
			why = n.NoSSMF()
		}
		return nil, fmt.Errorf("structured stochastic mean field (SSMF) does not apply: %s", why)
	}
	if len(st.Natural) == 0 {
		return nil, errors.New("structured stochastic mean field (SSMF) needs conjugate global latents to draw; this model steps only params")
	}
	if len(st.Families) != len(st.Natural) || len(st.Rows) != len(st.Natural) {
		return nil, errors.New("the model does not describe the families of its global factors (SVIShape.Families and Rows)")
	}
	for g, fam := range st.Families {
		if !Reparameterizable(fam) {
			return nil, fmt.Errorf("structured stochastic mean field (SSMF) does not apply: the global %s is %s, which SSMF cannot draw by reparameterization (Dirichlet, Beta, Gamma and Normal can be)", st.Names[g], fam)
		}
	}
	return sm, nil
}

// NaturalStep moves lam to (1 − rho)·lam + rho·hat, the natural-gradient
// step of SVI, and returns the relative change of lam as L2Change
// measures it.
func NaturalStep(lam, hat []float64, rho float64) float64 {
	var diff, norm float64
	for i, x := range lam {
		y := (1-rho)*x + rho*hat[i]
		diff += (y - x) * (y - x)
		norm += x * x
		lam[i] = y
	}
	return math.Sqrt(diff) / math.Max(math.Sqrt(norm), 1)
}
