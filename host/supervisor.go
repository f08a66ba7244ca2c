package host

import (
	"context"
	"sync"
)

// supervisor owns the background loops of the services (the git sync,
// the consolidation schedule): each registers its loop once, in Open, and
// Watch runs them all beside the file watcher and stops them with it.
// Watch is the only place that starts background work.
type supervisor struct {
	mu    sync.Mutex
	loops []loop
}

// A loop runs until ctx ends; req is the Watch that runs it.
type loop struct {
	name string
	run  func(ctx context.Context, req WatchRequest)
}

// add registers a loop for every later Watch.
func (s *supervisor) add(name string, run func(ctx context.Context, req WatchRequest)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.loops = append(s.loops, loop{name, run})
}

// start runs every loop on its own goroutine; stop cancels them and waits
// until each has returned.
func (s *supervisor) start(ctx context.Context, req WatchRequest) (stop func()) {
	s.mu.Lock()
	loops := append([]loop(nil), s.loops...)
	s.mu.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, l := range loops {
		wg.Go(func() { l.run(ctx, req) })
	}
	return func() { cancel(); wg.Wait() }
}
