package main

// The LDA experiment of Mandt, McInerney, Abrol, Ranganath & Blei (2016),
// "Variational Tempering", Fig. 2: plain SVI, annealed SVI (AVI) with
// linear schedules, and variational tempering (VT) on AP and citeulike-t,
// scored by held-out per-word log likelihood. See TEMPERING.md.
//
//	go run ./examples/lda tempering -data ap -K 50 -passes 20 -seeds 1,2
//
// VT needs the log tempered partition function log C(T) on its grid;
// ldaLogC estimates it by Monte Carlo.

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/vigen-go/vigen/examples/lda/lda"
	"github.com/vigen-go/vigen/runtime"
)

// ldaLogC estimates log C(T_m) for each temperature of grid, the log
// partition function of LDA tempered as vigen tempers it (Eq. 2 with
// every statement inside the document loop divided by T, θ_d's prior
// included; the topics' prior untouched), for a corpus whose documents
// have docLens tokens, K topics over V terms and symmetric concentrations
// alpha (θ) and eta (β). With a = 1/T and z summed out token by token,
//
//	C(T) = E_β[ Π_d E_{θ~Dir(α)}[(Σ_k θ_k^a S_k(β))^{N_d}] ],
//	S_k(β) = Σ_v β_kv^a,  β_k ~ Dirichlet(η),
//
// with θ_d's prior untempered, as vigen tempers (derive.Untempered: the
// tokens' z and w are divided by T, the prior of the continuous local
// θ_d is not; Mandt et al., App. B.2).
//
// The outer expectation takes nBeta draws of β (sampled in log space:
// log Gamma(η) = log Gamma(η + 1) + log(U)/η, since η ≪ 1 underflows a
// plain Gamma draw); for each draw and temperature the inner expectation
// takes nTheta draws of θ ~ Dir(α), also in log space, shared by all
// documents (documents of equal length share the estimate), averaged with
// log-sum-exp. The β draws are then averaged with log-mean-exp. se[m] is
// the standard error from 10 independent batches of β draws (nBeta/10 each,
// sample i in batch i mod 10): the standard deviation of the batch
// estimates over √10. It measures the Monte Carlo spread, not the
// downward bias of a log of a Monte Carlo mean (see TEMPERING.md).
//
// At T = 1 the joint is normalized and C(1) = 1 exactly; the Monte Carlo
// estimate would be 0 only up to rounding (S_k = Σ_v β_kv rounds, and
// Σ_k θ_k S_k is 1 only to within ~1e-16 per token), so T = 1 returns 0
// with standard error 0 without sampling.
//
// It is deterministic given seed: β draw s uses its own stream (seed, s),
// so the result does not depend on the goroutines (two) that share the
// draws.
func ldaLogC(grid []float64, docLens []int, K, V int, alpha, eta float64, nBeta, nTheta int, seed uint64) (logC, se []float64) {
	// count[N] = documents of N tokens
	count := map[int]int{}
	for _, n := range docLens {
		if n > 0 {
			count[n]++
		}
	}
	lens := make([]int, 0, len(count))
	for n := range count {
		lens = append(lens, n)
	}
	slices.Sort(lens)
	M := len(grid)
	g := make([][]float64, nBeta) // g[s][m]: log of the integrand at β draw s
	var wg sync.WaitGroup
	const workers = 2
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			logBeta := make([]float64, K*V)
			logS := make([]float64, K)
			logTheta := make([]float64, K)
			L := make([]float64, nTheta)
			x := make([]float64, nTheta)
			for s := w; s < nBeta; s += workers {
				rng := rand.New(rand.NewPCG(seed, uint64(s)+0x1d5a))
				for k := range K {
					logDirichlet(rng, eta, logBeta[k*V:(k+1)*V])
				}
				g[s] = make([]float64, M)
				for m, T := range grid {
					a := 1 / T
					if T == 1 {
						continue // C(1) = 1
					}
					for k := range K {
						logS[k] = logSumExpScaled(logBeta[k*V:(k+1)*V], a)
					}
					for j := range nTheta {
						for k := range logTheta {
							logTheta[k] = logGamma(rng, alpha)
						}
						norm := logSumExpScaled(logTheta, 1)
						for k := range logTheta {
							logTheta[k] = a*(logTheta[k]-norm) + logS[k]
						}
						L[j] = logSumExpScaled(logTheta, 1)
					}
					// per document: log E_θ[X^N]
					tot := 0.0
					for _, n := range lens {
						for j, l := range L {
							x[j] = float64(n) * l
						}
						tot += float64(count[n]) * (logSumExpScaled(x, 1) - math.Log(float64(nTheta)))
					}
					g[s][m] = tot
				}
			}
		}()
	}
	wg.Wait()
	logC, se = make([]float64, M), make([]float64, M)
	nb := min(10, nBeta)
	col := make([]float64, nBeta)
	for m, T := range grid {
		if T == 1 {
			continue
		}
		for s := range nBeta {
			col[s] = g[s][m]
		}
		logC[m] = logMeanExp(col)
		if nb < 2 {
			se[m] = math.NaN()
			continue
		}
		est := make([]float64, nb)
		for b := range nb {
			var part []float64
			for s := b; s < nBeta; s += nb {
				part = append(part, col[s])
			}
			est[b] = logMeanExp(part)
		}
		mean, ss := 0.0, 0.0
		for _, e := range est {
			mean += e
		}
		mean /= float64(nb)
		for _, e := range est {
			ss += (e - mean) * (e - mean)
		}
		se[m] = math.Sqrt(ss/float64(nb-1)) / math.Sqrt(float64(nb))
	}
	return logC, se
}

