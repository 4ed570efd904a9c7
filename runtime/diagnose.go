package runtime

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
)

// The approximation diagnostic: a Gaussian factor q(θ) = N(μ, Σ) fitted
// by Laplace or the delta method approximates q*(θ) ∝ exp f(θ), the
// coordinate-optimal factor (Wang & Blei's Eq. 9; with θ the only latent,
// the posterior itself). Draws θ_s from q give importance ratios
// log r_s = f(θ_s) − log q(θ_s), and PSIS's k̂ of those ratios says how far
// q is from q*: below 0.5 close, above 0.7 not to be trusted (Vehtari et
// al. 2024; Stan reports the same number for its approximations).

// DiagnoseSettings tune the diagnostic; the zero value runs it with the
// default numbers of draws.
type DiagnoseSettings struct {
	// Off skips the diagnostic.
	Off bool
	// Draws from q of each global Gaussian factor (0: DefaultDiagnoseDraws)
	// and of each unit's (0: as many as keep the units' total within
	// DiagnoseUnitBudget, between MinDiagnoseUnitDraws and
	// DefaultDiagnoseDraws); at least 25, the fewest that leave PSIS a tail
	// of 5. k̂ from fewer than a few hundred draws is noisy: with 100, a
	// good q shows k̂ > 0.7 for about one unit in ten.
	Draws, UnitDraws int
}

// MaterialSD is the standard deviation of the log importance ratios below
// which a high k̂ is not reported as a problem: the target and q then agree
// to within about 10% over the draws (KL(q‖q*) ≈ sd²/2 < 0.005), and k̂
// describes only the shape of a tiny discrepancy's tail, as it does for the
// delta method on a large, well-conditioned logistic regression (k̂ near 2,
// log ratios within ±0.3 of each other over 4,000 draws).
const MaterialSD = 0.1

// LargeSD is the standard deviation of the log importance ratios above
// which a factor is not to be trusted whatever k̂ says.
const LargeSD = 1.0

// The default numbers of draws of the diagnostic.
const (
	DefaultDiagnoseDraws = 1000
	MinDiagnoseUnitDraws = 200
	DiagnoseUnitBudget   = 1000000
)

// MaxDraws bounds the draws from q that the diagnostic (per factor, and per
// unit) and Predict take. The diagnostic keeps every draw of a global
// factor ((2 + dim) float64s each), so 10⁷ draws of a 10-dimensional
// factor take about 1 GB; beyond that, k̂ is estimated from a tail of more
// than 9,000 draws (3√S), whose Monte Carlo error is already far below
// the 0.5 and 0.7 thresholds it is read against, and a run takes minutes
// for nothing. A larger count is a typing slip (2e9 draws once asked for
// 64 GB and crashed), refused before the fit.
const MaxDraws = 10_000_000

// CheckDraws returns an error naming flag if draws is above MaxDraws.
func CheckDraws(flag string, draws int) error {
	if draws > MaxDraws {
		return fmt.Errorf("%s %d: at most %d draws (MaxDraws; more change nothing the diagnostic or a prediction reports, and take memory and minutes)", flag, draws, MaxDraws)
	}
	return nil
}

// Check checks the settings.
func (s DiagnoseSettings) Check() error {
	for _, c := range []struct {
		name string
		n    int
	}{{"Draws", s.Draws}, {"UnitDraws", s.UnitDraws}} {
		if c.n != 0 && c.n < 25 {
			return fmt.Errorf("diagnostic: %s %d: want 0 (the default) or at least 25 draws", c.name, c.n)
		}
		if err := CheckDraws(c.name, c.n); err != nil {
			return fmt.Errorf("diagnostic: %w", err)
		}
	}
	return nil
}

// draws is the number of draws per unit of a factor with units units (0:
// a global factor).
func (s DiagnoseSettings) draws(units int) int {
	switch {
	case units > 0 && s.UnitDraws > 0:
		return s.UnitDraws
	case units > 0:
		return min(DefaultDiagnoseDraws, max(MinDiagnoseUnitDraws, DiagnoseUnitBudget/units))
	case s.Draws > 0:
		return s.Draws
	}
	return DefaultDiagnoseDraws
}

// Diagnosed is what a model whose latents include nonconjugate Gaussian
// factors adds to CAModel for the diagnostic.
type Diagnosed[S any] interface {
	// DiagnoseFactors lists the Gaussian factors: each one's latent and,
	// for a per-unit factor, its number of units.
	DiagnoseFactors() []DiagnoseFactor
	// DiagnoseGaussian returns the k-th factor's q in state q, of unit d
	// (0-based; 0 for a global factor), with its Target.
	DiagnoseGaussian(q S, k, d int) GaussianFactor
}

