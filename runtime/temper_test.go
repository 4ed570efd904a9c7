package runtime

import (
	"context"
	"maps"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// temperFake is a conjugate Gaussian model for the tempering tests:
//
//	μ ~ Normal(0, 1),  x_d ~ Normal(μ, 1),  y_d ~ Normal(x_d, 1),
//
// with q(μ) = N(mu, 1/prec) and q(x_d) = N(m_d, 1/p_d), updated in closed
// form, tempered as Mandt et al.'s Eq. 2 says: the statements of unit d
// (x_d's and y_d's) are divided by T. At a fixed T the coordinate ascent's
// fixed point is, by hand,
//
//	m_d = (μ̄ + y_d)/2,  p_d = 2/T,  prec = 1 + D/T,  μ̄ = Σ_d m_d / (T·prec)
//	⇒ μ̄ = Σ_d y_d / (2T + D).
type temperFake struct {
	y      []float64
	temper Temper
}

type temperState struct {
	mu, prec float64
	m, p     []float64
}

func (f *temperFake) Shape(*temperState) CAShape                        { return CAShape{Units: len(f.y), Globals: true} }
func (f *temperFake) NewWorker(tr Trouble) *fakeWorker                  { return &fakeWorker{tr} }
func (f *temperFake) Tempering() *Temper                                { return &f.temper }
func (f *temperFake) Stochastic() SVIShape                              { return SVIShape{Natural: []int{2}, Names: []string{"mu"}} }
func (f *temperFake) PriorNatural(_ *temperState, _ int, eta []float64) { eta[1] -= 0.5 }
func (f *temperFake) UpdateUnit(q *temperState, w *fakeWorker, d int) bool {
	invT := f.temper.At(d)
	q.m[d], q.p[d] = (q.mu+f.y[d])/2, 2*invT
	return true
}
func (f *temperFake) UnitNatural(q *temperState, _ *fakeWorker, _, d int, invT float64, eta []float64) {
	eta[0] += invT * q.m[d]
	eta[1] -= invT * 0.5
}
func (f *temperFake) Natural(q *temperState, _ int, eta []float64) {
	eta[0], eta[1] = q.mu*q.prec, -q.prec/2
}
func (f *temperFake) SetNatural(q *temperState, _ int, eta []float64) {
	q.prec = -2 * eta[1]
	q.mu = eta[0] / q.prec
}
func (f *temperFake) UpdateGlobals(q *temperState, w *fakeWorker) float64 {
	eta := []float64{0, -0.5}
	for d := range f.y {
		f.UnitNatural(q, w, 0, d, 1, eta)
	}
	old := q.mu
	f.SetNatural(q, 0, eta)
	return math.Abs(q.mu - old)
}

// UnitLogJoint is E_q[log N(x_d; μ, 1) + log N(y_d; x_d, 1)].
func (f *temperFake) UnitLogJoint(q *temperState, d int) float64 {
	vd, vmu := 1/q.p[d], 1/q.prec
	return -0.5*((q.m[d]-q.mu)*(q.m[d]-q.mu)+vd+vmu) - 0.5*((f.y[d]-q.m[d])*(f.y[d]-q.m[d])+vd) - math.Log(2*math.Pi)
}

// ELBO is the untempered bound: E log p(μ) + Σ_d unit parts + entropies.
func (f *temperFake) ELBO(q *temperState, _ int, _ []float64) float64 {
	e := -0.5*(q.mu*q.mu+1/q.prec) - 0.5*math.Log(2*math.Pi) + 0.5*math.Log(2*math.Pi*math.E/q.prec)
	for d := range f.y {
		e += f.UnitLogJoint(q, d) + 0.5*math.Log(2*math.Pi*math.E/q.p[d])
	}
	return e
}
func (f *temperFake) Copy(dst, src *temperState) *temperState {
	if dst == nil {
		dst = new(temperState)
	}
	dst.mu, dst.prec = src.mu, src.prec
	dst.m, dst.p = append(dst.m[:0], src.m...), append(dst.p[:0], src.p...)
	return dst
}
func (f *temperFake) NonFinite(q *temperState) string {
	if !isFinite(q.mu) {
		return "mu"
	}
	return ""
}

// temperRun is the fake's result: the run and the state.
type temperRun struct {
	Run
	Mu, prec float64
	m, p     []float64
}

func (f *temperFake) Result(run Run, q *temperState, _ float64) temperRun {
	return temperRun{Run: run, Mu: q.mu, prec: q.prec, m: append([]float64(nil), q.m...), p: append([]float64(nil), q.p...)}
}

var _ Tempered[*temperState] = (*temperFake)(nil)
var _ SVIGlobals[*temperState, *fakeWorker] = (*temperFake)(nil)

func newTemperFake() (*temperFake, *temperState) {
	y := []float64{1.2, -0.3, 2.5, 0.7, 1.9, 3.1, -1.0, 0.4}
	q := &temperState{mu: -3, prec: 1, m: make([]float64, len(y)), p: make([]float64, len(y))}
	for d := range q.p {
		q.p[d] = 1
	}
	return &temperFake{y: y}, q
}

// At a (nearly) fixed temperature AVI's coordinate ascent reaches the
// tempered fixed point written out by hand; after the schedule it reaches
// the untempered one; the traces are the schedule and Eq. 4.
func TestFitCATemperedFixedPoints(t *testing.T) {
	f, q := newTemperFake()
	D := float64(len(f.y))
	sumY := 0.0
	for _, y := range f.y {
		sumY += y
	}
	// T stays within 1e-6 of 3 for the 200 iterations
	s := CASettings{Convergence: Convergence{MaxIter: 200}.WithDefaults(), Workers: 1,
		Temper: TemperSettings{Anneal: Anneal{T0: 3, Length: 1e9}}}
	r, err := FitCA(context.Background(), CAModel[*temperState, *fakeWorker, float64, temperRun](f), q, s)
	if err != nil {
		t.Fatal(err)
	}
	T := r.Temperature[len(r.Temperature)-1]
	if math.Abs(T-3) > 1e-6 {
		t.Fatalf("temperature after 200 iterations %v, want ≈ 3", T)
	}
	if got, want := r.Mu, sumY/(2*T+D); math.Abs(got-want) > 1e-9 {
		t.Errorf("tempered fixed point μ̄ = %.12g, by hand Σy/(2T + D) = %.12g", got, want)
	}
	if r.Converged || !strings.Contains(r.Status, "still tempered") {
		t.Errorf("a fit stopped at T = 3 reports %q, converged %v", r.Status, r.Converged)
	}

	// The whole schedule, then T = 1: the untempered optimum Σy/(2 + D).
	f, q = newTemperFake()
	s.Temper = TemperSettings{Anneal: Anneal{T0: 10, Length: 20}}
	s.Convergence = Convergence{MaxIter: 500, Tol: 1e-14, MeanTol: 1e-12}.WithDefaults()
	r, err = FitCA(context.Background(), CAModel[*temperState, *fakeWorker, float64, temperRun](f), q, s)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Converged {
		t.Fatalf("not converged: %s", r.Status)
	}
	if got, want := r.Mu, sumY/(2+D); math.Abs(got-want) > 1e-10 {
		t.Errorf("μ̄ after annealing = %.12g, the untempered optimum is %.12g", got, want)
	}
	if len(r.Temperature) != r.Iterations || len(r.TemperedELBO) != r.Iterations {
		t.Fatalf("%d temperatures and %d tempered ELBOs for %d iterations", len(r.Temperature), len(r.TemperedELBO), r.Iterations)
	}
	for it, T := range r.Temperature {
		if want := (Anneal{T0: 10, Length: 20}).At(float64(it)); T != want {
			t.Errorf("iteration %d ran at T = %v, the schedule says %v", it+1, T, want)
		}
		if T == 1 && r.TemperedELBO[it] != r.ELBO[it] {
			t.Errorf("iteration %d at T = 1: tempered ELBO %v ≠ ELBO %v", it+1, r.TemperedELBO[it], r.ELBO[it])
		}
	}
	if r.Tempering != "anneal linear:10:20" {
		t.Errorf("Tempering = %q", r.Tempering)
	}
}

// The tempered ELBO of Eq. 4 and the temperedGlobals update against the
// fake's closed forms at T = 4.
func TestTemperedELBOAndGlobals(t *testing.T) {
	f, q := newTemperFake()
	f.temper.Global = 0.25
	w := &fakeWorker{Trouble{}}
	for d := range f.y {
		f.UpdateUnit(q, w, d)
	}
	eta, prev := make([]float64, 2), make([]float64, 2)
	temperedGlobals(SVIGlobals[*temperState, *fakeWorker](f), f.Stochastic(), q, w, len(f.y), &f.temper, eta, prev)
	sumM := 0.0
	for _, m := range q.m {
		sumM += m
	}
	D := float64(len(f.y))
	if want := 1 + 0.25*D; math.Abs(q.prec-want) > 1e-14 {
		t.Errorf("tempered q(μ) precision %v, want 1 + D/T = %v", q.prec, want)
	}
	if want := 0.25 * sumM / (1 + 0.25*D); math.Abs(q.mu-want) > 1e-14 {
		t.Errorf("tempered q(μ) mean %v, want (Σm/T)/(1 + D/T) = %v", q.mu, want)
	}
	per := make([]float64, len(f.y))
	lj := unitLogJoint(Tempered[*temperState](f), q, len(f.y), 1, per)
	elbo := f.ELBO(q, 1, nil)
	if got, want := temperedELBO(elbo, &f.temper, per), elbo-0.75*lj; math.Abs(got-want) > 1e-12*math.Abs(want) {
		t.Errorf("tempered ELBO %v, want ELBO − (1 − 1/T)Σ E log p(x_d, y_d | μ) = %v", got, want)
	}
	// LVT's per-unit temperatures weigh each unit's part by its own 1/T.
	f.temper.Unit = []float64{1, 0.5, 1, 1, 0.25, 1, 1, 1}
	want := elbo - 0.5*per[1] - 0.75*per[4]
	if got := temperedELBO(elbo, &f.temper, per); math.Abs(got-want) > 1e-12*math.Abs(want) {
		t.Errorf("per-unit tempered ELBO %v, want %v", got, want)
	}
}

// Under SVI, the schedule's length is in passes: the temperature traced
// after each pass is the schedule's at the pass's last minibatch.
func TestFitSVIAnneal(t *testing.T) {
	f, q := newTemperFake()
	s := CASettings{Workers: 1, Temper: TemperSettings{Anneal: Anneal{T0: 5, Length: 3}}}
	// 8 units in minibatches of 3, 3 and 2: the last minibatch of pass p
	// starts 6/8 of the way through it
	svi := SVISettings{BatchSize: 3, Passes: 5}
	r, err := FitSVI(context.Background(), SVIModel[*temperState, *fakeWorker, float64, temperRun](f), q, s, svi, 1)
	if err != nil {
		t.Fatal(err)
	}
	for pass, T := range r.Temperature {
		if want := s.Temper.Anneal.At(float64(pass) + 6.0/8); T != want {
			t.Errorf("pass %d ended at T = %v, want %v (the schedule 6/8 through it)", pass+1, T, want)
		}
	}
	if r.Temperature[len(r.Temperature)-1] != 1 || strings.Contains(r.Status, "still tempered") {
		t.Errorf("the schedule of 3 passes has ended after 5: T = %v, status %q", r.Temperature[len(r.Temperature)-1], r.Status)
	}
	// A schedule longer than the run is reported.
	f, q = newTemperFake()
	s.Temper.Anneal.Length = 50
	r, err = FitSVI(context.Background(), SVIModel[*temperState, *fakeWorker, float64, temperRun](f), q, s, svi, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Status, "still tempered") {
		t.Errorf("status %q does not say the run ended tempered", r.Status)
	}
}

func TestTemperSettingsCheck(t *testing.T) {
	ok := TemperSettings{Mode: "global", Grid: []float64{1, 2, 4}, LogC: []float64{0, 1, 2}}
	if err := ok.Check(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		s    TemperSettings
		want string
	}{
		{TemperSettings{Mode: "global", Grid: []float64{2, 4}, LogC: []float64{0, 1}}, "must start at T_1 = 1"},
		{TemperSettings{Mode: "global", Grid: []float64{1, 4, 3}, LogC: []float64{0, 1, 2}}, "must increase"},
		{TemperSettings{Mode: "global", Grid: []float64{1, 4}, LogC: []float64{0}}, "1 values of log C(T) for 2"},
		{TemperSettings{Mode: "global", Grid: []float64{1}, LogC: []float64{0}}, "at least two"},
		{TemperSettings{Mode: "global", Grid: []float64{1, 2}, LogC: []float64{0, math.NaN()}}, "not finite"},
		{TemperSettings{Mode: "global", Grid: []float64{1, 2}, LogC: []float64{0, 1}, Prior: []float64{1, 0}}, "must be positive"},
		{TemperSettings{Mode: "global", Grid: []float64{1, 2}, LogC: []float64{0, 1}, Anneal: Anneal{T0: 3, Length: 2}}, "not both"},
		{TemperSettings{Mode: "local", Grid: []float64{1, 2}, LogC: []float64{0, 1}}, "takes each unit's log normalizer"},
		{TemperSettings{Mode: "hot"}, "unknown tempering mode"},
		{TemperSettings{Grid: []float64{1, 2}}, "no tempering mode"},
		{TemperSettings{Anneal: Anneal{T0: 3}}, "positive number"},
	} {
		err := c.s.Check()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one saying %q", c.s, err, c.want)
		}
	}
	if got := ok.String(); got != "vt: 3 temperatures in [1, 4]" {
		t.Errorf("String = %q", got)
	}
}

