package main

import (
	"os/exec"
	"syscall"
)

// setParentDeathSignal has Linux kill cmd when the thread that starts it
// ends; runFit keeps that thread for the command's whole run.
func setParentDeathSignal(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
