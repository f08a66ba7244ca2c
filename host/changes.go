package host

import (
	"strings"
	"sync"

	"github.com/memhost/memhost"
)

// changeBus hands the Change of each successful write to its subscribers,
// in the writer's goroutine and in the order the writes return.
type changeBus struct {
	mu   sync.RWMutex
	next int
	subs map[int]func(memhost.Change)
}

// Subscribe has fn called with the Change of every write that succeeds
// (init, remember, daily-log, write, rm, session-append, session-ingest,
// session-compact, mv, rollup, prune, fact-add, fact-forget, consolidate,
// import, episodes), whoever made it: federation commits its paths, a server puts it
// on its event stream. fn runs in the writer's goroutine before the write
// returns, so it must be quick. cancel stops it.
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

// wrote publishes the Change that change describes, unless the write
// failed (*err). Each write says itself what it changed: no subscriber
// looks into another operation's response.
func (h *Host) wrote(err *error, change func() memhost.Change) {
	if *err != nil {
		return
	}
	c := change()
	b := &h.changes
	b.mu.RLock()
	defer b.mu.RUnlock()
	for _, fn := range b.subs {
		fn(c)
	}
}

// section names a page's section in a change's note: "reference/x.md ## Sarah".
func section(path, heading string) string {
	if s := strings.TrimSpace(strings.TrimLeft(heading, "#")); s != "" {
		return path + " ## " + s
	}
	return path
}
