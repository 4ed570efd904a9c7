package runtime

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
)

// Annealing and variational tempering (Mandt, McInerney, Abrol, Ranganath
// & Blei 2016). A tempered fit divides the log density of the statements
// inside the unit plate, p(x_d, z_d | β), by a temperature T ≥ 1 and
// leaves the global statements, the prior p(β), as they are (Eq. 2):
//
//	A(q; T) = E_q[log p(β)] − E_q[log q(β)] + Σ_d (E_q[log p(x_d, z_d | β)]/T − E_q[log q(z_d)])
//
// (Eq. 4). Its coordinate updates are the untempered ones with every local
// factor's natural parameter divided by T (§3.2, the update of φ) and each
// unit's expected sufficient statistics divided by T in a global factor's
// (Eq. 8). A generated package supplies them through Tempered: its local
// updates read the inverse temperature of their unit from Temper, and its
// SVIGlobals.UnitNatural scales a unit's part by it. With 1/T = 1 the
// updates are the untempered ones bit for bit: they take the same path.
//
// Three ways to set T (TemperSettings): a schedule (AVI, §2.2), a latent
// temperature on a grid with a posterior q(y) of its own (VT, §2.3), and
// one such temperature per unit (LVT, §2.4), which needs each unit's
// tempered log normalizer from the model (UnitNormalizer).

// Temper holds the inverse temperatures 1/T that a tempered fit's updates
// read. The zero value is untempered.
type Temper struct {
	// Global is 1/T for every unit: AVI's 1/T, VT's E_q[1/T]. 0 stands for 1.
	Global float64
	// Unit, if set, is each unit's own 1/T (LVT's E_q[1/T_d]) and overrides
	// Global.
	Unit []float64
}

// At returns the inverse temperature of unit d.
func (t *Temper) At(d int) float64 {
	if t.Unit != nil {
		return t.Unit[d]
	}
	if t.Global == 0 {
		return 1
	}
	return t.Global
}

// Off reports whether every unit is at T = 1.
func (t *Temper) Off() bool {
	for _, b := range t.Unit {
		if b != 1 {
			return false
		}
	}
	return t.Global == 0 || t.Global == 1
}

// Tempered is what a generated package adds to CAModel and SVIGlobals when
// its model can be tempered: every latent conjugate, a unit plate, and no
// params. A model that cannot says why with NoTemper() string.
type Tempered[S any] interface {
	// Tempering returns the inverse temperatures the model's updates read;
	// the algorithm sets them before each update.
	Tempering() *Temper
	// UnitLogJoint returns E_q[log p(x_d, z_d | β)], the expected log
	// density of unit d's statements under q (the ELBO's unit part without
	// the entropies): what tempering divides by T. It only reads q, and is
	// called concurrently for different units.
	UnitLogJoint(q S, d int) float64
}

// TemperNatural divides the natural parameters of the elements of a
// conjugate factor by T (multiplies them by invT), converting each element
// of params (one slice per parameter of the family) with to and back with
// from, the family's maps (as for ToNatural and FromNatural).
func TemperNatural(invT float64, to func(e, p []float64), from func(p, e []float64), params ...[]float64) {
	TemperNaturalKeep(invT, to, from, nil, params...)
}

// TemperSoftmaxRows replaces each row of length k of x, log-probabilities
// up to a constant per row (a categorical factor's natural parameters), by
// the normalized exponential of invT times it: the tempered categorical
// update, in the log domain so that no probability the temperature raises
// is lost to underflow first.
func TemperSoftmaxRows(x []float64, k int, invT float64) {
	for i := range x {
		x[i] *= invT
	}
	SoftmaxRows(x, k)
}