// DiagnoseFactor names a Gaussian factor for the diagnostic: its latent,
// whether it has one Gaussian per unit, and how many units. Flat says the
// latent has an improper flat prior, so that the fit checks that its
// posterior is proper (Improper).
type DiagnoseFactor struct {
	Latent  string
	PerUnit bool
	Units   int
	Flat    bool
}

// Diagnostic is the PSIS diagnostic of one Gaussian factor, in a Result.
type Diagnostic struct {
	// Latent is the latent variable whose factor it is.
	Latent string `json:"latent"`
	// Method is the factor's update: laplace, delta or ncvmp.
	Method string `json:"method"`
	// Draws is the number of draws from q (per unit for a per-unit latent).
	Draws int `json:"draws"`
	// KHat is a global factor's k̂; null when it could not be estimated.
	KHat *float64 `json:"k_hat,omitempty"`
	// SDLogRatio is the standard deviation of a global factor's log
	// importance ratios: below MaterialSD a high k̂ is not a problem.
	SDLogRatio float64 `json:"sd_log_ratio,omitempty"`
	// CorrectedMean is a global factor's posterior mean corrected by
	// Pareto-smoothed importance weights, Σ w_s θ_s / Σ w_s; for the joint
	// diagnostic, every latent's, one after another in Joint's order (on
	// the unconstrained scale of a constrained latent).
	CorrectedMean []float64 `json:"corrected_mean,omitempty"`
	// UnitKHat is each unit's k̂, for a per-unit latent (null where it
	// could not be estimated).
	UnitKHat []*float64 `json:"unit_k_hat,omitempty"`
	// MaxKHat and WorstUnit (1-based) summarize a per-unit latent's k̂;
	// Bad counts its units above KHatBad whose log ratios vary by at least
	// MaterialSD (its units that are not to be trusted).
	MaxKHat   float64 `json:"max_k_hat"`
	WorstUnit int     `json:"worst_unit,omitempty"`
	Bad       int     `json:"bad,omitempty"`
	// Joint, for the diagnostic of the joint q (Latent JointLatent), names
	// its latents: the product of their factors against the posterior.
	Joint []string `json:"joint,omitempty"`
	// Unestimated counts the units (or 1, a global factor) whose k̂
	// could not be estimated: the target was not finite at a draw, q's
	// covariance not positive definite, or the ratios' tail not fitted.
	Unestimated int `json:"unestimated,omitempty"`
}

// Warning returns what the diagnostic says about its factor when that is
// bad news, with what it means and what to check, and "" otherwise: a global factor that is
// not to be trusted or whose k̂ could not be estimated, or a per-unit
// latent with more than 1% of its units not to be trusted, or with units
// whose k̂ could not be estimated.
//
// It names no other update to try: the delta method, once advised here
// for every Laplace factor, was never checked to help on the models that
// warn, and on Poisson matrix factorization it makes the fit worse (its
// ELBO oscillates and never converges).
func (d Diagnostic) Warning() string {
	advice := "the Gaussian cannot follow this posterior (skewed, heavy-tailed or bounded): reparameterize (a log scale for a positive quantity, standardized covariates), or read its corrected_mean"
	if d.UnitKHat != nil {
		advice = "the Gaussian cannot follow these units' posteriors (skewed, heavy-tailed or bounded): reparameterize, or give them more data"
	}
	if d.Joint != nil {
		advice = "the factors' product misses how these latents depend on each other (a scale and the effects it scales, correlated coefficients); reparameterize (non-centred effects), or declare the dependent latents as one vector latent, whose Gaussian has a full covariance"
	}
	if d.UnitKHat == nil {
		switch {
		case d.KHat == nil:
			return fmt.Sprintf("%s: Pareto k̂ could not be estimated (the target was not finite at a draw from q, q's covariance was not positive definite, or the ratios' tail could not be fitted)", d.name())
		case *d.KHat > KHatBad && d.bad(*d.KHat, d.SDLogRatio):
			return fmt.Sprintf("%s is not to be trusted: Pareto k̂ = %.2f > %.1f over %d draws; %s", d.name(), *d.KHat, KHatBad, d.Draws, advice)
		case d.bad(*d.KHat, d.SDLogRatio):
			return fmt.Sprintf("%s is not to be trusted: it and the density it approximates differ by a factor e^%.2g (sd of the log ratios over %d draws; Pareto k̂ %.2f); %s", d.name(), d.SDLogRatio, d.Draws, *d.KHat, advice)
		}
		return ""
	}
	var msg string
	// k̂ from a thousand draws has an error of about ±0.1, so among many
	// good units a few land above 0.7: a warning needs more than 1% of them
	if float64(d.Bad) > 0.01*float64(len(d.UnitKHat)) {
		msg = fmt.Sprintf("%s is not to be trusted for %d of %d units: Pareto k̂ > %.1f or log importance ratios with sd > %g (largest k̂ %.2f, unit %d; %d draws each); %s",
			d.name(), d.Bad, len(d.UnitKHat), KHatBad, LargeSD, d.MaxKHat, d.WorstUnit, d.Draws, advice)
	}
	if d.Unestimated > 0 {
		if msg != "" {
			msg += "; "
		}
		msg += fmt.Sprintf("%s: k̂ could not be estimated for %d units (the target not finite at a draw, q's covariance not positive definite, or the ratios' tail not fitted)", d.name(), d.Unestimated)
	}
	return msg
}

