package main

import (
	"flag"
	"fmt"
	"path/filepath"
)

// optFlags are vigen run's flags for the rest of the generated package's
// Options: checkpoints and resumption, fixed params and the M-step's
// smoothing and shrinkage, empty documents and the plain sweeps; passed
// through to the model's command.
type optFlags struct {
	checkpoint, resume    string
	every                 int
	fixParams, allowEmpty bool
	plainSweeps           bool
	smoothing, shrinkage  float64
}

func (o *optFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&o.checkpoint, "checkpoint", "", "save the run to this file every -every iterations (a result with status checkpoint; a file holding anything else is refused)")
	fs.IntVar(&o.every, "every", 0, "-checkpoint: iterations between saves (0: 5)")
	fs.StringVar(&o.resume, "resume", "", "continue the run saved in this checkpoint (same data and options: it ends as the uninterrupted run would)")
	fs.BoolVar(&o.fixParams, "fixparams", false, "hold the params at their values in the data instead of estimating them (inference only, no M-steps)")
	fs.Float64Var(&o.smoothing, "smoothing", 0, "added to the expected counts of simplex params in their M-steps")
	fs.Float64Var(&o.shrinkage, "shrinkage", 0, "in [0, 1]: pull covariance params estimated by M-steps toward a scaled identity")
	fs.BoolVar(&o.allowEmpty, "allow-empty", false, "admit empty documents in bag data (their local posteriors stay at their priors)")
	fs.BoolVar(&o.plainSweeps, "plain-sweeps", false, "no collapsed Newton start of a unit's Gaussian/categorical alternation: the plain sweeps of Fig. 1")
}

// check says what is wrong with the flags, or "".
func (o *optFlags) check() string {
	switch {
	case o.every < 0:
		return "-every must not be negative (0 means 5)"
	case o.every > 0 && o.checkpoint == "":
		return "-every goes with -checkpoint"
	case !(o.smoothing >= 0):
		return "-smoothing must not be negative"
	case !(o.shrinkage >= 0 && o.shrinkage <= 1):
		return "-shrinkage must be in [0, 1]"
	}
	return ""
}

// args are the model command's flags that are set, with absolute paths.
func (o *optFlags) args() ([]string, error) {
	var a []string
	for _, p := range [][2]string{{"-checkpoint", o.checkpoint}, {"-resume", o.resume}} {
		if p[1] == "" {
			continue
		}
		q, err := filepath.Abs(p[1])
		if err != nil {
			return nil, fmt.Errorf("%s: %v", p[0], err)
		}
		a = append(a, p[0], q)
	}
	a = append(a, setFlags(flagValue{"-every", o.every}, flagValue{"-smoothing", o.smoothing}, flagValue{"-shrinkage", o.shrinkage})...)
	for _, b := range []struct {
		name string
		on   bool
	}{{"-fixparams", o.fixParams}, {"-allow-empty", o.allowEmpty}, {"-plain-sweeps", o.plainSweeps}} {
		if b.on {
			a = append(a, b.name)
		}
	}
	return a, nil
}
