package host

import (
	"context"
	"testing"
	"time"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/host/config"
)

// TestContextEpisodesOnce: a conversation is in the memory context once,
// as its turn, not again as its episode log (a notebook page), which the
// notebook tier alone still finds.
func TestContextEpisodesOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := &clock{t: time.Date(2026, 2, 13, 10, 32, 0, 0, time.UTC)}
	cfg := config.Default()
	cfg.Timezone = "UTC"
	h, err := Open(ctx, Options{Home: t.TempDir(), Config: cfg, Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	if _, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "wa", Role: "user", Text: "the kiwis go in the fruit bowl", End: true}); err != nil {
		t.Fatal(err)
	}
	r, err := h.Context(ctx, memhost.ContextRequest{Query: "kiwis fruit bowl"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Items) != 1 || r.Items[0].Tier != memhost.TierEpisodes {
		t.Fatalf("items %+v", r.Items)
	}
	r, err = h.Context(ctx, memhost.ContextRequest{Query: "kiwis fruit bowl", Tiers: []string{memhost.TierNotebook}})
	if err != nil || len(r.Items) != 1 || r.Items[0].Path != "episodes/2026-02-13.md" {
		t.Fatalf("notebook tier alone: %+v %v", r.Items, err)
	}
}
