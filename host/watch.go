package host

import (
	"sync"
	"time"

	"github.com/memhost/memhost/host/health"
)

// watchState is what Health reports of the file watcher (Host.Watch).
type watchState struct {
	mu       sync.Mutex
	started  bool
	running  int
	lastSync time.Time
}

func (w *watchState) start() {
	w.mu.Lock()
	w.started = true
	w.running++
	w.mu.Unlock()
}

func (w *watchState) stop() {
	w.mu.Lock()
	w.running--
	w.mu.Unlock()
}

func (w *watchState) synced(t time.Time) {
	w.mu.Lock()
	w.lastSync = t
	w.mu.Unlock()
}

func (w *watchState) facts() health.Watcher {
	w.mu.Lock()
	defer w.mu.Unlock()
	return health.Watcher{Started: w.started, Running: w.running > 0, LastEvent: w.lastSync}
}
