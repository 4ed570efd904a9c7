package runtime

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Posterior predictions of new observations (derive/pointwise.go): for each
// observation y_i of an observed statement, with θ the latents it reads,
//
//   - the plug-in predictive, p(y_i | θ̂) and E[y_i | θ̂] at θ̂ = q's means
//     (on the unconstrained scale for a constrained latent, whose point is
//     then the transform of the mean), params at their estimates;
//   - the Monte Carlo predictive over q, the log pointwise predictive
//     density log (1/S) Σ_s p(y_i | θ_s) and the mean (1/S) Σ_s E[y_i | θ_s]
//     over S draws θ_s from q (Gelman, Hwang & Vehtari 2014's lppd, with q
//     for the posterior).
//
// The draws are taken in one goroutine from a generator seeded with
// PredictSettings.Seed, so the result does not depend on GOMAXPROCS.

// DefaultPredictDraws is the number of draws from q when
// PredictSettings.Draws is 0.
const DefaultPredictDraws = 1000

// PredictSettings control a generated package's Predict.
type PredictSettings struct {
	// Draws is the number of draws from q for the Monte Carlo predictive:
	// 0 means DefaultPredictDraws, a negative number none (the plug-in
	// predictive only).
	Draws int
	// Seed seeds the draws.
	Seed uint64
	// Cancel, if not nil, stops the draws when it is closed (a context's
	// Done: an interrupt); Predict then returns an error that wraps
	// context.Canceled. It is looked at before every draw.
	Cancel <-chan struct{}
}

// PointFactor is a Gaussian factor that predictions and the joint
// diagnostic draw from: Units factors N(Mean, Cov) of dimension Dim (one
// for a global latent), means and covariances flat and row-major, unit
// after unit. Point is where the generated kernels read the latent:
// Units × Dim values laid out as Mean.
type PointFactor struct {
	Latent     string
	Units, Dim int
	Mean, Cov  []float64
	Point      []float64
}

// PredictStmt is one observed statement of a generated package, read
// through its Eval.
type PredictStmt struct {
	// Var is the observed variable, Statement the statement as
	// "model.vi:L:C: y[n] ~ Bernoulli(…)", Family its distribution.
	Var, Statement, Family string
	// Dims are the lengths of the variable's dimensions the statement's
	// observations run over; From and To bound the observed positions in
	// each, 0-based and To excluded (a loop `for t in 3:T` runs from 2 to
	// T, `for t in 1:T-1` from 0 to T − 1).
	Dims, From, To []int
	// Observed says the data give the variable's values, so that its log
	// densities are scores; HasMean that the family has a mean.
	Observed, HasMean bool
	// Eval writes log p(y_i | θ) into lp and E[y_i | θ] into mean (both
	// of length Π Dims, row-major; mean nil when !HasMean), θ read from the
	// factors' Points.
	Eval func(lp, mean []float64)
}

// PredictModel is what a generated package's Predict hands to Predict.
type PredictModel struct {
	Model   string
	Factors []PointFactor
	Stmts   []PredictStmt
}

// Predicted is the predictions of one observed statement, over the
// observations in the block of positions First … First+Shape−1 (1-based,
// as in the model), row-major.
type Predicted struct {
	Var       string `json:"var"`
	Statement string `json:"statement"`
	Family    string `json:"family"`
	First     []int  `json:"first"`
	Shape     []int  `json:"shape"`
	// Observed says the data gave the values, so that they are scored.
	Observed bool `json:"observed"`
	// PlugInMean is E[y_i | θ̂]; Mean the Monte Carlo E_q E[y_i | θ]
	// (absent for a family without a mean, or without draws).
	PlugInMean []float64 `json:"plugin_mean,omitempty"`
	Mean       []float64 `json:"mean,omitempty"`
	// PlugInLogDensity is log p(y_i | θ̂); LogPredictive the log
	// predictive density log E_q[p(y_i | θ)] by Monte Carlo (absent when
	// the data do not give y, or without draws).
	PlugInLogDensity []float64 `json:"plugin_log_density,omitempty"`
	LogPredictive    []float64 `json:"log_predictive_density,omitempty"`
}

// PredictScore sums the log densities of the observations the data give.
type PredictScore struct {
	Observations int `json:"observations"`
	// PlugIn and LPPD are the sums over the observations of
	// log p(y_i | θ̂) and of log E_q[p(y_i | θ)]; MeanPlugIn and MeanLPPD
	// the same per observation.
	PlugIn     float64  `json:"plugin"`
	MeanPlugIn float64  `json:"mean_plugin"`
	LPPD       *float64 `json:"lppd"`
	MeanLPPD   *float64 `json:"mean_lppd"`
}

