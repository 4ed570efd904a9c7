package runtime

import (
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// The check of improper posteriors. A nonconjugate latent with no `~` has
// an improper flat prior, and nothing but the data makes its posterior
// proper. Where they do not — logistic regression on separable data, whose
// likelihood keeps rising as the coefficients run off along the
// separating direction, or collinear covariates, along whose null
// combination it is flat — Newton's method still stops (the gradient
// vanishes as the mode runs off, or in exact arithmetic along the flat
// direction), and −∇²f⁻¹ is a "posterior" with sds of 10⁶ and more.
//
// The check reads f itself along a few directions v from the mean μ: the
// one of least curvature of −∇²f(μ), the Newton step, and μ itself (the
// direction a mode that ran off from the start at 0 took). With s the sd
// that the curvature gives along v, a proper posterior's log density
// falls by about k²/2 at μ ± k·s·v; where f has fallen by less than
// ImproperDrop at every k of ImproperReach, out to 1000 sds, on one side,
// the posterior is not proper along v — within what the approximation
// itself says about its scale — and the fit is reported as such.

// ImproperReach are the distances, in sds along the direction, at which
// the check reads f.
var ImproperReach = []float64{3, 10, 30, 100, 300, 1000}

// ImproperDrop is the fall of the log density (nats) from the mode that
// some point of ImproperReach must show on each side of a direction for
// the posterior to count as proper there; a Gaussian falls by 4.5 at 3 sds.
const ImproperDrop = 1.0

// ImproperStatus starts the status of a fit whose latent with a flat
// prior has an improper posterior (Improper).
const ImproperStatus = "improper_posterior"

// Improper checks q, the factor of a latent with an improper flat prior
// named name, at its mean, and returns "" if its posterior is proper
// along every direction the check reads, or else what is wrong, naming
// the direction by the latent's elements (label(i) names element i).
func Improper(q GaussianFactor, name string, label func(i int) string) string {
	p := len(q.Mean)
	if q.F == nil || p == 0 || FirstNonFinite(q.Mean) >= 0 {
		return ""
	}
	mu := q.Mean
	grad, hess := make([]float64, p), make([]float64, p*p)
	f0 := q.F(mu, grad, hess)
	if !isFinite(f0) || !allFinite(grad) || !allFinite(hess) {
		return ""
	}
	a := mat.NewSymDense(p, nil)
	for i := range p {
		for j := i; j < p; j++ {
			a.SetSym(i, j, -(hess[i*p+j]+hess[j*p+i])/2)
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(a, true) {
		return ""
	}
	vals := eig.Values(nil)
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	top := math.Max(vals[p-1], 0)
	// the curvature below which a direction counts as flat: rounding's,
	// relative to the largest, or an absolute floor when there is none
	floor := math.Max(top*1e-12, 1e-300)
	dirs := [][]float64{mat.Col(nil, 0, &vecs)}
	if d := newtonStepOf(vals, &vecs, grad, floor); d != nil {
		dirs = append(dirs, d)
	}
	dirs = append(dirs, append([]float64(nil), mu...))
	fx := func(x []float64) float64 { return q.F(x, grad, hess) }
	for _, d := range dirs {
		if !normalize(d) {
			continue
		}
		s := 1 / math.Sqrt(math.Max(quadForm(a, d), floor))
		up := improperAlong(fx, mu, d, s, f0)
		down := improperAlong(fx, mu, d, -s, f0)
		switch {
		case up && down:
			return notIdentified(name, label, d, s)
		case up:
			return runsOff(name, label, d, 1, s)
		case down:
			return runsOff(name, label, d, -1, s)
		}
	}
	return ""
}

// improperAlong reads f (fx) at μ + k·step·d for k in ImproperReach, and
// reports whether it fell by less than ImproperDrop from f0 at all of
// them.
func improperAlong(fx func([]float64) float64, mu, d []float64, step, f0 float64) bool {
	x := make([]float64, len(mu))
	for _, k := range ImproperReach {
		for i := range x {
			x[i] = mu[i] + k*step*d[i]
		}
		if v := fx(x); math.IsNaN(v) || f0-v >= ImproperDrop {
			return false // it falls (or cannot be read): proper this way
		}
	}
	return true
}

// runsOff says that f does not fall along sign·d (sd s there) while it
// does the other way: the mode runs off, as with separated data.
func runsOff(name string, label func(int) string, d []float64, sign, s float64) string {
	return fmt.Sprintf("%s: the log density does not fall along %s, out to %g sds from the mode (sd %.3g), while it does the other way: with its improper flat prior the posterior is improper and the mode runs off; in a regression, the data separate the outcomes (completely or quasi-completely) along that combination of coefficients. Give %s a proper prior, or drop the separating covariates",
		name, combination(d, sign, label), ImproperReach[len(ImproperReach)-1], s, name)
}

// notIdentified says that f is flat along ±d (sd s there).
func notIdentified(name string, label func(int) string, d []float64, s float64) string {
	return fmt.Sprintf("%s is not identified: the log density changes by less than %g along ±(%s), out to %g sds from the mode (sd %.3g): with its improper flat prior the posterior is improper; in a regression, the covariates of those coefficients are collinear (a column that is a combination of others, a constant column beside an intercept). Give %s a proper prior, or drop the redundant covariates",
		name, ImproperDrop, combination(d, leadingSign(d), label), ImproperReach[len(ImproperReach)-1], s, name)
}

// leadingSign is the sign of d's first element of at least 1% of its
// largest, with which ±d is written the same way whatever sign an
// eigenvector came with.
func leadingSign(d []float64) float64 {
	big := 0.0
	for _, v := range d {
		big = math.Max(big, math.Abs(v))
	}
	for _, v := range d {
		if math.Abs(v) >= 0.01*big {
			return math.Copysign(1, v)
		}
	}
	return 1
}

// combination writes sign·d as a combination of the latent's elements,
// leaving out those below 1% of the largest: "0.71·theta[2] − 0.71·theta[3]".
func combination(d []float64, sign float64, label func(int) string) string {
	big := 0.0
	for _, v := range d {
		big = math.Max(big, math.Abs(v))
	}
	var sb strings.Builder
	for i, v := range d {
		v *= sign
		if math.Abs(v) < 0.01*big {
			continue
		}
		switch {
		case sb.Len() == 0 && v < 0:
			sb.WriteString("−")
		case sb.Len() > 0 && v < 0:
			sb.WriteString(" − ")
		case sb.Len() > 0:
			sb.WriteString(" + ")
		}
		if c := fmt.Sprintf("%.2g", math.Abs(v)); c != "1" {
			sb.WriteString(c + "·")
		}
		sb.WriteString(label(i))
	}
	return sb.String()
}

// newtonStepOf is the Newton step (A + λI)⁻¹g at the mode, from A's
// eigenvalues vals and eigenvectors vecs, each eigenvalue raised to at
// least floor; nil if g is zero.
func newtonStepOf(vals []float64, vecs *mat.Dense, grad []float64, floor float64) []float64 {
	p := len(grad)
	d := make([]float64, p)
	for k := range p {
		c := 0.0
		for i := range p {
			c += vecs.At(i, k) * grad[i]
		}
		c /= math.Max(vals[k], floor)
		for i := range p {
			d[i] += c * vecs.At(i, k)
		}
	}
	if !normalize(d) {
		return nil
	}
	return d
}

// normalize scales d to unit length; false if it is zero or not finite.
func normalize(d []float64) bool {
	n := 0.0
	for _, v := range d {
		n += v * v
	}
	n = math.Sqrt(n)
	if !(n > 0) || math.IsInf(n, 0) {
		return false
	}
	for i := range d {
		d[i] /= n
	}
	return true
}

// quadForm is dᵀAd.
func quadForm(a *mat.SymDense, d []float64) float64 {
	v := mat.NewVecDense(len(d), d)
	return mat.Inner(v, a, v)
}

// improperEnd is the end of every fit whose q of a latent with an
// improper flat prior is a Gaussian (FitCA; FitSVI, under SVI, SSMF and
// SSMF-A; a sharded fit's whole result): unless the fit was canceled, it
// checks m's factors with flat priors in state q (ImproperFactors), and
// if one's posterior is improper, the run is not converged and its status
// is ImproperStatus, saying which and why, whatever it was (an improper
// posterior is what makes a fit run off to not_finite, or diverge).
func improperEnd[S any](m any, q S, run *Run) {
	dm, ok := m.(Diagnosed[S])
	if !ok || run.Status == "canceled" {
		return
	}
	if msg := ImproperFactors(dm, q); msg != "" {
		run.Converged, run.Status = false, ImproperStatus+": "+msg
	}
}

// ImproperFactors runs Improper on every factor of m with a flat prior in
// state q (each unit of a per-unit one) and returns what the first
// improper one says, or "".
func ImproperFactors[S any](m Diagnosed[S], q S) string {
	for k, f := range m.DiagnoseFactors() {
		if !f.Flat {
			continue
		}
		units := 1
		if f.PerUnit {
			units = f.Units
		}
		for u := range units {
			g := m.DiagnoseGaussian(q, k, u)
			label := func(i int) string {
				switch {
				case f.PerUnit && len(g.Mean) == 1:
					return fmt.Sprintf("%s[%d]", f.Latent, u+1)
				case f.PerUnit:
					return fmt.Sprintf("%s[%d, %d]", f.Latent, u+1, i+1)
				case len(g.Mean) == 1:
					return f.Latent
				}
				return fmt.Sprintf("%s[%d]", f.Latent, i+1)
			}
			name := f.Latent
			if f.PerUnit {
				name = fmt.Sprintf("%s[%d]", f.Latent, u+1)
			}
			if msg := Improper(g, name, label); msg != "" {
				return msg
			}
		}
	}
	return ""
}
