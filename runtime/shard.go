package runtime

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
)

// This file is the model side of a sharded fit: variational EM over units
// split into shards, each shard's E-step run where its data are (one
// process here, or the workers of a distributed engine such as Apache
// Beam, in the separate module runtime/beam), the shards' expected
// sufficient statistics combined exactly (ExactVec), and the M-step and
// the convergence rule run by one driver (FitShards). Everything that
// crosses between them is bytes, so the engine needs to know nothing of
// the model.

// ShardLocals is what a sharded fit needs of a model besides SVI's
// methods (SVIGlobals, SVIParams): the arrays of q local to the units,
// each laid out unit after unit (per-token arrays token after token), and
// the per-unit flags. A shard's are its units'; a sharded fit keeps them
// between iterations.
type ShardLocals[S any] interface {
	Locals(q S) (floats [][]float64, flags [][]bool)
}

// ShardGlobals lists the parameter arrays of a model's global factor g
// (in SVIShape order), whose largest relative change (L2Change) is the
// factor's change, as its coordinate update measures it.
type ShardGlobals[S any] interface {
	GlobalParams(q S, g int) [][]float64
}

// ShardUnitsELBO is the units' part of the ELBO alone: each unit's part
// into perUnit, on workers goroutines. A shard whose model has it skips
// the global part, which only the driver's counts.
type ShardUnitsELBO[S any] interface {
	UnitsELBO(q S, workers int, perUnit []float64)
}

// ShardParams sets a model's params, for a model that has them: the
// driver's M-step estimates them, and each shard's E-step reads them.
type ShardParams[P any] interface {
	SetParams(p P) error
}

// ShardRange places a shard's units among all units: Before of them come
// before it and After after it. A generated newState draws a shard's
// random starting values as the whole fit would draw them, skipping the
// other units' draws, so a sharded fit starts where the single-process
// fit does.
type ShardRange struct{ Before, After int }

// NewShardRange places units first+1..first+n (1-based) among total.
func NewShardRange(first, n, total int) (ShardRange, error) {
	if first < 0 || n < 0 || first+n > total {
		return ShardRange{}, fmt.Errorf("a shard of %d units from unit %d does not fit in 1..%d", n, first+1, total)
	}
	return ShardRange{Before: first, After: total - first - n}, nil
}

// InitPositiveIn is InitPositive for the units of shard s, each unitLen
// numbers long: the draws of the units before and after it are skipped.
func InitPositiveIn(r *rand.Rand, x []float64, s ShardRange, unitLen int) {
	for range s.Before * unitLen {
		r.ExpFloat64()
	}
	InitPositive(r, x)
	for range s.After * unitLen {
		r.ExpFloat64()
	}
}

// InitNormalIn is InitNormal for the units of shard s (InitPositiveIn).
func InitNormalIn(r *rand.Rand, x []float64, s ShardRange, unitLen int) {
	for range s.Before * unitLen {
		r.NormFloat64()
	}
	InitNormal(r, x)
	for range s.After * unitLen {
		r.NormFloat64()
	}
}

