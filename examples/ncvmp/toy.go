package main

import (
	"fmt"
	"io"
	"math"

	"gonum.org/v1/gonum/integrate/quad"

	"github.com/vigen-go/vigen/runtime"
)

// The toy of Knowles & Minka (2011) §6.1 (Figure 1(a)): one latent x with
// a Gaussian prior π(x) = N(x; m0, v0) and one logistic factor σ(x); the
// posterior is σ(x)N(x; m0, v0)/Z. Each method's posterior mean and
// variance is compared with the true ones, computed by quadrature.

// toyMethods names the approximations of the §6.1 table, in column order.
var toyMethods = []string{"NCVMP quad", "NCVMP tilted", "quadratic", "Laplace", "delta"}

// toyRow is one prior of the §6.1 table: the true posterior mean and
// variance and each method's errors (approximation − truth), in the order
// of toyMethods.
type toyRow struct {
	M0, V0      float64
	Mean, Var   float64
	DMean, DVar [5]float64
	// Converged says whether each method's iteration converged.
	Converged [5]bool
}

// toyPriors are the priors of Figure 1(a): the prior mean from −20 to 20
// at v0 = 10 (left), and the prior variance from 0.5 to 20 at m0 = 0
// (right).
func toyPriors() [][2]float64 {
	var ps [][2]float64
	for m0 := -20.0; m0 <= 20; m0 += 5 {
		ps = append(ps, [2]float64{m0, 10})
	}
	for _, v0 := range []float64{0.5, 1, 2, 5, 10, 15, 20} {
		ps = append(ps, [2]float64{0, v0})
	}
	return ps
}

// toyExact returns the mean and variance of σ(x)N(x; m0, v0)/Z by
// 4000-point Gauss–Legendre quadrature over m0 ± 20 sd, a rule
// independent of the Gauss–Hermite rule the NCVMP runs use. Since σ ≤ 1
// the neglected mass is below the prior's beyond 20 sd, about e^{−200},
// negligible against Z (≥ e^{−16} for the priors of toyPriors).
func toyExact(m0, v0 float64) (mean, variance float64) {
	sd := math.Sqrt(v0)
	lo, hi := m0-20*sd, m0+20*sd
	integral := func(h func(x float64) float64) float64 {
		return quad.Fixed(func(x float64) float64 {
			d := (x - m0) / sd
			return h(x) * math.Exp(runtime.LogLogistic(x)-d*d/2)
		}, lo, hi, 4000, quad.Legendre{}, 0)
	}
	z := integral(func(float64) float64 { return 1 })
	mean = integral(func(x float64) float64 { return x }) / z
	variance = integral(func(x float64) float64 { d := x - mean; return d * d }) / z
	return mean, variance
}

// toyNCVMP runs NCVMP (runtime.NCVMP1D, Algorithm 1) for the toy with the
// logistic factor's expectation S(m, v) = E[log σ(x)] taken by quadrature
// (§5.1) or replaced by a bound (Eq. 8, Eq. 9).
func toyNCVMP(m0, v0 float64, factor runtime.Factor1) (mean, variance float64, converged bool) {
	r := runtime.NCVMP1D{M0: m0, V0: v0, Factors: []runtime.Factor1{factor}}.Run()
	return r.M, r.V, r.Converged
}

// toyFactors returns the logistic factor σ(x) (label 1) for NCVMP1D by
// Gauss–Hermite quadrature, the tilted bound and the quadratic
// (Jaakkola–Jordan) bound.
func toyFactors() (quadrature, tilted, quadratic runtime.Factor1) {
	rule := runtime.Hermite(0)
	quadrature = func(m, v float64) (float64, float64, float64) { return rule.ExpectLogistic(1, m, v) }
	tilted = func(m, v float64) (float64, float64, float64) {
		S, dm, dv, _ := runtime.LogisticTiltedBound(1, m, v)
		return S, dm, dv
	}
	quadratic = func(m, v float64) (float64, float64, float64) {
		S, dm, dv, _ := runtime.LogisticQuadraticBound(1, m, v)
		return S, dm, dv
	}
	return
}

