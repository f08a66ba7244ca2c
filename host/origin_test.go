package host

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host/config"
)

// TestTurnOrigin: a turn's channel and source id are kept in the JSONL,
// come back in conversation-search's results and filter them; a bad one
// is refused, naming its field, with nothing written.
func TestTurnOrigin(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	home := t.TempDir()
	h, err := Open(ctx, Options{Home: home, Config: config.Default()})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	appends := []memhost.SessionAppendRequest{
		{Session: "wa-ann", Role: "user", Text: "running late for the dentist", Channel: "whatsapp", SourceID: "919876543210"},
		{Session: "wa-bob", Role: "user", Text: "late again, the dentist can wait", Channel: "WhatsApp", SourceID: "15551234567"},
		{Session: "tg-ann", Role: "user", Text: "the dentist moved me to Friday, so late", Channel: "telegram", SourceID: "-100200300"},
		{Session: "cli", Role: "user", Text: "note: dentist is late on Fridays"},
	}
	for _, a := range appends {
		if _, err := h.SessionAppend(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(filepath.Join(home, "sessions", "wa-ann.jsonl"))
	if err != nil || !strings.Contains(string(data), `"channel":"whatsapp","sourceId":"919876543210"`) {
		t.Errorf("the transcript does not keep the origin: %q, %v", data, err)
	}
	search := func(channel, source string) []string {
		t.Helper()
		resp, err := h.ConversationSearch(ctx, memhost.ConversationSearchRequest{Query: "dentist late", Channel: channel, SourceID: source})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range resp.Results {
			got = append(got, r.Session+"@"+r.Channel+"/"+r.SourceID)
		}
		slices.Sort(got)
		return got
	}
	for _, c := range []struct {
		channel, source string
		want            []string
	}{
		{"", "", []string{"cli@/", "tg-ann@telegram/-100200300", "wa-ann@whatsapp/919876543210", "wa-bob@whatsapp/15551234567"}},
		{"whatsapp", "", []string{"wa-ann@whatsapp/919876543210", "wa-bob@whatsapp/15551234567"}},
		{"WhatsApp", "919876543210", []string{"wa-ann@whatsapp/919876543210"}},
		{"telegram", "919876543210", nil},
		{"sms", "", nil},
	} {
		if got := search(c.channel, c.source); !slices.Equal(got, c.want) {
			t.Errorf("channel %q source %q: %v, want %v", c.channel, c.source, got, c.want)
		}
	}

	before, _ := os.ReadDir(filepath.Join(home, "sessions"))
	for _, c := range []struct {
		channel, source, field string
	}{
		{"whats app", "", "channel"},
		{strings.Repeat("w", 65), "", "channel"},
		{"whatsapp", "91 98", "sourceId"},
		{"whatsapp", "91\x0098", "sourceId"},
		{"whatsapp", strings.Repeat("9", 257), "sourceId"},
		{"whatsapp", "9198\u202e7654", "sourceId"}, // right-to-left override
		{"whatsapp", "91\u200b98", "sourceId"},     // zero-width space
		{"", "919876543210", "sourceId"},
	} {
		_, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "bad", Role: "user", Text: "x", Channel: c.channel, SourceID: c.source})
		if fault.KindOf(err) != fault.BadInput || fault.FieldOf(err) != c.field {
			t.Errorf("append with channel %q source %q: %v (%s), want bad input in %s", c.channel, c.source, err, fault.FieldOf(err), c.field)
		}
		_, err = h.ConversationSearch(ctx, memhost.ConversationSearchRequest{Query: "x", Channel: c.channel, SourceID: c.source})
		if fault.KindOf(err) != fault.BadInput || fault.FieldOf(err) != c.field {
			t.Errorf("search with channel %q source %q: %v, want bad input in %s", c.channel, c.source, err, c.field)
		}
	}
	if after, _ := os.ReadDir(filepath.Join(home, "sessions")); len(after) != len(before) {
		t.Errorf("a refused append wrote a transcript: %d files, then %d", len(before), len(after))
	}

	// A transcript from elsewhere (written by hand, imported, merged from
	// a remote) with an origin append refuses: indexed, but not shown or
	// searched by it.
	line := `{"id":"x1","type":"message","role":"user","content":"dentist late from elsewhere","timestamp":"2026-03-01T10:00:00Z","channel":"what\u001b[31msapp","sourceId":"9\u202e1"}` + "\n"
	if err := os.WriteFile(filepath.Join(home, "sessions", "odd.jsonl"), []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := search("", ""); !slices.Contains(got, "odd@/") {
		t.Errorf("the odd transcript's turn: %v, want it found without its origin", got)
	}
}
