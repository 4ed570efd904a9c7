package main

import (
	"flag"
	"fmt"
)

// sviFlags are vigen run's flags choosing the inference algorithm and
// tuning stochastic variational inference (runtime.SVISettings), passed
// through to the model's command.
type sviFlags struct {
	algorithm     string
	batch, passes int
	tau0, kappa   float64
}

func (s *sviFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&s.algorithm, "algorithm", "ca", "ca (coordinate ascent; variational EM with params) or svi (stochastic variational inference; online EM with params)")
	fs.IntVar(&s.batch, "batch", 0, "svi: units per minibatch (0: the runtime default, 256)")
	fs.Float64Var(&s.tau0, "tau0", 0, "svi: τ0 > 0 of the step sizes ρ_t = (τ0 + t)^-κ (0: the runtime default, 1024)")
	fs.Float64Var(&s.kappa, "kappa", 0, "svi: κ in (0.5, 1] of the step sizes (0: the runtime default, 0.7)")
	fs.IntVar(&s.passes, "passes", 0, "svi: passes over the units (0: the runtime default, 10)")
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
	return ""
}

// args are the model command's flags for the settings given.
func (s *sviFlags) args() []string {
	if s.algorithm == "ca" {
		return nil
	}
	return setFlags(flagValue{"-algorithm", s.algorithm}, flagValue{"-batch", s.batch}, flagValue{"-tau0", s.tau0},
		flagValue{"-kappa", s.kappa}, flagValue{"-passes", s.passes})
}