// Shard is one shard's side of a sharded fit, or the driver's (a shard
// of no units, holding the global factors and params): what generated
// code's Model.Shard returns. Globals and locals travel as bytes.
type Shard interface {
	// Units is the number of units the shard holds.
	Units() int
	// Globals encodes the global factors (their natural parameters) and
	// the params of the shard's q.
	Globals() ([]byte, error)
	// SetGlobals sets them from Globals' encoding.
	SetGlobals(b []byte) error
	// Locals encodes the units' local factors.
	Locals() []byte
	// SetLocals sets them from Locals' encoding.
	SetLocals(b []byte) error
	// EStep first, if elbo, adds the units' part of the ELBO of the
	// current q to the statistics; then it updates each unit's local
	// factors until they settle (Fig. 1's inner loop, on workers
	// goroutines) and returns their expected sufficient statistics for
	// the M-step. With units nil it visits all the shard's units; else
	// those listed (0-based, the shard's own numbering), whose statistics
	// it sums in list order (an SVI minibatch's part; none, for the ELBO
	// alone).
	EStep(ctx context.Context, elbo bool, units []int) (*ShardStats, error)
	// MStep sets the global factors to their closed-form optimum (Eq. 18)
	// given the statistics of all units, factor after factor, then the
	// params to their M-step, and returns the largest relative change of
	// a global factor and of a param.
	MStep(st *ShardStats) (global, params float64, err error)
	// SVIStep moves the global factors a natural-gradient step of size
	// rho toward prior + scale·(the statistics st), and the params by
	// online EM's step (the first step starts the running statistics),
	// as runtime.FitSVI's mean-field step does; it returns the largest
	// relative change.
	SVIStep(st *ShardStats, rho, scale float64, first bool) (float64, error)
	// GlobalELBO is the part of the ELBO outside the units: the ELBO of
	// the driver's shard, which holds none.
	GlobalELBO() float64
	// NonFinite names the first number of q that is NaN or infinite.
	NonFinite() string
	// Span places the shard: its units are first+1..first+Units() of
	// total.
	Span() (first, total int)
	// Result assembles the model's result (*Result[L, P]) from q, as Fit
	// completes it: for a run not canceled, the approximation diagnostic
	// of the units' Gaussian factors (Diagnose) and the summary, as the
	// options ask.
	Result(ctx context.Context, run Run) any
}

// ShardOptions are what a generated Model.Shard tells NewShard besides
// the model: where the shard is, its E-steps' goroutines (0: GOMAXPROCS;
// the result does not depend on them), and how Result completes a result
// as Fit does (Settings.ShardOptions).
type ShardOptions struct {
	First, Total int
	Workers      int
	Diagnose     DiagnoseSettings
	Seed         uint64
	// Finish completes an assembled result (the summary).
	Finish func(result any)
}

// ShardStats are the expected sufficient statistics of some units, with
// the bookkeeping of their E-step. A shard sums its units' statistics in
// the order it visits them (unit order; an SVI minibatch's order); merging shards' statistics is exact (ExactVec), so it is
// associative and commutative: the same shards' statistics combine to the
// same bits in whatever order or tree a runner merges them.
type ShardStats struct {
	// Units and Settled count the units visited and those whose local
	// factors settled; ELBOUnits the units whose part of the ELBO it
	// holds.
	Units, Settled, ELBOUnits int
	// Trouble is the numerical trouble the units met.
	Trouble Trouble
	// HasELBO says ELBO holds the units' part of the ELBO.
	HasELBO bool
	ELBO    *ExactVec
	// Sums are the natural parameter parts of the global factors, in
	// SVIShape order, then the params' statistics.
	Sums *ExactVec
}

// Merge adds o's units into s. The zero ShardStats is empty: merging
// into it gives o's statistics (a combiner's fresh accumulator).
func (s *ShardStats) Merge(o *ShardStats) error {
	if s.Sums == nil || s.Units == 0 && s.ELBOUnits == 0 && s.Sums.Len() == 0 {
		s.Sums, s.ELBO, s.HasELBO = NewExactVec(0), NewExactVec(0), o.HasELBO
	}
	if s.HasELBO != o.HasELBO {
		return errors.New("merging statistics with and without the ELBO")
	}
	if err := s.Sums.Merge(o.Sums); err != nil {
		return err
	}
	if err := s.ELBO.Merge(o.ELBO); err != nil {
		return err
	}
	s.Units += o.Units
	s.Settled += o.Settled
	s.ELBOUnits += o.ELBOUnits
	if len(o.Trouble) > 0 && s.Trouble == nil {
		s.Trouble = Trouble{}
	}
	for k, n := range o.Trouble {
		s.Trouble[k] += n
	}
	return nil
}

// MarshalBinary encodes s (the trouble in sorted order, so equal
// statistics encode to equal bytes).
func (s *ShardStats) MarshalBinary() ([]byte, error) {
	b := binary.AppendUvarint(nil, uint64(s.Units))
	b = binary.AppendUvarint(b, uint64(s.Settled))
	b = binary.AppendUvarint(b, uint64(s.ELBOUnits))
	b = binary.AppendUvarint(b, uint64(len(s.Trouble)))
	for _, k := range slices.Sorted(maps.Keys(s.Trouble)) {
		b = binary.AppendUvarint(b, uint64(len(k)))
		b = append(b, k...)
		b = binary.AppendUvarint(b, uint64(s.Trouble[k]))
	}
	elbo := byte(0)
	if s.HasELBO {
		elbo = 1
	}
	b = append(b, elbo)
	b = s.ELBO.AppendBinary(b)
	return s.Sums.AppendBinary(b), nil
}

