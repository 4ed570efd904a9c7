//go:build !unix

package main

import "time"

var processStart = time.Now()

// cpuSeconds stands in for the CPU time where getrusage is missing: the
// wall time since the process started.
func cpuSeconds() float64 { return time.Since(processStart).Seconds() }
