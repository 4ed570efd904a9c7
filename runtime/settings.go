package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// Settings are the options of a generated package's Fit (its Options is
// Settings[Latent, Params]). The zero value is a sensible default.
type Settings[L, P any] struct {
	// Method overrides the treatment declared in the model for every
	// nonconjugate latent: "laplace" or "delta". Empty keeps the declaration.
	Method string
	// The convergence rule (Convergence says it in full): Fit has
	// converged after an iteration in which every unit's local factors
	// settled (their largest relative change in one sweep fell below
	// LocalTol within LocalMaxIter sweeps), no numerical trouble was met,
	// the relative change of the ELBO is below Tol, and the largest relative
	// change of a global factor is below MeanTol (the last two are skipped
	// where one iteration is a fixed point). It stops unconverged after
	// MaxIter iterations, with a status naming the criteria not met. A zero
	// field takes its default (DefaultMaxIter 1000, DefaultTol 1e-8,
	// DefaultMeanTol 1e-9, DefaultLocalMaxIter 100, DefaultLocalTol 1e-6);
	// a tolerance of math.Inf(1) switches its criterion off. With Laplace
	// or delta updates the reported ELBO can decrease between iterations
	// (they are not ascent steps on it); Progress marks it.
	MaxIter      int
	Tol          float64
	MeanTol      float64
	LocalMaxIter int
	LocalTol     float64
	// Seed seeds the random starting values of conjugate factors.
	Seed uint64
	// Start, if set, is a previous result to start from instead.
	Start *Result[L, P]
	// Newton tunes the inner optimizer of the Laplace and delta updates
	// and the quadrature of NCVMP updates.
	Newton NewtonSettings
	// Progress, if set, is called after every iteration.
	Progress func(Progress)
	// Workers is the number of goroutines updating units in parallel (0
	// means GOMAXPROCS). Results are identical for every value.
	Workers int
	// FixParams holds the params at their values in the data (or Start)
	// instead of estimating them: inference only, no M-steps.
	FixParams bool
	// Smoothing is added to the expected counts of simplex params in
	// their M-steps (0: maximum likelihood).
	Smoothing float64
	// Shrinkage in [0, 1] pulls covariance params estimated by M-steps
	// toward a scaled identity (0: none).
	Shrinkage float64
	// PlainSweeps turns off the collapsed Newton start of a unit's
	// Gaussian/categorical alternation, so each unit runs the plain sweeps
	// of Fig. 1 from where it is (the models where it applies say so in
	// UpdateUnit).
	PlainSweeps bool
	// AllowEmpty lets documents of bag data be empty (their local
	// posteriors stay at their priors). By default Fit rejects an empty
	// document, naming it, since one usually means a mistake in preparing
	// the data. Models without bag data ignore it.
	AllowEmpty bool
	// Checkpoint, with Path and Every set, saves the run every Every
	// iterations to Path, as the JSON of a Result with status "checkpoint",
	// through a temporary file and a rename. Fit refuses a Path that holds
	// anything but a checkpoint of this model.
	Checkpoint Checkpoint
	// Algorithm chooses the inference algorithm: "" or "ca" for batch
	// coordinate ascent (Fig. 1, variational EM with params), "svi" for
	// stochastic variational inference with online EM for params
	// (FitSVI), tuned by SVI; "ssmf" and "ssmf-a" are SVI with Hoffman
	// 2014's global steps (SVI.Global; Prepare rewrites them as "svi"). SVI runs SVI.Passes passes over the units
	// and ignores MaxIter, Tol and MeanTol; LocalMaxIter and LocalTol
	// still bound each unit's local fit, LocalTol with its own default
	// under SVI (DefaultSVILocalTol).
	Algorithm string
	// SVI are the settings of Algorithm "svi"; zero fields take their
	// defaults. The minibatches are drawn from Seed.
	SVI SVISettings
	// Temper tempers the fit (Mandt et al. 2016): an annealing schedule
	// (AVI) or a latent temperature (VT), under coordinate ascent or SVI;
	// see TemperSettings. Coordinate ascent runs at T = 1 once the schedule
	// ends (or VT has converged) and converges only there; the result's
	// Temperature and TemperedELBO trace the run. The zero value does not
	// temper.
	Temper TemperSettings
	// Restarts, above 1, runs the fit from that many seeds (Seed, Seed+1,
	// …) concurrently and keeps, among the runs that ended normally, the
	// one with the largest final ELBO, with Result.Restarts recording them
	// all (FitRestarts).
	Restarts int
	// Diagnose tunes the approximation diagnostic that Fit runs at the
	// end on every nonconjugate Gaussian factor (Result.Diagnostics; PSIS's
	// Pareto k̂ of q against the density it approximates); Diagnose.Off
	// skips it.
	Diagnose DiagnoseSettings
	// Keep names the per-token latents (those local to the entries of a
	// bag, like a topic model's z: one factor per word of every document)
	// that the result reports; "all" keeps every one. The others are left
	// out of the result (Result.Omitted lists them) and are not copied at
	// the end of each iteration, which is most of a topic model's memory.
	// A checkpoint always holds them, so that a run resumes exactly.
	Keep []string
	// NoSummary leaves Result.Summary out.
	NoSummary bool
	// HeldoutPlugIn makes a generated package's Heldout score with each
	// Gaussian factor at its mean: the predictive's expectations are taken
	// with the factors' covariances set to 0, so that E_q[f(θ)] is
	// f(E_q[θ]) (the CTM's softmax of E[θ_d], as Wang & Blei score it)
	// rather than its Taylor (Eq. 19) or exact expectation.
	HeldoutPlugIn bool
	// Resume continues the run saved in a checkpoint (read it with
	// LoadResult): the iteration count, ELBO trace, state and params carry
	// on from it, and with the same data and options the run ends exactly
	// as it would have without the interruption. MaxIter counts the
	// iterations before the checkpoint too.
	Resume *Result[L, P]

	model string // the model Prepare checked s for
}

