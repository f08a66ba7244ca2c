//go:build !race

package main

import "syscall"

// workerSysProcAttr: a worker process is killed with the provider's
// process (it also exits when its stdin closes, which covers the rest).
func workerSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
