package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/memhost/memhost/host/fault"
)

// DefaultMaxBodies bounds the bytes of the request bodies all requests in
// flight hold together: two bodies of DefaultMaxBody. A request holds
// about three times its body at its peak (the bytes read, the decoded
// text, the page written), so that the server's memory for bodies stays
// under a GB however many large writes arrive at once (8 concurrent
// 79 MB writes held 2.8 GB).
const DefaultMaxBodies = 2 * DefaultMaxBody

// bodyChunk is the step in which a body without a Content-Length takes
// its room as it is read.
const bodyChunk = 64 << 10

// errBodiesFull is what reading a body without a Content-Length returns
// when the room of the bodies in flight is taken.
var errBodiesFull = errors.New("the server holds as many request bodies as it may")

// bodies is the room of the request bodies in flight: MaxBodies bytes.
// It is safe for concurrent use.
type bodies struct {
	mu      sync.Mutex
	free    int64
	limit   int64
	waiting int
	changed chan struct{} // closed and replaced when room is given back
}

func newBodies(limit int64) *bodies {
	return &bodies{free: limit, limit: limit, changed: make(chan struct{})}
}

// take waits until n bytes of room are free and takes them, or returns
// ctx's error.
func (b *bodies) take(ctx context.Context, n int64) error {
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

// tryTake takes n bytes of room if they are free.
func (b *bodies) tryTake(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.free < n {
		return false
	}
	b.free -= n
	return true
}

// give gives n bytes of room back.
func (b *bodies) give(n int64) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	b.free += n
	close(b.changed)
	b.changed = make(chan struct{})
	b.mu.Unlock()
}

// held is the room taken, for tests.
func (b *bodies) held() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.limit - b.free
}

// waiters is the number of requests waiting for room, for tests.
func (b *bodies) waiters() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.waiting
}

// limitBodies bounds the request bodies in flight (Options.MaxBodies). A
// body with a Content-Length takes its room before it is read, waiting
// for it while the request lasts: requests of large bodies are served
// in turn instead of all at once. A body over MaxBody is refused at once
// (413). A body without a length takes room as it is read and is refused
// (503) when there is none left: it cannot wait holding part of the room
// (two such would wait for each other).
func (s *Server) limitBodies(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch n := r.ContentLength; {
		case r.Body == nil || r.Body == http.NoBody || n == 0:
		case n > s.opts.MaxBody:
			writeError(w, tooLarge(s.opts.MaxBody))
			return
		case n > 0:
			if err := s.bodies.take(r.Context(), n); err != nil {
				writeError(w, fault.Errorf(fault.Canceled, "", "waiting for room for the request body: %w", err))
				return
			}
			defer s.bodies.give(n)
		default:
			body := &roomyBody{ReadCloser: r.Body, room: s.bodies}
			defer body.release()
			r.Body = body
		}
		next.ServeHTTP(w, r)
	})
}

// roomyBody takes room for a body without a length as it is read.
type roomyBody struct {
	io.ReadCloser
	room       *bodies
	read, held int64
}

func (b *roomyBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.read += int64(n)
	for b.read > b.held {
		if !b.room.tryTake(bodyChunk) {
			return 0, errBodiesFull
		}
		b.held += bodyChunk
	}
	return n, err
}

func (b *roomyBody) release() { b.room.give(b.held) }

// tooLarge is the error of a body over limit bytes.
func tooLarge(limit int64) error {
	return &fault.Error{Kind: KindTooLarge, Message: fmt.Sprintf("request body is larger than %d bytes", limit)}
}

// bodiesFull is the error of a body refused for want of room.
func bodiesFull() error {
	return &fault.Error{Kind: fault.Unavailable, Message: "the server is reading as many request bodies as it may at once: retry, or send the body with a Content-Length to wait for room"}
}