// TemperSettings choose how a fit is tempered. The zero value is
// untempered.
type TemperSettings struct {
	// Anneal, with T0 > 1, is annealed variational inference (AVI): T
	// follows the schedule, in iterations of coordinate ascent or passes
	// over the data of SVI, and the fit runs at T = 1 after it.
	Anneal Anneal `json:"anneal,omitempty"`
	// Mode "global" is variational tempering (VT): the temperature is a
	// latent variable y on Grid with prior Prior, and q(y) is updated with
	// the other factors (Eq. 9); the updates read E_q[1/T]. Mode "local" is
	// local variational tempering (LVT): one such temperature T_d per unit,
	// q(T_d) updated by Eq. 10 with the unit's tempered log normalizer
	// (UnitNormalizer), each unit's updates and statistics weighed by its
	// E_q[1/T_d] (Eq. 11). "" is no latent temperature.
	Mode string `json:"mode,omitempty"`
	// Grid are the temperatures 1 = T_1 < T_2 < … < T_M of VT.
	Grid []float64 `json:"grid,omitempty"`
	// LogC are the log tempered partition functions log C(T_m) (Eq. 3) on
	// Grid, which VT's update of q(y) needs.
	LogC []float64 `json:"log_c,omitempty"`
	// Prior is π_m, the prior of y on Grid (nil: uniform).
	Prior []float64 `json:"prior,omitempty"`
	// Cold starts q(y) of VT, or every q(T_d) of LVT, with all its mass on
	// T_1 = 1 instead of uniform over the grid (the paper's start): the
	// first local updates run untempered. (Under SVI, VT's q(y) is then set
	// to the first minibatch's estimate, as from a uniform start.) On LDA
	// both VT and LVT have a hot and a cold fixed point, and the uniform
	// start leads to the hot one (examples/lda/TEMPERING.md).
	Cold bool `json:"cold,omitempty"`
	// Fingerprint, if set, names the model (by its source's SHA-256) and
	// data LogC was computed for: a fit of another model, an edited one
	// included, or of other data, sizes or constants, is refused (log C(T) depends on all of them, and a wrong one gives a
	// wrong q(T) with no sign of it). A -logc file with log_c must carry
	// one (readTemperFile).
	Fingerprint *LogCFingerprint `json:"fingerprint,omitempty"`
	// File is the -logc file s was read from, for messages ("" if none).
	File string `json:"-"`
}

// LogCFingerprint identifies what log C(T) was computed for, as the
// fingerprint of a fit does (Fingerprint): the model by the SHA-256 of its
// .vi source (Fingerprint.Model), so that an edited model is another
// model, and the data by a hash of each size, data and constant variable
// as loaded (Fingerprint.Data). Any result of the model on the same data
// holds both as its "fingerprint", which can be copied into the file
// whole: its "options" and "params" are read and not checked, as log C(T)
// depends on neither.
type LogCFingerprint struct {
	Model   string            `json:"model"`
	Data    map[string]string `json:"data"`
	Options map[string]string `json:"options,omitempty"`
	Params  string            `json:"params,omitempty"`
}

// isSHA256 reports whether s is a SHA-256 in hex, as Fingerprint.Model
// gives the model's source.
func isSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// maxLogC bounds |log C(T)|: beyond 1e12 a float64 resolves log C to no
// better than about 1e-4, too coarse for q(T)'s update, which
// exponentiates differences of log C between temperatures; no data set a
// fit can hold in memory has a log partition function that large.
const maxLogC = 1e12

// On reports whether s tempers the fit.
func (s TemperSettings) On() bool { return s.Anneal.T0 > 1 || s.Mode != "" }

