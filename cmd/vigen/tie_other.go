//go:build !linux

package main

import "os/exec"

// setParentDeathSignal does nothing where there is no parent-death signal;
// the pipe of tieToParent ties the command to vigen there.
func setParentDeathSignal(cmd *exec.Cmd) {}
