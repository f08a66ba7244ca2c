package mcp

import (
	"context"
	"strings"
	"sync"

	"github.com/memhost/memhost"
)

// A Relay hands the writes of a change bus ((*host.Host).Subscribe) to an
// MCP server as page changes: subscribe Publish to the bus, and give
// Changes as Options.Changes. Publish only queues, so that the writer it
// runs in is not held by the clients' notifications; Changes delivers the
// queue in order, changes published before it runs included. The zero
// Relay is ready; it is safe for concurrent use, and Changes runs once.
type Relay struct {
	mu    sync.Mutex
	queue []Change
	ready chan struct{} // has a value when queue may hold changes
}

// Publish queues the notebook pages c removed, then those it wrote
// (transcripts and the home's other files are no pages).
func (r *Relay) Publish(c memhost.Change) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range c.Removed {
		if isPagePath(p) {
			r.queue = append(r.queue, Change{Path: p, Removed: true})
		}
	}
	for _, p := range c.Paths {
		if isPagePath(p) {
			r.queue = append(r.queue, Change{Path: p})
		}
	}
	select {
	case r.signal() <- struct{}{}:
	default:
	}
}

// Changes calls fn with each change published, until ctx ends.
func (r *Relay) Changes(ctx context.Context, fn func(Change)) error {
	for {
		r.mu.Lock()
		cs, ready := r.queue, r.signal()
		r.queue = nil
		r.mu.Unlock()
		for _, c := range cs {
			fn(c)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ready:
		}
	}
}

// signal returns the channel Publish wakes Changes with; r.mu is held.
func (r *Relay) signal() chan struct{} {
	if r.ready == nil {
		r.ready = make(chan struct{}, 1)
	}
	return r.ready
}

func isPagePath(p string) bool { return strings.HasSuffix(p, ".md") }