// Check reports settings that cannot be run.
func (s TemperSettings) Check() error {
	if s.Anneal.T0 != 0 && (!(s.Anneal.T0 >= 1) || math.IsInf(s.Anneal.T0, 0) || !(s.Anneal.Length > 0) || math.IsInf(s.Anneal.Length, 0)) {
		return fmt.Errorf("anneal schedule %s: the starting temperature must be ≥ 1 and the length a positive number", s.Anneal)
	}
	switch s.Mode {
	case "":
		if s.Cold {
			return errors.New("a cold start is for the latent temperature of variational tempering (Mode \"global\") or local tempering (\"local\"), and no mode is set")
		}
		if len(s.Grid)+len(s.LogC)+len(s.Prior) > 0 {
			return errors.New("a temperature grid, log C(T) or prior is given but no tempering mode: set Mode \"global\" (variational tempering)")
		}
		return nil
	case "global", "local":
	default:
		return fmt.Errorf("unknown tempering mode %q: give \"global\" (variational tempering) or \"local\" (one temperature per unit)", s.Mode)
	}
	if s.Anneal.T0 > 1 {
		return errors.New("give either an annealing schedule (AVI) or variational tempering (VT), not both: VT learns the schedule")
	}
	if len(s.Grid) < 2 {
		return fmt.Errorf("variational tempering needs a grid of at least two temperatures, 1 = T_1 < T_2 < …; got %d", len(s.Grid))
	}
	if s.Grid[0] != 1 {
		return fmt.Errorf("variational tempering: the grid must start at T_1 = 1 (the untempered model), not %v", s.Grid[0])
	}
	for m := 1; m < len(s.Grid); m++ {
		if !(s.Grid[m] > s.Grid[m-1]) || math.IsInf(s.Grid[m], 0) {
			return fmt.Errorf("variational tempering: the grid must increase, but T_%d = %v follows T_%d = %v", m+1, s.Grid[m], m, s.Grid[m-1])
		}
	}
	if s.Mode == "local" && len(s.LogC) > 0 {
		return errors.New("local variational tempering takes each unit's log normalizer from the model (UnitNormalizer), not log C(T)")
	}
	if s.Mode == "global" && len(s.LogC) != len(s.Grid) {
		return fmt.Errorf("variational tempering: %d values of log C(T) for %d temperatures", len(s.LogC), len(s.Grid))
	}
	for m, c := range s.LogC {
		if math.IsNaN(c) || math.IsInf(c, 0) {
			return fmt.Errorf("variational tempering: log C(T_%d) = %v is not finite", m+1, c)
		}
		if math.Abs(c) > maxLogC {
			return fmt.Errorf("variational tempering: log C(T_%d) = %v is beyond ±%g, more than a float64 can resolve for q(T)'s update: not the log partition function of a data set", m+1, c, maxLogC)
		}
	}
	if len(s.LogC) > 0 {
		// C(1) = ∫ p(x, z) = 1: the untempered joint is normalized; the
		// tolerance is rounding in the values' own scale
		scale := 1.0
		for _, c := range s.LogC {
			scale = max(scale, math.Abs(c))
		}
		if math.Abs(s.LogC[0]) > 1e-9*scale {
			return fmt.Errorf("variational tempering: log C(T_1) = log C(1) must be 0, since the untempered joint is normalized (C(1) = 1), not %v: the values are not log C(T) of the model, or are shifted", s.LogC[0])
		}
	}
	if s.Prior != nil {
		if len(s.Prior) != len(s.Grid) {
			return fmt.Errorf("variational tempering: %d prior weights for %d temperatures", len(s.Prior), len(s.Grid))
		}
		tot := 0.0
		for m, p := range s.Prior {
			if !(p > 0) || math.IsInf(p, 0) {
				return fmt.Errorf("variational tempering: prior weight π_%d = %v must be positive", m+1, p)
			}
			tot += p
		}
		if math.IsInf(tot, 0) {
			return errors.New("variational tempering: the prior weights add up to more than a float64 holds; scale them down (only their ratios matter)")
		}
	}
	return nil
}

// vtState is q(y) of variational tempering: r over the grid.
type vtState struct {
	s      TemperSettings
	logPri []float64 // log π_m, normalized
	r      []float64
}

func newVT(s TemperSettings) *vtState {
	return &vtState{s: s, logPri: logPrior(s), r: startQ(s)}
}

// startQ is the q over s's grid that VT's q(y) and each of LVT's q(T_d)
// start from: uniform, as in the paper's experiments, or with s.Cold all
// at T_1 = 1.
func startQ(s TemperSettings) []float64 {
	r := make([]float64, len(s.Grid))
	for k := range r {
		r[k] = 1 / float64(len(r))
		if s.Cold {
			r[k] = 0
		}
	}
	if s.Cold && len(r) > 0 {
		r[0] = 1
	}
	return r
}

// logPrior returns log π_m on s's grid, normalized (uniform without
// s.Prior).
func logPrior(s TemperSettings) []float64 {
	out := make([]float64, len(s.Grid))
	tot := 0.0
	for k := range out {
		out[k] = 1
		if s.Prior != nil {
			out[k] = s.Prior[k]
		}
		tot += out[k]
	}
	for k := range out {
		out[k] = math.Log(out[k] / tot)
	}
	return out
}

// natural writes into out the natural parameters of the optimal q(y)
// (Eq. 9) given lj = Σ_d E_q[log p(x_d, z_d | β)]: log r_m up to a
// constant.
func (v *vtState) natural(lj float64, out []float64) {
	for k, t := range v.s.Grid {
		out[k] = lj/t + v.logPri[k] - v.s.LogC[k]
	}
}

// set sets r to the softmax of the natural parameters eta.
func (v *vtState) set(eta []float64) {
	copy(v.r, eta)
	SoftmaxRows(v.r, len(v.r))
}

// invT is E_q[1/T], the inverse temperature VT's updates read.
func (v *vtState) invT() float64 {
	s := 0.0
	for k, t := range v.s.Grid {
		s += v.r[k] / t
	}
	return s
}