// UnmarshalBinary decodes MarshalBinary's encoding.
func (s *ShardStats) UnmarshalBinary(b []byte) error {
	bad := errors.New("shard statistics: bad encoding")
	next := func() uint64 {
		v, k := binary.Uvarint(b)
		if k <= 0 {
			b = nil
			return 0
		}
		b = b[k:]
		return v
	}
	count := func() int {
		v := next()
		if v > math.MaxInt32 {
			b = nil // no shard has that many units
			return 0
		}
		return int(v)
	}
	*s = ShardStats{Units: count(), Settled: count(), ELBOUnits: count()}
	if b == nil {
		return bad
	}
	n := next()
	if n > uint64(len(b)) {
		return bad
	}
	for range n {
		l := next()
		if l > uint64(len(b)) {
			return bad
		}
		k := string(b[:l])
		b = b[l:]
		if s.Trouble == nil {
			s.Trouble = Trouble{}
		}
		s.Trouble[k] = count()
	}
	if len(b) < 1 || b[0] > 1 || s.Settled > s.Units {
		return bad
	}
	s.HasELBO = b[0] == 1
	var err error
	if s.ELBO, b, err = decodeExactVec(b[1:]); err != nil {
		return err
	}
	if s.Sums, b, err = decodeExactVec(b); err != nil {
		return err
	}
	if len(b) != 0 {
		return bad
	}
	return nil
}

// shard implements Shard for a generated model's caModel.
type shard[S, W, P, R any] struct {
	m       SVIModel[S, W, P, R]
	gm      SVIGlobals[S, W]
	pm      SVIParams[S, W]
	lm      ShardLocals[S]
	gp      ShardGlobals[S]
	q       S
	st      SVIShape
	units   int
	workers int
	ws      []W
	trouble []Trouble
	eta     []float64
	// running are online EM's running statistics of the params (SVIStep)
	running []float64
	opts    ShardOptions
}

// NewShard makes a Shard of model m in state q, which must support SVI's
// methods (the globals it updates are conjugate, or params) and
// ShardLocals, placed and completed as o says.
func NewShard[S, W, P, R any](m CAModel[S, W, P, R], q S, o ShardOptions) (Shard, error) {
	sm, ok := m.(SVIModel[S, W, P, R])
	if !ok {
		why := "the model has no conjugate global latents or params to update from statistics"
		if n, ok := m.(interface{ NoSVI() string }); ok {
			why = n.NoSVI()
		}
		return nil, fmt.Errorf("a sharded fit does not apply: %s", why)
	}
	lm, ok := m.(ShardLocals[S])
	if !ok {
		return nil, errors.New("a sharded fit does not apply: the model does not list its local factors (ShardLocals)")
	}
	shape, st := m.Shape(q), sm.Stochastic()
	if len(shape.Plates) > 0 {
		return nil, errors.New("a sharded fit does not apply: the model has latents local to a loop other than its unit plate")
	}
	s := &shard[S, W, P, R]{m: sm, lm: lm, q: q, st: st, units: shape.Units}
	var err error
	if s.gm, s.pm, err = sviParts[S, W](m, st); err != nil {
		return nil, fmt.Errorf("a sharded fit, like stochastic variational inference, %w", err)
	}
	s.gp, _ = m.(ShardGlobals[S])
	if shape.EM {
		if _, ok := m.(ShardParams[P]); !ok {
			return nil, errors.New("a sharded fit does not apply: the model cannot set its params (ShardParams)")
		}
	}
	if _, err := NewShardRange(o.First, s.units, o.Total); err != nil {
		return nil, err
	}
	s.opts = o
	s.workers = max(1, min(Workers(o.Workers), s.units))
	s.ws, s.trouble = newWorkers(s.workers, m.NewWorker)
	return s, nil
}

func (s *shard[S, W, P, R]) Units() int { return s.units }

