// Package schedule runs a service's periodic work under memhost serve (or
// memhost watch): consolidation, episode logs, health checks. Each is a
// loop the host's supervisor starts and stops.
package schedule

import (
	"context"
	"time"
)

// Every calls run every minutes() units until ctx ends. minutes is read
// again before each wait and after it, so a change of the configuration
// applies from the next wait without a restart; while it is 0 (off) the
// loop only looks again one unit later and run is not called. unit is a
// minute (0 means a minute; tests shorten it), and after is the timer
// (nil means time.After; tests pass one they fire themselves).
func Every(ctx context.Context, unit time.Duration, after func(time.Duration) <-chan time.Time, minutes func() int, run func(context.Context)) {
	if unit <= 0 {
		unit = time.Minute
	}
	if after == nil {
		after = time.After
	}
	for {
		wait := waitFor(minutes(), unit)
		select {
		case <-ctx.Done():
			return
		case <-after(wait):
		}
		if minutes() > 0 && ctx.Err() == nil {
			run(ctx)
		}
	}
}

// maxWait bounds a wait: minutes past it (a typo in config.yaml) would
// overflow time.Duration into a negative wait, and the job would run back
// to back.
const maxWait = 366 * 24 * time.Hour

// waitFor is the wait before the next run every minutes (a unit when
// off), at most maxWait.
func waitFor(every int, unit time.Duration) time.Duration {
	switch {
	case every <= 0:
		return unit
	case int64(every) > int64(maxWait/unit):
		return maxWait
	}
	return time.Duration(every) * unit
}
