// Command eightschools fits Rubin's eight schools (eightschools.vi, and
// centred.vi) with the packages vigen generated from them:
//
//	mu ~ Normal(0, 5),  tau ~ HalfCauchy(5)
//	non-centred:  eta[j] ~ Normal(0, 1),      y[j] ~ Normal(mu + tau·eta[j], sigma[j])
//	centred:      theta[j] ~ Normal(mu, tau), y[j] ~ Normal(theta[j], sigma[j])
//
// Both are the same model; mean-field VI approximates them differently. The
// command prints, for mu, tau and each school's effect theta[j] (mu +
// tau·eta[j] in the non-centred model), the posterior mean, sd and 5%,
// 50%, 95% quantiles under each fit and under the exact posterior, which
// for this model is a one-dimensional integral over tau (see Exact).
//
//	go run ./examples/eightschools                 # the bundled data (Rubin's)
//	go run ./examples/eightschools -method delta   # the delta method instead of Laplace
//	go run ./examples/eightschools -data FILE      # JSON {"y": [...], "sigma": [...]}
//	go run ./examples/eightschools -json           # both results and the exact summary as JSON
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/vigen-go/vigen/examples/eightschools/centred"
	"github.com/vigen-go/vigen/examples/eightschools/eightschools"
	"github.com/vigen-go/vigen/runtime"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "eightschools:", err)
		}
		os.Exit(1)
	}
}

// Rubin's data (Rubin 1981, Table 2; Gelman et al., BDA §5.5): estimated
// coaching effects on SAT-V scores in eight schools and their standard
// errors.
var (
	RubinY     = []float64{28, 8, -3, 7, -1, 1, 18, 12}
	RubinSigma = []float64{15, 10, 16, 11, 9, 11, 10, 18}
)

// Schools returns Rubin's data as the model's Data.
func Schools() *eightschools.Data {
	return &eightschools.Data{J: len(RubinY), Y: append([]float64(nil), RubinY...), Sigma: append([]float64(nil), RubinSigma...)}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("eightschools", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		dataPath, method string
		maxIter          int
		asJSON, quiet    bool
	)
	fs.StringVar(&dataPath, "data", "", "JSON data file (keys y, sigma and optionally J, as in eightschools.vi; default: Rubin's data)")
	fs.StringVar(&method, "method", "", "laplace or delta (default: as declared, laplace)")
	fs.IntVar(&maxIter, "maxiter", 0, "maximum coordinate-ascent iterations (0: default)")
	fs.BoolVar(&asJSON, "json", false, "print both results and the exact summary as JSON")
	fs.BoolVar(&quiet, "q", false, "no progress on stderr")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	raw, err := json.Marshal(Schools())
	if err != nil {
		return err
	}
	source := "Rubin's eight schools"
	if dataPath != "" {
		if raw, err = os.ReadFile(dataPath); err != nil {
			return err
		}
		source = dataPath
	}
	nc, err := eightschools.LoadData(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("%s: %v", source, err)
	}
	c, err := centred.LoadData(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("%s: %v", source, err)
	}
	progress := func(name string) func(runtime.Progress) {
		if quiet || asJSON {
			return nil
		}
		return func(p runtime.Progress) { fmt.Fprintf(stderr, "%s: %v\n", name, p) }
	}
	ncRes, err := eightschools.Fit(context.Background(), nc, eightschools.Options{Method: method, MaxIter: maxIter, Progress: progress("non-centred")})
	if err != nil {
		return fmt.Errorf("non-centred: %v", err)
	}
	cRes, err := centred.Fit(context.Background(), c, centred.Options{Method: method, MaxIter: maxIter, Progress: progress("centred")})
	if err != nil {
		return fmt.Errorf("centred: %v", err)
	}
	exact, err := Exact(nc.Y, nc.Sigma)
	if err != nil {
		return err
	}
	if !quiet && !asJSON {
		for _, r := range []struct {
			name       string
			converged  bool
			status     string
			iterations int
		}{{"non-centred", ncRes.Converged, ncRes.Status, ncRes.Iterations}, {"centred", cRes.Converged, cRes.Status, cRes.Iterations}} {
			if !r.converged {
				fmt.Fprintf(stderr, "eightschools: warning: the %s fit did not converge: %s after %d iterations\n", r.name, r.status, r.iterations)
			}
		}
	}
	if asJSON {
		return json.NewEncoder(stdout).Encode(struct {
			NonCentred *eightschools.Result `json:"noncentred"`
			Centred    *centred.Result      `json:"centred"`
			Exact      *Posterior           `json:"exact"`
		}{ncRes, cRes, exact})
	}
	fmt.Fprintf(stdout, "eightschools: %s fits of %s (%d schools)\n", ncRes.Method, source, len(nc.Y))
	fmt.Fprintf(stdout, "non-centred (eightschools.vi): %s after %d iterations; centred (centred.vi): %s after %d iterations\n",
		ncRes.Status, ncRes.Iterations, cRes.Status, cRes.Iterations)
	printTable(stdout, Summaries(ncRes), CentredSummaries(cRes), exact)
	return nil
}