// sums is the length of ShardStats.Sums.
func (s *shard[S, W, P, R]) sums() int {
	n := s.st.ParamStats
	for _, k := range s.st.Natural {
		n += k
	}
	return n
}

// Globals encodes the natural parameters (bits, little-endian) and then
// the params (gob: exact for float64s).
func (s *shard[S, W, P, R]) Globals() ([]byte, error) {
	var b []byte
	b = binary.AppendUvarint(b, uint64(len(s.st.Natural)))
	for g, n := range s.st.Natural {
		eta := Grow(&s.eta, n)
		s.gm.Natural(s.q, g, eta)
		b = appendFloats(b, eta)
	}
	var p P
	if cp, ok := s.m.(CAParams[S, P]); ok {
		p = cp.Params()
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(p); err != nil {
		return nil, fmt.Errorf("encoding the params: %w", err)
	}
	return append(b, buf.Bytes()...), nil
}

func (s *shard[S, W, P, R]) SetGlobals(b []byte) error {
	// all decoded before any is set: a bad encoding leaves q as it was
	bad := errors.New("shard globals: bad encoding")
	n, k := binary.Uvarint(b)
	if k <= 0 || n != uint64(len(s.st.Natural)) {
		return bad
	}
	b = b[k:]
	etas := make([][]float64, len(s.st.Natural))
	for g, want := range s.st.Natural {
		eta, rest, err := readFloats(b)
		if err != nil {
			return fmt.Errorf("shard globals: %s: %w", s.st.Names[g], err)
		}
		if len(eta) != want {
			return fmt.Errorf("shard globals: %s has %d natural parameters, want %d", s.st.Names[g], len(eta), want)
		}
		etas[g], b = eta, rest
	}
	var p P
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&p); err != nil {
		return fmt.Errorf("decoding the params: %w", err)
	}
	for g, eta := range etas {
		s.gm.SetNatural(s.q, g, eta)
	}
	if sp, ok := s.m.(ShardParams[P]); ok && s.m.Shape(s.q).EM {
		return sp.SetParams(p)
	}
	return nil
}

func (s *shard[S, W, P, R]) Locals() []byte { return encodeLocals(s.lm.Locals(s.q)) }

// encodeLocals encodes a shard's local arrays and flags.
func encodeLocals(floats [][]float64, flags [][]bool) []byte {
	b := binary.AppendUvarint(nil, uint64(len(floats)))
	for _, x := range floats {
		b = appendFloats(b, x)
	}
	b = binary.AppendUvarint(b, uint64(len(flags)))
	for _, f := range flags {
		b = binary.AppendUvarint(b, uint64(len(f)))
		for _, v := range f {
			b = append(b, boolByte(v))
		}
	}
	return b
}

func (s *shard[S, W, P, R]) SetLocals(b []byte) error {
	floats, flags := s.lm.Locals(s.q)
	f, l, err := decodeLocals(b)
	if err != nil {
		return err
	}
	if len(f) != len(floats) || len(l) != len(flags) {
		return errors.New("shard locals: they are of another model")
	}
	for i, x := range f {
		if len(x) != len(floats[i]) {
			return fmt.Errorf("shard locals: array %d has %d numbers, want %d (the shard's units differ)", i+1, len(x), len(floats[i]))
		}
		copy(floats[i], x)
	}
	for i, x := range l {
		if len(x) != len(flags[i]) {
			return fmt.Errorf("shard locals: flags %d have %d entries, want %d", i+1, len(x), len(flags[i]))
		}
		copy(flags[i], x)
	}
	return nil
}

// decodeLocals decodes Locals' encoding.
func decodeLocals(b []byte) (floats [][]float64, flags [][]bool, err error) {
	bad := errors.New("shard locals: bad encoding")
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, nil, bad
	}
	b = b[k:]
	for range n {
		var x []float64
		if x, b, err = readFloats(b); err != nil {
			return nil, nil, err
		}
		floats = append(floats, x)
	}
	n, k = binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, nil, bad
	}
	b = b[k:]
	for range n {
		m, k := binary.Uvarint(b)
		if k <= 0 || m > uint64(len(b)-k) {
			return nil, nil, bad
		}
		b = b[k:]
		f := make([]bool, m)
		for i := range f {
			f[i] = b[i] == 1
		}
		flags = append(flags, f)
		b = b[m:]
	}
	if len(b) != 0 {
		return nil, nil, bad
	}
	return floats, flags, nil
}

