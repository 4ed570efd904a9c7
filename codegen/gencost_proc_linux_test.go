package codegen

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// The generation-cost suite's process measurements, on Linux: CPU and
// memory of a process group from /proc, killing a group, the CPU of this
// process from getrusage.

const procSupported = true

// processCPU is the user and system CPU seconds of this process so far
// (all its threads, the garbage collector's included).
func processCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}

// setProcessGroup makes cmd the leader of a process group of its own, so
// that its children (the compiler under go build) can be measured and
// killed with it.
func setProcessGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// killGroup kills the process group whose leader is pid.
func killGroup(pid int) { syscall.Kill(-pid, syscall.SIGKILL) }

var clockTicks = 100.0 // USER_HZ, which Linux fixes at 100 for /proc

// groupUsage sums, over the processes of the group led by pid, the CPU
// seconds (their own, and that of the children they waited for) and the
// resident bytes, from /proc/PID/stat.
func groupUsage(pgid int) (cpu float64, rss int64) {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	page := int64(os.Getpagesize())
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...: fields after the last ')'
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:])
		if len(f) < 22 {
			continue
		}
		if g, _ := strconv.Atoi(string(f[2])); g != pgid {
			continue
		}
		for _, k := range []int{11, 12, 13, 14} { // utime stime cutime cstime
			v, _ := strconv.ParseFloat(string(f[k]), 64)
			cpu += v / clockTicks
		}
		pages, _ := strconv.ParseInt(string(f[21]), 10, 64) // rss
		rss += pages * page
	}
	return cpu, rss
}

// maxRSS is the peak resident bytes of the process, or of the largest of
// the children it waited for.
func maxRSS(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss << 10 // kB
	}
	return -1
}

// peakRSSSelf is the peak resident bytes of this process (VmHWM), which,
// unlike getrusage's, starts afresh when the program starts.
func peakRSSSelf() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return -1
			}
			return kb << 10
		}
	}
	return -1
}

// childrenCPU is the user and system CPU seconds of the children this
// process has waited for, and of theirs.
func childrenCPU() (user, sys float64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		return -1, -1
	}
	return float64(ru.Utime.Sec) + float64(ru.Utime.Usec)/1e6, float64(ru.Stime.Sec) + float64(ru.Stime.Usec)/1e6
}