// name is how messages name the factor: q(theta), or for the joint
// diagnostic the product of its latents' factors.
func (d Diagnostic) name() string {
	if d.Joint != nil {
		return fmt.Sprintf("q(%s) jointly", strings.Join(d.Joint, ", "))
	}
	return fmt.Sprintf("q(%s)", d.Latent)
}

// bad says whether k̂ and the standard deviation of the log ratios sd
// mark a factor as not to be trusted: a heavy tail of a material
// discrepancy, or a discrepancy of more than a factor e across q's draws
// whatever the tail (a q wider than its target has a light tail, k̂ < 0,
// and still misses it: KL(q‖q*) ≈ sd²/2).
func (Diagnostic) bad(k, sd float64) bool { return k > KHatBad && sd >= MaterialSD || sd > LargeSD }

// String summarizes the diagnostic in one line.
func (d Diagnostic) String() string {
	verdict := func(k float64) string {
		switch {
		case k < KHatGood:
			return "close to its target"
		case k <= KHatBad:
			return "usable with care"
		}
		return "not to be trusted"
	}
	if d.UnitKHat == nil {
		if d.KHat == nil {
			return fmt.Sprintf("%s: Pareto k̂ could not be estimated", d.name())
		}
		v := verdict(*d.KHat)
		if d.bad(*d.KHat, d.SDLogRatio) {
			v = "not to be trusted"
		} else if *d.KHat > KHatBad {
			v = fmt.Sprintf("high, but the log ratios vary by only %.2g: q agrees with its target over the draws", d.SDLogRatio)
		}
		return fmt.Sprintf("%s: Pareto k̂ %.2f over %d draws (%s)", d.name(), *d.KHat, d.Draws, v)
	}
	s := fmt.Sprintf("%s: Pareto k̂ at most %.2f over %d units, %d draws each", d.name(), d.MaxKHat, len(d.UnitKHat), d.Draws)
	if d.WorstUnit > 0 {
		s += fmt.Sprintf(" (unit %d); not to be trusted: %d", d.WorstUnit, d.Bad)
	}
	if d.Unestimated > 0 {
		s += fmt.Sprintf("; not estimated: %d", d.Unestimated)
	}
	return s
}

// diagnoseRun runs the diagnostic (Diagnose) at the end of run; if ctx is
// done before it finishes, the run is marked canceled, with no diagnostic:
// an interrupt during the draws ends the fit as one during an iteration
// does, at once and with the documented status.
func diagnoseRun[S any](ctx context.Context, run *Run, m Diagnosed[S], q S, s DiagnoseSettings, seed uint64, workers int) {
	run.Diagnostics = Diagnose(ctx, m, q, s, seed, workers)
	if ctx.Err() != nil {
		run.Diagnostics, run.Converged, run.Status = nil, false, "canceled"
	}
}

// cancelCheckEvery is how many draws the diagnostic takes between two
// looks at its context: a look costs a few nanoseconds, a draw of a small
// factor about as much, and 4096 draws of a large one well under a second.
const cancelCheckEvery = 4096

// canceled reports whether done is closed, looking only every
// cancelCheckEvery-th draw s.
func canceled(done <-chan struct{}, s int) bool {
	return s%cancelCheckEvery == 0 && closed(done)
}

