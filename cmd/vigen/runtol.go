package main

import (
	"flag"
	"fmt"
	"reflect"
)

// tolFlags are vigen run's convergence tolerances besides -maxiter and
// -tol, passed on to the fitting command (the rule they set is the
// README's "Convergence" section and runtime.Convergence).
type tolFlags struct {
	meanTol, localTol float64
	localMaxIter      int
}

func (t *tolFlags) register(fs *flag.FlagSet) {
	fs.Float64Var(&t.meanTol, "meantol", 0, "relative change of a global factor below which the run may end (0: the generated package's default; inf: no such criterion)")
	fs.Float64Var(&t.localTol, "localtol", 0, "relative change that settles a unit's local factors (0: the generated package's default)")
	fs.IntVar(&t.localMaxIter, "localmaxiter", 0, "sweeps of a unit's local factors per iteration (0: the generated package's default)")
}

// args are the fitting command's flags for the tolerances that are set.
func (t *tolFlags) args() []string {
	return setFlags(flagValue{"-meantol", t.meanTol}, flagValue{"-localtol", t.localTol},
		flagValue{"-localmaxiter", t.localMaxIter})
}

// flagValue is a command-line flag and its value; a zero value means unset.
type flagValue struct {
	name  string
	value any
}

// setFlags gives the arguments for the flags whose values are set, in order.
func setFlags(fs ...flagValue) []string {
	var a []string
	for _, f := range fs {
		if !reflect.ValueOf(f.value).IsZero() {
			a = append(a, f.name, fmt.Sprint(f.value))
		}
	}
	return a
}

// negative names the first of the numeric flags that is negative (or NaN),
// which would otherwise be replaced by its default without a word.
func (f *runFlags) negative() string {
	t := f.tols
	for _, c := range []struct {
		name string
		bad  bool
	}{
		{"maxiter", f.maxIter < 0}, {"tol", !(f.tol >= 0)}, {"meantol", !(t.meanTol >= 0)},
		{"localtol", !(t.localTol >= 0)}, {"localmaxiter", t.localMaxIter < 0}, {"workers", f.workers < 0},
		{"psis-draws", f.psisDraws < 0}, {"psis-unit-draws", f.psisUnits < 0}, {"restarts", f.restarts < 0},
	} {
		if c.bad {
			return c.name
		}
	}
	return ""
}