// Result is the fitted variational posterior and a record of the run, the
// Result of every generated package (Result[Latent, Params]): its JSON
// form is shared by all of them.
type Result[L, P any] struct {
	Model      string    `json:"model"`
	Method     string    `json:"method"`
	Converged  bool      `json:"converged"`
	Status     string    `json:"status"`
	Iterations int       `json:"iterations"`
	ELBO       []float64 `json:"elbo"`
	// ELBONote, when set, qualifies the ELBO: with an improper flat prior
	// (a nonconjugate latent with no `~`) the log joint, and so the ELBO,
	// is defined only up to a constant, and is not a bound on the log
	// evidence.
	ELBONote string `json:"elbo_note,omitempty"`
	// ELBOQuadrature lists the statements whose expected log factors the
	// ELBO integrates by Gauss–Hermite quadrature, as "latent: file:line:col:
	// statement": those of the latents an NCVMP update fits, whose log
	// factors read no other latent (the expectations the update
	// integrates). Every other expectation without a closed form is Eq. 21's
	// second-order Taylor expansion, as it is in Laplace and delta fits.
	ELBOQuadrature []string `json:"elbo_quadrature,omitempty"`
	Seconds        float64  `json:"seconds"`
	Latent         L        `json:"latent"`
	Params         P        `json:"params"`
	// Summary is every latent element's marginal mean, sd and 5%, 50%
	// and 95% quantiles under q, by name (theta[2,5]); SummaryOmitted lists
	// the latents left out of it for having more than SummaryLimit
	// elements (vigen summary reads them from Latent).
	Summary        []SummaryRow `json:"summary,omitempty"`
	SummaryOmitted []string     `json:"summary_omitted,omitempty"`
	// Unsettled lists the units (1-based) whose local updates did not
	// settle within LocalMaxIter sweeps in the last iteration.
	Unsettled []int `json:"unsettled,omitempty"`
	// Tempering says how a tempered fit was tempered (TemperSettings:
	// "anneal linear:10:100", "vt: 30 temperatures in [1, 10]"), and
	// Temperature and TemperedELBO trace it, one value per iteration (or
	// SVI pass) like ELBO: the temperature (VT's E_q[T]) and the tempered
	// objective (Eq. 4; VT's T-ELBO). ELBO is the untempered bound.
	Tempering    string    `json:"tempering,omitempty"`
	Temperature  []float64 `json:"temperature,omitempty"`
	TemperedELBO []float64 `json:"tempered_elbo,omitempty"`
	// UnitTemperature is, after local variational tempering, each unit's
	// E_q[T_d] at the end of the tempered phase (outliers run hot).
	UnitTemperature []float64 `json:"unit_temperature,omitempty"`
	// Warning says what is wrong with a result that is not an error (a
	// tempered fit whose mixture components merged into identical copies).
	Warning string `json:"warning,omitempty"`
	// Diagnostics are the approximation diagnostics of the nonconjugate
	// Gaussian factors (Settings.Diagnose): Pareto k̂ above KHatBad says a
	// factor is not to be trusted (Diagnostic.Warning says what to try).
	Diagnostics []Diagnostic `json:"psis,omitempty"`
	// Restarts records the runs of a fit from several seeds
	// (Settings.Restarts).
	Restarts *Restarts `json:"restarts,omitempty"`
	// Omitted lists the per-token latents left out of Latent (their
	// fields are null): Settings.Keep keeps them.
	Omitted []string `json:"omitted,omitempty"`
	// Fingerprint identifies the data, the options and the params of the
	// run, so that Settings.Resume refuses to continue it under others.
	Fingerprint *Fingerprint `json:"fingerprint,omitempty"`
}

