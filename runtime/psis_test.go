package runtime

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// paretoRatios returns s log ratios whose weights have a generalized
// Pareto tail of shape k: W = U^−k for U uniform on (0, 1) (k > 0), and a
// light tail log W ~ N(0, 0.1²) for k = 0.
func paretoRatios(rng *rand.Rand, s int, k float64) []float64 {
	r := make([]float64, s)
	for i := range r {
		if k == 0 {
			r[i] = 0.1 * rng.NormFloat64()
			continue
		}
		u := 1 - rng.Float64() // in (0, 1]
		r[i] = -k * math.Log(u)
	}
	return r
}

// k̂ recovers the tail shape of simulated importance ratios whose tail is
// known: Pareto weights of shape 0.3 to 1.2 within 0.15 over 4,000 draws,
// and a light tail below KHatGood.
func TestPSISRecoversKnownTails(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, k := range []float64{0.3, 0.5, 0.8, 1.2} {
		var sum float64
		const reps = 5
		for range reps {
			got, ok := PSIS(paretoRatios(rng, 4000, k))
			if !ok {
				t.Fatalf("k = %v: no estimate", k)
			}
			sum += got
		}
		if mean := sum / reps; math.Abs(mean-k) > 0.15 {
			t.Errorf("tail of shape %v: mean k̂ %.3f over %d samples", k, mean, reps)
		}
	}
	if got, ok := PSIS(paretoRatios(rng, 1000, 0)); !ok || got > KHatGood {
		t.Errorf("light-tailed ratios: k̂ = %.3f (ok %v), want below %v", got, ok, KHatGood)
	}
	flat := make([]float64, 200)
	for i := range flat {
		flat[i] = -3.25
	}
	if got, ok := PSIS(flat); !ok || got != 0 {
		t.Errorf("constant ratios: k̂ = %v, ok %v; want 0 (nothing to smooth)", got, ok)
	}
	if _, ok := PSIS(flat[:20]); ok {
		t.Errorf("20 draws (a tail of 4): want no estimate")
	}
}

// GPDFit's shape agrees with the maximum-likelihood estimate computed
// independently here (the profile likelihood maximized over a fine grid
// of θ = −k/σ, Grimshaw's reduction) on exceedances of known shape, once
// the prior's pull toward ½ is undone; and the smoothed ratios are the
// fitted quantiles: sorted, capped at the largest raw ratio, the body
// untouched.
func TestGPDFitMatchesMaximumLikelihood(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, k := range []float64{0.2, 0.6, 1.0} {
		n := 400
		x := make([]float64, n)
		for i := range x {
			u := 1 - rng.Float64()
			x[i] = (math.Pow(u, -k) - 1) / k // GPD(k, σ = 1)
		}
		slices.Sort(x)
		got, sigma := GPDFit(x)
		raw := (got*float64(n+10) - 5) / float64(n)
		// profile likelihood on θ ∈ (−50/x̄, 1/x_max), log-spaced on the negative side
		best, bestTheta := math.Inf(-1), 0.0
		xmax := x[n-1]
		for i := 1; i < 40000; i++ {
			theta := -math.Exp(-12 + 18*float64(i)/40000) // −e^−12 … −e^6
			if v := gpdProfile(theta, x); v > best {
				best, bestTheta = v, theta
			}
		}
		for i := 1; i < 20000; i++ { // 0 < θ < 1/x_max: light tails
			theta := float64(i) / 20000 / xmax
			if v := gpdProfile(theta, x); v > best {
				best, bestTheta = v, theta
			}
		}
		mle := 0.0
		for _, v := range x {
			mle += math.Log1p(-bestTheta * v)
		}
		mle /= float64(n)
		t.Logf("shape %v: Zhang–Stephens %.4f (σ %.3f), maximum likelihood %.4f", k, raw, sigma, mle)
		if math.Abs(raw-mle) > 0.03 {
			t.Errorf("shape %v: GPDFit's k %.4f, maximum likelihood %.4f", k, raw, mle)
		}
		if math.Abs(mle-k) > 0.2 {
			t.Errorf("shape %v: the reference MLE %.4f is off; the comparison is vacuous", k, mle)
		}
	}

	r := paretoRatios(rng, 900, 0.7)
	orig := slices.Clone(r)
	if _, ok := PSIS(r); !ok {
		t.Fatal("no estimate")
	}
	top := slices.Max(orig)
	sorted := slices.Clone(orig)
	slices.Sort(sorted)
	m := 90 // ⌈min(900/5, 3·30)⌉
	cut := sorted[len(sorted)-m-1]
	changed := 0
	for i := range r {
		switch {
		case orig[i] <= cut:
			if r[i] != orig[i] {
				t.Fatalf("ratio %d below the tail changed: %v → %v", i, orig[i], r[i])
			}
		default:
			changed++
			if r[i] > top || r[i] < cut {
				t.Errorf("smoothed tail ratio %v outside [%v, %v]", r[i], cut, top)
			}
		}
	}
	if changed != m {
		t.Errorf("%d ratios in the tail, want %d", changed, m)
	}
}

