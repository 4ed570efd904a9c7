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
	"syscall"
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
	dec := json.NewDecoder(bytes.NewReader(b))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	var model, status bool
	for !model || !status {
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
		_, isString := v.(string)
		switch key {
		case "model":
			model = isString
		case "status":
			status = isString
		}
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
	return checkDirTakesFiles(dir, dir)
}