// ConcatLocals joins shards' Locals, in shard order, into the locals of
// all their units: a whole-data Shard's SetLocals takes them.
func ConcatLocals(parts [][]byte) ([]byte, error) {
	var floats [][]float64
	var flags [][]bool
	for i, p := range parts {
		f, l, err := decodeLocals(p)
		if err != nil {
			return nil, fmt.Errorf("shard %d: %w", i+1, err)
		}
		if i == 0 {
			floats, flags = f, l
			continue
		}
		if len(f) != len(floats) || len(l) != len(flags) {
			return nil, fmt.Errorf("shard %d: its locals are of another model", i+1)
		}
		for j := range f {
			floats[j] = append(floats[j], f[j]...)
		}
		for j := range l {
			flags[j] = append(flags[j], l[j]...)
		}
	}
	return encodeLocals(floats, flags), nil
}

func (s *shard[S, W, P, R]) EStep(ctx context.Context, elbo bool, units []int) (*ShardStats, error) {
	if units == nil {
		units = make([]int, s.units)
		for d := range units {
			units[d] = d
		}
	}
	for _, d := range units {
		if d < 0 || d >= s.units {
			return nil, fmt.Errorf("unit %d is outside the shard's 1..%d", d+1, s.units)
		}
	}
	st := &ShardStats{Units: len(units), HasELBO: elbo, ELBO: NewExactVec(1), Sums: NewExactVec(s.sums())}
	if elbo {
		perUnit := make([]float64, s.units)
		if ue, ok := s.m.(ShardUnitsELBO[S]); ok {
			ue.UnitsELBO(s.q, s.workers, perUnit)
		} else {
			s.m.ELBO(s.q, s.workers, perUnit)
		}
		for _, v := range perUnit {
			st.ELBO.AddAt(0, v)
		}
		st.ELBOUnits = s.units
	}
	for _, tr := range s.trouble {
		clear(tr)
	}
	settled := make([]bool, len(units))
	if !ParallelForUntil(ctx.Done(), len(units), s.workers, func(w, i int) {
		settled[i] = s.m.UpdateUnit(s.q, s.ws[w], units[i])
	}) {
		return nil, ctx.Err()
	}
	for _, ok := range settled {
		if ok {
			st.Settled++
		}
	}
	for _, tr := range s.trouble {
		for k, n := range tr {
			if st.Trouble == nil {
				st.Trouble = Trouble{}
			}
			st.Trouble[k] += n
		}
	}
	// the units' statistics summed in unit order, then added exactly
	off := 0
	for g, n := range s.st.Natural {
		eta := Grow(&s.eta, n)
		clear(eta)
		for _, d := range units {
			s.gm.UnitNatural(s.q, s.ws[0], g, d, 1, eta)
		}
		for i, x := range eta {
			st.Sums.AddAt(off+i, x)
		}
		off += n
	}
	if n := s.st.ParamStats; n > 0 {
		stats := Grow(&s.eta, n)
		clear(stats)
		for _, d := range units {
			s.pm.UnitParamStats(s.q, s.ws[0], d, stats)
		}
		for i, x := range stats {
			st.Sums.AddAt(off+i, x)
		}
	}
	return st, nil
}

