//go:build !race

package main

import "syscall"

// workerSysProcAttr: a worker process is killed with the provider's
// process (it also exits when its stdin closes, which covers the rest).
func workerSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// workerExe is the binary this process runs, even once its file has been
// replaced on disk (an upgrade): os.Executable gives the path, where the
// new binary is by then.
func workerExe() (string, error) { return "/proc/self/exe", nil }
