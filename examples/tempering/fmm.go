package main

import (
	"errors"
	"io"
)

// runFMM runs the factorial mixture experiment of §4 (not yet written).
func runFMM(stdout, stderr io.Writer, seeds, workers int) error {
	return errors.New("the factorial mixture experiment is not written yet")
}
