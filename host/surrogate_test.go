package host

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/memhost/memhost"
	"github.com/memhost/memhost/fault"
)

// TestLoneSurrogatesRefused: a turn's meta and a hook's input are JSON a
// client wrote; a "\ud800" in them is not text (encoding/json would store
// U+FFFD), so they are refused naming the field, as the server refuses
// such a body.
func TestLoneSurrogatesRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHost(t)
	_, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "s", Role: "user", Text: "hello", Meta: json.RawMessage(`{"note":"\ud800"}`)})
	if fault.KindOf(err) != fault.BadInput || fault.FieldOf(err) != "meta" {
		t.Errorf("meta with a lone surrogate: got %v, want bad input on meta", err)
	}
	_, err = h.Hook(ctx, memhost.HookRequest{Event: memhost.HookSessionStart, Payload: json.RawMessage(`{"session_id":"a\udc00b"}`)})
	if fault.KindOf(err) != fault.BadInput || fault.FieldOf(err) != "payload" {
		t.Errorf("hook input with a lone surrogate: got %v, want bad input on payload", err)
	}
	// A pair is text.
	if _, err := h.SessionAppend(ctx, memhost.SessionAppendRequest{Session: "s", Role: "user", Text: "hello", Meta: json.RawMessage(`{"note":"\ud83d\ude00"}`)}); err != nil {
		t.Errorf("meta with a surrogate pair: %v", err)
	}
}