// logBSym is log B(x·1_K) = K log Γ(x) − log Γ(Kx), the log normalizer of
// a symmetric Dirichlet.
func logBSym(x float64, k int) float64 {
	a, _ := math.Lgamma(x)
	b, _ := math.Lgamma(float64(k) * x)
	return float64(k)*a - b
}

// logSumExpScaled returns log Σ_i exp(a·x_i).
func logSumExpScaled(x []float64, a float64) float64 {
	mx := math.Inf(-1)
	for _, v := range x {
		mx = math.Max(mx, a*v)
	}
	if math.IsInf(mx, -1) {
		return mx
	}
	s := 0.0
	for _, v := range x {
		s += math.Exp(a*v - mx)
	}
	return mx + math.Log(s)
}

// logMeanExp returns log((1/n) Σ_i exp(x_i)).
func logMeanExp(x []float64) float64 {
	return logSumExpScaled(x, 1) - math.Log(float64(len(x)))
}

// logDirichlet fills out with log β, β ~ Dirichlet(conc, …, conc).
func logDirichlet(rng *rand.Rand, conc float64, out []float64) {
	for i := range out {
		out[i] = logGamma(rng, conc)
	}
	n := logSumExpScaled(out, 1)
	for i := range out {
		out[i] -= n
	}
}

// logGamma returns the log of a Gamma(shape, 1) draw: for shape < 1,
// log Gamma(shape + 1) + log(U)/shape, which stays finite however small
// the draw; for shape ≥ 1, Marsaglia and Tsang's method.
func logGamma(rng *rand.Rand, shape float64) float64 {
	if shape < 1 {
		u := 1 - rng.Float64() // in (0, 1]
		return logGamma(rng, shape+1) + math.Log(u)/shape
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := 1 - rng.Float64()
		if math.Log(u) < 0.5*x*x+d-d*v+d*math.Log(v) {
			return math.Log(d) + math.Log(v)
		}
	}
}

// vtGrid returns m temperatures on an exponential scale from 1 to tmax:
// T_i = tmax^(i/(m−1)), with T_0 = 1 exactly.
func vtGrid(m int, tmax float64) []float64 {
	g := make([]float64, m)
	for i := range g {
		g[i] = math.Pow(tmax, float64(i)/float64(m-1))
	}
	g[0] = 1
	return g
}

