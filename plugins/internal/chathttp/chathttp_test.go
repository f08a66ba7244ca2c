package chathttp

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	for in, want := range map[string]time.Duration{"": 0, "2": 2 * time.Second, "0.5": 500 * time.Millisecond, "soon": 0, "-3": 0} {
		if got := retryAfter(in); got != want {
			t.Errorf("retryAfter(%q) = %v, want %v", in, got, want)
		}
	}
	date := time.Now().Add(3 * time.Second).UTC().Format(http.TimeFormat)
	if got := retryAfter(date); got < time.Second || got > 3*time.Second {
		t.Errorf("retryAfter(HTTP date 3 s ahead) = %v", got)
	}
}

func TestDo(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch n := calls.Add(1); {
		case r.Header.Get("Authorization") != "Bearer k":
			w.WriteHeader(http.StatusUnauthorized)
		case n == 1:
			w.Header().Set("Retry-After", time.Now().Add(time.Second).UTC().Format(http.TimeFormat))
			w.WriteHeader(http.StatusTooManyRequests)
			w.Write([]byte(`{"error": "slow down"}`))
		default:
			w.Write([]byte(`{"ok": true}`))
		}
	}))
	defer srv.Close()
	c := &Client{Service: "test", Retries: 2, Header: http.Header{"Authorization": {"Bearer k"}}}
	var out struct{ OK bool }
	if err := c.Do(context.Background(), http.MethodPost, srv.URL, map[string]int{"a": 1}, &out); err != nil || !out.OK || calls.Load() != 2 {
		t.Errorf("Do = %v, %+v after %d calls", err, out, calls.Load())
	}
	// A deadline shorter than the wait stops the retries at once.
	calls.Store(0)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err := c.Do(ctx, http.MethodPost, srv.URL, nil, nil)
	var se *StatusError
	if !errors.As(err, &se) || se.Code != 429 || se.Message != `{"error": "slow down"}` || calls.Load() != 1 {
		t.Errorf("Do within a short deadline: %v after %d calls", err, calls.Load())
	}
	// 401 is not retried.
	calls.Store(0)
	c.Header = nil
	if err := c.Do(context.Background(), http.MethodGet, srv.URL, nil, nil); !errors.As(err, &se) || se.Code != 401 || calls.Load() != 1 {
		t.Errorf("401: %v after %d calls", err, calls.Load())
	}
	// Nothing listening.
	srv.Close()
	c.Retries = 0
	if err := c.Do(context.Background(), http.MethodGet, srv.URL, nil, nil); !errors.Is(err, ErrUnreachable) || errors.Is(err, ErrNoAnswer) {
		t.Errorf("closed server: %v, want ErrUnreachable and not ErrNoAnswer", err)
	}
}

// TestNoAnswer: a service that does not answer within the timeout is
// ErrNoAnswer (and ErrUnreachable), with its words.
func TestNoAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer srv.Close()
	c := &Client{Service: "test", Timeout: 50 * time.Millisecond}
	err := c.Do(context.Background(), http.MethodGet, srv.URL, nil, nil)
	if !errors.Is(err, ErrNoAnswer) || !errors.Is(err, ErrUnreachable) || err.Error() != "test did not answer within 50ms" {
		t.Errorf("hung service: %v, want ErrNoAnswer and ErrUnreachable", err)
	}
}