// LoadResult reads a Result written as JSON (a saved fit or a
// checkpoint), checking that it belongs to model.
func LoadResult[L, P any](r io.Reader, model string) (*Result[L, P], error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	res := new(Result[L, P])
	if err := DecodeResult(b, model, res); err != nil {
		return nil, err
	}
	return res, nil
}

// Prepare checks s for a fit of model, whose per-token latents are
// perToken, and completes it: zero convergence fields take their defaults,
// and a run to Resume becomes the Start (after checking that it is of
// model). A Checkpoint path that holds anything but a checkpoint of model
// is refused, and so is a Keep entry that is not "all" or one of perToken.
func (s *Settings[L, P]) Prepare(model string, perToken ...string) error {
	s.model = model
	if err := checkKeep(s.Keep, model, perToken); err != nil {
		return err
	}
	if s.Algorithm == GlobalSSMF || s.Algorithm == GlobalSSMFA {
		// SVI with SSMF's global step
		if s.SVI.Global != "" && s.SVI.Global != s.Algorithm {
			return fmt.Errorf("algorithm %q with SVI.Global %q: give one of them", s.Algorithm, s.SVI.Global)
		}
		s.SVI.Global, s.Algorithm = s.Algorithm, "svi"
	}
	if s.Algorithm == "svi" && s.LocalTol == 0 {
		s.LocalTol = DefaultSVILocalTol
	}
	conv := s.convergence().WithDefaults()
	s.MaxIter, s.Tol, s.MeanTol = conv.MaxIter, conv.Tol, conv.MeanTol
	s.LocalMaxIter, s.LocalTol = conv.LocalMaxIter, conv.LocalTol
	switch s.Algorithm {
	case "", "ca":
	case "svi":
		if err := s.SVI.Check(); err != nil {
			return err
		}
		if s.Resume != nil || s.Checkpoint.On() {
			return errors.New("stochastic variational inference (Algorithm \"svi\") cannot checkpoint or resume a run yet")
		}
	default:
		return fmt.Errorf("unknown algorithm %q: give \"ca\" (coordinate ascent), \"svi\" (stochastic variational inference), or \"ssmf\" or \"ssmf-a\" (structured stochastic mean field, Hoffman 2014)", s.Algorithm)
	}
	if err := s.Temper.Check(); err != nil {
		return err
	}
	if err := s.Diagnose.Check(); err != nil {
		return err
	}
	if s.Restarts < 0 {
		return fmt.Errorf("restarts %d: want 0 or more", s.Restarts)
	}
	if s.Temper.On() && (s.Resume != nil || s.Checkpoint.On()) {
		return errors.New("a tempered fit (annealing or variational tempering) cannot checkpoint or resume yet")
	}
	if s.Resume != nil {
		if s.Resume.Model != model {
			return fmt.Errorf("resume: the result is of model %q, not %s", s.Resume.Model, model)
		}
		s.Start = s.Resume
	}
	if s.Checkpoint.On() {
		if err := CheckCheckpointPath(s.Checkpoint.Path, model); err != nil {
			return err
		}
	}
	return nil
}

func (s *Settings[L, P]) convergence() Convergence {
	return Convergence{MaxIter: s.MaxIter, Tol: s.Tol, MeanTol: s.MeanTol,
		LocalMaxIter: s.LocalMaxIter, LocalTol: s.LocalTol}
}