// meanT is E_q[T].
func (v *vtState) meanT() float64 {
	s := 0.0
	for k, t := range v.s.Grid {
		s += v.r[k] * t
	}
	return s
}

// bound is q(y)'s part of the tempered ELBO (the T-ELBO of §2.3):
// E_q[log p(y)] − E_q[log C(T_y)] − E_q[log q(y)].
func (v *vtState) bound() float64 {
	s := 0.0
	for k, r := range v.r {
		if r > 0 {
			s += r * (v.logPri[k] - v.s.LogC[k] - math.Log(r))
		}
	}
	return s
}

// learns reports whether the temperature is learned (VT, LVT) rather than
// scheduled (AVI).
func (t *temperer[S, W]) learns() bool { return t.vt != nil || t.lt != nil }

// UnitNormalizer is what local variational tempering (LVT, Mandt et al.
// §2.4) needs of a model besides Tempered: the log normalizer of each
// unit's tempered density, so that q(T_d) weighs the temperatures by the
// normalized p(x_d, z_d | β, T) = p(x_d, z_d | β)^(1/T) / Z_d(β, T) (Eq. 10).
type UnitNormalizer[S any] interface {
	// UnitLogNormalizers prepares, from q's current global factors, what
	// every unit's normalizer shares (LDA's per-topic tables), and returns
	// the function that writes into out, for each temperature T_m of grid,
	// E_q[log Z_d(β, T_m)] of unit d, with Z_d(β, T) = ∫ p(x_d, z_d | β)^(1/T)
	// dx_d dz_d, or an upper bound of it (the tempered ELBO stays a lower
	// bound). The function only reads q and is called concurrently for
	// different units; it is called again once the globals change.
	UnitLogNormalizers(q S, grid []float64) func(d int, out []float64)
}

// ltState is LVT's q(T_d) for every unit d: r[d·M + m] over the grid.
type ltState[S any] struct {
	s      TemperSettings
	un     UnitNormalizer[S]
	unit   func(d int, out []float64) // from un, for the current globals
	logPri []float64
	r      []float64 // units × M
	norm   []float64 // units × M: E_q[log Z_d(β, T_m)] at the last update
	invT   []float64 // E_q[1/T_d], which Temper.Unit holds
}

func newLT[S any](s TemperSettings, un UnitNormalizer[S], units int) *ltState[S] {
	m := len(s.Grid)
	l := &ltState[S]{s: s, un: un, logPri: logPrior(s), r: make([]float64, units*m), norm: make([]float64, units*m), invT: make([]float64, units)}
	start := startQ(s) // q(T_d) each unit starts from
	inv := 0.0
	for k, t := range s.Grid {
		inv += start[k] / t
	}
	for d := range units {
		copy(l.r[d*m:(d+1)*m], start)
		l.invT[d] = inv
	}
	return l
}

// prepare readies the units' normalizers for q's current global factors;
// update calls after it read them.
func (l *ltState[S]) prepare(q S) { l.unit = l.un.UnitLogNormalizers(q, l.s.Grid) }

// update sets q(T_d) to its optimum (Eq. 10, with the normalizer): r_dm ∝
// π_m exp(lj/T_m − E_q[log Z_d(β, T_m)]), lj = E_q[log p(x_d, z_d | β)],
// and E_q[1/T_d] with it.
func (l *ltState[S]) update(d int, lj float64) {
	m := len(l.s.Grid)
	r, norm := l.r[d*m:(d+1)*m], l.norm[d*m:(d+1)*m]
	l.unit(d, norm)
	inv := 0.0
	for k, t := range l.s.Grid {
		r[k] = lj/t + l.logPri[k] - norm[k]
	}
	SoftmaxRows(r, m)
	for k, t := range l.s.Grid {
		inv += r[k] / t
	}
	l.invT[d] = inv
}

// bound is the q(T_d)'s part of LVT's tempered ELBO, summed over units:
// Σ_d E_q[log p(T_d)] − E_q[log Z_d(β, T_d)] − E_q[log q(T_d)].
func (l *ltState[S]) bound() float64 {
	m := len(l.s.Grid)
	s := 0.0
	for i, r := range l.r {
		if r > 0 {
			s += r * (l.logPri[i%m] - l.norm[i] - math.Log(r))
		}
	}
	return s
}

