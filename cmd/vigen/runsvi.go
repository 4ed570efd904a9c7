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
	// anneal and temper temper the fit (runtime.TemperSettings), under
	// either algorithm.
	anneal, temper string
}

func (s *sviFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&s.algorithm, "algorithm", "ca", "ca (coordinate ascent; variational EM with params) or svi (stochastic variational inference; online EM with params)")
	fs.IntVar(&s.batch, "batch", 0, "svi: units per minibatch (0: the runtime default, 256)")
	fs.Float64Var(&s.tau0, "tau0", 0, "svi: τ0 > 0 of the step sizes ρ_t = (τ0 + t)^-κ (0: the runtime default, 16)")
	fs.Float64Var(&s.kappa, "kappa", 0, "svi: κ in (0.5, 1] of the step sizes (0: the runtime default, 0.7)")
	fs.IntVar(&s.passes, "passes", 0, "svi: passes over the units (0: the runtime default, 10)")
	fs.StringVar(&s.anneal, "anneal", "", "annealed VI (Mandt et al. 2016): schedule KIND:T0:LENGTH, linear or geometric from T0 down to 1 over LENGTH iterations (svi: passes), e.g. linear:10:100")
	fs.StringVar(&s.temper, "temper", "", "variational tempering (Mandt et al. 2016): a JSON file {\"mode\": \"global\", \"grid\": [1, …], \"log_c\": […]} with log C(T) on the grid")
}

// check says what is wrong with the flags, or "".
func (s *sviFlags) check() string {
	switch {
	case s.algorithm != "ca" && s.algorithm != "svi":
		return fmt.Sprintf("-algorithm %q: want ca or svi", s.algorithm)
	case s.batch < 0 || s.passes < 0 || !(s.tau0 >= 0) || !(s.kappa >= 0):
		return "-batch, -passes, -tau0 and -kappa must not be negative (0 means the default)"
	case s.algorithm == "ca" && (s.batch != 0 || s.passes != 0 || s.tau0 != 0 || s.kappa != 0):
		return "-batch, -passes, -tau0 and -kappa tune -algorithm svi"
	}
	if s.anneal != "" {
		if _, err := runtime.ParseAnneal(s.anneal); err != nil {
			return "-anneal: " + err.Error()
		}
	}
	if s.temper != "" {
		if _, err := runtime.ReadTemperSettings(s.temper); err != nil {
			return "-temper: " + err.Error()
		}
	}
	return ""
}

// args are the model command's flags for the settings given.
func (s *sviFlags) args() []string {
	var out []string
	if s.algorithm != "ca" {
		out = setFlags(flagValue{"-algorithm", s.algorithm}, flagValue{"-batch", s.batch}, flagValue{"-tau0", s.tau0},
			flagValue{"-kappa", s.kappa}, flagValue{"-passes", s.passes})
	}
	temper := s.temper
	if temper != "" {
		if abs, err := filepath.Abs(temper); err == nil {
			temper = abs // the command runs elsewhere
		}
	}
	return append(out, setFlags(flagValue{"-anneal", s.anneal}, flagValue{"-temper", temper})...)
}
