package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/vigen-go/vigen/spec/ir"
)

// Every file vigen writes is checked before any work is done (before the
// build and the fit of vigen run, before the first file of vigen gen), so
// a refusal or an unwritable place costs nothing and changes nothing. The
// rules:
//
//   - A path that does not exist is written through a temporary file and
//     a rename; its directory must exist and take new files.
//   - An existing regular file is replaced the same way, but only if vigen
//     wrote it (the caller's test reads at most the first bytes of it) or
//     it is empty (nothing to lose).
//   - An existing file that is not regular (/dev/null, /dev/stdout, a pipe,
//     a terminal) is written directly, and never read: reading a pipe to
//     decide who owns it would hang, and a rename would replace the device.
//     A symbolic link is judged by the file it points to and written
//     through.
//   - A directory is an error.
//
// Errors name the path as the user wrote it, never a temporary file.

// refuseForeign returns an error, saying why, if path holds a regular file
// that ours (given at most its first limit bytes) says vigen did not write;
// nil if path does not exist, is empty, is not a regular file, or is
// vigen's. A directory is an error.
func refuseForeign(path string, limit int, ours func(head []byte) bool, why string) error {
	fi, err := os.Stat(path) // through a symbolic link
	switch {
	case missing(err):
		return nil
	case err != nil:
		return err
	case fi.IsDir():
		return fmt.Errorf("%s is a directory", path)
	case !fi.Mode().IsRegular(), fi.Size() == 0:
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	// Judge what was opened, not what was stat'ed a moment ago.
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return err
	}
	head, err := io.ReadAll(io.LimitReader(f, int64(limit)))
	if err != nil {
		return err
	}
	if !ours(head) {
		return fmt.Errorf("refusing to overwrite %s: %s", path, why)
	}
	return nil
}

// missing reports whether err says a path does not exist, or cannot,
// because a directory on it is a file; checkWritable says which.
func missing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// checkWritable returns an error naming path if a file cannot be created
// there: its directory is missing, is not a directory, or refuses a new
// file. It creates (and removes) a temporary file to find out. An existing
// path that is not a regular file is written directly and not checked.
func checkWritable(path string) error {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		if fi.IsDir() {
			return fmt.Errorf("%s is a directory", path)
		}
		return nil
	}
	return checkDirTakesFiles(filepath.Dir(path), path)
}

// checkDirTakesFiles returns an error naming what (the user's path) if dir
// is not an existing directory in which a file can be created.
func checkDirTakesFiles(dir, what string) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("cannot write %s: the directory %s does not exist", what, dir)
	case err != nil:
		return fmt.Errorf("cannot write %s: %v", what, err)
	case !fi.IsDir():
		return fmt.Errorf("cannot write %s: %s is not a directory", what, dir)
	}
	probe, err := os.CreateTemp(dir, ".vigen-probe-*.tmp")
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("cannot write %s: cannot create a file in %s: %v", what, dir, err)
	}
	probe.Close()
	os.Remove(probe.Name())
	return nil
}

// resultHeadLimit is how much of an existing -out file vigen reads to see
// whether it is a result vigen wrote: "model" and "status" come first.
const resultHeadLimit = 64 << 10

// isResultHead reports whether b begins a JSON object that has string
// members "model" and "status" before anything it cannot read: the start
// of a result vigen wrote.
func isResultHead(b []byte) bool {
	return jsonHeadHas(b, map[string]string{"model": "string", "status": "string"})
}

// isPredictionHead reports whether b begins the predictions vigen wrote
// (runtime.Prediction: "model", then "draws").
func isPredictionHead(b []byte) bool {
	return jsonHeadHas(b, map[string]string{"model": "string", "draws": "number"})
}

// isHeldoutHead reports whether b begins a held-out score vigen wrote
// (runtime.HeldoutScore: "per_word", then "tokens").
func isHeldoutHead(b []byte) bool {
	return jsonHeadHas(b, map[string]string{"per_word": "number", "tokens": "number"})
}

// jsonHeadHas reports whether b begins a JSON object in which every key of
// want comes before anything jsonHeadHas cannot read, holding a value of
// the kind want gives it: "string" or "number".
func jsonHeadHas(b []byte, want map[string]string) bool {
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	found := map[string]bool{}
	for len(found) < len(want) {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		key, ok := tok.(string)
		if !ok {
			return false
		}
		var v any
		if err := dec.Decode(&v); err != nil {
			return false
		}
		kind, ok := want[key]
		if !ok {
			continue
		}
		switch v.(type) {
		case string:
			ok = kind == "string"
		case float64:
			ok = kind == "number"
		default:
			ok = false
		}
		if !ok {
			return false
		}
		found[key] = true
	}
	return true
}

