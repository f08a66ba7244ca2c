package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/fault"
)

// TestTimeoutIsNotCanceled: an operation that runs out of its own time on
// the server answers 504 kind timeout with its message; one whose client
// left is still 499 kind canceled.
func TestTimeoutIsNotCanceled(t *testing.T) {
	s := &Server{opts: Options{MaxBody: DefaultMaxBody}, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	type none struct{}
	timedOut := op(s, func(ctx context.Context, _ none) (none, error) {
		ctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		defer cancel()
		<-ctx.Done()
		return none{}, fmt.Errorf("asking the plugin: %w", ctx.Err())
	})
	srv := httptest.NewServer(timedOut)
	defer srv.Close()
	status, body, _ := do(t, http.MethodPost, srv.URL, "{}")
	if we := errorOf(t, body); status != http.StatusGatewayTimeout || we.Kind != fault.Timeout || we.Message != "asking the plugin: context deadline exceeded" {
		t.Errorf("an operation past its deadline: %d %s, want 504 kind timeout", status, body)
	}

	started := make(chan struct{})
	waits := op(s, func(ctx context.Context, _ none) (none, error) {
		close(started)
		<-ctx.Done()
		return none{}, ctx.Err()
	})
	ctx, leave := context.WithCancel(context.Background())
	req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader("{}")).WithContext(ctx)
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() { waits.ServeHTTP(rec, req); close(done) }()
	<-started
	leave()
	<-done
	if we := errorOf(t, rec.Body.String()); rec.Code != 499 || we.Kind != fault.Canceled {
		t.Errorf("an operation whose client left: %d %s, want 499 kind canceled", rec.Code, rec.Body)
	}
}

// TestRollupsMissingOverTheWire: prune's refusal reaches a client typed,
// with its logs and its message, as it is in process.
func TestRollupsMissingOverTheWire(t *testing.T) {
	rm := &memhost.RollupsMissingError{Missing: []memhost.MissingLog{
		{Log: "daily/2026-08-03.md", Rollup: "daily/rollups/2026-W32.md", Why: "out of date"},
		{Log: "daily/2026-08-04.md", Rollup: "daily/rollups/2026-W32.md", Why: "out of date"},
		{Log: "daily/2026-08-10.md", Rollup: "daily/rollups/2026-W33.md", Why: "missing"},
	}}
	local := &fault.Error{Kind: fault.Conflict, Field: "olderThanDays", Message: rm.Error(), Err: rm}
	remote := fromWire(toWire(local))
	var got *memhost.RollupsMissingError
	if !errors.As(remote, &got) || !errors.Is(remote, memhost.ErrRollupsMissing) || !reflect.DeepEqual(got.Missing, rm.Missing) {
		t.Fatalf("through the wire: %#v", remote)
	}
	want := "daily logs have no up-to-date rollup: nothing pruned; write these rollups first: daily/rollups/2026-W32.md (out of date), daily/rollups/2026-W33.md (missing)"
	if remote.Error() != want || fault.KindOf(remote) != fault.Conflict || fault.FieldOf(remote) != "olderThanDays" {
		t.Fatalf("through the wire: %v (%s on %s), want %q", remote, fault.KindOf(remote), fault.FieldOf(remote), want)
	}
}