// CheckShard refuses, for a shard of a sharded fit (Model.Shard), the
// options a sharded fit does not carry out, so none is silently ignored:
// tempering, restarts, checkpoints, a start or resume, and SVI's steps
// other than mean field. (The diagnostic and the summary are computed
// when the whole result is assembled: WholeResult.) Call it after
// Prepare.
func (s *Settings[L, P]) CheckShard() error {
	var no []string
	if s.Temper.On() {
		no = append(no, "tempering (Temper)")
	}
	if s.Restarts > 1 {
		no = append(no, "restarts (Restarts)")
	}
	if s.Checkpoint.On() || s.Resume != nil {
		no = append(no, "checkpoints (Checkpoint, Resume)")
	}
	if s.Start != nil {
		no = append(no, "a start (Start)")
	}
	if s.Algorithm == "svi" && (s.SVI.Global != "" && s.SVI.Global != GlobalMeanField || s.SVI.Local != "" && s.SVI.Local != LocalMeanField) {
		no = append(no, "SVI's SSMF global steps and Gibbs local step")
	}
	if len(no) > 0 {
		return fmt.Errorf("a sharded fit does not support %s yet", strings.Join(no, ", "))
	}
	return nil
}

// ShardOptions are the options of NewShard for a shard of units
// first+1.. of total under s: its Finish summarizes a result as Fit
// does, unless NoSummary.
func (s *Settings[L, P]) ShardOptions(first, total int) ShardOptions {
	c := *s
	return ShardOptions{First: first, Total: total, Workers: s.Workers, Diagnose: s.Diagnose, Seed: s.Seed,
		Finish: func(r any) {
			if res, ok := r.(*Result[L, P]); ok && res != nil {
				res.summarize(c)
			}
		}}
}

// Sharded returns the settings of FitShards: the convergence rule and
// the progress callback.
func (s *Settings[L, P]) Sharded() ShardSettings {
	return ShardSettings{Convergence: s.convergence().WithDefaults(), Progress: s.Progress}
}

// CA returns the settings of FitCA for a fit started at start whose
// fingerprint is fp; a run to Resume must have been saved with the same
// fingerprint (CheckResume), and VT's log C(T) computed for the same model
// and data (TemperSettings.CheckFingerprint).
func (s *Settings[L, P]) CA(start time.Time, fp *Fingerprint) (CASettings, error) {
	c := CASettings{Convergence: s.convergence().WithDefaults(), Workers: s.Workers, Progress: s.Progress,
		Checkpoint: s.Checkpoint, Start: start, Temper: s.Temper, Diagnose: s.Diagnose, Seed: s.Seed}
	if err := s.Temper.CheckFingerprint(s.model, fp); err != nil {
		return CASettings{}, err
	}
	if r := s.Resume; r != nil {
		if err := CheckResume(r.Fingerprint, fp, HashJSON(&r.Params)); err != nil {
			return CASettings{}, err
		}
		c.Resume = &Run{Iterations: r.Iterations, ELBO: r.ELBO, Seconds: r.Seconds, Unsettled: r.Unsettled}
	}
	return c, nil
}

// Heldout returns s for fitting the local factors of test documents with
// the globals and params of a Start (set by the caller) held fixed: one
// coordinate-ascent iteration with FixParams, empty documents allowed,
// no checkpoints, resume, progress, restarts, kept per-token latents or
// diagnostic, and LocalMaxIter 0 meaning
// HeldoutLocalMaxIter. Method, Seed, Workers and the local tolerance stay.
func (s Settings[L, P]) Heldout() Settings[L, P] {
	if s.LocalMaxIter == 0 {
		s.LocalMaxIter = HeldoutLocalMaxIter
	}
	s.Start, s.Resume, s.Checkpoint, s.Progress = nil, nil, Checkpoint{}, nil
	s.Temper = TemperSettings{} // held-out documents are fitted to the model itself
	s.MaxIter, s.FixParams, s.AllowEmpty, s.Algorithm = 1, true, true, "ca"
	s.Keep = nil // the score reads the documents' other factors
	s.Diagnose.Off, s.Restarts, s.NoSummary = true, 0, true
	return s
}

// checkKeep checks a Settings.Keep for a model whose per-token latents are
// perToken.
func checkKeep(keep []string, model string, perToken []string) error {
	for _, k := range keep {
		if k == "all" || slices.Contains(perToken, k) {
			continue
		}
		if len(perToken) == 0 {
			return fmt.Errorf("keep %q: %s has no per-token latents (latents local to a bag's entries); every other latent is always in the result", k, model)
		}
		return fmt.Errorf("keep %q: not a per-token latent of %s; give one of %s, or \"all\" (every other latent is always in the result)", k, model, strings.Join(perToken, ", "))
	}
	return nil
}