// meanT is the mean over units of E_q[T_d].
func (l *ltState[S]) meanT() float64 {
	if len(l.invT) == 0 {
		return 1
	}
	m := len(l.s.Grid)
	s := 0.0
	for i, r := range l.r {
		s += r * l.s.Grid[i%m]
	}
	return s / float64(len(l.invT))
}

// unitT returns E_q[T_d] of every unit.
func (l *ltState[S]) unitT() []float64 {
	m := len(l.s.Grid)
	out := make([]float64, len(l.invT))
	for i, r := range l.r {
		out[i/m] += r * l.s.Grid[i%m]
	}
	return out
}

// unitLogJoint sums E_q[log p(x_d, z_d | β)] over the units, computed on
// workers goroutines into perUnit and added in unit order.
func unitLogJoint[S any](tm Tempered[S], q S, units, workers int, perUnit []float64) float64 {
	ParallelFor(units, workers, func(_, d int) { perUnit[d] = tm.UnitLogJoint(q, d) })
	s := 0.0
	for _, v := range perUnit[:units] {
		s += v
	}
	return s
}

// temperedELBO is Eq. 4's A(q; T) from the ELBO and the units' expected log
// joints: the ELBO with each unit's E_q[log p(x_d, z_d | β)] weighed by
// its 1/T instead of 1.
func temperedELBO(elbo float64, tp *Temper, perUnit []float64) float64 {
	s := 0.0
	for d, lj := range perUnit {
		s += (1 - tp.At(d)) * lj
	}
	return elbo - s
}

// temperedGlobals sets each conjugate global factor in turn to its
// optimum under the tempered objective, λ = prior + Σ_d E_q[t(x_d, z_d)]/T_d
// (Eq. 8 with every unit), and returns the largest relative change of a
// factor's natural parameters (L2Change; the untempered UpdateGlobals
// measures the change of the ordinary parameters, so MeanTol reads the two
// on somewhat different scales).
func temperedGlobals[S, W any](gm SVIGlobals[S, W], shape SVIShape, q S, w W, units int, tp *Temper, eta, prev []float64) float64 {
	change := 0.0
	for g, n := range shape.Natural {
		e, p := eta[:n], prev[:n]
		gm.Natural(q, g, p)
		clear(e)
		for d := 0; d < units; d++ {
			gm.UnitNatural(q, w, g, d, tp.At(d), e)
		}
		gm.PriorNatural(q, g, e)
		gm.SetNatural(q, g, e)
		change = math.Max(change, L2Change(e, p))
	}
	return change
}

// temperer is what FitCA and FitSVI need of a tempered fit: the model's
// tempering interfaces, the settings and q(y) for VT.
type temperer[S, W any] struct {
	tm    Tempered[S]
	gm    SVIGlobals[S, W]
	shape SVIShape
	tp    *Temper
	s     TemperSettings
	vt    *vtState
	lt    *ltState[S]
	eta   []float64 // scratch for q(y)'s natural parameters, and the globals'
	prev  []float64
	temp  float64 // AVI's temperature, as the schedule gives it
}

// newTemperer checks that m can be tempered under s and returns the
// temperer, or nil when s is off.
func newTemperer[S, W, P, R any](m CAModel[S, W, P, R], q S, s TemperSettings) (*temperer[S, W], error) {
	if tm, ok := m.(Tempered[S]); ok {
		// a model reused from a tempered fit starts untempered
		*tm.Tempering() = Temper{}
	}
	if !s.On() {
		return nil, nil
	}
	if err := s.Check(); err != nil {
		return nil, err
	}
	tm, ok := m.(Tempered[S])
	if !ok {
		why := "the model has no tempered updates"
		if n, ok := m.(interface{ NoTemper() string }); ok {
			why = n.NoTemper()
		}
		return nil, fmt.Errorf("tempering (annealing or variational tempering, Mandt et al. 2016) does not apply: %s", why)
	}
	t := &temperer[S, W]{tm: tm, tp: tm.Tempering(), s: s}
	if sm, ok := m.(interface{ Stochastic() SVIShape }); ok {
		t.shape = sm.Stochastic()
	}
	t.gm, _ = m.(SVIGlobals[S, W])
	if len(t.shape.Natural) > 0 && t.gm == nil {
		return nil, errors.New("the model has tempered updates but no natural parameters of its global factors (SVIGlobals)")
	}
	n := len(s.Grid)
	for _, k := range t.shape.Natural {
		n = max(n, k)
	}
	t.eta, t.prev = make([]float64, n), make([]float64, n)
	*t.tp = Temper{}
	switch s.Mode {
	case "global":
		t.vt = newVT(s)
		t.tp.Global = t.vt.invT()
	case "local":
		un, ok := m.(UnitNormalizer[S])
		if !ok {
			why := "the model does not give the log normalizer of each unit's tempered density (runtime.UnitNormalizer)"
			if n, ok := m.(interface{ NoLocalTemper() string }); ok {
				why = n.NoLocalTemper()
			}
			return nil, fmt.Errorf("local variational tempering (Mandt et al. 2016, §2.4) does not apply: %s", why)
		}
		t.lt = newLT(s, un, m.Shape(q).Units)
		t.tp.Unit = t.lt.invT
	}
	return t, nil
}

