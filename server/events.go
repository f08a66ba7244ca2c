package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/memhost/memhost/server/wire"
)

// Event: see wire.Event.
type Event = wire.Event

// hub fans events out to the open streams. A stream that does not keep up
// loses events rather than slowing the publisher (the server's watcher and
// request goroutines): it is told with a "lagged" event.
type hub struct {
	mu   sync.Mutex
	subs map[chan Event]bool
}

// streamBuffer is how many events a slow stream may fall behind.
const streamBuffer = 64

func newHub() *hub { return &hub{subs: map[chan Event]bool{}} }

func (h *hub) subscribe() chan Event {
	c := make(chan Event, streamBuffer)
	h.mu.Lock()
	h.subs[c] = true
	h.mu.Unlock()
	return c
}

func (h *hub) unsubscribe(c chan Event) {
	h.mu.Lock()
	delete(h.subs, c)
	h.mu.Unlock()
}

func (h *hub) publish(typ string, data any) {
	b, err := json.Marshal(data)
	if err != nil {
		b, _ = json.Marshal(map[string]string{"error": err.Error()})
	}
	ev := Event{Type: typ, Data: b}
	h.mu.Lock()
	defer h.mu.Unlock()
	for c := range h.subs {
		select {
		case c <- ev:
			continue
		default:
		}
		// Full: the oldest event makes room for "lagged", which tells the
		// stream it lost events (the dashboard reloads what it shows).
		select {
		case <-c:
		default:
		}
		select {
		case c <- Event{Type: "lagged", Data: json.RawMessage(`{}`)}:
		default:
		}
	}
}

// keepAlive is how often an idle stream gets a comment line, so that
// proxies and clients notice a dead connection.
const keepAlive = 25 * time.Second

// streamEvents serves GET /api/v1/events: text/event-stream until the
// client goes or the server closes.
func (s *Server) streamEvents(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	c := s.events.subscribe()
	defer s.events.unsubscribe(c)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	// "ready" tells the client that events from now on reach it.
	fmt.Fprint(w, "event: ready\ndata: {}\n\n")
	fl.Flush()
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.closing:
			return
		case <-tick.C:
			fmt.Fprint(w, ": keep-alive\n\n")
		case ev := <-c:
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev.Type, ev.Data)
		}
		fl.Flush()
	}
}

// Follow calls fn with each event published from now on, on the caller's
// goroutine, until ctx ends or the server closes (then it returns nil).
func (s *Server) Follow(ctx context.Context, fn func(Event)) error {
	c := s.events.subscribe()
	defer s.events.unsubscribe(c)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.closing:
			return nil
		case ev := <-c:
			fn(ev)
		}
	}
}