// Keeps says whether the result of a run under s reports the per-token
// latent name: it does when Keep names it or "all", and in a checkpoint
// (a run whose status is CheckpointStatus), which must hold the whole
// state to resume.
func (s *Settings[L, P]) Keeps(run Run, name string) bool {
	return run.Status == CheckpointStatus || s.Copies(name)
}

// Copies says whether the state kept at the end of each iteration needs
// the per-token latent name: whether Keep names it or "all".
func (s *Settings[L, P]) Copies(name string) bool {
	return slices.Contains(s.Keep, name) || slices.Contains(s.Keep, "all")
}

// Omitted returns the per-token latents among names that keep does not
// keep, for Result.Omitted (nil if none).
func Omitted(keep func(string) bool, names ...string) []string {
	var out []string
	for _, n := range names {
		if !keep(n) {
			out = append(out, n)
		}
	}
	return out
}

// Fit runs the algorithm s.Algorithm chooses (s prepared by Prepare) on
// model m from state q: FitCA, or FitSVI if m supports it. start is when
// the fit started and fp its fingerprint.
func Fit[L, P, S, W, R any](ctx context.Context, m CAModel[S, W, P, R], q S, s *Settings[L, P], start time.Time, fp *Fingerprint) (R, error) {
	var zero R
	c, err := s.CA(start, fp)
	if err != nil {
		return zero, err
	}
	summarized := func(r R, err error) (R, error) {
		if res, ok := any(r).(*Result[L, P]); ok && err == nil && res != nil {
			res.summarize(*s)
		}
		return r, err
	}
	if s.Algorithm != "svi" {
		return summarized(FitCA(ctx, m, q, c))
	}
	sm, ok := m.(SVIModel[S, W, P, R])
	if !ok {
		why := "the model has no conjugate global latents or params to step"
		if n, ok := m.(interface{ NoSVI() string }); ok {
			why = n.NoSVI()
		}
		return zero, fmt.Errorf("stochastic variational inference does not apply: %s", why)
	}
	return summarized(FitSVI(ctx, sm, q, c, s.SVI, s.Seed))
}

// Fingerprint is the fingerprint of a fit under s whose data hash as data
// (one hash per size and data or constant variable) and whose latents are
// updated by method (Result.Method): with the options that change the
// fixed point, FixParams, Smoothing and Shrinkage. Resume refuses a
// checkpoint whose fingerprint differs.
func (s *Settings[L, P]) Fingerprint(data map[string]string, method string) *Fingerprint {
	return &Fingerprint{Data: data, Options: map[string]string{
		"method":    method,
		"FixParams": fmt.Sprint(s.FixParams),
		"Smoothing": FormatOption(s.Smoothing),
		"Shrinkage": FormatOption(s.Shrinkage),
	}}
}

// NewResult assembles the result of a run of model: its record, the
// method of each latent, the latents and params, and the fingerprint fp
// completed with the params.
func NewResult[L, P any](model, method string, run Run, latent L, params P, fp *Fingerprint) *Result[L, P] {
	r := &Result[L, P]{Model: model, Method: method, Converged: run.Converged, Status: run.Status,
		Iterations: run.Iterations, ELBO: run.ELBO, Seconds: run.Seconds, Latent: latent, Params: params,
		Unsettled: run.Unsettled, Tempering: run.Tempering, Temperature: run.Temperature, TemperedELBO: run.TemperedELBO,
		Warning: run.Warning, UnitTemperature: run.UnitTemperature, Diagnostics: run.Diagnostics}
	r.Fingerprint = fp.WithParams(&r.Params)
	return r
}

// summarize sets r.Summary from r.Latent unless s.NoSummary (a failure is
// a warning in the result, not an error of the fit).
func (r *Result[L, P]) summarize(s Settings[L, P]) *Result[L, P] {
	if s.NoSummary {
		return r
	}
	rows, omitted, err := Summarize(r.Latent)
	if err != nil {
		if r.Warning != "" {
			r.Warning += "; "
		}
		r.Warning += err.Error()
		return r
	}
	r.Summary, r.SummaryOmitted = rows, omitted
	return r
}
