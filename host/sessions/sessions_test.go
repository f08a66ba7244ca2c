package sessions

import (
	"encoding/json"
	"testing"
)

func TestBefore(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"2026-01-01T00:00:05Z", "2026-01-01T00:00:05.1Z", true},
		{"2026-01-01T00:00:05.1Z", "2026-01-01T00:00:05Z", false},
		{"", "2026-01-01T00:00:05Z", true},
		{"2026-01-01T00:00:05Z", "", false},
	}
	for _, tt := range tests {
		if got := before(tt.a, tt.b); got != tt.want {
			t.Errorf("before(%q, %q) = %v", tt.a, tt.b, got)
		}
	}
}

// TestMetaSpeaker: the quick read of a meta's speaker agrees with
// ParseMeta, names with escapes and quotes, and metas without one among them.
func TestMetaSpeaker(t *testing.T) {
	for _, m := range []Meta{
		{Session: "s", Turns: []string{"D1:3"}, Role: "user", Speaker: "Caroline", Timestamp: "2023-05-08T13:56:00"},
		{Session: "s", Turns: []string{"1"}, Role: "assistant"},
		{Session: `"speaker":"x"`, Turns: []string{"1"}, Speaker: "Ann"},
		{Session: "s", Speaker: `O"Brien \ Jr`},
		{Session: "s", Speaker: "Zoë <Ω>"},
	} {
		raw, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if got := MetaSpeaker(string(raw)); got != m.Speaker {
			t.Errorf("MetaSpeaker(%s) = %q, want %q", raw, got, m.Speaker)
		}
	}
	for _, bad := range []string{"", "{", `{"speaker":"unterminated`, "not json"} {
		if got := MetaSpeaker(bad); got != ParseMeta(bad).Speaker {
			t.Errorf("MetaSpeaker(%q) = %q, ParseMeta's %q", bad, got, ParseMeta(bad).Speaker)
		}
	}
}
