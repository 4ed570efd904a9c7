package runtime

import (
	"context"
	"math"
	"reflect"
	"strings"
	"testing"
)

// sviSampled is sviFake with SSMF's point masses: its local updates read
// E[μ] = t₁ of the draw.
type sviSampled struct{ *sviFake }

func (f sviSampled) Stochastic() SVIShape {
	s := f.sviFake.Stochastic()
	s.Families, s.Rows = []string{"Normal"}, []int{1}
	return s
}
func (f sviSampled) SetMoments(q *sviState, g int, t []float64) { x := t[0]; q.point = &x }

func fitSampled(t *testing.T, f *sviFake, q *sviState, svi SVISettings, workers int) *fakeResult {
	t.Helper()
	r, err := FitSVI(context.Background(), SVIModel[*sviState, *fakeWorker, float64, *fakeResult](sviSampled{f}), q,
		CASettings{Workers: workers}, svi, 7)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// With q(μ) a point mass, the draw is E[μ] and SSMF-A's step is SVI's.
func TestSSMFAWithAPointMassIsSVI(t *testing.T) {
	start := func() (*sviFake, *sviState) {
		f, q := newSVIFake(30)
		const prec = 1e20
		q.eta = [2]float64{0.7 * prec, -prec / 2} // N(0.7, 1e-20)
		return f, q
	}
	one := SVISettings{BatchSize: 30, Tau0: 1, Kappa: 1, Passes: 1} // one step, ρ = 1
	f, q := start()
	want := fitSVI(t, f, q, one, 2)
	f, q = start()
	one.Global = GlobalSSMFA
	got := fitSampled(t, f, q, one, 2)
	for i := range want.X {
		if math.Abs(got.X[i]-want.X[i]) > 1e-9*math.Abs(want.X[i]) {
			t.Errorf("λ[%d] = %v after SSMF-A's step from a point mass, SVI's is %v", i, got.X[i], want.X[i])
		}
	}
	// and not from a wide q(μ): the local fits see the draw, not E[μ]
	f, q = newSVIFake(30)
	q.eta = [2]float64{0.7, -0.5}
	got = fitSampled(t, f, q, one, 2)
	f, q = newSVIFake(30)
	q.eta = [2]float64{0.7, -0.5}
	want = fitSVI(t, f, q, SVISettings{BatchSize: 30, Tau0: 1, Kappa: 1, Passes: 1}, 2)
	if math.Abs(got.X[0]-want.X[0]) < 1e-6 {
		t.Errorf("SSMF-A's step from N(0.7, 1) equals SVI's (%v): the draw was not used", got.X[0])
	}
}

// SSMF's N-ramp (§2.2): with no local latents the statistics do not
// depend on the draw, and with ρ_t = 1/(t+1) λ after the first pass is the
// average of λ̂_t = prior + (N_t/|B|) Σ_{b∈B_t} t(y_b), N_t = min(t|B|, N).
func TestSSMFRampsNOverTheFirstPass(t *testing.T) {
	// (SSMF's Algorithm 1 gradient for the Normal equals the statistics
	// only in expectation, so the ramp is checked through SSMF-A.)
	for _, glob := range []string{GlobalSSMFA} {
		f, q := newSVIFake(24)
		f.noLocal = true
		r := fitSampled(t, f, q, SVISettings{BatchSize: 6, Tau0: 1, Kappa: 1, Passes: 1, Global: glob}, 2)
		// the minibatches of the order FitSVI draws from the seed
		order := sviOrder(24, 7)
		var lam0, lam1 float64
		for st := 0; st < 4; st++ {
			sum := 0.0
			for _, d := range order[st*6 : st*6+6] {
				sum += f.y[d]
			}
			nt := float64(min((st+1)*6, 24))
			lam0 += nt / 6 * sum
			lam1 += -0.5 - 0.5*nt
		}
		lam0, lam1 = lam0/4, lam1/4
		if math.Abs(r.X[0]-lam0) > 1e-9*math.Abs(lam0) || math.Abs(r.X[1]-lam1) > 1e-9*math.Abs(lam1) {
			t.Errorf("%s: λ = %v after one pass, want the ramped average (%v, %v)", glob, r.X, lam0, lam1)
		}
	}
}

// sviOrder is the order of units FitSVI's first pass visits.
func sviOrder(units int, seed uint64) []int {
	rng := NewRand(seed ^ 0x5f3759df)
	order := make([]int, units)
	for i := range order {
		order[i] = i
	}
	rng.Shuffle(units, func(i, j int) { order[i], order[j] = order[j], order[i] })
	return order
}

func TestSSMFDeterministicWhateverTheWorkers(t *testing.T) {
	for _, glob := range []string{GlobalSSMF, GlobalSSMFA} {
		var first *fakeResult
		for _, w := range []int{1, 2, 5} {
			f, q := newSVIFake(37)
			r := fitSampled(t, f, q, SVISettings{BatchSize: 5, Passes: 3, Global: glob}, w)
			r.Seconds = 0
			if first == nil {
				first = r
			} else if !reflect.DeepEqual(first, r) {
				t.Errorf("%s, workers %d: result differs from workers 1", glob, w)
			}
		}
	}
}

// SSMF approaches the same fixed point as SVI on the conjugate fake
// (its local step is linear in E[μ], so mean field and SSMF agree in
// expectation), within the noise of the draws.
func TestSSMFApproachesTheCAFixedPoint(t *testing.T) {
	for _, glob := range []string{GlobalSSMF, GlobalSSMFA} {
		f, q := newSVIFake(40)
		r := fitSampled(t, f, q, SVISettings{BatchSize: 8, Tau0: 1, Kappa: 0.9, Passes: 300, Global: glob}, 2)
		sum := 0.0
		for _, y := range f.y {
			sum += y
		}
		want := sum / (float64(len(f.y)) + 2)
		if math.Abs(r.G-want) > 0.03 {
			t.Errorf("%s: E[μ] = %v after 300 passes, want the coordinate-ascent fixed point %v", glob, r.G, want)
		}
	}
}

func TestSSMFRefusals(t *testing.T) {
	f, q := newSVIFake(10)
	_, err := FitSVI(context.Background(), SVIModel[*sviState, *fakeWorker, float64, *fakeResult](f), q,
		CASettings{Workers: 1}, SVISettings{Global: GlobalSSMF}, 1)
	if err == nil || !strings.Contains(err.Error(), "does not apply") {
		t.Errorf("SSMF on a model without SetMoments: err = %v", err)
	}
	_, err = FitSVI(context.Background(), SVIModel[*sviState, *fakeWorker, float64, *fakeResult](sviSampled{f}), q,
		CASettings{Workers: 1}, SVISettings{Local: LocalGibbs}, 1)
	if err == nil || !strings.Contains(err.Error(), "Gibbs local step does not apply") {
		t.Errorf("Gibbs on a model without GibbsUnit: err = %v", err)
	}
	for _, s := range []SVISettings{{Global: "mf"}, {Local: "cvb0"}, {Local: "gibs"}, {BurnIn: -1}} {
		if err := s.Check(); err == nil {
			t.Errorf("%+v: no error", s)
		}
	}
}