// Prediction is a generated package's Predict result.
type Prediction struct {
	Model string `json:"model"`
	Draws int    `json:"draws"`
	Seed  uint64 `json:"seed"`
	// Exact says the observations read no latent: the plug-in is the
	// predictive, with no draws.
	Exact bool        `json:"exact,omitempty"`
	Vars  []Predicted `json:"predictions"`
	// Score is nil when the data give none of the observed variables, or
	// no observations.
	Score *PredictScore `json:"score"`
}

// String is the score in a line, or what was predicted.
func (p *Prediction) String() string {
	if p.Score == nil {
		if slices.ContainsFunc(p.Vars, func(v Predicted) bool { return v.Observed }) {
			return "no observations to score: the statements' loops are empty for these data"
		}
		n := 0
		for _, v := range p.Vars {
			k := 1
			for _, s := range v.Shape {
				k *= s
			}
			n += k
		}
		return fmt.Sprintf("predicted %d observations (no observed values given, so no scores)", n)
	}
	s := p.Score
	if p.Exact {
		return fmt.Sprintf("%d observations: mean log predictive density %.6g (exact: they read no latent)", s.Observations, s.MeanPlugIn)
	}
	if s.MeanLPPD == nil {
		return fmt.Sprintf("%d observations: mean log density %.6g at q's means (plug-in; no draws)", s.Observations, s.MeanPlugIn)
	}
	return fmt.Sprintf("%d observations: mean log predictive density %.6g (%d draws from q), %.6g at q's means (plug-in)", s.Observations, *s.MeanLPPD, p.Draws, s.MeanPlugIn)
}

// Predict computes the plug-in and Monte Carlo predictions of pm's
// statements. It fails if a factor's covariance is not positive definite,
// a log density is NaN or +Inf, s.Draws is above MaxDraws, or s.Cancel is
// closed before the draws are done.
func Predict(pm PredictModel, s PredictSettings) (*Prediction, error) {
	if err := CheckDraws("Draws", s.Draws); err != nil {
		return nil, fmt.Errorf("predictions: %w", err)
	}
	draws := s.Draws
	if draws == 0 {
		draws = DefaultPredictDraws
	}
	exact := len(pm.Factors) == 0 // the observations read no latent
	if draws < 0 || exact {
		draws = 0
	}
	out := &Prediction{Model: pm.Model, Draws: draws, Seed: s.Seed, Exact: exact}
	type buf struct {
		lp, mean        []float64
		lpMax, lpSum    []float64 // running log-sum-exp of lp
		meanSum         []float64
		plugLP, plugMu  []float64
		n               int
		first, shape    []int
		observed, means bool
	}
	bufs := make([]*buf, len(pm.Stmts))
	for k, st := range pm.Stmts {
		n := 1
		for _, d := range st.Dims {
			n *= d
		}
		b := &buf{n: n, lp: make([]float64, n), observed: st.Observed, means: st.HasMean}
		if st.HasMean {
			b.mean = make([]float64, n)
		}
		for i := range st.Dims {
			b.first = append(b.first, st.From[i]+1)
			b.shape = append(b.shape, max(0, st.To[i]-st.From[i]))
		}
		bufs[k] = b
	}
	for _, f := range pm.Factors {
		copy(f.Point, f.Mean)
	}
	eval := func() error {
		for k, st := range pm.Stmts {
			b := bufs[k]
			clear(b.lp)
			if b.mean != nil {
				clear(b.mean)
			}
			st.Eval(b.lp, b.mean)
			if !b.observed {
				continue
			}
			var bad error
			forBlock(st.Dims, st.From, st.To, func(i int, at []int) {
				if v := b.lp[i]; bad == nil && (math.IsNaN(v) || math.IsInf(v, 1)) {
					bad = fmt.Errorf("%s: the log density of %s%s is %v", st.Statement, st.Var, fmtIndex(at), v)
				}
			})
			if bad != nil {
				return bad
			}
		}
		return nil
	}
	if err := eval(); err != nil {
		return nil, fmt.Errorf("at q's means: %w", err)
	}
	for _, b := range bufs {
		b.plugLP = append([]float64(nil), b.lp...)
		if b.mean != nil {
			b.plugMu = append([]float64(nil), b.mean...)
		}
	}
	if draws > 0 {
		sampler, err := newPointSampler(pm.Factors)
		if err != nil {
			return nil, err
		}
		for _, b := range bufs {
			b.lpMax = make([]float64, b.n)
			for i := range b.lpMax {
				b.lpMax[i] = math.Inf(-1)
			}
			b.lpSum = make([]float64, b.n)
			if b.means {
				b.meanSum = make([]float64, b.n)
			}
		}
		rng := NewRand(s.Seed)
		for i := range draws {
			if closed(s.Cancel) { // a draw evaluates every row: look each time
				return nil, fmt.Errorf("predictions: %w after %d of %d draws", context.Canceled, i, draws)
			}
			sampler.draw(rng)
			if err := eval(); err != nil {
				return nil, fmt.Errorf("at a draw from q: %w", err)
			}
			for _, b := range bufs {
				if b.observed {
					for i, v := range b.lp {
						switch {
						case math.IsInf(v, -1):
						case v > b.lpMax[i]:
							b.lpSum[i] = b.lpSum[i]*math.Exp(b.lpMax[i]-v) + 1
							b.lpMax[i] = v
						default:
							b.lpSum[i] += math.Exp(v - b.lpMax[i])
						}
					}
				}
				for i, v := range b.mean {
					b.meanSum[i] += v
				}
			}
		}
	}
	var score PredictScore
	var lppd float64
	anyObserved := false
	for k, st := range pm.Stmts {
		b := bufs[k]
		pv := Predicted{Var: st.Var, Statement: st.Statement, Family: st.Family, First: b.first, Shape: b.shape, Observed: b.observed}
		forBlock(st.Dims, st.From, st.To, func(i int, _ []int) {
			if b.means {
				pv.PlugInMean = append(pv.PlugInMean, b.plugMu[i])
				if draws > 0 {
					pv.Mean = append(pv.Mean, b.meanSum[i]/float64(draws))
				}
			}
			if !b.observed {
				return
			}
			pv.PlugInLogDensity = append(pv.PlugInLogDensity, b.plugLP[i])
			score.PlugIn += b.plugLP[i]
			score.Observations++
			if draws > 0 {
				v := b.lpMax[i] + math.Log(b.lpSum[i]/float64(draws))
				pv.LogPredictive = append(pv.LogPredictive, v)
				lppd += v
			}
		})
		anyObserved = anyObserved || b.observed
		out.Vars = append(out.Vars, pv)
	}
	if anyObserved && score.Observations > 0 {
		score.MeanPlugIn = score.PlugIn / float64(score.Observations)
		if draws > 0 {
			mean := lppd / float64(max(score.Observations, 1))
			score.LPPD, score.MeanLPPD = &lppd, &mean
		}
		out.Score = &score
	}
	return out, nil
}

