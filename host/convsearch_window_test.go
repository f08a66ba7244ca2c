package host_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/fault"
	"github.com/memhost/memhost/host"
	"github.com/memhost/memhost/host/config"
)

// TestConversationSearchWindow: time words of the query, resolved
// against AsOf, lift the turns of the window they name and the response
// says which; without AsOf's date the same words name other days.
func TestConversationSearchWindow(t *testing.T) {
	home := t.TempDir()
	cfg := config.Default()
	cfg.Memory.Embedding.Plugin = "none"
	cfg.Timezone = "UTC"
	os.MkdirAll(filepath.Join(home, "sessions"), 0o700)
	// The October turn says "cake" twice, a better match; the one of
	// Saturday 2023-11-04 is the one asked about. A session each, so
	// neither is the other's context.
	for name, line := range map[string]string{
		"october.jsonl":  `{"id":"1","type":"message","role":"user","content":"I bake a cake, a cake every week.","timestamp":"2023-10-01T18:00:00"}`,
		"saturday.jsonl": `{"id":"2","type":"message","role":"user","content":"I bake a lemon cake this afternoon.","timestamp":"2023-11-04T16:30:00"}`,
	} {
		if err := os.WriteFile(filepath.Join(home, "sessions", name), []byte(line+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	h, err := host.Open(context.Background(), host.Options{Home: home, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ctx := context.Background()
	tests := []struct {
		asOf, first string
		window      *memhost.TimeWindow
	}{
		{"2023-11-10", "2", &memhost.TimeWindow{Since: "2023-11-04T00:00:00Z", Until: "2023-11-04T23:59:59Z", Phrase: "last Saturday"}},
		{"2023-11-10T04:20:00+01:00", "2", &memhost.TimeWindow{Since: "2023-11-04T00:00:00Z", Until: "2023-11-04T23:59:59Z", Phrase: "last Saturday"}},
		{"2023-10-03", "1", &memhost.TimeWindow{Since: "2023-09-30T00:00:00Z", Until: "2023-09-30T23:59:59Z", Phrase: "last Saturday"}},
	}
	for _, tt := range tests {
		r, err := h.ConversationSearch(ctx, memhost.ConversationSearchRequest{Query: "which cake did I bake last Saturday", AsOf: tt.asOf})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Results) != 2 || r.Results[0].Turns[0] != tt.first || r.Window == nil || *r.Window != *tt.window {
			t.Errorf("as of %s: first %v, window %+v; want turn %s first, window %+v", tt.asOf, r.Results, r.Window, tt.first, tt.window)
		}
	}
	r, err := h.ConversationSearch(ctx, memhost.ConversationSearchRequest{Query: "which cake did I bake", AsOf: "2023-11-10"})
	if err != nil || r.Window != nil || r.Results[0].Turns[0] != "1" {
		t.Errorf("no time words: %+v, %v", r, err)
	}
	_, err = h.ConversationSearch(ctx, memhost.ConversationSearchRequest{Query: "cake", AsOf: "last week"})
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Field != "asOf" {
		t.Errorf("a bad asOf: %v", err)
	}
}