// closed reports whether done is closed (a nil done never is).
func closed(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// Diagnose runs the diagnostic on every Gaussian factor of m in state q,
// the units of a per-unit factor on workers goroutines; it returns nil if
// ctx is done before it finishes (it looks every cancelCheckEvery draws).
// Each factor's and
// unit's draws come from their own stream of seed, so the result does not
// depend on workers.
func Diagnose[S any](ctx context.Context, m Diagnosed[S], q S, s DiagnoseSettings, seed uint64, workers int) []Diagnostic {
	if s.Off {
		return nil
	}
	var out []Diagnostic
	for k, f := range m.DiagnoseFactors() {
		if f.PerUnit && f.Units == 0 {
			continue // nothing to check
		}
		draws := s.draws(f.Units)
		d := Diagnostic{Latent: f.Latent, Draws: draws, Method: methodOf(m.DiagnoseGaussian(q, k, 0))}
		if !f.PerUnit {
			w := psisWork{done: ctx.Done()}
			rng := rand.New(rand.NewPCG(seed, uint64(k)<<40))
			kh, sd, ok := w.paretoK(m.DiagnoseGaussian(q, k, 0), draws, rng, true)
			if ctx.Err() != nil {
				return nil
			}
			if ok {
				d.KHat, d.SDLogRatio = &kh, sd
				d.MaxKHat = kh
				d.CorrectedMean = slices.Clone(w.corrected)
			} else {
				d.Unestimated = 1
			}
			out = append(out, d)
			continue
		}
		ws := make([]psisWork, Workers(workers))
		for w := range ws {
			ws[w].done = ctx.Done()
		}
		khat, sd := make([]float64, f.Units), make([]float64, f.Units)
		ok := make([]bool, f.Units)
		if !ParallelForUntil(ctx.Done(), f.Units, len(ws), func(w, u int) {
			rng := rand.New(rand.NewPCG(seed, uint64(k)<<40|uint64(u+1)))
			khat[u], sd[u], ok[u] = ws[w].paretoK(m.DiagnoseGaussian(q, k, u), draws, rng, false)
		}) {
			return nil // canceled: no diagnostics rather than some
		}
		if ctx.Err() != nil {
			return nil // canceled during a unit's draws
		}
		d.UnitKHat = make([]*float64, f.Units)
		d.MaxKHat = math.Inf(-1)
		for u := range khat {
			if !ok[u] {
				d.Unestimated++
				continue
			}
			d.UnitKHat[u] = &khat[u]
			if khat[u] > d.MaxKHat {
				d.MaxKHat, d.WorstUnit = khat[u], u+1
			}
			if d.bad(khat[u], sd[u]) {
				d.Bad++
			}
		}
		if d.Unestimated == f.Units {
			d.MaxKHat = 0
		}
		out = append(out, d)
	}
	if j, ok := any(m).(JointDiagnosed[S]); ok {
		d, ok := diagnoseJoint(ctx.Done(), j, q, s.draws(0), seed)
		if ctx.Err() != nil {
			return nil
		}
		if ok {
			out = append(out, d)
		}
	}
	return out
}

// methodOf names the update of a Gaussian factor.
func methodOf(q GaussianFactor) string {
	switch {
	case q.NCVMP != nil:
		return "ncvmp"
	case q.Delta:
		return "delta"
	}
	return "laplace"
}

// psisWork is one worker's scratch space for the diagnostic, and the
// channel whose closing stops its draws.
type psisWork struct {
	chol, z, x, r, draws, w, corrected []float64
	done                               <-chan struct{}
}

// paretoK draws from q, computes the log importance ratios against
// q.Target and returns their k̂ and standard deviation (−Inf ratios left
// out of it); with mean it also sets corrected to the mean under the
// smoothed weights. ok is false if k̂ could not be estimated (q's
// covariance not positive definite, or the target NaN or +Inf at a draw,
// or −Inf at all, or w.done closed during the draws).
func (w *psisWork) paretoK(q GaussianFactor, draws int, rng *rand.Rand, mean bool) (k, sd float64, ok bool) {
	p := len(q.Mean)
	if q.Target == nil || p == 0 {
		return 0, 0, false
	}
	chol := Grow(&w.chol, p*p)
	copy(chol, q.Cov[:p*p])
	if !cholLower(chol, p) {
		return 0, 0, false
	}
	logNorm := -0.5 * float64(p) * math.Log(2*math.Pi)
	for i := range p {
		logNorm -= math.Log(chol[i*p+i])
	}
	z, x := Grow(&w.z, p), Grow(&w.x, p)
	r := Grow(&w.r, draws)
	var all []float64
	if mean {
		all = Grow(&w.draws, draws*p)
	}
	for s := range draws {
		if canceled(w.done, s) {
			return 0, 0, false
		}
		for i := range z {
			z[i] = rng.NormFloat64()
		}
		// x = μ + L z
		for i := range p {
			x[i] = q.Mean[i] + DotFMA(chol[i*p:i*p+i+1], z[:i+1])
		}
		logq := logNorm - 0.5*DotFMA(z, z)
		f := q.Target(x)
		if math.IsNaN(f) || math.IsInf(f, 1) {
			return 0, 0, false
		}
		r[s] = f - logq
		if mean {
			copy(all[s*p:], x)
		}
	}
	sd, ok = logRatioSD(r)
	if !ok {
		return 0, 0, false
	}
	k, ok = PSIS(r)
	if !ok || !mean {
		return k, sd, ok
	}
	weightedMean(Grow(&w.corrected, p), r, all)
	return k, sd, true
}

// weightedMean sets c to the mean of the draws (len(c) values each, one
// after another in all) weighed by exp(r), r the smoothed log ratios.
func weightedMean(c, r, all []float64) {
	p := len(c)
	top := slices.Max(r)
	clear(c)
	total := 0.0
	for s := range r {
		wt := math.Exp(r[s] - top)
		total += wt
		AxpyFMA(wt, all[s*p:(s+1)*p], c)
	}
	ScaleVec(c, 1/total)
}

// JointDiagnosed is what a model whose latents are all global Gaussian
// factors adds for the diagnostic of the joint q, the product of its
// mean-field factors, against the posterior itself.
type JointDiagnosed[S any] interface {
	// JointQ returns q's factors in state q, with Points to draw into,
	// and the log joint density log p(x, θ) (with the log-Jacobians of
	// constrained latents) at the Points.
	JointQ(q S) ([]PointFactor, func() float64)
}

// JointLatent is the Latent of the joint diagnostic (Diagnostic.Joint
// names the latents).
const JointLatent = "(joint)"

// diagnoseJoint is the diagnostic of the joint q of m: draws θ_s from the
// product of the factors, log ratios log p(x, θ_s) − Σ_i log q_i(θ_s,i),
// and their k̂ and sd. ok is false when there is nothing to diagnose (one
// factor of one unit: its own diagnostic is the same). The draws stop
// when done is closed (the caller discards d).
func diagnoseJoint[S any](done <-chan struct{}, m JointDiagnosed[S], q S, draws int, seed uint64) (d Diagnostic, ok bool) {
	factors, logJoint := m.JointQ(q)
	units := 0
	for _, f := range factors {
		units += f.Units
		d.Joint = append(d.Joint, f.Latent)
	}
	if units < 2 {
		return d, false
	}
	d.Latent, d.Method, d.Draws, d.Unestimated = JointLatent, "joint", draws, 1
	sampler, err := newPointSampler(factors)
	if err != nil {
		return d, true // not estimated: a covariance not positive definite
	}
	rng := rand.New(rand.NewPCG(seed, 1<<62))
	r := make([]float64, draws)
	dim := 0
	for _, f := range factors {
		dim += f.Units * f.Dim
	}
	all := make([]float64, 0, draws*dim) // the draws, for the corrected mean
	for s := range draws {
		if canceled(done, s) {
			return d, true
		}
		logq := sampler.draw(rng)
		lp := logJoint()
		if math.IsNaN(lp) || math.IsInf(lp, 1) {
			return d, true
		}
		r[s] = lp - logq
		for _, f := range factors {
			all = append(all, f.Point...)
		}
	}
	sd, finite := logRatioSD(r)
	if !finite {
		return d, true
	}
	k, est := PSIS(r)
	if !est {
		return d, true
	}
	d.KHat, d.SDLogRatio, d.MaxKHat, d.Unestimated = &k, sd, k, 0
	d.CorrectedMean = make([]float64, dim)
	weightedMean(d.CorrectedMean, r, all)
	return d, true
}

// logRatioSD is the standard deviation of the log ratios r, −Inf ones left
// out; ok is false when all are −Inf or they span more than a float64
// holds.
func logRatioSD(r []float64) (sd float64, ok bool) {
	top := slices.Max(r)
	if math.IsInf(top, -1) {
		return 0, false
	}
	var n, m1, m2 float64 // Welford's mean and sum of squares, of r − top
	for _, v := range r {
		if math.IsInf(v, -1) {
			continue
		}
		v -= top
		n++
		delta := v - m1
		m1 += delta / n
		m2 += delta * (v - m1)
	}
	sd = math.Sqrt(m2 / n)
	return sd, !math.IsInf(sd, 0) && !math.IsNaN(sd)
}
