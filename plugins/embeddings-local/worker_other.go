//go:build !race && !linux

package main

import "syscall"

// workerSysProcAttr: a worker process exits when its stdin closes.
func workerSysProcAttr() *syscall.SysProcAttr { return nil }
