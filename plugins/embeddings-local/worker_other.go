//go:build !race && !linux

package main

import (
	"os"
	"syscall"
)

// workerSysProcAttr: a worker process exits when its stdin closes.
func workerSysProcAttr() *syscall.SysProcAttr { return nil }

// workerExe is this binary's path: the binary it runs, unless its file
// was replaced since it started.
func workerExe() (string, error) { return os.Executable() }