// reset leaves the model untempered, as a fit returns it.
func (t *temperer[S, W]) reset() {
	if t != nil {
		*t.tp = Temper{}
	}
}

// setAnneal sets the temperature of step t (0-based) of the schedule and
// returns it.
func (t *temperer[S, W]) setAnneal(step float64) float64 {
	T := t.s.Anneal.At(step)
	t.tp.Global, t.temp = 1/T, T
	return T
}

// temperature is the temperature a progress line and the result report:
// AVI's T, the one the iteration ran at; VT's E_q[T] under q(T) as the
// iteration's update of it left it, at which the tempered ELBO is
// evaluated and which the next iteration's updates read (E_q[1/T]).
func (t *temperer[S, W]) temperature() float64 {
	if t.vt != nil {
		return t.vt.meanT()
	}
	if t.lt != nil {
		return t.lt.meanT()
	}
	if t.tp.Off() {
		return 1
	}
	return t.temp
}

// String describes s for a result: "" untempered, "anneal linear:10:100",
// or "vt: 30 temperatures in [1, 10]".
func (s TemperSettings) String() string {
	cold := ""
	if s.Cold {
		cold = ", cold start"
	}
	switch {
	case s.Mode == "global" && len(s.Grid) > 0:
		return fmt.Sprintf("vt: %d temperatures in [%g, %g]%s", len(s.Grid), s.Grid[0], s.Grid[len(s.Grid)-1], cold)
	case s.Mode == "local" && len(s.Grid) > 0:
		return fmt.Sprintf("lvt: %d temperatures in [%g, %g]%s", len(s.Grid), s.Grid[0], s.Grid[len(s.Grid)-1], cold)
	case s.Anneal.T0 > 1:
		return "anneal " + s.Anneal.String()
	}
	return ""
}

// ReadTemperSettings reads tempering settings from a JSON file, as
// `-logc FILE` gives them: the JSON of TemperSettings ({"grid": [1, 1.5,
// …], "log_c": […], "prior": […], "fingerprint": {…}}, checked as
// variational tempering's when it names no mode, and returned with Mode
// "global"). A file with log_c must carry the fingerprint of the model and
// data it was computed for (LogCFingerprint), which the fit checks.
func ReadTemperSettings(path string) (TemperSettings, error) {
	return readTemperFile(path, "")
}

// readTemperFile reads the JSON of TemperSettings for mode ("" takes
// variational tempering's when the file gives a grid): a local one needs
// no grid (DefaultLocalGrid) and takes no log C.
func readTemperFile(path, mode string) (TemperSettings, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return TemperSettings{}, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var s TemperSettings
	if err := dec.Decode(&s); err != nil {
		return TemperSettings{}, fmt.Errorf("%s: %v (want the JSON of runtime.TemperSettings: mode, grid, log_c, prior, cold, anneal)", path, err)
	}
	if mode != "" && (s.Anneal.T0 != 0 || (s.Mode != "" && s.Mode != mode)) {
		return TemperSettings{}, fmt.Errorf("%s: the file sets mode %q or a schedule; with -temper %s it should hold only grid, log_c, prior and cold", path, s.Mode, mode)
	}
	switch {
	case mode == "local" && len(s.LogC) > 0:
		return TemperSettings{}, fmt.Errorf("%s: with -temper local the file gives only the grid of temperatures, their prior and cold (each unit's normalizer comes from the model, not log C)", path)
	case mode == "local":
		s.Mode = mode
		if len(s.Grid) == 0 {
			s.Grid = DefaultLocalGrid()
		}
	case mode != "":
		s.Mode = mode
	case len(s.Grid) > 0 && s.Mode == "":
		s.Mode = "global" // a -logc file names no mode
	}
	if err := s.Check(); err != nil {
		return TemperSettings{}, fmt.Errorf("%s: %v", path, err)
	}
	if len(s.LogC) > 0 && (s.Fingerprint == nil || s.Fingerprint.Model == "" || len(s.Fingerprint.Data) == 0) {
		return TemperSettings{}, fmt.Errorf("%s: no fingerprint of the model and data log C(T) was computed for, so nothing shows it is this fit's: "+
			`add the "fingerprint" of a result of the model on the same data (vigen run … -out r.json), {"model": the sha256 of the model's source, "data": {…}}`, path)
	}
	if f := s.Fingerprint; len(s.LogC) > 0 && !isSHA256(f.Model) {
		return TemperSettings{}, fmt.Errorf("%s: the fingerprint's model %q is not the sha256 of a model's source (64 hex digits), which is how the fingerprint names the model, so that an edited model is another: "+
			`copy the "fingerprint" of a result of the model on the same data (vigen run … -out r.json)`, path, f.Model)
	}
	s.File = path
	return s, nil
}