// Summary is a posterior summary of one quantity: mean, sd and the 5%, 50%
// and 95% quantiles (NaN where a fit does not give them in closed form).
type Summary struct {
	Mean float64 `json:"mean"`
	SD   float64 `json:"sd"`
	Q05  float64 `json:"q05"`
	Q50  float64 `json:"q50"`
	Q95  float64 `json:"q95"`
}

// MarshalJSON writes NaN quantiles as null.
func (s Summary) MarshalJSON() ([]byte, error) {
	f := func(x float64) *float64 {
		if math.IsNaN(x) {
			return nil
		}
		return &x
	}
	return json.Marshal(struct {
		Mean float64  `json:"mean"`
		SD   float64  `json:"sd"`
		Q05  *float64 `json:"q05"`
		Q50  *float64 `json:"q50"`
		Q95  *float64 `json:"q95"`
	}{s.Mean, s.SD, f(s.Q05), f(s.Q50), f(s.Q95)})
}

// Posterior holds the summaries of mu, tau and the school effects theta.
type Posterior struct {
	Mu    Summary   `json:"mu"`
	Tau   Summary   `json:"tau"`
	Theta []Summary `json:"theta"`
}

// z95 is the 95% quantile of the standard normal.
const z95 = 1.6448536269514722

func normalSummary(mean, sd float64) Summary {
	return Summary{mean, sd, mean - z95*sd, mean, mean + z95*sd}
}

func scaleSummary(n *runtime.Normal) Summary {
	c := n.Constrained
	return Summary{c.Mean, c.SD, c.Q05, c.Q50, c.Q95}
}

// Summaries summarizes a fit of the non-centred model. Under the
// mean-field q, theta[j] = mu + tau·eta[j] has mean E[mu] + E[tau]E[eta_j]
// and variance Var[mu] + E[tau²]E[eta_j²] − (E[tau]E[eta_j])², with E[tau]
// = exp(m + v/2) and E[tau²] = exp(2m + 2v) for log tau ~ N(m, v); its
// quantiles have no closed form and are left NaN.
func Summaries(r *eightschools.Result) Posterior {
	l := r.Latent
	p := Posterior{Mu: normalSummary(l.Mu.Mean, l.Mu.SD), Tau: scaleSummary(l.Tau)}
	m, v := l.Tau.Mean, l.Tau.SD*l.Tau.SD
	et, et2 := math.Exp(m+v/2), math.Exp(2*m+2*v)
	for j, e := range l.Eta.Mean {
		e2 := e*e + l.Eta.Cov[j][j]
		mean := l.Mu.Mean + et*e
		vr := l.Mu.SD*l.Mu.SD + et2*e2 - et*et*e*e
		p.Theta = append(p.Theta, Summary{mean, math.Sqrt(vr), math.NaN(), math.NaN(), math.NaN()})
	}
	return p
}

// CentredSummaries summarizes a fit of the centred model: q(theta_j) is
// Gaussian.
func CentredSummaries(r *centred.Result) Posterior {
	l := r.Latent
	p := Posterior{Mu: normalSummary(l.Mu.Mean, l.Mu.SD), Tau: scaleSummary(l.Tau)}
	sd := l.Theta.SD()
	for j, m := range l.Theta.Mean {
		p.Theta = append(p.Theta, normalSummary(m, sd[j]))
	}
	return p
}

func printTable(w io.Writer, nc, c Posterior, exact *Posterior) {
	fmt.Fprintf(w, "%-9s %-12s %8s %8s %8s %8s %8s\n", "", "", "mean", "sd", "5%", "50%", "95%")
	num := func(x float64) string {
		if math.IsNaN(x) {
			return "       —"
		}
		return fmt.Sprintf("%8.3f", x)
	}
	row := func(name, fit string, s Summary) {
		fmt.Fprintf(w, "%-9s %-12s %s %s %s %s %s\n", name, fit, num(s.Mean), num(s.SD), num(s.Q05), num(s.Q50), num(s.Q95))
	}
	block := func(name string, a, b, e Summary) {
		row(name, "non-centred", a)
		row("", "centred", b)
		row("", "exact", e)
	}
	block("mu", nc.Mu, c.Mu, exact.Mu)
	block("tau", nc.Tau, c.Tau, exact.Tau)
	for j := range nc.Theta {
		block(fmt.Sprintf("theta[%d]", j+1), nc.Theta[j], c.Theta[j], exact.Theta[j])
	}
	fmt.Fprintln(w, "exact: the posterior by quadrature over log tau, with mu and theta integrated out in closed form")
}