// citeulikeSplit splits the documents of citeulike-t's mult.dat (in file
// order) as TEMPERING.md documents: empty documents are dropped first;
// of the rest, numbered i = 0, 1, … in order, i mod 5 = 4 goes to test and
// the others to training; each test document is halved by AP's rule 2
// (expand its pairs in listed order into tokens, even tokens observed, odd
// held out), and a test document with fewer than 2 tokens is dropped.
func citeulikeSplit(docs [][][2]int) (train, obs, held [][][2]int) {
	i := 0
	for _, doc := range docs {
		if len(doc) == 0 {
			continue
		}
		if i%5 != 4 {
			train = append(train, doc)
		} else if o, h := splitHalf(doc); len(h) > 0 {
			obs, held = append(obs, o), append(held, h)
		}
		i++
	}
	return train, obs, held
}

// splitHalf splits doc by AP's rule 2: tokens (pairs expanded in their
// listed order) 0, 2, 4, … observed, 1, 3, … held out; each half
// re-aggregated with ids ascending.
func splitHalf(doc [][2]int) (obs, held [][2]int) {
	co, ch := map[int]int{}, map[int]int{}
	j := 0
	for _, p := range doc {
		for range p[1] {
			if j%2 == 0 {
				co[p[0]]++
			} else {
				ch[p[0]]++
			}
			j++
		}
	}
	agg := func(c map[int]int) [][2]int {
		var out [][2]int
		for id, n := range c {
			out = append(out, [2]int{id, n})
		}
		slices.SortFunc(out, func(a, b [2]int) int { return a[0] - b[0] })
		return out
	}
	return agg(co), agg(ch)
}

// docLengths returns the tokens of each document.
func docLengths(docs [][][2]int) []int {
	n := make([]int, len(docs))
	for d, doc := range docs {
		for _, p := range doc {
			n[d] += p[1]
		}
	}
	return n
}

// logCFile is what -logc caches: the grid, log C(T) and its errors, and
// what they were computed for.
type logCFile struct {
	Data    string    `json:"data"`
	Key     string    `json:"key"`
	Grid    []float64 `json:"grid"`
	LogC    []float64 `json:"log_c"`
	LogCErr []float64 `json:"log_c_se"`
	Seconds float64   `json:"seconds"`
}

// tempRow is one fit of the comparison.
type tempRow struct {
	Data       string    `json:"data"`
	Method     string    `json:"method"`
	Seed       uint64    `json:"seed"`
	Heldout    float64   `json:"heldout_per_word"`
	ELBO       float64   `json:"elbo"`
	FinalT     float64   `json:"final_temperature"`
	LJ         float64   `json:"log_joint_per_token"`
	CPU        float64   `json:"cpu_seconds"`
	Status     string    `json:"status"`
	Temp       []float64 `json:"temperature,omitempty"`
	ELBOTrace  []float64 `json:"elbo_trace"`
	TELBOTrace []float64 `json:"tempered_elbo_trace,omitempty"`
}