// CheckFingerprint refuses s for a fit of model (its name, for messages)
// whose fingerprint is fp if s's log C(T) was computed for another model
// (the SHA-256 of another source: fp.Model) or other data
// (TemperSettings.Fingerprint), saying which; settings without one are not
// checked.
func (s TemperSettings) CheckFingerprint(model string, fp *Fingerprint) error {
	f := s.Fingerprint
	if f == nil || s.Mode != "global" || fp == nil {
		return nil
	}
	var why, other []string
	if d := s.modelDiff(model, fp.Model); d != "" {
		why, other = append(why, d), append(other, "model")
	}
	if diffs := dataDiffs(f.Data, fp.Data, "the log C file's", "log C(T) was computed for"); len(diffs) > 0 {
		why, other = append(why, "for other data: "+strings.Join(diffs, "; ")), append(other, "data")
	}
	if len(why) == 0 {
		return nil
	}
	return fmt.Errorf("%s: log C(T) was computed %s; compute it for this %s", s.what(), strings.Join(why, ", and "), strings.Join(other, " and "))
}

// CheckModel refuses s for model (its name, for messages) whose source's
// SHA-256 is sourceHash if s's log C(T) was computed for another model;
// the part of CheckFingerprint that needs no data, which vigen run checks
// before it builds the model.
func (s TemperSettings) CheckModel(model, sourceHash string) error {
	if s.Fingerprint == nil || s.Mode != "global" {
		return nil
	}
	if d := s.modelDiff(model, sourceHash); d != "" {
		return fmt.Errorf("%s: log C(T) was computed %s; compute it for this model", s.what(), d)
	}
	return nil
}

// modelDiff says how the model log C(T) was computed for differs from
// model's, whose source's SHA-256 is sourceHash ("" if it does not).
func (s TemperSettings) modelDiff(model, sourceHash string) string {
	f := s.Fingerprint
	switch {
	case f.Model == sourceHash:
		return ""
	case sourceHash == "":
		return fmt.Sprintf("for a model this fit cannot compare with %s, whose package was generated without its source's sha256", model)
	}
	return fmt.Sprintf("for another model than %s: the fingerprint's model is the sha256 of another source (%s, %s's is %s; an edited model is another model)", model, short(f.Model), model, short(sourceHash))
}

// what names s's fingerprint in messages: the -logc file, if any.
func (s TemperSettings) what() string {
	if s.File != "" {
		return "-logc " + s.File
	}
	return "Temper.Fingerprint"
}

// Collapser is what a generated package adds when the model has component
// latents (one block per category of a categorical latent: a mixture's
// means, LDA's topics). At a high temperature the tempered optimum can be
// the symmetric one in which every component is the same, and once the
// components are identical copies, bit for bit, no coordinate update can
// tell them apart again (deterministic annealing's phase transitions, Rose
// 1998): a tempered fit that ends so is reported.
type Collapser[S any] interface {
	// Collapsed names the latents whose components are identical.
	Collapsed(q S) []string
}

// IdenticalRows reports whether every field, cut into k rows of equal
// length, has k ≥ 2 identical rows.
func IdenticalRows(k int, fields ...[]float64) bool {
	if k < 2 {
		return false
	}
	for _, f := range fields {
		if len(f) == 0 || len(f)%k != 0 {
			return false
		}
		n := len(f) / k
		for r := 1; r < k; r++ {
			for i := range n {
				if f[r*n+i] != f[i] {
					return false
				}
			}
		}
	}
	return true
}

