package mcp_test

import (
	"context"
	"slices"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/mcp"
)

// TestHostChangesNotify: in process, the tools' writes reach resource
// clients through the Host's change bus, whichever tool made them: a
// skill_learn tells every client of its new page and a subscriber of the
// page of each write to it.
func TestHostChangesNotify(t *testing.T) {
	h := openHome(t)
	ctx := context.Background()
	for _, s := range []string{"s1", "s2", "s3"} {
		if _, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: s, Role: "user", Text: "ship it"}); err != nil {
			t.Fatal(err)
		}
		for _, tool := range []string{"Bash", "Edit"} {
			if _, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: s, Role: "tool", Text: tool, Meta: []byte(`{"tool": "` + tool + `"}`)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	updated := make(chan string, 16)
	listChanged := make(chan struct{}, 16)
	cs := connect(t, mcp.New(h, mcp.Options{Changes: hostChanges(t, h), Context: t.Context()}), &mcpsdk.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, r *mcpsdk.ResourceUpdatedNotificationRequest) {
			updated <- r.Params.URI
		},
		ResourceListChangedHandler: func(context.Context, *mcpsdk.ResourceListChangedRequest) { listChanged <- struct{}{} },
	})
	const page = "memhost://notebook/skills/learned/bash-edit.md"
	if err := cs.Subscribe(ctx, &mcpsdk.SubscribeParams{URI: page}); err != nil {
		t.Fatal(err)
	}
	wait := func(what string) {
		t.Helper()
		select {
		case uri := <-updated:
			if uri != page {
				t.Fatalf("%s: updated %s, want %s", what, uri, page)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no resources/updated of %s", what, page)
		}
	}

	var sr memhost.SkillsResponse
	structured(t, call(t, cs, "skill_learn", map[string]any{}), &sr)
	if !slices.Equal(sr.Written, []string{"skills/learned/bash-edit.md"}) {
		t.Fatalf("skill_learn wrote %v", sr.Written)
	}
	wait("skill_learn")
	select {
	case <-listChanged:
	case <-time.After(10 * time.Second):
		t.Fatal("skill_learn: no resources/list_changed for the new page")
	}
	call(t, cs, "skill_review", map[string]any{"slug": "bash-edit", "status": "rejected"})
	wait("skill_review")
}

// TestRelay: a Relay hands on the pages of each change, removed first,
// in order, those published before Changes runs too; transcripts and the
// home's other files are no pages.
func TestRelay(t *testing.T) {
	r := new(mcp.Relay)
	r.Publish(memhost.Change{Op: "mv", Paths: []string{"b.md", "c.md"}, Removed: []string{"a.md"}})
	r.Publish(memhost.Change{Op: "session-append", Paths: []string{"sessions/s1.jsonl"}, Files: []string{"config.yaml"}})
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan mcp.Change, 8)
	done := make(chan error)
	go func() { done <- r.Changes(ctx, func(c mcp.Change) { got <- c }) }()
	r.Publish(memhost.Change{Op: "prune", Removed: []string{"daily/x.md"}, Paths: []string{"daily/archive/x.md"}})
	want := []mcp.Change{{Path: "a.md", Removed: true}, {Path: "b.md"}, {Path: "c.md"}, {Path: "daily/x.md", Removed: true}, {Path: "daily/archive/x.md"}}
	for i, w := range want {
		select {
		case c := <-got:
			if c != w {
				t.Fatalf("change %d: %+v, want %+v", i, c, w)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("change %d: none, want %+v", i, w)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	select {
	case c := <-got:
		t.Fatalf("a change too many: %+v", c)
	default:
	}
}
