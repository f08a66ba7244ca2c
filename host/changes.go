package host

import (
	"context"
	"sync"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/api"
)

// changeBus hands the Change of each successful write to its subscribers,
// in the writer's goroutine and in the order the writes return.
type changeBus struct {
	mu   sync.RWMutex
	next int
	subs map[int]func(memhost.Change)
}

// Subscribe has fn called with the Change of every write that changed
// something, whoever made it: each operation the table marks Write, as its
// change function in api/changes.go words it (Op is the operation's name,
// Result its response), and the dashboard's page editor (browse.SavePage).
// Federation commits its paths; a server puts it on its event stream; MCP
// tells resource subscribers. fn runs in the writer's goroutine before the
// write returns, so it must be quick. cancel stops it.
func (h *Host) Subscribe(fn func(memhost.Change)) (cancel func()) {
	b := &h.changes
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.subs == nil {
		b.subs = map[int]func(memhost.Change){}
	}
	id := b.next
	b.next++
	b.subs[id] = fn
	return func() {
		b.mu.Lock()
		delete(b.subs, id)
		b.mu.Unlock()
	}
}

// publishing is the middleware that publishes what each write changed:
// the one place a Change is made from an operation (api.Operation.Changed).
func (h *Host) publishing(ctx context.Context, op api.Operation, req any, next func(context.Context) (any, error)) (any, error) {
	resp, err := next(ctx)
	h.publish(op, req, resp, err)
	return resp, err
}

// publish publishes the Change of op run with req, which answered resp
// and err: after a success, unless it names nothing; after a failure,
// only the paths that landed before it (a merge whose push failed, the
// episode logs written before the one that failed). A caller that runs
// an operation's code outside the chain (a schedule, a session's end)
// publishes with it.
func (h *Host) publish(op api.Operation, req, resp any, err error) {
	c, ok := op.Changed(req, resp)
	if !ok {
		return
	}
	if err != nil {
		c = memhost.Change{Paths: c.Paths, Removed: c.Removed, Note: c.Note}
		if len(c.Paths)+len(c.Removed) == 0 {
			return
		}
	}
	if len(c.Paths)+len(c.Removed)+len(c.Files) == 0 && c.Note == "" {
		return
	}
	c.Op, c.Result = op.Info().Name, resp
	h.broadcast(c)
}

// broadcast hands c to every subscriber.
func (h *Host) broadcast(c memhost.Change) {
	b := &h.changes
	b.mu.RLock()
	defer b.mu.RUnlock()
	for _, fn := range b.subs {
		fn(c)
	}
}
