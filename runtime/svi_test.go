package runtime

import (
	"context"
	"math"
	"reflect"
	"strings"
	"testing"
)

// sviFake is a conjugate Gaussian model for FitSVI's tests:
//
//	μ ~ Normal(0, 1),  x_d ~ Normal(μ, 1),  y_d ~ Normal(x_d, 1),
//
// with q(μ) Gaussian, natural parameters (m/s², −1/(2s²)), and q(x_d) =
// Normal(m_d, 1/2) fitted per unit (or, with noLocal, y_d ~ Normal(μ, 1)
// read directly: no local latents). The param b is E[y²] under online EM,
// from the statistics (1, y_d²) of each unit.
type sviFake struct {
	y       []float64
	noLocal bool
	b       float64
	em      bool
	nanAt   int // the pass whose first step makes μ NaN
	steps   int // SetNatural calls
	onStep  func(step int)
	// troubleUnit, if positive, meets trouble in every update
	troubleUnit int
}

type sviState struct {
	m   []float64 // E[x_d]
	eta [2]float64
	// point, when set, is E[μ] as the local updates read it: a point mass
	// set by SetMoments (sviSampled), cleared by SetNatural
	point *float64
}

func (f *sviFake) mu(q *sviState) float64 {
	if q.point != nil {
		return *q.point
	}
	return -q.eta[0] / (2 * q.eta[1])
}

func (f *sviFake) Shape(q *sviState) CAShape {
	return CAShape{Units: len(f.y), Globals: true, EM: f.em}
}
func (f *sviFake) NewWorker(tr Trouble) *fakeWorker { return &fakeWorker{tr} }
func (f *sviFake) UpdateUnit(q *sviState, w *fakeWorker, d int) bool {
	q.m[d] = (f.y[d] + f.mu(q)) / 2
	if f.troubleUnit > 0 && d == f.troubleUnit {
		w.tr.Add("x: slow")
		return false
	}
	return true
}
func (f *sviFake) UpdateGlobals(q *sviState, w *fakeWorker) float64 { panic("not SVI") }
func (f *sviFake) MStep(q *sviState) (float64, error)               { panic("not SVI") }
func (f *sviFake) ELBO(q *sviState, workers int, perUnit []float64) float64 {
	mu := f.mu(q)
	total := 0.0
	for d, y := range f.y {
		total -= (y - mu) * (y - mu)
		_ = d
	}
	return total
}
func (f *sviFake) Copy(dst, src *sviState) *sviState {
	if dst == nil {
		dst = new(sviState)
	}
	dst.m = append(dst.m[:0], src.m...)
	dst.eta = src.eta
	dst.point = src.point
	return dst
}
func (f *sviFake) NonFinite(q *sviState) string {
	if math.IsNaN(q.eta[0]) {
		return "mu"
	}
	return ""
}
func (f *sviFake) Params() float64 { return f.b }
func (f *sviFake) Result(run Run, q *sviState, b float64) *fakeResult {
	return &fakeResult{Status: run.Status, Iterations: run.Iterations, ELBO: run.ELBO, Unsettled: run.Unsettled,
		X: append([]float64(nil), q.eta[:]...), G: f.mu(q), B: b}
}
func (f *sviFake) Stochastic() SVIShape {
	s := SVIShape{Natural: []int{2}, Names: []string{"mu"}}
	if f.em {
		s.ParamStats = 2
	}
	return s
}
func (f *sviFake) Natural(q *sviState, g int, eta []float64) { copy(eta, q.eta[:]) }
func (f *sviFake) SetNatural(q *sviState, g int, eta []float64) {
	f.steps++
	if f.onStep != nil {
		f.onStep(f.steps)
	}
	copy(q.eta[:], eta)
	q.point = nil
	if f.steps == f.nanAt {
		q.eta[0] = math.NaN()
	}
}
func (f *sviFake) PriorNatural(q *sviState, g int, eta []float64) { eta[1] -= 0.5 }
func (f *sviFake) UnitNatural(q *sviState, w *fakeWorker, g, d int, invT float64, eta []float64) {
	if f.noLocal {
		eta[0] += invT * f.y[d]
	} else {
		eta[0] += invT * q.m[d]
	}
	eta[1] -= invT * 0.5
}

