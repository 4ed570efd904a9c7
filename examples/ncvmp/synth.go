package main

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"

	"github.com/vigen-go/vigen/runtime"
)

// The experiment of Knowles & Minka (2011) §6.2 (Figure 1(b)): ten
// synthetic logistic regressions with N = 30 data points and P = 8
// covariates, θ drawn from the prior N(0, I); each approximate posterior
// q(θ) is scored by the log density of the true θ under it, a measure that
// penalizes poorly estimated variances.

const (
	synthSets = 10 // data sets
	synthN    = 30 // data points per set
	synthP    = 8  // covariates
)

// synthMethods names the approximations of the §6.2 table, in column
// order: NCVMP (runtime.NCVMPVector) with quadrature, the quadratic
// (Jaakkola–Jordan) bound and the tilted bound, each with a full or a
// diagonal (fully factorized) covariance, then Laplace and delta-method VI
// (fitGaussianVI).
var synthMethods = []string{"quad full", "quad diag", "quadratic full", "quadratic diag", "tilted full", "tilted diag", "Laplace", "delta"}

// synthData draws one data set: θ ~ N(0, I_P), x_np ~ N(0, 1),
// y_n ~ Bernoulli(σ(x_nᵀθ)), from a PCG stream seeded by seed.
func synthData(seed uint64, n, p int) (f runtime.LogisticProjections, theta []float64) {
	r := rand.New(rand.NewPCG(seed, 0x73796e7468))
	theta = make([]float64, p)
	for i := range theta {
		theta[i] = r.NormFloat64()
	}
	f = runtime.LogisticProjections{X: make([]float64, n*p), Y: make([]float64, n), P: p}
	for k := 0; k < n; k++ {
		var u float64
		for i := 0; i < p; i++ {
			x := r.NormFloat64()
			f.X[k*p+i] = x
			u += x * theta[i]
		}
		if r.Float64() < runtime.Logistic(u) {
			f.Y[k] = 1
		}
	}
	return f, theta
}

// gaussLogDensity is log N(x; mu, sigma) (sigma p×p, row-major); NaN if
// sigma is not positive definite.
func gaussLogDensity(x, mu, sigma []float64) float64 {
	p := len(x)
	prec := make([]float64, p*p)
	ld, ok := runtime.LogDetSPD(sigma, p)
	if !ok || !runtime.InvSPD(prec, sigma, p) {
		return math.NaN()
	}
	var quad float64
	for i := 0; i < p; i++ {
		for j := 0; j < p; j++ {
			quad += (x[i] - mu[i]) * prec[i*p+j] * (x[j] - mu[j])
		}
	}
	return -0.5*quad - 0.5*ld - 0.5*float64(p)*math.Log(2*math.Pi)
}

// synthRow is one data set of the §6.2 table: the log density of the true
// θ under each method's q, in the order of synthMethods, and whether each
// run converged.
type synthRow struct {
	Seed      uint64
	LogDens   [8]float64
	Converged [8]bool
}

// synthFit returns each method's log density of the truth for one data
// set.
func synthFit(seed uint64) (synthRow, error) {
	f, theta := synthData(seed, synthN, synthP)
	p := synthP
	row := synthRow{Seed: seed}
	eye := make([]float64, p*p)
	runtime.Identity(eye, p)
	i := 0
	for _, e := range []runtime.NCVMPExpectation{runtime.NCVMPQuadrature, runtime.NCVMPQuadraticBound, runtime.NCVMPTiltedBound} {
		for _, diag := range []bool{false, true} {
			res, err := runtime.NCVMPVector{Factors: f, Mu0: make([]float64, p), Sigma0: eye, Diagonal: diag, Expectation: e}.Run()
			if err != nil {
				return row, fmt.Errorf("seed %d, %s: %w", seed, synthMethods[i], err)
			}
			row.LogDens[i] = gaussLogDensity(theta, res.Mu, res.Sigma)
			row.Converged[i] = res.Status == runtime.StatusConverged
			i++
		}
	}
	lj := logisticJoint{X: f.X, Y: f.Y, P: p, M0: make([]float64, p), V0: 1}
	for _, delta := range []bool{false, true} {
		q, err := fitGaussianVI(lj.F, lj.DeltaF, p, delta)
		if err != nil {
			return row, fmt.Errorf("seed %d, %s: %w", seed, synthMethods[i], err)
		}
		row.LogDens[i] = gaussLogDensity(theta, q.Mean, q.Cov)
		row.Converged[i] = q.Converged
		i++
	}
	return row, nil
}

// synthTable runs the §6.2 experiment on the data sets seeded seed,
// seed+1, …, seed+9 and returns the rows and the per-method means.
func synthTable(seed uint64) (rows []synthRow, mean [8]float64, err error) {
	for s := 0; s < synthSets; s++ {
		r, err := synthFit(seed + uint64(s))
		if err != nil {
			return nil, mean, err
		}
		for i, v := range r.LogDens {
			mean[i] += v / synthSets
		}
		rows = append(rows, r)
	}
	return rows, mean, nil
}

// runSynth prints the §6.2 table: per data set and on average, the log
// density of the true coefficients under each approximate posterior
// (higher is better); a run that did not converge is marked with '*'.
func runSynth(w io.Writer, seed uint64) error {
	rows, mean, err := synthTable(seed)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "§6.2 synthetic logistic regression (N = %d, P = %d, %d sets, seeds %d–%d): log density of the true θ under q\n",
		synthN, synthP, synthSets, seed, seed+synthSets-1)
	fmt.Fprintf(w, "%5s", "seed")
	for _, m := range synthMethods {
		fmt.Fprintf(w, " %15s", m)
	}
	fmt.Fprintln(w)
	for _, r := range rows {
		fmt.Fprintf(w, "%5d", r.Seed)
		for i, v := range r.LogDens {
			mark := " "
			if !r.Converged[i] {
				mark = "*"
			}
			fmt.Fprintf(w, " %14.3f%s", v, mark)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "%5s", "mean")
	for _, v := range mean {
		fmt.Fprintf(w, " %14.3f ", v)
	}
	fmt.Fprintln(w)
	return nil
}