func TestTemperSoftmaxRows(t *testing.T) {
	// a row whose untempered probabilities underflow keeps them at T = 1000
	x := []float64{0, -2000, 5, 3}
	TemperSoftmaxRows(x, 2, 0.001)
	if want := 1 / (1 + math.Exp(-2)); math.Abs(x[0]-want) > 1e-15 || math.Abs(x[1]-(1-want)) > 1e-15 {
		t.Errorf("row 1 = %v, want [%v %v]", x[:2], want, 1-want)
	}
	if want := 1 / (1 + math.Exp(-0.002)); math.Abs(x[2]-want) > 1e-15 {
		t.Errorf("row 2 = %v, want [%v …]", x[2:], want)
	}
}

func TestTemperNatural(t *testing.T) {
	// Gamma(shape, rate): natural (shape − 1, −rate)
	to := func(e, p []float64) { e[0], e[1] = p[0]-1, -p[1] }
	from := func(p, e []float64) { p[0], p[1] = e[0]+1, -e[1] }
	shape, rate := []float64{3, 1.5}, []float64{2, 0.5}
	TemperNatural(0.5, to, from, shape, rate)
	if shape[0] != 2 || shape[1] != 1.25 || rate[0] != 1 || rate[1] != 0.25 {
		t.Errorf("tempered Gamma(3, 2), Gamma(1.5, 0.5) at T = 2: shapes %v, rates %v; want [2 1.25], [1 0.25]", shape, rate)
	}
}

