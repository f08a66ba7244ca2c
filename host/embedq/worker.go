package embedq

import (
	"context"
	"sync"
	"time"

	"github.com/memhost/memhost"
)

// worker is the goroutine that drains the queue; the Queue owns it
// (StartWorker, StopWorker) and Kick wakes it.
type worker struct {
	kick    chan struct{} // buffered 1: a kick while a run is due is dropped
	cancel  context.CancelFunc
	done    chan struct{} // closed when the goroutine has returned
	onEmbed func(memhost.EmbedResult)

	mu    sync.Mutex
	state WorkerState // Running is left false: HasWorker says it
}

// WorkerState is what the worker has achieved, so that health can tell a
// queue being worked through from one that is stuck.
type WorkerState struct {
	Running bool
	// Progress is when a run last embedded something or found nothing
	// left to embed; the worker's start before that.
	Progress time.Time
	// FailingSince is when the runs that failed in a row began, and Err
	// the last one's error; zero and "" after a run that did not fail.
	FailingSince time.Time
	Err          string
}

// WorkerState reports the worker's record; Running is false when none runs.
func (q *Queue) WorkerState() WorkerState {
	q.workerMu.Lock()
	w := q.worker
	q.workerMu.Unlock()
	if w == nil {
		return WorkerState{}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	st := w.state
	st.Running = true
	return st
}

// record notes a run's outcome in the worker's state.
func (w *worker) record(now time.Time, progressed bool, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if progressed {
		w.state.Progress = now
	}
	if err == nil {
		w.state.FailingSince, w.state.Err = time.Time{}, ""
		return
	}
	if w.state.FailingSince.IsZero() {
		w.state.FailingSince = now
	}
	w.state.Err = err.Error()
}

// StartWorker starts the background worker, which embeds the queue each
// time it is kicked, retrying with backoff (1 s to 30 s) while the provider
// is not ready, until StopWorker or ctx ends. onEmbed, when not nil, is
// called after each run that embedded something, on the worker's
// goroutine. It reports false when a worker runs already (that one stays).
func (q *Queue) StartWorker(ctx context.Context, onEmbed func(memhost.EmbedResult)) bool {
	q.workerMu.Lock()
	defer q.workerMu.Unlock()
	if q.worker != nil {
		return false
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &worker{kick: make(chan struct{}, 1), cancel: cancel, done: make(chan struct{}), onEmbed: onEmbed}
	w.state.Progress = q.now()
	q.worker = w
	go func() {
		defer close(w.done)
		q.work(ctx, w)
	}()
	w.kick <- struct{}{} // look at the queue once at start
	return true
}

// StopWorker stops the worker, if one runs, and waits for it to return.
func (q *Queue) StopWorker() {
	q.workerMu.Lock()
	w := q.worker
	q.worker = nil
	q.workerMu.Unlock()
	if w != nil {
		w.cancel()
		<-w.done
	}
}

// HasWorker reports whether a worker runs.
func (q *Queue) HasWorker() bool {
	q.workerMu.Lock()
	defer q.workerMu.Unlock()
	return q.worker != nil
}

// Kick wakes the worker; it does nothing when none runs. It never blocks.
func (q *Queue) Kick() {
	q.workerMu.Lock()
	w := q.worker
	q.workerMu.Unlock()
	if w == nil {
		return
	}
	select {
	case w.kick <- struct{}{}:
	default: // a run is due already
	}
}

func (q *Queue) work(ctx context.Context, w *worker) {
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	backoff := time.Second
	// warned is the failure last logged as a warning: the same failure
	// again (offline, no model: every retry for hours) is not repeated.
	warned := ""
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.kick:
		case <-retry.C:
		}
		res, err := q.Run(ctx, 0)
		switch {
		case ctx.Err() != nil:
			return
		case err == nil && res.Busy:
			// Another process holds the queue: look again later.
			w.record(q.now(), false, nil)
			retry.Reset(backoff)
		case err == nil:
			w.record(q.now(), res.Embedded > 0 || res.Pending == 0, nil)
			if warned != "" {
				q.opts.Log.Info("embedding works again")
				warned = ""
			}
			backoff = time.Second
			if w.onEmbed != nil && res.Embedded > 0 {
				w.onEmbed(res)
			}
		case NoProvider(err):
			// keyword-only by choice: nothing to retry until kicked
			w.record(q.now(), false, nil)
		default:
			w.record(q.now(), res.Embedded > 0, err)
			if msg := err.Error(); msg != warned {
				q.opts.Log.Warn("embedding failed; retrying in the background", "err", err)
				warned = msg
			} else {
				q.opts.Log.Debug("embedding failed again; retrying", "in", backoff)
			}
			retry.Reset(backoff)
			backoff = min(2*backoff, 30*time.Second)
		}
	}
}