// tempering runs `lda tempering`: the comparison of SVI, AVI and VT.
func tempering(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("lda tempering", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataName := fs.String("data", "ap", "ap or citeulike (read from -dir)")
	dir := fs.String("dir", "../shared/data", "folder holding ap/ and citeulike-t/")
	k := fs.Int("K", 50, "topics; α = η = 1/K")
	passes := fs.Int("passes", 20, "SVI passes over the training documents")
	batch := fs.Int("batch", 100, "documents per minibatch")
	tau0 := fs.Float64("tau0", 1024, "τ0 of ρ_t = (τ0 + t)^-κ")
	kappa := fs.Float64("kappa", 0.7, "κ of the step sizes")
	seeds := fs.String("seeds", "1", "seeds (random start and minibatch order), comma separated")
	methods := fs.String("methods", "svi,avi1,avi3,avi10,vt", "methods in the order run per seed: svi, aviL (linear from the mean of the VT grid to 1 over L passes), vt, vt@svi (VT started from this seed's svi fit), lvt (one temperature per document on the grid of -lvtgrid); vt-cold, lvt-cold (q(T) starting at T = 1, not uniform); none: log C(T) only")
	gridM := fs.Int("grid", 30, "VT: temperatures on an exponential scale in [1, -tmax]")
	lvtM := fs.Int("lvtgrid", 10, "LVT: temperatures on an exponential scale in [1, -tmax]")
	tmax := fs.Float64("tmax", 10, "VT: largest temperature")
	nBeta := fs.Int("nbeta", 100, "log C(T): draws of β")
	nTheta := fs.Int("ntheta", 1000, "log C(T): draws of θ per β draw and temperature")
	logcPath := fs.String("logc", "", "cache of log C(T) (JSON): read when it matches, written otherwise")
	out := fs.String("out", "", "append one JSON line per fit here")
	workers := fs.Int("workers", 2, "goroutines of the fits")
	if err := fs.Parse(args); err != nil {
		return err
	}
	train, obs, held, err := loadCorpus(*dataName, *dir)
	if err != nil {
		return err
	}
	conc := 1 / float64(*k)
	data := &lda.Data{K: *k, V: runtime.MaxTerm(train), W: train, Alpha: &conc, Eta: &conc}
	model, err := lda.NewModel(data)
	if err != nil {
		return err
	}
	lens := docLengths(train)
	tokens := 0
	for _, n := range lens {
		tokens += n
	}
	fmt.Fprintf(stdout, "# %s: %d training documents (%d tokens, V = %d), %d test documents; K = %d, α = η = %g, B = %d, τ0 = %g, κ = %g, %d passes\n",
		*dataName, len(train), tokens, data.V, len(obs), *k, conc, *batch, *tau0, *kappa, *passes)

	grid := vtGrid(*gridM, *tmax)
	key := fmt.Sprintf("%s K=%d V=%d D=%d N=%d alpha=eta=%g grid=%d..%g nbeta=%d ntheta=%d seed=1",
		*dataName, *k, data.V, len(train), tokens, conc, *gridM, *tmax, *nBeta, *nTheta)
	var lc logCFile
	if *logcPath != "" {
		if b, err := os.ReadFile(*logcPath); err == nil {
			if json.Unmarshal(b, &lc) != nil || lc.Key != key {
				lc = logCFile{}
			}
		}
	}
	if lc.Key == "" {
		t0 := cpuSeconds()
		logC, se := ldaLogC(grid, lens, *k, data.V, conc, conc, *nBeta, *nTheta, 1)
		lc = logCFile{Data: *dataName, Key: key, Grid: grid, LogC: logC, LogCErr: se, Seconds: cpuSeconds() - t0}
		if *logcPath != "" {
			b, _ := json.MarshalIndent(lc, "", " ")
			if err := os.WriteFile(*logcPath, b, 0o644); err != nil {
				return err
			}
		}
	}
	fmt.Fprintf(stdout, "# log C(T) (%s; %.1f CPU s):\n", key, lc.Seconds)
	for m, T := range lc.Grid {
		fmt.Fprintf(stdout, "#   T = %7.4f  log C = %14.2f ± %.2f  (per token %.4f)\n", T, lc.LogC[m], lc.LogCErr[m], lc.LogC[m]/float64(tokens))
	}
	meanT := 0.0
	for _, T := range grid {
		meanT += T
	}
	meanT /= float64(len(grid))

	var seedList []uint64
	for _, f := range strings.Split(*seeds, ",") {
		s, err := strconv.ParseUint(strings.TrimSpace(f), 10, 64)
		if err != nil {
			return fmt.Errorf("-seeds %q: %v", *seeds, err)
		}
		seedList = append(seedList, s)
	}
	var outFile *os.File
	if *out != "" {
		if outFile, err = os.OpenFile(*out, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err != nil {
			return err
		}
		defer outFile.Close()
	}
	fmt.Fprintf(stdout, "%-10s %-8s %4s %10s %14s %8s %8s %8s\n", "data", "method", "seed", "heldout", "ELBO(T=1)", "final T", "CPU s", "lj/N")
	for _, seed := range seedList {
		var sviRes *lda.Result // this seed's plain SVI fit, the start of vt@svi
		for _, meth := range strings.Split(*methods, ",") {
			if meth == "none" {
				continue // log C(T) only
			}
			opts := lda.Options{Seed: seed, Workers: *workers, Algorithm: "svi",
				SVI: runtime.SVISettings{BatchSize: *batch, Tau0: *tau0, Kappa: *kappa, Passes: *passes}, Keep: []string{"z"}}
			switch {
			case meth == "svi":
			case meth == "vt":
				opts.Temper = runtime.TemperSettings{Mode: "global", Grid: lc.Grid, LogC: lc.LogC}
			case meth == "lvt" || meth == "lvt-cold":
				// one temperature per document on its own grid, each with
				// its own normalizer (the generated UnitLogNormalizers),
				// uniform prior; q(T_d) starts uniform or at T = 1
				opts.Temper = runtime.TemperSettings{Mode: "local", Grid: vtGrid(*lvtM, *tmax), Cold: meth == "lvt-cold"}
			case meth == "vt-cold":
				opts.Temper = runtime.TemperSettings{Mode: "global", Grid: lc.Grid, LogC: lc.LogC, Cold: true}
			case meth == "vt@svi":
				// VT started from the end of this seed's SVI run: does a
				// fit already at T = 1 stay cold?
				if sviRes == nil {
					return errors.New("vt@svi needs svi before it in -methods")
				}
				opts.Temper = runtime.TemperSettings{Mode: "global", Grid: lc.Grid, LogC: lc.LogC}
				opts.Start = sviRes
			case strings.HasPrefix(meth, "avi"):
				l, err := strconv.ParseFloat(meth[3:], 64)
				if err != nil || !(l > 0) {
					return fmt.Errorf("method %q: want aviL with L passes", meth)
				}
				opts.Temper = runtime.TemperSettings{Anneal: runtime.Anneal{T0: meanT, Length: l}}
			default:
				return fmt.Errorf("unknown method %q", meth)
			}
			t0 := cpuSeconds()
			res, err := model.Fit(context.Background(), opts)
			if err != nil {
				return fmt.Errorf("%s seed %d: %v", meth, seed, err)
			}
			cpu := cpuSeconds() - t0
			if meth == "svi" {
				sviRes = res
			}
			if len(res.ELBO) == 0 {
				return fmt.Errorf("%s seed %d: no pass completed: %s", meth, seed, res.Status)
			}
			s, err := model.Heldout(context.Background(), res, obs, held, lda.Options{Workers: *workers})
			if err != nil {
				return err
			}
			row := tempRow{Data: *dataName, Method: meth, Seed: seed, Heldout: s.PerWord, ELBO: res.ELBO[len(res.ELBO)-1],
				FinalT: 1, CPU: cpu, Status: res.Status, Temp: res.Temperature, ELBOTrace: res.ELBO, TELBOTrace: res.TemperedELBO}
			if n := len(res.Temperature); n > 0 {
				row.FinalT = res.Temperature[n-1]
			}
			row.LJ = logJointPerToken(data, res)
			fmt.Fprintf(stdout, "%-10s %-8s %4d %10.4f %14.1f %8.3f %8.1f %8.3f\n", row.Data, meth, seed, row.Heldout, row.ELBO, row.FinalT, cpu, row.LJ)
			if ut := res.UnitTemperature; len(ut) > 0 {
				s := slices.Clone(ut)
				slices.Sort(s)
				q := func(p float64) float64 { return s[int(p*float64(len(s)-1))] }
				fmt.Fprintf(stdout, "#   %s E_q[T_d] over documents: min %.3f, 10%% %.3f, median %.3f, 90%% %.3f, max %.3f\n", meth, s[0], q(0.1), q(0.5), q(0.9), s[len(s)-1])
			}
			if strings.HasPrefix(meth, "vt") {
				fmt.Fprintf(stdout, "#   %s E_q[T] per pass:", meth)
				for _, t := range res.Temperature {
					fmt.Fprintf(stdout, " %.3f", t)
				}
				fmt.Fprintln(stdout)
			}
			if outFile != nil {
				b, _ := json.Marshal(row)
				if _, err := outFile.Write(append(b, '\n')); err != nil {
					return err
				}
			}
		}
	}
	if len(seedList) == 0 {
		return errors.New("no seeds")
	}
	return nil
}

// loadCorpus reads the training documents and the observed and held-out
// halves of the test documents of AP (its fixed split) or citeulike-t
// (citeulikeSplit) from dir.
func loadCorpus(dataName, dir string) (train, obs, held [][][2]int, err error) {
	switch dataName {
	case "ap":
		p := filepath.Join(dir, "ap")
		if train, err = runtime.ReadLDACFile(filepath.Join(p, "ap-train.dat")); err != nil {
			return nil, nil, nil, err
		}
		if obs, err = runtime.ReadLDACFile(filepath.Join(p, "ap-test-obs.dat")); err != nil {
			return nil, nil, nil, err
		}
		if held, err = runtime.ReadLDACFile(filepath.Join(p, "ap-test-heldout.dat")); err != nil {
			return nil, nil, nil, err
		}
	case "citeulike":
		all, err := runtime.ReadLDACFile(filepath.Join(dir, "citeulike-t", "mult.dat"))
		if err != nil {
			return nil, nil, nil, err
		}
		train, obs, held = citeulikeSplit(all)
	default:
		return nil, nil, nil, fmt.Errorf("-data %q: want ap or citeulike", dataName)
	}
	return train, obs, held, nil
}

// logJointPerToken returns Σ_d E_q[log p(x_d, z_d | θ_d, β)] over the
// documents of data under the fit res, divided by the tokens: the unit
// log joint that VT's Eq. 9 weighs by 1/T_m (θ_d's Dirichlet prior left
// out, as vigen leaves it untempered), written out by hand:
//
//	Σ_d Σ_n c_n Σ_k φ_nk (E log θ_dk + E log β_k,w_n).
//
// VT's q(y) sits at the grid point where this value lies between the
// secant slopes d log C/da (per token) on either side.
func logJointPerToken(data *lda.Data, res *lda.Result) float64 {
	k, v := data.K, data.V
	lam := res.Latent.Beta.Params["param"]
	gam := res.Latent.Theta.Params["param"]
	phi := res.Latent.Z.Params["prob"]
	elogBeta := make([]float64, k*v)
	for t := range k {
		row := lam[t*v : (t+1)*v]
		s := 0.0
		for _, x := range row {
			s += x
		}
		ps := runtime.Digamma(s)
		for i, x := range row {
			elogBeta[t*v+i] = runtime.Digamma(x) - ps
		}
	}
	elogTheta := make([]float64, k)
	lj, tokens, e := 0.0, 0, 0
	for d, doc := range data.W {
		g := gam[d*k : (d+1)*k]
		s := 0.0
		for _, x := range g {
			s += x
		}
		ps := runtime.Digamma(s)
		for t, x := range g {
			elogTheta[t] = runtime.Digamma(x) - ps
		}
		for _, p := range doc {
			f := phi[e*k : (e+1)*k]
			for t, q := range f {
				if q > 0 {
					lj += float64(p[1]) * q * (elogTheta[t] + elogBeta[t*v+p[0]-1])
				}
			}
			tokens += p[1]
			e++
		}
	}
	return lj / float64(tokens)
}