func TestTemperFromFlags(t *testing.T) {
	s, err := TemperFromFlags("geometric:4:20", "", "")
	if err != nil || s.Anneal != (Anneal{T0: 4, Length: 20, Geometric: true}) || s.Mode != "" {
		t.Fatalf("-anneal geometric:4:20: %+v, %v", s, err)
	}
	dir := t.TempDir()
	path := dir + "/logc.json"
	if err := os.WriteFile(path, []byte(`{"grid": [1, 2, 4], "log_c": [0, 3.5, 9], "fingerprint": {"model": "`+sourceM+`", "data": {"y": "ab"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err = TemperFromFlags("", "global", path)
	if err != nil || s.Mode != "global" || len(s.Grid) != 3 || s.LogC[2] != 9 {
		t.Fatalf("-temper global -logc: %+v, %v", s, err)
	}
	// LVT: the grid and cold start from the file, or the default grid
	local := dir + "/local.json"
	os.WriteFile(local, []byte(`{"grid": [1, 2, 4], "cold": true}`), 0o644)
	if s, err := TemperFromFlags("", "local", local); err != nil || s.Mode != "local" || len(s.Grid) != 3 || !s.Cold {
		t.Errorf("-temper local -logc {grid, cold}: %+v, %v", s, err)
	}
	os.WriteFile(local, []byte(`{"cold": true}`), 0o644)
	if s, err := TemperFromFlags("", "local", local); err != nil || len(s.Grid) != 30 || !s.Cold {
		t.Errorf("-temper local -logc {cold}: %+v, %v", s, err)
	}
	if s, err := TemperFromFlags("", "local", ""); err != nil || len(s.Grid) != 30 || s.Grid[0] != 1 || s.Grid[29] != 10 || s.Cold {
		t.Errorf("-temper local: %+v, %v", s, err)
	}
	if _, err := TemperFromFlags("", "local", path); err == nil || !strings.Contains(err.Error(), "not log C") {
		t.Errorf("-temper local with a log C file: %v", err)
	}
	os.WriteFile(path, []byte(`{"grid": [1, 2, 4], "logc": [0, 3.5, 9], "fingerprint": {"model": "`+sourceM+`", "data": {"y": "ab"}}}`), 0o644)
	if _, err := TemperFromFlags("", "global", path); err == nil || !strings.Contains(err.Error(), `unknown field "logc"`) {
		t.Errorf("a misspelled key: %v", err)
	}
	var st Settings[struct{}, struct{}]
	st.Temper = TemperSettings{Anneal: Anneal{T0: 3, Length: 5}}
	st.Checkpoint = Checkpoint{Path: dir + "/cp.json", Every: 2}
	if err := st.Prepare("m"); err == nil || !strings.Contains(err.Error(), "cannot checkpoint") {
		t.Errorf("a tempered fit with checkpoints: %v", err)
	}
}

// A fit stopped while tempered leaves the model untempered, and a model
// reused from such a fit starts the next fit untempered.
func TestTemperReset(t *testing.T) {
	f, q := newTemperFake()
	s := CASettings{Convergence: Convergence{MaxIter: 2}.WithDefaults(), Workers: 1,
		Temper: TemperSettings{Anneal: Anneal{T0: 5, Length: 10}}}
	if _, err := FitCA(context.Background(), CAModel[*temperState, *fakeWorker, float64, temperRun](f), q, s); err != nil {
		t.Fatal(err)
	}
	if !f.temper.Off() {
		t.Errorf("after a fit stopped at T > 1 the model's temperature is %+v", f.temper)
	}
	f.temper.Global = 0.2 // as a model reused from elsewhere might be
	s.Temper = TemperSettings{}
	s.Convergence = Convergence{MaxIter: 500, Tol: 1e-14, MeanTol: 1e-12}.WithDefaults()
	r, err := FitCA(context.Background(), CAModel[*temperState, *fakeWorker, float64, temperRun](f), q, s)
	if err != nil {
		t.Fatal(err)
	}
	sumY := 0.0
	for _, y := range f.y {
		sumY += y
	}
	if want := sumY / (2 + float64(len(f.y))); math.Abs(r.Mu-want) > 1e-10 {
		t.Errorf("an untempered fit of a reused model ends at μ̄ = %v, not the untempered optimum %v", r.Mu, want)
	}
}

// UnitLogNormalizer: the unit's tempered density N(x_d; μ, 1)^a N(y_d; x_d, 1)^a
// integrates, over y_d and then x_d, to ((2π)^((1−a)/2) a^(−1/2))², whatever μ.
func (f *temperFake) UnitLogNormalizers(_ *temperState, grid []float64) func(int, []float64) {
	return func(_ int, out []float64) {
		for m, T := range grid {
			a := 1 / T
			out[m] = (1-a)*math.Log(2*math.Pi) - math.Log(a)
		}
	}
}

var _ UnitNormalizer[*temperState] = (*temperFake)(nil)

// LVT on the fake: q(T_d) is Eq. 10 with the unit's normalizer, written
// out by hand; the outlier runs hot and the others near T = 1; the
// tempered ELBO adds q(T)'s part.
func TestFitCALocalTempering(t *testing.T) {
	f, q := newTemperFake()
	f.y[3] = 25 // an outlier
	grid := []float64{1, 1.5, 2.25, 3.375, 5.0625, 7.59375}
	// 10 iterations end inside the tempered phase, so the returned state is
	// the one the last q(T_d) were computed from
	s := CASettings{Convergence: Convergence{MaxIter: 10}.WithDefaults(), Workers: 2,
		Temper: TemperSettings{Mode: "local", Grid: grid}}
	r, err := FitCA(context.Background(), CAModel[*temperState, *fakeWorker, float64, temperRun](f), q, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.UnitTemperature) != len(f.y) {
		t.Fatalf("%d unit temperatures for %d units", len(r.UnitTemperature), len(f.y))
	}
	// q(T_d) by hand at the state the fit returned (stopped within the
	// tempered phase, so r is the last iteration's)
	norm := make([]float64, len(grid))
	f.UnitLogNormalizers(nil, grid)(0, norm)
	qs := &temperState{mu: r.Mu, prec: r.prec, m: r.m, p: r.p}
	for d := range f.y {
		lj := f.UnitLogJoint(qs, d)
		w := make([]float64, len(grid))
		for k, T := range grid {
			w[k] = lj/T - math.Log(float64(len(grid))) - norm[k]
		}
		SoftmaxRows(w, len(w))
		want := 0.0
		for k, T := range grid {
			want += w[k] * T
		}
		if got := r.UnitTemperature[d]; math.Abs(got-want) > 1e-9*want {
			t.Errorf("unit %d: E_q[T_d] = %.12g, Eq. 10 by hand gives %.12g", d+1, got, want)
		}
	}
	// A single point says little about its own temperature, so q(T_d)
	// stays broad and every E_q[T_d] is well above 1 (about 3 here); the
	// outlier's is the highest by far.
	for d, T := range r.UnitTemperature {
		if d != 3 && !(T < r.UnitTemperature[3]-2) {
			t.Errorf("unit %d (y = %v) runs at E_q[T] = %v, the outlier (y = 25) at %v", d+1, f.y[d], T, r.UnitTemperature[3])
		}
	}
	if r.UnitTemperature[3] < 6 {
		t.Errorf("the outlier's E_q[T] = %v, want it near the top of the grid", r.UnitTemperature[3])
	}
	if r.Converged || !strings.Contains(r.Status, "still tempered") {
		t.Errorf("status %q", r.Status)
	}
}

// LVT under SVI: each visited unit's q(T_d) is updated before its
// statistics enter the step, and the outlier runs hottest.
func TestFitSVILocalTempering(t *testing.T) {
	f, q := newTemperFake()
	f.y[5] = -30
	grid := []float64{1, 1.5, 2.25, 3.375, 5.0625, 7.59375}
	s := CASettings{Workers: 1, Temper: TemperSettings{Mode: "local", Grid: grid}}
	r, err := FitSVI(context.Background(), SVIModel[*temperState, *fakeWorker, float64, temperRun](f), q, s, SVISettings{BatchSize: 3, Passes: 20}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.UnitTemperature) != len(f.y) || len(r.TemperedELBO) != 20 {
		t.Fatalf("unit temperatures %v, tempered ELBO trace of %d", r.UnitTemperature, len(r.TemperedELBO))
	}
	for d, T := range r.UnitTemperature {
		if d != 5 && !(T < r.UnitTemperature[5]-2) {
			t.Errorf("unit %d runs at E_q[T] = %v, the outlier at %v", d+1, T, r.UnitTemperature[5])
		}
	}
}

// VT's q(y) and LVT's q(T_d) start uniform over the grid, or with Cold all
// at T_1 = 1; the settings' label says which.
func TestTemperColdStart(t *testing.T) {
	grid := []float64{1, 2, 4}
	for _, cold := range []bool{false, true} {
		s := TemperSettings{Mode: "global", Grid: grid, LogC: []float64{0, 1, 2}, Cold: cold}
		v := newVT(s)
		l := newLT[*temperState](TemperSettings{Mode: "local", Grid: grid, Cold: cold}, nil, 2)
		want := (1 + 0.5 + 0.25) / 3
		if cold {
			want = 1
		}
		if got := v.invT(); math.Abs(got-want) > 1e-15 {
			t.Errorf("cold %v: VT starts at E[1/T] = %v, want %v", cold, got, want)
		}
		for d, inv := range l.invT {
			if math.Abs(inv-want) > 1e-15 || math.Abs(l.r[d*3]-map[bool]float64{false: 1.0 / 3, true: 1}[cold]) > 1e-15 {
				t.Errorf("cold %v: LVT unit %d starts at E[1/T] = %v, r = %v", cold, d, inv, l.r[d*3:(d+1)*3])
			}
		}
		if got := s.String(); strings.HasSuffix(got, ", cold start") != cold {
			t.Errorf("cold %v: label %q", cold, got)
		}
	}
}

// sourceM and sourceEdited stand for the SHA-256 of a model m's source and
// of the source of m edited (Fingerprint.Model).
var sourceM, sourceEdited = strings.Repeat("6a", 32), strings.Repeat("e7", 32)

// A -logc file is refused before the fit unless what can be checked
// holds: log C(1) = 0 (the untempered joint is normalized), values a
// float64 resolves, and a fingerprint of the model (its source's sha256)
// and data it was computed for, which must be the fit's.
func TestLogCFileChecks(t *testing.T) {
	dir := t.TempDir()
	fp := `"fingerprint": {"model": "` + sourceM + `", "data": {"N": "n1", "y": "y1"}}`
	for _, c := range []struct{ file, want string }{
		{`{"grid": [1, 3], "log_c": [5, 1], ` + fp + `}`, "log C(1) must be 0"},
		{`{"grid": [1, 3], "log_c": [0, 1e308], ` + fp + `}`, "log C(T_2) = 1e+308 is beyond ±1e+12"},
		{`{"grid": [1, 3], "log_c": [0, -2e12], ` + fp + `}`, "is beyond"},
		{`{"grid": [1, 3], "log_c": [0, 7]}`, "no fingerprint of the model and data"},
		{`{"grid": [1, 3], "log_c": [0, 7], "fingerprint": {"model": "` + sourceM + `"}}`, "no fingerprint of the model and data"},
		// the model's name, as files named it before: not its source
		{`{"grid": [1, 3], "log_c": [0, 7], "fingerprint": {"model": "m", "data": {"N": "n1"}}}`, `the fingerprint's model "m" is not the sha256 of a model's source`},
		{`{"grid": [1, 3], "log_c": [0, 7], "fingerprint": {"model": "` + strings.ToUpper(sourceM) + `", "data": {"N": "n1"}}}`, "is not the sha256 of a model's source"},
		{`{"grid": [2, 3], "log_c": [0, 7], ` + fp + `}`, "must start at T_1 = 1"},
		{`{"grid": [1, 3, 2], "log_c": [0, 7, 8], ` + fp + `}`, "must increase"},
		{`{"grid": [1, 3], "log_c": [0, 7, 8], ` + fp + `}`, "3 values of log C(T) for 2 temperatures"},
	} {
		path := filepath.Join(dir, "logc.json")
		if err := os.WriteFile(path, []byte(c.file), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := TemperFromFlags("", "global", path)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: %v, want an error naming the file and saying %q", c.file, err, c.want)
		}
	}
	// a result's fingerprint copied whole, options and params too
	path := filepath.Join(dir, "logc.json")
	os.WriteFile(path, []byte(`{"grid": [1, 3], "log_c": [0, 1500], "fingerprint": {"model": "`+sourceM+`", "data": {"N": "n1", "y": "y1"}, "options": {"method": "laplace"}, "params": "p1"}}`), 0o644)
	if _, err := TemperFromFlags("", "global", path); err != nil {
		t.Errorf("a result's fingerprint: %v", err)
	}
	// rounding in log C(1), in the scale of the values, is accepted
	os.WriteFile(path, []byte(`{"grid": [1, 3], "log_c": [1.8e-13, 1500], `+fp+`}`), 0o644)
	s, err := TemperFromFlags("", "global", path)
	if err != nil {
		t.Fatal(err)
	}
	now := &Fingerprint{Model: sourceM, Data: map[string]string{"N": "n1", "y": "y1"}}
	if err := s.CheckFingerprint("m", now); err != nil {
		t.Errorf("the fingerprint's own model and data: %v", err)
	}
	if err := s.CheckModel("m", sourceM); err != nil {
		t.Errorf("the fingerprint's own model: %v", err)
	}
	// The model is its source: m edited, under the same name, is another
	// model (the file once named the model, and took any source of that
	// name). Which of model and data differ is said.
	for _, c := range []struct {
		model, source string
		data          map[string]string
		want          []string
	}{
		{"m", sourceEdited, now.Data, []string{"log C(T) was computed for another model than m: the fingerprint's model is the sha256 of another source (6a6a6a6a6a6a…, m's is e7e7e7e7e7e7…; an edited model is another model); compute it for this model"}},
		{"other", sourceEdited, now.Data, []string{"for another model than other"}},
		{"m", "", now.Data, []string{"for a model this fit cannot compare with m, whose package was generated without its source's sha256"}},
		{"m", sourceM, map[string]string{"N": "n1", "y": "y2"}, []string{"log C(T) was computed for other data: the values of y differ from those log C(T) was computed for; compute it for this data"}},
		{"m", sourceM, map[string]string{"N": "n1"}, []string{"y is in the log C file's data but not in this data"}},
		{"m", sourceM, map[string]string{"N": "n1", "y": "y1", "sigma": "s"}, []string{"sigma is in the data but not in the log C file's"}},
		{"m", sourceEdited, map[string]string{"N": "n2", "y": "y1"}, []string{"for another model than m", ", and for other data: the values of N differ", "; compute it for this model and data"}},
	} {
		err := s.CheckFingerprint(c.model, &Fingerprint{Model: c.source, Data: c.data})
		for _, want := range append(c.want, "-logc "+path+": ") {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("model %s (source %s), data %v: %v, want %q", c.model, c.source, c.data, err, want)
			}
		}
		if err == nil {
			continue
		}
		msg := err.Error()
		if strings.Count(msg, "; compute it for this ") != 1 {
			t.Errorf("model %s (source %s), data %v: %v; want one \"compute it for this …\"", c.model, c.source, c.data, err)
		}
		if model := strings.Contains(msg, "computed for another model") || strings.Contains(msg, "computed for a model this fit cannot"); model != (c.source != sourceM) {
			t.Errorf("model %s (source %s), data %v: %v; says the model differs: %v", c.model, c.source, c.data, err, model)
		}
		if data := strings.Contains(msg, "for other data"); data != !maps.Equal(c.data, now.Data) {
			t.Errorf("model %s (source %s), data %v: %v; says the data differ: %v", c.model, c.source, c.data, err, data)
		}
		// CheckModel, which needs no data, says the same of the model
		err = s.CheckModel(c.model, c.source)
		if c.source == sourceM && err != nil || c.source != sourceM && (err == nil || !strings.Contains(err.Error(), c.want[0])) {
			t.Errorf("CheckModel(%s, %s): %v", c.model, c.source, err)
		}
	}
	// Settings.CA refuses the fit: Prepare records the model
	var st Settings[struct{}, struct{}]
	st.Temper = s
	if err := st.Prepare("m"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CA(time.Now(), &Fingerprint{Model: sourceM, Data: map[string]string{"N": "n2", "y": "y1"}}); err == nil || !strings.Contains(err.Error(), "values of N differ") {
		t.Errorf("CA with other data: %v", err)
	}
	if _, err := st.CA(time.Now(), &Fingerprint{Model: sourceEdited, Data: now.Data}); err == nil || !strings.Contains(err.Error(), "another model than m") {
		t.Errorf("CA of the model edited: %v", err)
	}
	if _, err := st.CA(time.Now(), now); err != nil {
		t.Errorf("CA with the same data: %v", err)
	}
}
