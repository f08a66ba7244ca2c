package server

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"
)

// TestOnDemandServerExitsWhenIdle: a server started on demand returns from
// Run once its idle time passes without a request, not while a client
// follows its event stream; its Info says how it was started. One started
// by hand stays.
func TestOnDemandServerExitsWhenIdle(t *testing.T) {
	t.Parallel()
	const idle = 400 * time.Millisecond
	r := start(t, t.TempDir(), "", "", func(o *RunOptions) { o.OnDemand, o.IdleExit = true, idle })
	if !r.info.OnDemand || r.info.IdleExitS != 0 { // 0.4 s rounds down to 0 seconds
		t.Fatalf("info: %+v", r.info)
	}
	// A client following the events keeps it.
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", r.info.Socket)
	}}}
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://memhost/api/v1/events", nil)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-r.done:
		t.Fatalf("an on-demand server exited while a client followed its events: %v", err)
	case <-time.After(3 * idle):
	}
	cancel()
	resp.Body.Close()
	select {
	case err := <-r.done:
		r.done <- err // for the cleanup
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("an idle on-demand server did not exit")
	}

	// By hand: no idle exit, whatever IdleExit says.
	byHand := start(t, t.TempDir(), "", "", func(o *RunOptions) { o.IdleExit = idle })
	select {
	case err := <-byHand.done:
		t.Fatalf("a server started by hand exited when idle: %v", err)
	case <-time.After(3 * idle):
	}
}