var _ SVIGlobals[*sviState, *fakeWorker] = (*sviFake)(nil)

func (f *sviFake) UnitParamStats(q *sviState, w *fakeWorker, d int, stats []float64) {
	stats[0]++
	stats[1] += f.y[d] * f.y[d]
}
func (f *sviFake) ParamStep(q *sviState, stats []float64) (float64, error) {
	prev := f.b
	f.b = stats[1] / stats[0]
	return math.Abs(f.b-prev) / math.Max(math.Abs(prev), 1), nil
}

func newSVIFake(units int) (*sviFake, *sviState) {
	f := &sviFake{}
	for d := range units {
		f.y = append(f.y, 1+math.Sin(float64(3*d))*2)
	}
	return f, &sviState{m: make([]float64, units), eta: [2]float64{0, -0.5}}
}

func fitSVI(t *testing.T, f *sviFake, q *sviState, svi SVISettings, workers int) *fakeResult {
	t.Helper()
	r, err := FitSVI(context.Background(), SVIModel[*sviState, *fakeWorker, float64, *fakeResult](f), q,
		CASettings{Workers: workers}, svi, 7)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// With ρ_t = 1/(t+1) (τ0 = 1, κ = 1), λ after one pass is the average of the
// minibatches' λ̂, which for equal minibatches is exactly the batch
// posterior: prior + Σ_d t(y_d). So are the params' running statistics.
func TestFitSVIOnePassIsExactWithHarmonicSteps(t *testing.T) {
	f, q := newSVIFake(48)
	f.noLocal, f.em = true, true
	r := fitSVI(t, f, q, SVISettings{BatchSize: 6, Tau0: 1, Kappa: 1, Passes: 1}, 2)
	sum, sq := 0.0, 0.0
	for _, y := range f.y {
		sum += y
		sq += y * y
	}
	want := []float64{sum, -0.5 * float64(len(f.y)+1)}
	for i := range want {
		if math.Abs(r.X[i]-want[i]) > 1e-9*math.Abs(want[i]) {
			t.Errorf("λ[%d] = %v after one pass, want the batch posterior's %v", i, r.X[i], want[i])
		}
	}
	if b := sq / float64(len(f.y)); math.Abs(r.B-b) > 1e-12*b {
		t.Errorf("online EM param = %v, want the batch M-step's %v", r.B, b)
	}
	if r.Status != PassesStatus || r.Iterations != 1 || len(r.ELBO) != 1 {
		t.Errorf("status %q, %d iterations, %d ELBO values; want %q, 1, 1", r.Status, r.Iterations, len(r.ELBO), PassesStatus)
	}
	if f.steps != 8 {
		t.Errorf("%d steps for 48 units in batches of 6, want 8", f.steps)
	}
}

// With local latents, SVI's decaying steps approach the fixed point of
// coordinate ascent, E[μ] = Σ_d m_d/(D + 1) with m_d = (y_d + E[μ])/2.
func TestFitSVIApproachesTheCAFixedPoint(t *testing.T) {
	f, q := newSVIFake(40)
	r := fitSVI(t, f, q, SVISettings{BatchSize: 8, Tau0: 1, Kappa: 0.9, Passes: 300}, 2)
	n, sum := float64(len(f.y)), 0.0
	for _, y := range f.y {
		sum += y
	}
	// μ (D + 1) = Σ (y_d + μ)/2  ⇒  μ = Σ y_d / (D + 2)
	want := sum / (n + 2)
	if math.Abs(r.G-want) > 0.02 {
		t.Errorf("E[μ] = %v after 300 passes, want the coordinate-ascent fixed point %v", r.G, want)
	}
	if prec := -2 * r.X[1]; math.Abs(prec-(n+1)) > 1e-6 {
		t.Errorf("precision of q(μ) = %v, want D + 1 = %v", prec, n+1)
	}
}

func TestFitSVIDeterministicWhateverTheWorkers(t *testing.T) {
	var first *fakeResult
	for _, w := range []int{1, 2, 5} {
		f, q := newSVIFake(37)
		f.em = true
		r := fitSVI(t, f, q, SVISettings{BatchSize: 5, Passes: 3}, w)
		r.Seconds = 0
		if first == nil {
			first = r
		} else if !reflect.DeepEqual(first, r) {
			t.Errorf("workers %d: result differs from workers 1", w)
		}
	}
	// a different seed draws other minibatches
	f, q := newSVIFake(37)
	f.em = true
	r, err := FitSVI(context.Background(), SVIModel[*sviState, *fakeWorker, float64, *fakeResult](f), q,
		CASettings{Workers: 1}, SVISettings{BatchSize: 5, Passes: 3}, 8)
	if err != nil {
		t.Fatal(err)
	}
	if r.G == first.G {
		t.Errorf("seeds 7 and 8 gave the same E[μ] %v: the minibatches do not depend on the seed", r.G)
	}
}

func TestFitSVINotFiniteKeepsTheLastGoodPass(t *testing.T) {
	f, q := newSVIFake(20)
	f.nanAt = 9 // in pass 3 (4 steps per pass)
	var afterTwo float64
	f.onStep = func(step int) {
		if step == 9 {
			afterTwo = f.mu(q)
		}
	}
	r := fitSVI(t, f, q, SVISettings{BatchSize: 5, Passes: 5}, 1)
	if !strings.HasPrefix(r.Status, "not_finite: mu in pass 3") || r.Iterations != 2 {
		t.Fatalf("status %q after %d passes, want not_finite in pass 3 after 2", r.Status, r.Iterations)
	}
	if r.G != afterTwo {
		t.Errorf("E[μ] = %v, want the state after pass 2, %v", r.G, afterTwo)
	}
}

func TestFitSVICanceled(t *testing.T) {
	f, q := newSVIFake(20)
	ctx, cancel := context.WithCancel(context.Background())
	f.onStep = func(step int) {
		if step == 6 {
			cancel()
		}
	}
	r, err := FitSVI(ctx, SVIModel[*sviState, *fakeWorker, float64, *fakeResult](f), q,
		CASettings{Workers: 1}, SVISettings{BatchSize: 5, Passes: 5}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != "canceled" || r.Iterations != 1 || len(r.ELBO) != 1 {
		t.Errorf("status %q after %d passes, want canceled after 1", r.Status, r.Iterations)
	}
}

func TestSVISettingsChecked(t *testing.T) {
	for _, s := range []SVISettings{{Kappa: 0.5}, {Kappa: 1.2}, {Tau0: -1}, {BatchSize: -1}, {Passes: -2}, {Tau0: math.NaN()}} {
		f, q := newSVIFake(4)
		if _, err := FitSVI(context.Background(), SVIModel[*sviState, *fakeWorker, float64, *fakeResult](f), q,
			CASettings{}, s, 1); err == nil {
			t.Errorf("%+v accepted", s)
		}
	}
	if r := (SVISettings{Tau0: 1024, Kappa: 0.7}).Rho(1); math.Abs(r-math.Pow(1025, -0.7)) > 1e-15 || (SVISettings{Tau0: 1, Kappa: 1}).Rho(0) != 1 || math.Abs(r-math.Pow(1025, -0.7)) > 1e-15 {
		t.Errorf("ρ_1 = %v", r)
	}
}

// Trouble in the last pass is not hidden behind "passes_completed".
func TestFitSVIReportsTroubleOfTheLastPass(t *testing.T) {
	f, q := newSVIFake(20)
	f.troubleUnit = 3
	r := fitSVI(t, f, q, SVISettings{BatchSize: 5, Passes: 2}, 2)
	if want := PassesStatus + "; trouble in the last pass: x: slow"; r.Status != want {
		t.Errorf("status %q, want %q", r.Status, want)
	}
	if len(r.Unsettled) != 1 || r.Unsettled[0] != 4 {
		t.Errorf("unsettled %v, want [4]", r.Unsettled)
	}
}
