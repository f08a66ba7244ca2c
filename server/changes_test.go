package server

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host"
	"github.com/memhost/memhost/host/config"
	"github.com/memhost/memhost/mcp"
)

// A move and a prune tell MCP subscribers of every page they changed:
// the write events carry the paths each write published (the events
// used to carry only result.path, which neither response has).
func TestWriteEventsNameEveryPage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := func() time.Time { return time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC) }
	h, err := host.Open(ctx, host.Options{Home: t.TempDir(), Config: config.Default(), Now: now})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	s := New(h, Options{})
	defer s.Close()
	for path, text := range map[string]string{
		"people/Sarah.md":     "# Sarah\n",
		"notes/a.md":          "Met [[Sarah]] today.\n",
		"daily/2026-08-03.md": "# Daily Log — 2026-08-03\n\n## 09:15 — Started the spec\n",
	} {
		if _, err := h.Write(ctx, memhost.WriteRequest{Path: path, Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.Rollup(ctx, memhost.RollupRequest{Period: "week", Date: "2026-W32"}); err != nil {
		t.Fatal(err)
	}
	events := s.events.subscribe()
	defer s.events.unsubscribe(events)
	changes := func() []mcp.Change {
		select {
		case ev := <-events:
			var got []mcp.Change
			PageChanges(ev, func(c mcp.Change) { got = append(got, c) })
			return got
		case <-time.After(10 * time.Second):
			t.Fatal("no event")
			return nil
		}
	}

	if _, err := h.Move(ctx, memhost.MoveRequest{From: "people/Sarah.md", To: "people/Sarah Chen.md"}); err != nil {
		t.Fatal(err)
	}
	want := []mcp.Change{{Path: "people/Sarah.md", Removed: true}, {Path: "people/Sarah Chen.md"}, {Path: "notes/a.md"}}
	if got := changes(); !slices.Equal(got, want) {
		t.Errorf("mv: %+v, want %+v", got, want)
	}

	if _, err := h.Prune(ctx, memhost.PruneRequest{OlderThanDays: 90}); err != nil {
		t.Fatal(err)
	}
	want = []mcp.Change{{Path: "daily/2026-08-03.md", Removed: true}, {Path: "daily/archive/2026-08-03.md"}}
	if got := changes(); !slices.Equal(got, want) {
		t.Errorf("prune: %+v, want %+v", got, want)
	}
}