// fakeDiagnosed is one global Gaussian factor with a given target.
type fakeDiagnosed struct{ q GaussianFactor }

func (f fakeDiagnosed) DiagnoseFactors() []DiagnoseFactor {
	return []DiagnoseFactor{{Latent: "x"}, {Latent: "u", PerUnit: true}}
}
func (f fakeDiagnosed) DiagnoseGaussian(_ int, k, _ int) GaussianFactor {
	if k == 1 {
		panic("a per-unit factor with no units was asked for a unit")
	}
	return f.q
}

// Log ratios too spread for their squares to fit a float64 leave the
// factor unestimated, with nothing infinite in the diagnostic (a result
// must marshal); a per-unit factor without units is skipped.
func TestDiagnoseExtremeRatios(t *testing.T) {
	wide := fakeDiagnosed{GaussianFactor{Mean: []float64{0}, Cov: []float64{700 * 700 / 9.0},
		Target: func(x []float64) float64 { return 3*x[0] - math.Exp(x[0]) }}}
	ds := Diagnose(context.Background(), wide, 0, DiagnoseSettings{}, 1, 1)
	if len(ds) != 1 {
		t.Fatalf("%d diagnostics, want the global factor's alone", len(ds))
	}
	if _, err := json.Marshal(ds); err != nil {
		t.Errorf("the diagnostic does not marshal: %v (%+v)", err, ds[0])
	}
	if ds[0].KHat != nil && (math.IsInf(ds[0].SDLogRatio, 0) || math.IsNaN(ds[0].SDLogRatio)) {
		t.Errorf("an estimate with sd %v", ds[0].SDLogRatio)
	}
}

// An interrupt during the diagnostic's draws ends it within
// cancelCheckEvery draws, and the run it ends is marked canceled with no
// diagnostic: -psis-draws 100000000 once ignored SIGINT for ten minutes.
// The target cancels the context at its first evaluation.
func TestDiagnoseStopsWhenCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	m := fakeDiagnosed{GaussianFactor{Mean: []float64{0}, Cov: []float64{1},
		Target: func(x []float64) float64 {
			calls++
			cancel()
			return -0.5 * x[0] * x[0]
		}}}
	run := Run{Converged: true, Status: "converged"}
	diagnoseRun(ctx, &run, m, 0, DiagnoseSettings{Draws: MaxDraws}, 1, 1)
	if calls > cancelCheckEvery {
		t.Errorf("%d draws after the context was canceled at the first; want at most %d", calls, cancelCheckEvery)
	}
	if run.Status != "canceled" || run.Converged || run.Diagnostics != nil {
		t.Errorf("run after a canceled diagnostic: status %q, converged %v, %d diagnostics; want canceled, none", run.Status, run.Converged, len(run.Diagnostics))
	}
}

// More draws than MaxDraws are refused before the fit (2e9 draws once
// asked for 64 GB and crashed); MaxDraws itself is accepted.
func TestDiagnoseDrawsBounded(t *testing.T) {
	for _, s := range []DiagnoseSettings{{Draws: 2e9}, {UnitDraws: MaxDraws + 1}} {
		if err := s.Check(); err == nil || !strings.Contains(err.Error(), "at most 10000000 draws") {
			t.Errorf("%+v: %v, want a refusal naming the bound", s, err)
		}
	}
	if err := (DiagnoseSettings{Draws: MaxDraws, UnitDraws: MaxDraws}).Check(); err != nil {
		t.Errorf("MaxDraws refused: %v", err)
	}
}