// pointSampler draws every unit of some Gaussian factors into its Point,
// from their Cholesky factors, computed once: the draws of Predict and of
// the joint diagnostic.
type pointSampler struct {
	factors []PointFactor
	chols   [][]float64
	logNorm float64 // log q's constant: Σ over units of −½p log 2π − Σ_i log L_ii
	z       []float64
}

// newPointSampler factors the covariances of fs; an error names the
// factor (and unit) whose covariance is not positive definite.
func newPointSampler(fs []PointFactor) (*pointSampler, error) {
	s := &pointSampler{factors: fs, chols: make([][]float64, len(fs))}
	for k, f := range fs {
		p := f.Dim
		c := slices.Clone(f.Cov)
		for u := range f.Units {
			l := c[u*p*p : (u+1)*p*p]
			if !cholLower(l, p) {
				which := ""
				if f.Units > 1 {
					which = fmt.Sprintf(" of unit %d", u+1)
				}
				return nil, fmt.Errorf("q(%s)%s: the covariance is not positive definite, so it cannot be drawn from", f.Latent, which)
			}
			s.logNorm -= 0.5 * float64(p) * math.Log(2*math.Pi)
			for i := range p {
				s.logNorm -= math.Log(l[i*p+i])
			}
		}
		s.chols[k] = c
	}
	return s, nil
}

// draw sets the Points to a draw from the factors, μ + Lz for each unit,
// and returns log q at it.
func (s *pointSampler) draw(rng *rand.Rand) (logq float64) {
	logq = s.logNorm
	for k, f := range s.factors {
		p := f.Dim
		z := Grow(&s.z, p)
		for u := range f.Units {
			for i := range z {
				z[i] = rng.NormFloat64()
			}
			l := s.chols[k][u*p*p : (u+1)*p*p]
			for i := range p {
				f.Point[u*p+i] = f.Mean[u*p+i] + DotFMA(l[i*p:i*p+i+1], z[:i+1])
			}
			logq -= 0.5 * DotFMA(z, z)
		}
	}
	return logq
}

// forBlock calls fn with the row-major offset and 1-based position of
// every element of an array of lengths dims in the block of positions
// from (included) to to (excluded).
func forBlock(dims, from, to []int, fn func(i int, at []int)) {
	at := make([]int, len(dims))
	var rec func(k, off int)
	rec = func(k, off int) {
		if k == len(dims) {
			fn(off, at)
			return
		}
		for j := from[k]; j < min(to[k], dims[k]); j++ {
			at[k] = j + 1
			rec(k+1, off*dims[k]+j)
		}
	}
	rec(0, 0)
}

func fmtIndex(at []int) string {
	if len(at) == 0 {
		return ""
	}
	s := "["
	for i, a := range at {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprint(a)
	}
	return s + "]"
}