// checkResultTarget refuses, before any work, an -out path that holds
// anything but a result vigen wrote (a JSON object with "model" and
// "status"), or where no file can be written.
func checkResultTarget(path string) error {
	if err := refuseForeign(path, resultHeadLimit, isResultHead, "it is not a result vigen wrote"); err != nil {
		return err
	}
	return checkWritable(path)
}

// checkPlotTargets refuses, before any work, a -plot directory vigen cannot
// write into or that holds one of the files (names) it would write that
// vigen did not write. A directory that does not exist yet must be
// creatable: its nearest existing ancestor must be a directory that takes
// new entries.
func checkPlotTargets(dir string, names []string) error {
	fi, err := os.Stat(dir)
	switch {
	case missing(err):
		parent := filepath.Dir(dir)
		for {
			if _, err := os.Stat(parent); err == nil || filepath.Dir(parent) == parent {
				break
			}
			parent = filepath.Dir(parent)
		}
		return checkDirTakesFiles(parent, dir)
	case err != nil:
		return err
	case !fi.IsDir():
		return fmt.Errorf("cannot write plots into %s: it is not a directory", dir)
	}
	for _, name := range names {
		if err := checkPlotTarget(filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	if err := checkPlotList(dir); err != nil {
		return err
	}
	return checkDirTakesFiles(dir, dir)
}

// runOutput is a file vigen run or its fitting command writes (for -plot,
// a directory of files), named by a flag, and the check that refuses it
// before any work.
type runOutput struct {
	flag, path string
	check      func(path string) error
}

// outputs are every file vigen run writes, and each one's check. An output
// flag that is not in this list is not checked: a new one belongs here.
func (f *runFlags) outputs(m *ir.Model) []runOutput {
	return []runOutput{
		{"-out", f.out, checkResultTarget},
		// a checkpoint is a result with status "checkpoint"; the fitting
		// command checks that it is one of this model
		{"-checkpoint", f.opts.checkpoint, checkResultTarget},
		{"-heldout-out", f.heldout.out, jsonTarget(isHeldoutHead, "it is not a held-out score vigen wrote")},
		{"-predict-out", f.heldout.predictOut, jsonTarget(isPredictionHead, "it is not a file of predictions vigen wrote")},
		{"-plot", f.plot, func(dir string) error { return checkPlotTargets(dir, plotFiles(m)) }},
	}
}

// jsonTarget is the check of an output holding a JSON object that ours
// recognizes from its first members.
func jsonTarget(ours func(head []byte) bool, why string) func(string) error {
	return func(path string) error {
		if err := refuseForeign(path, resultHeadLimit, ours, why); err != nil {
			return err
		}
		return checkWritable(path)
	}
}

// inputs are the files vigen run reads, by flag: model is the model file.
func (f *runFlags) inputs(model string) [][2]string {
	in := [][2]string{{"the model", model}, {"-data", f.data}, {"-predict", f.heldout.predict}, {"-test", f.heldout.test},
		{"-heldout-obs", f.heldout.obs}, {"-heldout", f.heldout.held}, {"-resume", f.opts.resume}, {"-logc", f.svi.logc}}
	for _, list := range []struct {
		flag string
		l    ldacList
	}{{"-ldac", f.heldout.ldac}, {"-csv", f.heldout.csv}, {"-jsonl", f.heldout.jsonl}} {
		for _, l := range list.l {
			_, path, _ := strings.Cut(l, "=")
			in = append(in, [2]string{list.flag, path})
		}
	}
	return in
}

// checkOutputs refuses, before any work, an output that is also an input
// (but -checkpoint may be the -resume file it continues) or another output,
// and any output its own check refuses. Errors begin with the flag.
func checkOutputs(outs []runOutput, ins [][2]string) error {
	for i, o := range outs {
		if o.path == "" {
			continue
		}
		for _, in := range ins {
			if in[1] != "" && !(o.flag == "-checkpoint" && in[0] == "-resume") && sameFile(o.path, in[1]) {
				return fmt.Errorf("%s: refusing to overwrite %s: it is the %s file", o.flag, o.path, strings.TrimPrefix(in[0], "the "))
			}
		}
		for _, p := range outs[:i] {
			if p.path != "" && sameFile(o.path, p.path) {
				return fmt.Errorf("%s: %s is also the %s file: give each output its own file", o.flag, o.path, p.flag)
			}
		}
		if err := o.check(o.path); err != nil {
			return fmt.Errorf("%s: %w", o.flag, err)
		}
	}
	return nil
}

// sameFile reports whether the paths a and b name the same regular file
// (through links), or, if neither exists, the same path. Devices and pipes
// (/dev/null given twice) are never the same file: nothing in them is lost.
func sameFile(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	switch {
	case errA == nil && errB == nil:
		return fa.Mode().IsRegular() && os.SameFile(fa, fb)
	case errA != nil && errB != nil:
		absA, errA := filepath.Abs(a)
		absB, errB := filepath.Abs(b)
		return errA == nil && errB == nil && absA == absB
	}
	return false
}
