//go:build !linux

package main

import "os/exec"

// startLowPriority starts cmd; lowering its priority is done on Linux
// only (lowprio_linux.go).
func startLowPriority(cmd *exec.Cmd) error { return cmd.Start() }
