// Command memhost is the agent's and the person's interface to a memhost
// home: remember, recall, read and write notebook pages, and keep the index
// in step. Run `memhost help` for the commands.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	_ "time/tzdata" // time zones from config work on machines without tzdata
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args, stdio{
		stdin:        os.Stdin,
		stdinIsPiped: isPiped(os.Stdin),
		stdout:       os.Stdout,
		stderr:       os.Stderr,
		getenv:       os.Getenv,
	})
	stop()
	os.Exit(code)
}

// isPiped reports whether f is a pipe or file rather than a terminal.
func isPiped(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice == 0
}
