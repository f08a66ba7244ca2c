// Package bodylimit bounds the request bodies a server holds: one body
// (MaxBody, 413 over it) and all bodies in flight together (a Room, which
// a body waits for or, without a Content-Length, is refused for). It may
// import fault and server/wire; nothing of server.
package bodylimit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/server/wire"
)

// bodyChunk is the step in which a body without a Content-Length takes
// its room as it is read.
const bodyChunk = 64 << 10

// ErrFull is what reading a body without a Content-Length returns
// when the room of the bodies in flight is taken.
var ErrFull = errors.New("the server holds as many request bodies as it may")

// Room is the room of the request bodies in flight: MaxBodies bytes.
// It is safe for concurrent use.
type Room struct {
	mu      sync.Mutex
	free    int64
	limit   int64
	waiting int
	changed chan struct{} // closed and replaced when room is given back
}

// New returns a room of limit bytes.
func New(limit int64) *Room {
	return &Room{free: limit, limit: limit, changed: make(chan struct{})}
}

// Take waits until n bytes of room are free and takes them, or returns
// ctx's error.
func (b *Room) Take(ctx context.Context, n int64) error {
	b.mu.Lock()
	for b.free < n {
		ch := b.changed
		b.waiting++
		b.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			b.mu.Lock()
			b.waiting--
			b.mu.Unlock()
			return ctx.Err()
		}
		b.mu.Lock()
		b.waiting--
	}
	b.free -= n
	b.mu.Unlock()
	return nil
}

// TryTake takes n bytes of room if they are free.
func (b *Room) TryTake(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.free < n {
		return false
	}
	b.free -= n
	return true
}

// Give gives n bytes of room back.
func (b *Room) Give(n int64) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	b.free += n
	close(b.changed)
	b.changed = make(chan struct{})
	b.mu.Unlock()
}

// Held is the room taken, for tests.
func (b *Room) Held() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.limit - b.free
}

// Waiters is the number of requests waiting for room, for tests.
func (b *Room) Waiters() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.waiting
}

// Limit bounds the request bodies in flight to room's, and each to
// maxBody bytes (server.Options.MaxBody and MaxBodies). A
// body with a Content-Length takes its room before it is read, waiting
// for it while the request lasts: requests of large bodies are served
// in turn instead of all at once. A body over MaxBody is refused at once
// (413). A body without a length takes room as it is read and is refused
// (503) when there is none left: it cannot wait holding part of the room
// (two such would wait for each other).
func Limit(next http.Handler, maxBody int64, room *Room) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch n := r.ContentLength; {
		case r.Body == nil || r.Body == http.NoBody || n == 0:
		case n > maxBody:
			wire.WriteError(w, TooLarge(maxBody))
			return
		case n > 0:
			if err := room.Take(r.Context(), n); err != nil {
				wire.WriteError(w, fault.Errorf(fault.Canceled, "", "waiting for room for the request body: %w", err))
				return
			}
			defer room.Give(n)
		default:
			body := &roomyBody{ReadCloser: r.Body, room: room}
			defer body.release()
			r.Body = body
		}
		next.ServeHTTP(w, r)
	})
}

// roomyBody takes room for a body without a length as it is read.
type roomyBody struct {
	io.ReadCloser
	room       *Room
	read, held int64
}

func (b *roomyBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.read += int64(n)
	for b.read > b.held {
		if !b.room.TryTake(bodyChunk) {
			return 0, ErrFull
		}
		b.held += bodyChunk
	}
	return n, err
}

func (b *roomyBody) release() { b.room.Give(b.held) }

// TooLarge is the error of a body over limit bytes.
func TooLarge(limit int64) error {
	return &fault.Error{Kind: wire.KindTooLarge, Message: fmt.Sprintf("request body is larger than %d bytes", limit)}
}

// Refused is the error of a body refused for want of room.
func Refused() error {
	return &fault.Error{Kind: fault.Unavailable, Message: "the server is reading as many request bodies as it may at once: retry, or send the body with a Content-Length to wait for room"}
}
