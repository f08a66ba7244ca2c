// Package clock is memhost's calendar clock: the time that decides which
// day a daily log, a fact's date or a turn's stamp belongs to. It is
// time.Now, moved by MEMHOST_CLOCK_OFFSET when that is set, so that the
// whole test suite, with every process it starts, can run on another day
// (make test-dates: across a month's end, a year's end and a DST change)
// and show that nothing depends on the day it runs.
//
// Elapsed times, deadlines and comparisons with file modification times
// use time.Now: the file system's clock is not moved.
package clock

import (
	"fmt"
	"os"
	"sync/atomic"
	"time"
)

// EnvOffset names the variable: a Go duration ("-26h", "8760h30m") added
// to the wall clock. Every process of one test run inherits the same
// offset, so time still moves forward from one process to the next.
const EnvOffset = "MEMHOST_CLOCK_OFFSET"

// offset is in nanoseconds; atomic because Set may run while a server's
// goroutines read the clock.
var offset atomic.Int64

// envErr is why EnvOffset could not be read (see Err).
var envErr error

func init() {
	d, err := Parse(os.Getenv(EnvOffset))
	offset.Store(int64(d))
	envErr = err
}

// Err reports a malformed EnvOffset, which leaves the clock unmoved: the
// commands refuse to run with it (running on the real day would hide what
// a test run is for), and they alone choose how to say so.
func Err() error { return envErr }

// Parse reads an offset as EnvOffset holds it; "" is none.
func Parse(v string) (time.Duration, error) {
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%s=%q: want a duration such as -26h or 8760h: %w", EnvOffset, v, err)
	}
	return d, nil
}

// Now returns the current time, moved by the offset.
func Now() time.Time {
	if d := offset.Load(); d != 0 {
		return time.Now().Add(time.Duration(d))
	}
	return time.Now()
}

// Set moves Now to t, from where it goes on, until restore is called: for
// in-process tests that must not cross a midnight (golden transcripts).
// Processes started meanwhile do not inherit it.
func Set(t time.Time) (restore func()) {
	old := offset.Swap(int64(time.Until(t)))
	return func() { offset.Store(old) }
}
