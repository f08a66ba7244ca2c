package main

import (
	"os/exec"
	"runtime"
	"syscall"
)

// backgroundNice is the nice value background embedding runs at: it gets
// the CPU the user's work leaves.
const backgroundNice = 10

// startLowPriority starts cmd at nice backgroundNice (or this process's
// nice, when lower still). Linux keeps a nice value per thread and a
// child inherits its forking thread's: the start runs on a thread of its
// own, lowered first and never unlocked, so it exits with the goroutine
// and no other work of this process runs at the lowered priority. Every
// thread the child makes, and every process it starts (its plugin),
// inherits the value.
func startLowPriority(cmd *exec.Cmd) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // not unlocked: the thread ends with this goroutine
		lowerThreadPriority(backgroundNice)
		errc <- cmd.Start()
	}()
	return <-errc
}

// lowerThreadPriority sets the calling thread's nice value to nice unless
// it is higher already. A failure leaves the priority as it was: the
// background work still runs, only not yielding.
func lowerThreadPriority(nice int) {
	tid := syscall.Gettid()
	prio, err := syscall.Getpriority(syscall.PRIO_PROCESS, tid)
	if err != nil {
		return
	}
	// The system call answers 20 - nice, so that it is never negative.
	if 20-prio >= nice {
		return
	}
	syscall.Setpriority(syscall.PRIO_PROCESS, tid, nice)
}
