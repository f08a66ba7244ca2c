package schedule

import (
	"context"
	"math"
	"sync/atomic"
	"testing"
	"time"
)

// TestEvery: the waits follow the minutes read before each, run is called
// only while they are on, and the loop ends with its context.
func TestEvery(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	waits := make(chan time.Duration)
	fire := make(chan time.Time)
	after := func(d time.Duration) <-chan time.Time { waits <- d; return fire }
	var minutes atomic.Int64
	minutes.Store(30)
	runs := make(chan struct{}, 10)
	done := make(chan struct{})
	go func() {
		defer close(done)
		Every(ctx, time.Second, after, func() int { return int(minutes.Load()) }, func(context.Context) { runs <- struct{}{} })
	}()
	if d := <-waits; d != 30*time.Second {
		t.Fatalf("first wait %v, want 30 units", d)
	}
	fire <- time.Time{}
	<-runs
	if d := <-waits; d != 30*time.Second {
		t.Fatalf("second wait %v", d)
	}
	minutes.Store(0) // turned off while waiting: no run, a unit's look later
	fire <- time.Time{}
	if d := <-waits; d != time.Second {
		t.Fatalf("wait while off %v, want one unit", d)
	}
	select {
	case <-runs:
		t.Fatal("ran while off")
	default:
	}
	minutes.Store(5)
	fire <- time.Time{}
	<-runs
	if d := <-waits; d != 5*time.Second {
		t.Fatalf("wait after the change %v, want 5 units", d)
	}
	cancel()
	<-done
}

// TestWaitForOverflow: minutes that would overflow a time.Duration wait
// the longest wait, never a negative one.
func TestWaitForOverflow(t *testing.T) {
	for _, every := range []int{math.MaxInt, math.MaxInt64 / 60, 1 << 40} {
		if d := waitFor(every, time.Minute); d != maxWait {
			t.Errorf("waitFor(%d) = %v, want %v", every, d, maxWait)
		}
	}
	if d := waitFor(90, time.Minute); d != 90*time.Minute {
		t.Errorf("waitFor(90) = %v", d)
	}
}
