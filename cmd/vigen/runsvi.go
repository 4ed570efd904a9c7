package main

import (
	"flag"
	"fmt"
	"path/filepath"

	"github.com/vigen-go/vigen/runtime"
)

// sviFlags are vigen run's flags choosing the inference algorithm and
// tuning stochastic variational inference (runtime.SVISettings), passed
// through to the model's command.
type sviFlags struct {
	algorithm     string
	batch, passes int
	tau0, kappa   float64
	// local, burnIn, samples and ramp choose SVI's local step and the
	// data-size ramp (runtime.SVISettings).
	local           string
	burnIn, samples int
	ramp            bool
	// anneal, temper and logc temper the fit (runtime.TemperFromFlags),
	// under either algorithm.
	anneal, temper, logc string
}

func (s *sviFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&s.algorithm, "algorithm", "ca", "ca (coordinate ascent; variational EM with params), svi (stochastic variational inference; online EM with params), or ssmf or ssmf-a (svi with structured stochastic mean field's global step, Hoffman 2014's Algorithms 1 and 2)")
	fs.StringVar(&s.local, "local", "", "svi, ssmf, ssmf-a: the local step, meanfield (the default) or gibbs")
	fs.IntVar(&s.burnIn, "burnin", 0, "-local gibbs: sweeps discarded before the kept ones (0: the runtime default, 10)")
	fs.IntVar(&s.samples, "samples", 0, "-local gibbs: sweeps whose draws are averaged (0: the runtime default, 10)")
	fs.BoolVar(&s.ramp, "ramp", false, "svi: ramp the data size up over the first pass, as ssmf and ssmf-a always do")
	fs.IntVar(&s.batch, "batch", 0, "svi: units per minibatch (0: the runtime default, 256)")
	fs.Float64Var(&s.tau0, "tau0", 0, "svi: τ0 > 0 of the step sizes ρ_t = (τ0 + t)^-κ (0: the runtime default, 16)")
	fs.Float64Var(&s.kappa, "kappa", 0, "svi: κ in (0.5, 1] of the step sizes (0: the runtime default, 0.7)")
	fs.IntVar(&s.passes, "passes", 0, "svi: passes over the units (0: the runtime default, 10)")
	fs.StringVar(&s.anneal, "anneal", "", "annealed VI (Mandt et al. 2016): schedule KIND:T0:LENGTH, linear or geometric from T0 down to 1 over LENGTH iterations (svi: passes), e.g. linear:10:100")
	fs.StringVar(&s.temper, "temper", "", "global: variational tempering (Mandt et al. 2016), a latent temperature on the grid of -logc; local: one temperature per unit (LVT), on the grid of -logc or 30 from 1 to 10")
	fs.StringVar(&s.logc, "logc", "", "-temper global: JSON file {\"grid\": [1, …], \"log_c\": […], \"fingerprint\": {\"model\": …, \"data\": {…}}}, the grid of temperatures, the log partition function log C(T) on it and the model and data it is for: the \"fingerprint\" of a result of the model on the same data, copied whole (its model is the sha256 of the model's source, so an edited model is another); -temper local: {\"grid\": […], \"cold\": true} (both optional)")
}

// check says what is wrong with the flags, or "".
func (s *sviFlags) check() string {
	switch {
	case s.algorithm != "ca" && s.algorithm != "svi" && s.algorithm != runtime.GlobalSSMF && s.algorithm != runtime.GlobalSSMFA:
		return fmt.Sprintf("-algorithm %q: want ca, svi, ssmf or ssmf-a", s.algorithm)
	case s.batch < 0 || s.passes < 0 || !(s.tau0 >= 0) || !(s.kappa >= 0) || s.burnIn < 0 || s.samples < 0:
		return "-batch, -passes, -tau0, -kappa, -burnin and -samples must not be negative (0 means the default)"
	case s.algorithm == "ca" && (s.batch != 0 || s.passes != 0 || s.tau0 != 0 || s.kappa != 0 || s.local != "" || s.burnIn != 0 || s.samples != 0 || s.ramp):
		return "-batch, -passes, -tau0, -kappa, -local, -burnin, -samples and -ramp tune -algorithm svi, ssmf or ssmf-a"
	}
	if err := (runtime.SVISettings{Local: s.local}).Check(); err != nil {
		return "-local: " + err.Error()
	}
	if _, err := runtime.TemperFromFlags(s.anneal, s.temper, s.logc); err != nil {
		return err.Error()
	}
	return ""
}

// checkModel refuses a -logc file whose log C(T) was computed for another
// model than model, whose source's sha256 is sourceHash
// (runtime.TemperSettings.CheckModel). The flags have been checked.
func (s *sviFlags) checkModel(model, sourceHash string) error {
	t, err := runtime.TemperFromFlags(s.anneal, s.temper, s.logc)
	if err != nil {
		return err
	}
	return t.CheckModel(model, sourceHash)
}

// args are the model command's flags for the settings given.
func (s *sviFlags) args() []string {
	var out []string
	if s.algorithm != "ca" {
		out = setFlags(flagValue{"-algorithm", s.algorithm}, flagValue{"-batch", s.batch}, flagValue{"-tau0", s.tau0},
			flagValue{"-kappa", s.kappa}, flagValue{"-passes", s.passes}, flagValue{"-local", s.local},
			flagValue{"-burnin", s.burnIn}, flagValue{"-samples", s.samples})
		if s.ramp {
			out = append(out, "-ramp") // a bool flag takes no separate value
		}
	}
	logc := s.logc
	if logc != "" {
		if abs, err := filepath.Abs(logc); err == nil {
			logc = abs // the command runs elsewhere
		}
	}
	return append(out, setFlags(flagValue{"-anneal", s.anneal}, flagValue{"-temper", s.temper}, flagValue{"-logc", logc})...)
}
