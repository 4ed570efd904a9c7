//go:build !linux

package codegen

import (
	"os"
	"os/exec"
)

// The generation-cost suite measures processes through /proc: on other
// systems it skips.

const procSupported = false

func processCPU() float64             { return -1 }
func setProcessGroup(*exec.Cmd)       {}
func killGroup(int)                   {}
func groupUsage(int) (float64, int64) { return 0, 0 }
func maxRSS(*os.ProcessState) int64   { return -1 }
func peakRSSSelf() int64              { return -1 }
func childrenCPU() (float64, float64) { return -1, -1 }