// collapseWarning says what a tempered fit ending with the components of
// latents identical means, or "".
func collapseWarning(latents []string) string {
	if len(latents) == 0 {
		return ""
	}
	return fmt.Sprintf("the components of %s are identical copies of one another: tempering merged them at a high temperature, a fixed point coordinate ascent cannot leave; start at a lower temperature (below the one at which they separate), or use SVI, whose minibatch noise separates them, and compare the ELBO with an untempered fit's", strings.Join(latents, ", "))
}

// DefaultLocalGrid is local variational tempering's grid when none is
// given: 30 temperatures 10^(i/29), i = 0..29, from 1 to 10 on an
// exponential scale (the range of Mandt et al.'s grid for LDA).
func DefaultLocalGrid() []float64 {
	g := make([]float64, 30)
	for i := range g {
		g[i] = math.Pow(10, float64(i)/29)
	}
	g[0], g[29] = 1, 10
	return g
}

// TemperFromFlags builds the tempering settings of the command-line flags
// -anneal KIND:T0:LENGTH (AVI), -temper global|local (VT, LVT) and -logc
// FILE (VT's grid and log C(T_m), as the JSON of TemperSettings; under LVT
// the grid and prior alone, DefaultLocalGrid without it); empty flags are
// unset. It is shared by vigen run and the generated commands.
func TemperFromFlags(anneal, mode, logc string) (TemperSettings, error) {
	var s TemperSettings
	switch mode {
	case "":
		if logc != "" {
			return s, errors.New("-logc gives the log partition function of variational tempering: add -temper global")
		}
	case "global":
		if logc == "" {
			return s, errors.New("-temper global (variational tempering) needs log C(T) on a grid of temperatures: give -logc FILE, a JSON file {\"grid\": [1, …], \"log_c\": […], \"fingerprint\": {…}} with the \"fingerprint\" of a result of the model on the same data; vigen does not derive log C(T) for a model yet")
		}
		f, err := readTemperFile(logc, mode)
		if err != nil {
			return s, fmt.Errorf("-logc: %v", err)
		}
		s = f
	case "local":
		// LVT: the grid, prior and cold start from -logc if given, without
		// log C: the units' normalizers come from the model
		s = TemperSettings{Mode: mode, Grid: DefaultLocalGrid()}
		if logc != "" {
			f, err := readTemperFile(logc, mode)
			if err != nil {
				return s, fmt.Errorf("-logc: %v", err)
			}
			s = f
		}
	default:
		return s, fmt.Errorf("-temper %q: want global (variational tempering) or local", mode)
	}
	if anneal != "" {
		a, err := ParseAnneal(anneal)
		if err != nil {
			return s, fmt.Errorf("-anneal: %v", err)
		}
		s.Anneal = a
	}
	return s, s.Check()
}

// TemperNaturalKeep is TemperNatural for a factor part of whose natural
// parameters a temperature leaves alone (the priors of continuous local
// latents): η ← keep + (η − keep)·invT, with keep one slice per
// sufficient statistic, laid out like params (nil: keep nothing, η·invT).
func TemperNaturalKeep(invT float64, to func(e, p []float64), from func(p, e []float64), keep [][]float64, params ...[]float64) {
	if len(params) == 0 || len(params) > maxNatural || len(keep) > maxNatural {
		panic(fmt.Sprintf("vigen runtime: tempering a factor with %d parameters", len(params)))
	}
	var p, e [maxNatural]float64
	for i := range params[0] {
		for k := range params {
			p[k] = params[k][i]
		}
		to(e[:], p[:len(params)])
		if keep == nil {
			for k := range e {
				e[k] *= invT
			}
		} else {
			for k := range keep {
				e[k] = keep[k][i] + (e[k]-keep[k][i])*invT
			}
		}
		from(p[:len(params)], e[:])
		for k := range params {
			params[k][i] = p[k]
		}
	}
}

// TemperSoftmaxRowsKeep is TemperSoftmaxRows for a categorical factor part
// of whose log-probabilities a temperature leaves alone (the priors of
// continuous local latents that read it): each row of x becomes the
// softmax of keep + (x − keep)·invT.
func TemperSoftmaxRowsKeep(x, keep []float64, k int, invT float64) {
	for i := range x {
		x[i] = keep[i] + (x[i]-keep[i])*invT
	}
	SoftmaxRows(x, k)
}