// toyTable computes the §6.1 table over toyPriors.
func toyTable() ([]toyRow, error) {
	quadrature, tilted, quadratic := toyFactors()
	var rows []toyRow
	for _, pr := range toyPriors() {
		m0, v0 := pr[0], pr[1]
		r := toyRow{M0: m0, V0: v0}
		r.Mean, r.Var = toyExact(m0, v0)
		var mean, variance [5]float64
		for i, f := range []runtime.Factor1{quadrature, tilted, quadratic} {
			mean[i], variance[i], r.Converged[i] = toyNCVMP(m0, v0, f)
		}
		lj := logisticJoint{X: []float64{1}, Y: []float64{1}, P: 1, M0: []float64{m0}, V0: v0}
		for i, delta := range []bool{false, true} {
			q, err := fitGaussianVI(lj.F, lj.DeltaF, 1, delta)
			if err != nil {
				return nil, fmt.Errorf("toy prior N(%g, %g), %s: %w", m0, v0, toyMethods[3+i], err)
			}
			mean[3+i], variance[3+i], r.Converged[3+i] = q.Mean[0], q.Cov[0], q.Converged
		}
		for i := range mean {
			r.DMean[i], r.DVar[i] = mean[i]-r.Mean, variance[i]-r.Var
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// runToy prints the §6.1 table: for each prior, the true posterior mean
// and variance and each method's error of the mean, then of the variance.
// A method that did not converge is marked with '*'.
func runToy(w io.Writer) error {
	rows, err := toyTable()
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "§6.1 toy σ(x)·N(x; m0, v0): errors (approximation − truth) of the posterior mean and variance")
	for part, name := range []string{"mean", "variance"} {
		fmt.Fprintf(w, "\nerror of the posterior %s\n", name)
		fmt.Fprintf(w, "%6s %5s %9s %9s", "m0", "v0", "mean", "variance")
		for _, m := range toyMethods {
			fmt.Fprintf(w, " %13s", m)
		}
		fmt.Fprintln(w)
		for _, r := range rows {
			fmt.Fprintf(w, "%6g %5g %9.4f %9.4f", r.M0, r.V0, r.Mean, r.Var)
			for i := range toyMethods {
				e := r.DMean[i]
				if part == 1 {
					e = r.DVar[i]
				}
				mark := " "
				if !r.Converged[i] {
					mark = "*"
				}
				fmt.Fprintf(w, " %12.3e%s", e, mark)
			}
			fmt.Fprintln(w)
		}
	}
	return nil
}

// logisticJoint is the log joint of Bayesian logistic regression with an
// isotropic Gaussian prior,
//
//	f(θ) = Σ_n (y_n u_n − log(1 + e^{u_n})) + log N(θ; M0, V0·I),   u_n = x_nᵀθ,
//
// with the kernels runtime.GaussianFactor needs for Laplace and
// delta-method VI (Wang & Blei 2013, Eq. 14 and Eq. 17). With
// a(u) = σ(u)(1 − σ(u)), ∇²f = −Σ_n a(u_n) x_n x_nᵀ − I/V0, so the delta
// objective is f(μ) − ½Σ_n a(u_n) c_n − Tr Σ/(2V0) with c_n = x_nᵀΣx_n;
// its gradient adds −½Σ_n a'(u_n) c_n x_n and its Hessian
// −½Σ_n a”(u_n) c_n x_n x_nᵀ, where a' = a(1 − 2σ) and
// a” = a(1 − 6σ + 6σ²). The §6.1 toy is P = 1, x = 1, y = 1.
type logisticJoint struct {
	X  []float64 // N×P design, row-major
	Y  []float64 // labels, 0 or 1
	P  int
	M0 []float64 // prior mean (P)
	V0 float64   // prior variance
}

// F evaluates f(θ), its gradient and its Hessian.
func (l logisticJoint) F(theta, grad, hess []float64) float64 {
	return l.eval(theta, nil, grad, hess)
}

// DeltaF evaluates f(μ) + ½Tr{∇²f(μ)Σ} (Σ = cov) with its gradient and
// Hessian in μ.
func (l logisticJoint) DeltaF(mu, cov, grad, hess []float64) float64 {
	return l.eval(mu, cov, grad, hess)
}

func (l logisticJoint) eval(theta, cov, grad, hess []float64) float64 {
	p := l.P
	clear(grad)
	clear(hess)
	f := -0.5 * float64(p) * math.Log(2*math.Pi*l.V0)
	for i, t := range theta {
		d := t - l.M0[i]
		f -= d * d / (2 * l.V0)
		grad[i] = -d / l.V0
		hess[i*p+i] = -1 / l.V0
		if cov != nil {
			f -= cov[i*p+i] / (2 * l.V0)
		}
	}
	for n, y := range l.Y {
		x := l.X[n*p : (n+1)*p]
		var u float64
		for i, xi := range x {
			u += xi * theta[i]
		}
		s := runtime.Logistic(u)
		a := s * (1 - s)
		f += y*u - runtime.Softplus(u)
		g1, h1 := y-s, -a
		if cov != nil {
			var c float64
			for i, xi := range x {
				var r float64
				for j, xj := range x {
					r += cov[i*p+j] * xj
				}
				c += xi * r
			}
			f -= 0.5 * a * c
			g1 -= 0.5 * a * (1 - 2*s) * c
			h1 -= 0.5 * a * (1 - 6*s + 6*s*s) * c
		}
		for i, xi := range x {
			grad[i] += g1 * xi
			row := hess[i*p : (i+1)*p]
			for j, xj := range x {
				row[j] += h1 * xi * xj
			}
		}
	}
	return f
}

// gaussianVI is a Gaussian q(θ) = N(Mean, Cov) fitted by fitGaussianVI.
type gaussianVI struct {
	Mean, Cov []float64
	Iter      int
	Converged bool
}

// fitGaussianVI fits q(θ) = N(μ, Σ) (θ ∈ R^p) to exp f by vigen's
// Laplace/delta update, runtime.GaussianWork.Step, as generated code runs
// it for a global latent: first the Laplace update from μ = 0 (maximize f,
// Σ = −∇²f⁻¹, Wang & Blei's Eq. 14), then, for the delta method (Eq. 17),
// further updates, each maximizing f(μ) + ½Tr{∇²f(μ)Σ} over μ with Σ
// fixed and then setting Σ = −∇²f(μ)⁻¹, until the relative change of μ is
// below runtime.DefaultMeanTol (at most 500 updates). Converged is false
// when an update reported trouble (a maximization that did not converge,
// a regularized covariance) or the delta iteration did not settle.
func fitGaussianVI(F func(x, grad, hess []float64) float64, DeltaF func(x, cov, grad, hess []float64) float64, p int, delta bool) (gaussianVI, error) {
	res := gaussianVI{Mean: make([]float64, p), Cov: make([]float64, p*p)}
	q := runtime.GaussianFactor{Mean: res.Mean, Cov: res.Cov, F: F, DeltaF: DeltaF}
	var w runtime.GaussianWork
	var s runtime.NewtonSettings
	tr := runtime.Trouble{}
	w.Step(tr, "theta", q, s)
	res.Iter = 1
	res.Converged = len(tr) == 0
	if delta {
		q.Delta = true
		res.Converged = false
		const maxIter = 500
		for it := 1; it <= maxIter; it++ {
			tr = runtime.Trouble{}
			change := w.Step(tr, "theta", q, s)
			res.Iter = 1 + it
			if change < runtime.DefaultMeanTol {
				res.Converged = len(tr) == 0
				break
			}
		}
	}
	if runtime.FirstNonFinite(res.Mean) >= 0 || runtime.FirstNonFinite(res.Cov) >= 0 {
		return res, fmt.Errorf("the fit is not finite (%v)", tr)
	}
	return res, nil
}