func (s *shard[S, W, P, R]) MStep(st *ShardStats) (global, params float64, err error) {
	if st.Sums.Len() != s.sums() {
		return 0, 0, fmt.Errorf("statistics of %d numbers, want %d", st.Sums.Len(), s.sums())
	}
	off := 0
	for g, n := range s.st.Natural {
		prev := make([]float64, n)
		s.gm.Natural(s.q, g, prev)
		var before [][]float64
		if s.gp != nil {
			for _, x := range s.gp.GlobalParams(s.q, g) {
				before = append(before, append([]float64(nil), x...))
			}
		}
		eta := Grow(&s.eta, n)
		clear(eta)
		s.gm.PriorNatural(s.q, g, eta)
		// the prior's part and the units' exact sum, rounded once more
		var p []float64
		for i, x := range eta {
			p = append(p[:0], x)
			for _, y := range st.Sums.parts(off + i) {
				p = growExpansion(p, y)
			}
			eta[i] = roundExpansion(p)
		}
		s.gm.SetNatural(s.q, g, eta)
		if s.gp != nil {
			// as the coordinate update measures it, field by field
			for k, x := range s.gp.GlobalParams(s.q, g) {
				global = math.Max(global, L2Change(x, before[k]))
			}
		} else {
			global = math.Max(global, L2Change(eta, prev))
		}
		off += n
	}
	if n := s.st.ParamStats; n > 0 {
		stats := make([]float64, n)
		for i := range stats {
			stats[i] = st.Sums.Value(off + i)
		}
		params, err = s.pm.ParamStep(s.q, stats)
	}
	return global, params, err
}

func (s *shard[S, W, P, R]) SVIStep(st *ShardStats, rho, scale float64, first bool) (float64, error) {
	if st.Sums.Len() != s.sums() {
		return 0, fmt.Errorf("statistics of %d numbers, want %d", st.Sums.Len(), s.sums())
	}
	change := 0.0
	off := 0
	for g, n := range s.st.Natural {
		// λ̂ = prior + scale·Σ_b, then λ ← (1 − ρ)λ + ρλ̂ (FitSVI's order)
		hat := make([]float64, n)
		for i := range hat {
			hat[i] = st.Sums.Value(off+i) * scale
		}
		s.gm.PriorNatural(s.q, g, hat)
		lam := make([]float64, n)
		s.gm.Natural(s.q, g, lam)
		change = math.Max(change, NaturalStep(lam, hat, rho))
		s.gm.SetNatural(s.q, g, lam)
		off += n
	}
	if n := s.st.ParamStats; n > 0 {
		hat := make([]float64, n)
		for i := range hat {
			hat[i] = st.Sums.Value(off + i)
		}
		if first || s.running == nil {
			s.running = make([]float64, n)
		}
		c, err := onlineParamStep(s.pm, s.q, s.running, hat, rho, scale, first)
		change = math.Max(change, c)
		if err != nil {
			return change, err
		}
	}
	return change, nil
}

func (s *shard[S, W, P, R]) GlobalELBO() float64 { return s.m.ELBO(s.q, 1, make([]float64, s.units)) }

func (s *shard[S, W, P, R]) NonFinite() string {
	if bad := s.m.NonFinite(s.q); bad != "" {
		return bad
	}
	if cp, ok := s.m.(CAParams[S, P]); ok && s.m.Shape(s.q).EM {
		return NonFinite(cp.Params())
	}
	return ""
}

func (s *shard[S, W, P, R]) Span() (first, total int) { return s.opts.First, s.opts.Total }

func (s *shard[S, W, P, R]) Result(ctx context.Context, run Run) any {
	var p P
	if cp, ok := s.m.(CAParams[S, P]); ok {
		p = cp.Params()
	}
	if s.units > 0 && run.Iterations > 0 {
		// the whole data's q at the kept globals, as FitCA's at its end
		// (the driver, which holds no units, cannot read the posterior)
		improperEnd(s.m, s.q, &run)
	}
	if dm, ok := s.m.(Diagnosed[S]); ok && s.units > 0 && run.Status != "canceled" && run.Iterations > 0 {
		diagnoseRun(ctx, &run, dm, s.q, s.opts.Diagnose, s.opts.Seed, s.workers)
	}
	r := s.m.Result(run, s.q, p)
	if s.opts.Finish != nil {
		s.opts.Finish(r)
	}
	return r
}

// appendFloats appends x's length and bits.
func appendFloats(b []byte, x []float64) []byte {
	b = binary.AppendUvarint(b, uint64(len(x)))
	for _, v := range x {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	return b
}

// readFloats reads appendFloats' encoding from the front of b.
func readFloats(b []byte) ([]float64, []byte, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k)/8 {
		return nil, nil, errors.New("shard: numbers cut short")
	}
	b = b[k:]
	x := make([]float64, n)
	for i := range x {
		x[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return x, b[8*n:], nil
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}
