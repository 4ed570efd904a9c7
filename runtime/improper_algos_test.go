package runtime

import (
	"context"
	"math"
	"strings"
	"testing"
)

// flatTheta is a global Gaussian factor q(θ) = N(mean, 1) of a latent
// with an improper flat prior, which the fakes below add to FitSVI's
// fake model (the fits leave it where it is: mean is the mode an update
// would have left). Its f is the log-likelihood of a logistic regression
// through the origin on data that the sign of θ separates, Σ_n log σ(a_n θ)
// with every a_n > 0, which rises towards 0 as θ → ∞ and has no mode:
// the posterior is improper, and a mode at θ = 30 is where Newton's
// method stops as its steps vanish. With proper, f adds −θ²/2 (a N(0, 1)
// prior's): the posterior is proper.
type flatTheta struct {
	mean   float64
	proper bool
}

var separatedBy = []float64{0.3, 1.2, 0.7, 2.1, 0.4}

func (t flatTheta) f(x, grad, hess []float64) float64 {
	v, g, h := 0.0, 0.0, 0.0
	for _, a := range separatedBy {
		z := a * x[0]
		s := 1 / (1 + math.Exp(z)) // σ(−z)
		v -= math.Log1p(math.Exp(-z))
		g += a * s
		h -= a * a * s * (1 - s)
	}
	if t.proper {
		v, g, h = v-x[0]*x[0]/2, g-x[0], h-1
	}
	grad[0], hess[0] = g, h
	return v
}

func (t flatTheta) DiagnoseFactors() []DiagnoseFactor {
	return []DiagnoseFactor{{Latent: "theta", Flat: true}}
}
func (t flatTheta) DiagnoseGaussian(_ *sviState, k, _ int) GaussianFactor {
	return GaussianFactor{Mean: []float64{t.mean}, Cov: []float64{1}, F: t.f}
}

// theta's two cases: improper (the mode ran off), and proper.
var (
	ranOff    = flatTheta{mean: 30}
	properFit = flatTheta{mean: 0.8, proper: true}
)

// improperSVI is sviFake (SVI's mean-field step, and the model of a
// shard: its locals are the units' means) with theta.
type improperSVI struct {
	*sviFake
	flatTheta
}

func (f improperSVI) Locals(q *sviState) ([][]float64, [][]bool) { return [][]float64{q.m}, nil }
func (f improperSVI) Result(run Run, q *sviState, b float64) *fakeResult {
	r := f.sviFake.Result(run, q, b)
	r.Converged = run.Converged
	return r
}

// improperSampled is sviSampled (SSMF's steps) with theta.
type improperSampled struct {
	sviSampled
	flatTheta
}

var (
	_ Diagnosed[*sviState]   = improperSVI{}
	_ Diagnosed[*sviState]   = improperSampled{}
	_ ShardLocals[*sviState] = improperSVI{}
)

// wantImproper is the status's start when theta ran off.
const wantImproper = ImproperStatus + ": theta: the log density does not fall along theta, out to 1000 sds from the mode"

// checkImproperEnd checks a fit's result r with theta as th: improper,
// the fit is not converged and its status names theta's improper
// posterior, whatever the algorithm's own ending (ok); proper, the
// algorithm's ending stands.
func checkImproperEnd(t *testing.T, th flatTheta, r *fakeResult, ok func(status string) bool) {
	t.Helper()
	t.Logf("status %s", r.Status)
	if th.proper {
		if !ok(r.Status) {
			t.Errorf("proper posterior: status %q, want the algorithm's own ending", r.Status)
		}
		return
	}
	if !strings.HasPrefix(r.Status, wantImproper) || r.Converged {
		t.Errorf("improper posterior: converged %v, status %q;\n want %q…", r.Converged, r.Status, wantImproper)
	}
}

// SVI, SSMF and SSMF-A end as coordinate ascent does (FitCA's
// improperEnd): a latent with a flat prior whose posterior is improper
// makes the fit's status improper_posterior, not passes_completed with
// an sd of 10⁶ (issue 38).
func TestImproperPosteriorEndsSVI(t *testing.T) {
	for _, global := range []string{GlobalMeanField, GlobalSSMF, GlobalSSMFA} {
		for _, th := range []flatTheta{ranOff, properFit} {
			name := global + "/improper"
			if th.proper {
				name = global + "/proper"
			}
			t.Run(name, func(t *testing.T) {
				f, q := newSVIFake(24)
				var m SVIModel[*sviState, *fakeWorker, float64, *fakeResult] = improperSVI{f, th}
				if global != GlobalMeanField {
					m = improperSampled{sviSampled{f}, th}
				}
				r, err := FitSVI(context.Background(), m, q, CASettings{Workers: 1, Diagnose: DiagnoseSettings{Off: true}},
					SVISettings{BatchSize: 6, Passes: 3, Global: global}, 7)
				if err != nil {
					t.Fatal(err)
				}
				checkImproperEnd(t, th, r, func(s string) bool { return s == PassesStatus })
			})
		}
	}
}

// A sharded fit (variational EM over shards, and SVI over shards) ends in
// its whole result (WholeResult: all the units' data, which the driver
// does not hold) as the single-process fit does.
func TestImproperPosteriorEndsShardedFits(t *testing.T) {
	for _, alg := range []string{"em", "svi"} {
		for _, th := range []flatTheta{ranOff, properFit} {
			name := alg + "/improper"
			if th.proper {
				name = alg + "/proper"
			}
			t.Run(name, func(t *testing.T) {
				whole, _ := newSVIFake(12)
				shardOf := func(lo, hi int) Shard {
					f := &sviFake{y: append([]float64(nil), whole.y[lo:hi]...)}
					sh, err := NewShard(CAModel[*sviState, *fakeWorker, float64, *fakeResult](improperSVI{f, th}),
						&sviState{m: make([]float64, hi-lo), eta: [2]float64{0, -0.5}},
						ShardOptions{First: lo, Total: len(whole.y), Workers: 1, Diagnose: DiagnoseSettings{Off: true}})
					if err != nil {
						t.Fatal(err)
					}
					return sh
				}
				driver := shardOf(0, 0)
				runner := &InProcessShards{Shards: []Shard{shardOf(0, 5), shardOf(5, 12)}}
				ss := ShardSettings{Convergence: Convergence{MaxIter: 200}.WithDefaults()}
				var fit *ShardFit
				var err error
				if alg == "em" {
					fit, err = FitShards(context.Background(), driver, runner, ss)
				} else {
					fit, err = FitShardsSVI(context.Background(), driver, runner, ss, SVISettings{BatchSize: 4, Passes: 3}, 7)
				}
				if err != nil {
					t.Fatal(err)
				}
				locals, err := runner.Locals(fit.LocalsOf)
				if err != nil {
					t.Fatal(err)
				}
				out, err := WholeResult(context.Background(), shardOf(0, len(whole.y)), fit, locals)
				if err != nil {
					t.Fatal(err)
				}
				own := fit.Run.Status // the driver's ending, before the whole result's check
				checkImproperEnd(t, th, out.(*fakeResult), func(s string) bool { return s == own && s != "" })
			})
		}
	}
}
