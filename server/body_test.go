package server

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/memhost/memhost/host"
)

// TestBodiesBounded: the request bodies in flight together never take
// more than MaxBodies bytes, over real HTTP. With 1 MiB a body and 1.5 MiB
// in all: while a 1 MiB body arrives (slowly), a second one of 1 MiB
// waits for room rather than adding its MiB, a small request is served at
// once, a body without a length that would pass the bound is refused with
// 503, and one over MaxBody with 413 before it is read; once the first
// ends, the second is served. (8 concurrent 79 MB writes held 2.8 GB.)
func TestBodiesBounded(t *testing.T) {
	const maxBody, maxBodies = 1 << 20, 3 << 19
	var srv *Server
	r := start(t, t.TempDir(), "127.0.0.1:0", "", func(o *RunOptions) {
		o.MaxBody, o.MaxBodies = maxBody, maxBodies
		o.SocketRoutes = func(_ *host.Host, s *Server) map[string]http.Handler { srv = s; return nil }
	})
	url := r.info.URL + "/api/v1/status"
	// post sends a body from a pipe, announced as length bytes (-1: no
	// Content-Length); finish writes the rest of its n bytes (spaces, then
	// {}) after the sent ones.
	type answer struct {
		code int
		body string
		err  error
	}
	post := func(length int64) (*io.PipeWriter, chan answer) {
		pr, pw := io.Pipe()
		t.Cleanup(func() { pw.CloseWithError(io.ErrUnexpectedEOF) }) // a test that failed half-way
		req, _ := http.NewRequest("POST", url, pr)
		req.ContentLength = length
		out := make(chan answer, 1)
		go func() {
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				out <- answer{err: err}
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			out <- answer{code: resp.StatusCode, body: string(b)}
		}()
		return pw, out
	}
	finish := func(pw *io.PipeWriter, n int64, sent int64) {
		go func() {
			pw.Write([]byte(strings.Repeat(" ", int(n-sent-2)) + "{}"))
			pw.Close()
		}()
	}
	until := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("never: %s", what)
			}
		}
	}

	a, aDone := post(maxBody)
	a.Write([]byte(" "))
	until("the first body holds its MiB", func() bool { return srv.bodies.Held() == maxBody })

	b, bDone := post(maxBody)
	until("the second body waits", func() bool { return srv.bodies.Waiters() == 1 })
	if held := srv.bodies.Held(); held != maxBody {
		t.Fatalf("bodies in flight: %d bytes, want %d", held, maxBody)
	}

	if code, body, _ := do(t, "POST", url, `{}`); code != 200 {
		t.Errorf("a small request while the second waits: %d %s", code, body)
	}
	if code, body, _ := do(t, "POST", url, strings.Repeat(" ", maxBody+1)); code != http.StatusRequestEntityTooLarge || !strings.Contains(body, "larger than") {
		t.Errorf("a body over MaxBody: %d %s", code, body)
	}
	// Past the 512 KiB left by less than the 256 KiB net/http drains
	// after an answer, so that the connection stays for the answer.
	const chunked = maxBodies - maxBody + 128<<10
	c, cDone := post(-1)
	finish(c, chunked, 0)
	if got := <-cDone; got.code != http.StatusServiceUnavailable || !strings.Contains(got.body, "request bodies") {
		t.Errorf("a body without a length past the bound: %d %s %v", got.code, got.body, got.err)
	}
	select {
	case got := <-bDone:
		t.Fatalf("the second body was served while the first held the room: %d %s", got.code, got.body)
	default:
	}

	finish(a, maxBody, 1)
	if got := <-aDone; got.code != 200 {
		t.Errorf("the first body: %d %s %v", got.code, got.body, got.err)
	}
	finish(b, maxBody, 0)
	if got := <-bDone; got.code != 200 {
		t.Errorf("the second body, once there was room: %d %s %v", got.code, got.body, got.err)
	}
	until("every byte released", func() bool { return srv.bodies.Held() == 0 && srv.bodies.Waiters() == 0 })
}
